package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/linkrot/linkrot/store"
)

// Prune removes old runs with everything they recorded (pages, links,
// checks, findings, frontier, events: every table of a run cascades), in
// one write transaction. Targets and their histories (target_history) are
// kept: a target's summary (first seen, last OK, failure streak,
// confirmation) outlives the runs it summarises. With neither Keep nor
// OlderThan set it removes nothing. It is safe for concurrent use;
// callers hold the run lock so that no run being written is removed.
func (db *DB) Prune(ctx context.Context, opts store.PruneOptions) (store.PruneResult, error) {
	var res store.PruneResult
	if opts.Keep <= 0 && opts.OlderThan <= 0 {
		return res, nil
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT id, started_at FROM runs ORDER BY started_at DESC, id DESC`)
	if err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	cutoff := opts.Now.Add(-opts.OlderThan)
	for i := 0; rows.Next(); i++ {
		var (
			id      int64
			started sql.NullString
		)
		if err := rows.Scan(&id, &started); err != nil {
			rows.Close()
			return res, fmt.Errorf("prune: %w", err)
		}
		at, err := parseInstant(started)
		if err != nil {
			rows.Close()
			return res, fmt.Errorf("prune: run %d: %w", id, err)
		}
		keep := i == 0 ||
			(opts.Keep > 0 && i < opts.Keep) ||
			(opts.OlderThan > 0 && !at.Before(cutoff))
		if !keep {
			res.Runs = append(res.Runs, id)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	if opts.DryRun || len(res.Runs) == 0 {
		return res, nil
	}
	stmt, err := tx.PrepareContext(ctx, `DELETE FROM runs WHERE id = $1`)
	if err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	defer stmt.Close()
	for _, id := range res.Runs {
		if _, err := stmt.ExecContext(ctx, id); err != nil {
			return store.PruneResult{}, fmt.Errorf("prune: remove run %d: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return store.PruneResult{}, fmt.Errorf("prune: commit: %w", err)
	}
	return res, nil
}

// Vacuum rebuilds the database file to return the space of removed rows
// to the file system (VACUUM), then truncates the write-ahead log. It
// needs the database to itself for its duration: readers in other
// processes make it wait (busy_timeout) or fail with SQLITE_BUSY.
func (db *DB) Vacuum(ctx context.Context) error {
	if db.dialect == dialectPostgres {
		// VACUUM FULL rewrites the tables, returning the space.
		if _, err := db.write.ExecContext(ctx, `VACUUM (FULL, ANALYZE)`); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		return nil
	}
	if _, err := db.write.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	if _, err := db.write.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("vacuum: checkpoint: %w", err)
	}
	return nil
}
