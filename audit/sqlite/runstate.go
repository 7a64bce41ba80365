package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// Stage names recorded by MarkStage. Other stages may use any name.
const (
	StageCrawl   = "crawl"
	StageCheck   = "check"
	StageHistory = "history"
)

// SaveRunSettings records the effective settings of a run (JSON, as the
// command writes it) and their fingerprint, replacing earlier ones, so an
// interrupted run can be resumed with the same settings. settings must be
// valid JSON. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) SaveRunSettings(ctx context.Context, runID int64, fingerprint string, settings []byte) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save run settings: %w", err)
	}
	defer tx.Rollback()
	if err := requireRuns(ctx, tx, []int64{runID}); err != nil {
		return fmt.Errorf("save run settings: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_settings (run_id, fingerprint, settings) VALUES (?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET fingerprint = excluded.fingerprint, settings = excluded.settings`,
		runID, fingerprint, string(settings)); err != nil {
		return fmt.Errorf("save run settings of run %d: %w", runID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save run settings: %w", err)
	}
	return nil
}

// RunSettings returns what SaveRunSettings stored for a run, or an error
// wrapping audit.ErrNotFound when the run has none (it was not started by
// linkrot audit, or by an older linkrot). It is safe for concurrent use.
func (db *DB) RunSettings(ctx context.Context, runID int64) (fingerprint string, settings []byte, err error) {
	var s string
	err = db.read.QueryRowContext(ctx, `SELECT fingerprint, settings FROM run_settings WHERE run_id = ?`, runID).
		Scan(&fingerprint, &s)
	if errors.Is(err, sql.ErrNoRows) {
		err = audit.ErrNotFound
	}
	if err != nil {
		return "", nil, fmt.Errorf("run settings of run %d: %w", runID, err)
	}
	return fingerprint, []byte(s), nil
}

// MarkStage records that a stage of a run finished. Marking it again keeps
// the first time. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) MarkStage(ctx context.Context, runID int64, stage string) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("mark stage %s: %w", stage, err)
	}
	defer tx.Rollback()
	if err := markStage(ctx, tx, runID, stage); err != nil {
		return fmt.Errorf("mark stage %s of run %d: %w", stage, runID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("mark stage %s: %w", stage, err)
	}
	return nil
}

func markStage(ctx context.Context, tx *sql.Tx, runID int64, stage string) error {
	if err := requireRuns(ctx, tx, []int64{runID}); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO run_stages (run_id, stage, done_at) VALUES (?, ?, ?)
		ON CONFLICT (run_id, stage) DO NOTHING`, runID, stage, formatInstant(time.Now()))
	return err
}

// Stages returns the finished stages of a run with the time each was
// marked. A run without any yields an empty map; an unknown run an error
// wrapping audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) Stages(ctx context.Context, runID int64) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT stage, done_at FROM run_stages WHERE run_id = ?`, runID, func(rows *sql.Rows) error {
			var (
				stage string
				at    sql.NullString
			)
			if err := rows.Scan(&stage, &at); err != nil {
				return err
			}
			t, err := parseInstant(at)
			if err != nil {
				return fmt.Errorf("stage %s: %w", stage, err)
			}
			out[stage] = t
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("stages of run %d: %w", runID, err)
	}
	return out, nil
}

// UnfinishedRun returns the latest run that did not finish (status running
// or interrupted) and has settings saved by SaveRunSettings with the given
// fingerprint, or any fingerprint when fingerprint is "". It returns an
// error wrapping audit.ErrNotFound when there is none.
//
// A run still "running" may belong to a live process: callers hold the
// run lock (TryLock) first, so that any run found is dead.
func (db *DB) UnfinishedRun(ctx context.Context, fingerprint string) (*audit.Run, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx, `
		SELECT `+prefixed("r.", runColumns)+`
		FROM runs r JOIN run_settings s ON s.run_id = r.id
		WHERE r.status IN ('running', 'interrupted') AND (?1 = '' OR s.fingerprint = ?1)
		ORDER BY r.started_at DESC, r.id DESC LIMIT 1`, fingerprint))
	if err != nil {
		return nil, fmt.Errorf("unfinished run: %w", err)
	}
	return r, nil
}

// ReopenRun marks a run as running again, for resuming it: its end time
// and error are cleared. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) ReopenRun(ctx context.Context, runID int64) error {
	res, err := db.write.ExecContext(ctx,
		`UPDATE runs SET status = 'running', finished_at = NULL, error = '' WHERE id = ?`, runID)
	if err != nil {
		return fmt.Errorf("reopen run %d: %w", runID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("reopen run %d: %w", runID, err)
	} else if n == 0 {
		return fmt.Errorf("reopen run %d: %w", runID, audit.ErrNotFound)
	}
	return nil
}

// prefixed qualifies each column of a comma-separated list with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
