package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// SaveRunSettings records the command that started a run, the run's
// effective settings (JSON, as the command writes it; secrets such as
// header values must not be in it) and their fingerprint, replacing
// earlier ones, so an interrupted run can be resumed with the same
// settings. settings must be valid JSON. An unknown run yields an error
// wrapping audit.ErrNotFound.
func (db *DB) SaveRunSettings(ctx context.Context, runID int64, command, fingerprint string, settings []byte) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save run settings: %w", err)
	}
	defer tx.Rollback()
	if err := requireRuns(ctx, tx, []int64{runID}); err != nil {
		return fmt.Errorf("save run settings: %w", err)
	}
	if command == "" {
		return fmt.Errorf("save run settings of run %d: no command", runID)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_settings (run_id, command, fingerprint, settings) VALUES ($1, $2, $3, $4)
		ON CONFLICT (run_id) DO UPDATE SET command = excluded.command, fingerprint = excluded.fingerprint,
			settings = excluded.settings`,
		runID, urls.RedactText(command), fingerprint, redactJSON(settings)); err != nil {
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
	err = db.read.QueryRowContext(ctx, `SELECT fingerprint, settings FROM run_settings WHERE run_id = $1`, runID).
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
//
// On PostgreSQL it then runs ANALYZE: a stage writes many rows (a new
// database's tables go from empty to thousands of rows in one crawl),
// and the planner chooses its joins from the statistics, which autovacuum
// refreshes only about a minute later.
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
	if db.dialect == dialectPostgres {
		if _, err := db.write.ExecContext(ctx, `ANALYZE`); err != nil {
			return fmt.Errorf("mark stage %s: analyze: %w", stage, err)
		}
	}
	return nil
}

func markStage(ctx context.Context, tx *sql.Tx, runID int64, stage string) error {
	if err := requireRuns(ctx, tx, []int64{runID}); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO run_stages (run_id, stage, done_at) VALUES ($1, $2, $3)
		ON CONFLICT (run_id, stage) DO NOTHING`, runID, stage, formatInstant(time.Now()))
	return err
}

// Stages returns the finished stages of a run with the time each was
// marked. A run without any yields an empty map; an unknown run an error
// wrapping audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) Stages(ctx context.Context, runID int64) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT stage, done_at FROM run_stages WHERE run_id = $1`, runID, func(rows *sql.Rows) error {
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

// UnfinishedRun returns the latest run (highest start time, then ID) that
// q.Command started with settings saved by SaveRunSettings, that matches
// q.Fingerprint, that did not finish (status running or interrupted; or,
// with q.WithReport, complete without audit.StageReport) and that was not
// abandoned (AbandonRun). It returns an error wrapping audit.ErrNotFound
// when there is none. Whether the run is still worth resuming is the
// caller's decision (NewerCompleteRun, the run's age).
//
// A run still "running" may belong to a live process: callers hold the
// run lock (TryLock) first, so that any run found is dead.
func (db *DB) UnfinishedRun(ctx context.Context, q store.ResumeQuery) (*audit.Run, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx, `
		SELECT `+prefixed("r.", runColumns)+`
		FROM runs r JOIN run_settings s ON s.run_id = r.id
		WHERE s.command = $1 AND ($2 = '' OR s.fingerprint = $2)
			AND (r.status IN ('running', 'interrupted') OR ($3 = 1 AND r.status = 'complete'
				AND NOT EXISTS (SELECT 1 FROM run_stages g WHERE g.run_id = r.id AND g.stage = $4)))
			AND NOT EXISTS (SELECT 1 FROM run_stages g WHERE g.run_id = r.id AND g.stage = $5)
		ORDER BY r.started_at DESC, r.id DESC LIMIT 1`,
		q.Command, q.Fingerprint, q.WithReport, audit.StageReport, audit.StageAbandoned))
	if err != nil {
		return nil, fmt.Errorf("unfinished run: %w", err)
	}
	return r, nil
}

// NewerCompleteRun returns the earliest complete run started after runID
// (a higher ID) by the same command with the same settings fingerprint:
// when there is one, runID is stale and not worth resuming. It returns an
// error wrapping audit.ErrNotFound when there is none, or when runID has
// no settings.
func (db *DB) NewerCompleteRun(ctx context.Context, runID int64) (*audit.Run, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx, `
		SELECT `+prefixed("n.", runColumns)+`
		FROM run_settings s
		JOIN run_settings ns ON ns.command = s.command AND ns.fingerprint = s.fingerprint AND ns.run_id > s.run_id
		JOIN runs n ON n.id = ns.run_id
		WHERE s.run_id = $1 AND n.status = 'complete'
		ORDER BY n.id LIMIT 1`, runID))
	if err != nil {
		return nil, fmt.Errorf("newer complete run than %d: %w", runID, err)
	}
	return r, nil
}

// AbandonRun records that an unfinished run will never be resumed
// (audit.StageAbandoned): UnfinishedRun skips it from now on, and linkrot runs
// shows it as abandoned. Its status and data are left as they are. An
// unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) AbandonRun(ctx context.Context, runID int64) error {
	return db.MarkStage(ctx, runID, audit.StageAbandoned)
}

// ReopenRun marks a run as running again, for resuming it: its end time
// and error are cleared. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) ReopenRun(ctx context.Context, runID int64) error {
	res, err := db.write.ExecContext(ctx,
		`UPDATE runs SET status = 'running', finished_at = NULL, error = '' WHERE id = $1`, runID)
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

// redactJSON returns the JSON document b with URL passwords in its strings
// redacted (urls.RedactURLString on every string value), re-encoded; b
// itself when it holds none or does not parse.
func redactJSON(b []byte) string {
	if !bytes.Contains(b, []byte("@")) {
		return string(b)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers kept exactly
	if err := dec.Decode(&v); err != nil {
		return string(b)
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case string:
			if r := urls.RedactURLString(t); r != t {
				changed = true
				return r
			}
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
		case map[string]any:
			for k := range t {
				t[k] = walk(t[k])
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return string(b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(b)
	}
	return string(out)
}
