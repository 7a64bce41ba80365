package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/linkrot/linkrot/audit"
)

// The read-only queries behind a report's trend chart and its per-target
// status history. They read runs, targets, checks and drifts; they write
// nothing.

// Trend returns the runs of the same site as runID (same mode and seeds),
// up to and including runID, oldest first: the latest limit of them
// (limit <= 0: all). An unknown run yields an error wrapping
// audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) Trend(ctx context.Context, runID int64, limit int) ([]audit.TrendPoint, error) {
	if limit <= 0 {
		limit = noLimit
	}
	driftCount := `(SELECT count(DISTINCT d.target_id) FROM drifts d
		WHERE d.run_id = r.id AND d.band IN ('` + audit.BandMajor + `', '` + audit.BandOffTopic + `'))`
	broken, brokenArgs := verdictSet(audit.Verdict.Broken)
	query := `
		SELECT r.id, r.started_at, r.finished_at, r.status,
			(SELECT count(*) FROM pages WHERE run_id = r.id),
			(SELECT count(*) FROM links WHERE run_id = r.id),
			(SELECT count(*) FROM checks WHERE run_id = r.id),
			(SELECT count(*) FROM checks WHERE run_id = r.id AND verdict IN (` + broken + `)),
			` + driftCount + `
		FROM runs r JOIN runs me ON me.id = $1
		WHERE r.mode = me.mode AND r.seeds = me.seeds AND r.id <= me.id
		ORDER BY r.id DESC
		LIMIT $2`
	args := append(append([]any{}, brokenArgs...), runID, limit)
	var points []audit.TrendPoint
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				p                 audit.TrendPoint
				started, finished sql.NullString
				status            string
			)
			if err := rows.Scan(&p.ID, &started, &finished, &status, &p.Pages, &p.Links,
				&p.Checked, &p.Broken, &p.Drifted); err != nil {
				return err
			}
			p.Status = audit.RunStatus(status)
			if p.StartedAt, err = parseInstant(started); err != nil {
				return fmt.Errorf("run %d: started_at: %w", p.ID, err)
			}
			if p.FinishedAt, err = parseInstant(finished); err != nil {
				return fmt.Errorf("run %d: finished_at: %w", p.ID, err)
			}
			points = append(points, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("trend of run %d: %w", runID, err)
	}
	slices.Reverse(points)
	return points, nil
}

// TargetStatuses returns the status history of every target the links of
// runID point to, in target ID order: its checks in the latest perTarget
// runs of the same site (same mode and seeds) up to and including runID
// (perTarget <= 0: every such run still in the database), with the first
// broken and last OK among them.
//
// The cost is bounded by perTarget checks per target however long the
// site's history: SQLite reads only the checks of those runs, through the
// (run_id, target_id) key. The whole history of a target, pruned runs
// included (first seen, failing since, last OK, confirmation), is
// TargetHistories'. An unknown run yields an error wrapping
// audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) TargetStatuses(ctx context.Context, runID int64, perTarget int) ([]audit.TargetStatus, error) {
	if perTarget <= 0 {
		perTarget = noLimit
	}
	const linked = `(SELECT target_id FROM run_targets WHERE run_id = $1)`
	var out []audit.TargetStatus
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		byID := map[int64]int{}
		err := each(ctx, tx, `
			SELECT t.id, coalesce(r.started_at, t.first_seen_at), t.first_seen_run
			FROM targets t LEFT JOIN runs r ON r.id = t.first_seen_run
			WHERE t.id IN `+linked+`
			ORDER BY t.id`, runID, func(rows *sql.Rows) error {
			var (
				s     audit.TargetStatus
				first sql.NullString
				run   sql.NullInt64
			)
			if err := rows.Scan(&s.TargetID, &first, &run); err != nil {
				return err
			}
			var err error
			if s.FirstSeen, err = parseInstant(first); err != nil {
				return fmt.Errorf("target %d: first_seen_at: %w", s.TargetID, err)
			}
			s.FirstSeenRun = run.Int64
			byID[s.TargetID] = len(out)
			out = append(out, s)
			return nil
		})
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `
			WITH site AS (
				SELECT r.id, r.started_at FROM runs r JOIN runs me ON me.id = $1
				WHERE r.mode = me.mode AND r.seeds = me.seeds AND r.id <= me.id
				ORDER BY r.id DESC LIMIT $2)
			SELECT c.target_id, c.run_id, coalesce(c.checked_at, s.started_at), c.verdict, c.status
			FROM site s JOIN checks c ON c.run_id = s.id
			WHERE c.target_id IN `+linked+`
			ORDER BY c.target_id, c.run_id`, runID, perTarget)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				e       audit.StatusEntry
				id      int64
				at      sql.NullString
				verdict string
			)
			if err := rows.Scan(&id, &e.RunID, &at, &verdict, &e.Status); err != nil {
				return err
			}
			if e.CheckedAt, err = parseInstant(at); err != nil {
				return fmt.Errorf("check of target %d in run %d: %w", id, e.RunID, err)
			}
			e.Verdict = audit.Verdict(verdict)
			i, ok := byID[id]
			if !ok {
				continue
			}
			s := &out[i]
			if e.Verdict.Broken() && s.FirstBrokenRun == 0 {
				s.FirstBroken, s.FirstBrokenRun = e.CheckedAt, e.RunID
			}
			if audit.Classify(e.Verdict) == audit.OutcomeOK {
				s.LastOK, s.LastOKRun = e.CheckedAt, e.RunID
			}
			s.Checks = append(s.Checks, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("target statuses of run %d: %w", runID, err)
	}
	return out, nil
}
