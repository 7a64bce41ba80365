package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/linkrot/linkrot/audit"
)

// SaveCrawlTraps adds crawl traps to their run in one write transaction:
// a trap already stored for the same run, kind and pattern has its Cut
// increased (a resumed crawl reports what it cut since), keeping the page
// and example first stored. Each trap belongs to its RunID (unknown: an
// error wrapping audit.ErrNotFound). It is safe for concurrent use.
func (db *DB) SaveCrawlTraps(ctx context.Context, traps []audit.CrawlTrap) error {
	if len(traps) == 0 {
		return nil
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save crawl traps: %w", err)
	}
	defer tx.Rollback()
	ids := map[int64]bool{}
	var runIDs []int64
	for _, t := range traps {
		if !ids[t.RunID] {
			ids[t.RunID] = true
			runIDs = append(runIDs, t.RunID)
		}
	}
	if err := requireRuns(ctx, tx, runIDs); err != nil {
		return fmt.Errorf("save crawl traps: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, `
		INSERT INTO crawl_traps (run_id, kind, pattern, page_url, example, cut, trap_limit)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (run_id, kind, pattern) DO UPDATE SET cut = cut + excluded.cut`)
	if err != nil {
		return fmt.Errorf("save crawl traps: %w", err)
	}
	defer stmt.Close()
	for i := range traps {
		t := &traps[i]
		if _, err := stmt.ExecContext(ctx, t.RunID, string(t.Kind), t.Pattern, t.PageURL, t.Example, t.Cut, t.Limit); err != nil {
			return fmt.Errorf("save crawl trap %d (%s %s): %w", i, t.Kind, t.Pattern, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save crawl traps: commit: %w", err)
	}
	return nil
}

// CrawlTraps returns the crawl traps of a run, the ones that cut most
// first. An unknown run yields an error wrapping audit.ErrNotFound; a run
// without traps yields none. It is safe for concurrent use.
func (db *DB) CrawlTraps(ctx context.Context, runID int64) ([]audit.CrawlTrap, error) {
	var traps []audit.CrawlTrap
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT run_id, kind, pattern, page_url, example, cut, trap_limit
			FROM crawl_traps WHERE run_id = $1
			ORDER BY cut DESC, kind, pattern`, runID, func(rows *sql.Rows) error {
			var (
				t    audit.CrawlTrap
				kind string
			)
			if err := rows.Scan(&t.RunID, &kind, &t.Pattern, &t.PageURL, &t.Example, &t.Cut, &t.Limit); err != nil {
				return err
			}
			t.Kind = audit.TrapKind(kind)
			traps = append(traps, t)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("crawl traps of run %d: %w", runID, err)
	}
	return traps, nil
}
