package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// ApplyHistory folds the checks of run runID into the targets' histories
// (audit.TargetHistory.Next under rule), in one write transaction that also
// records the run's stage "history": a run is applied once, however often
// ApplyHistory is called (a resumed run, linkrot check run again), and a
// crash leaves it either applied or not at all.
//
// Complete runs before runID that were never applied (runs made before
// history existed, by an older linkrot) are applied first, in ID order, so
// an upgraded database gains the history of its past runs. A check without
// a time takes its run's start time. Each confirmation and recovery is
// recorded as an event of its run (see NewlyConfirmed).
//
// runID must exist (otherwise an error wraps audit.ErrNotFound). It is
// safe for concurrent use; writes are serialised.
func (db *DB) ApplyHistory(ctx context.Context, runID int64, rule audit.ConfirmRule) (audit.HistoryResult, error) {
	var res audit.HistoryResult
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("apply history: %w", err)
	}
	defer tx.Rollback()
	if err := requireRuns(ctx, tx, []int64{runID}); err != nil {
		return res, fmt.Errorf("apply history: %w", err)
	}
	var runs []int64
	rows, err := tx.QueryContext(ctx, `
		SELECT r.id FROM runs r
		WHERE r.id <= $1 AND (r.status = 'complete' OR r.id = $1)
			AND NOT EXISTS (SELECT 1 FROM run_stages s WHERE s.run_id = r.id AND s.stage = 'history')
		ORDER BY r.id`, runID)
	if err != nil {
		return res, fmt.Errorf("apply history: %w", err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return res, fmt.Errorf("apply history: %w", err)
		}
		runs = append(runs, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return res, fmt.Errorf("apply history: %w", err)
	}
	for _, id := range runs {
		if err := applyRunHistory(ctx, tx, db.paramStyle(), id, rule, &res); err != nil {
			return audit.HistoryResult{}, fmt.Errorf("apply history of run %d: %w", id, err)
		}
		res.Runs = append(res.Runs, id)
	}
	if err := tx.Commit(); err != nil {
		return audit.HistoryResult{}, fmt.Errorf("apply history: commit: %w", err)
	}
	return res, nil
}

// historyColumns are the columns of target_history after target_id, in
// the order historyArgs binds them and scanHistory reads them.
const historyColumns = `first_seen_at, last_checked_at, last_run, last_verdict, last_ok_at,
	failing_since, failing_since_run, failed_runs, hard_failures, last_counted_at,
	confirmed, confirmed_at, confirmed_run, recovered, recovered_at, recovered_run`

// historyUpdate is the SET clause of an upsert of target_history: every
// column of historyColumns from the row proposed.
var historyUpdate = func() string {
	var set []string
	for _, c := range strings.Split(historyColumns, ",") {
		c = strings.TrimSpace(c)
		set = append(set, c+" = excluded."+c)
	}
	return strings.Join(set, ", ")
}()

func historyArgs(h *audit.TargetHistory) []any {
	runOrNull := func(id int64) any {
		if id == 0 {
			return nil
		}
		return id
	}
	return []any{h.TargetID,
		formatInstant(h.FirstSeen), formatInstant(h.LastChecked), h.LastRun, string(h.LastVerdict),
		formatInstant(h.LastOK), formatInstant(h.FailingSince), runOrNull(h.FailingSinceRun),
		h.FailedRuns, h.HardFailures, formatInstant(h.LastCounted),
		boolInt(h.Confirmed), formatInstant(h.ConfirmedAt), runOrNull(h.ConfirmedRun),
		boolInt(h.Recovered), formatInstant(h.RecoveredAt), runOrNull(h.RecoveredRun)}
}

// scanHistory reads target_id and historyColumns (all NULL for a target
// without history, which yields ok=false).
func scanHistory(scan func(...any) error, extra ...any) (h audit.TargetHistory, ok bool, err error) {
	var (
		targetID                                                sql.NullInt64
		firstSeen, lastChecked, lastOK, failingSince, lastCount sql.NullString
		confirmedAt, recoveredAt, lastVerdict                   sql.NullString
		lastRun, failingRun, failed, hard, confirmedRun         sql.NullInt64
		confirmed, recovered, recoveredRun                      sql.NullInt64
	)
	dst := append([]any{&targetID, &firstSeen, &lastChecked, &lastRun, &lastVerdict, &lastOK,
		&failingSince, &failingRun, &failed, &hard, &lastCount,
		&confirmed, &confirmedAt, &confirmedRun, &recovered, &recoveredAt, &recoveredRun}, extra...)
	if err := scan(dst...); err != nil {
		return h, false, err
	}
	if !targetID.Valid {
		return h, false, nil
	}
	h.TargetID = targetID.Int64
	h.LastRun, h.LastVerdict = lastRun.Int64, audit.Verdict(lastVerdict.String)
	h.FailingSinceRun, h.FailedRuns, h.HardFailures = failingRun.Int64, int(failed.Int64), int(hard.Int64)
	h.Confirmed, h.ConfirmedRun = confirmed.Int64 == 1, confirmedRun.Int64
	h.Recovered, h.RecoveredRun = recovered.Int64 == 1, recoveredRun.Int64
	for _, f := range []struct {
		dst *time.Time
		src sql.NullString
	}{
		{&h.FirstSeen, firstSeen}, {&h.LastChecked, lastChecked}, {&h.LastOK, lastOK},
		{&h.FailingSince, failingSince}, {&h.LastCounted, lastCount},
		{&h.ConfirmedAt, confirmedAt}, {&h.RecoveredAt, recoveredAt},
	} {
		if *f.dst, err = parseInstant(f.src); err != nil {
			return h, false, fmt.Errorf("history of target %d: %w", h.TargetID, err)
		}
	}
	return h, true, nil
}

// historyPage is how many targets applyRunHistory reads at a time (a
// variable for the tests).
var historyPage = 2000

// historyArity is the number of values of a target_history row
// (historyArgs).
const historyArity = 17

// historyChunks are the row counts of the multi-row upserts of
// applyRunHistory, largest first (see rowsNext): 64 rows bind 1,088
// values.
var historyChunks = []int{64, 16, 4, 1}

// historySQL is upsertHistorySQL by row count.
var historySQL = multiRowSQL{build: upsertHistorySQL}

// upsertHistorySQL writes n rows of target_history, each replacing the
// target's row if it has one.
func upsertHistorySQL(n int, p *paramList) string {
	return `INSERT INTO target_history (target_id, ` + historyColumns + `)
		VALUES ` + p.rows(historyArity, n) + `
		ON CONFLICT (target_id) DO UPDATE SET ` + historyUpdate
}

func applyRunHistory(ctx context.Context, tx *sql.Tx, style paramStyle, runID int64, rule audit.ConfirmRule, res *audit.HistoryResult) error {
	var startedS sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT started_at FROM runs WHERE id = $1`, runID).Scan(&startedS); err != nil {
		return err
	}
	started, err := parseInstant(startedS)
	if err != nil {
		return err
	}
	type item struct {
		h     audit.TargetHistory
		check audit.Check
		seen  time.Time
	}
	// The run's checks are read and applied in pages of historyPage
	// targets (by target ID), so that memory does not grow with the run.
	read, err := tx.PrepareContext(ctx, `
		SELECT h.target_id, `+prefixed("h.", historyColumns)+`,
			c.target_id, c.verdict, c.checked_at, c.reused, t.first_seen_at
		FROM checks c
		JOIN targets t ON t.id = c.target_id
		LEFT JOIN target_history h ON h.target_id = c.target_id
		WHERE c.run_id = $1 AND c.target_id > $2
		ORDER BY c.target_id
		LIMIT $3`)
	if err != nil {
		return err
	}
	defer read.Close()
	// The histories of a page of targets are written many rows per
	// statement (historyChunks): one upsert per target was most of this
	// stage, which runs in the run's serial tail.
	prepared := &stmtCache{tx: tx}
	defer prepared.close()
	var ups []any // historyArgs of the targets to upsert, in order
	upsert := func() error {
		for len(ups) > 0 {
			n := rowsNext(historyChunks, len(ups)/historyArity)
			if _, err := prepared.ExecContext(ctx, historySQL.in(style, n), ups[:n*historyArity]...); err != nil {
				return fmt.Errorf("histories of targets %v to %v: %w", ups[0], ups[(n-1)*historyArity], err)
			}
			ups = ups[n*historyArity:]
		}
		return nil
	}
	event, err := tx.PrepareContext(ctx, `INSERT INTO history_events (run_id, target_id, event, at)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`)
	if err != nil {
		return err
	}
	defer event.Close()
	var items []item
	for after := int64(0); ; {
		rows, err := read.QueryContext(ctx, runID, after, historyPage)
		if err != nil {
			return err
		}
		items = items[:0]
		for rows.Next() {
			var (
				it                   item
				verdict              string
				checkedAt, firstSeen sql.NullString
				reused               int
			)
			h, _, err := scanHistory(rows.Scan, &it.check.TargetID, &verdict, &checkedAt, &reused, &firstSeen)
			if err != nil {
				rows.Close()
				return err
			}
			it.h = h
			it.check.RunID, it.check.Verdict, it.check.Reused = runID, audit.Verdict(verdict), reused == 1
			if it.check.CheckedAt, err = parseInstant(checkedAt); err != nil {
				rows.Close()
				return err
			}
			if it.check.CheckedAt.IsZero() {
				it.check.CheckedAt = started
			}
			if it.seen, err = parseInstant(firstSeen); err != nil {
				rows.Close()
				return err
			}
			items = append(items, it)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		if len(items) == 0 {
			break
		}
		after = items[len(items)-1].check.TargetID
		for _, it := range items {
			prev := it.h
			if prev.TargetID == 0 {
				prev.TargetID = it.check.TargetID
				prev.FirstSeen = it.seen
			}
			next := prev.Next(it.check, rule)
			if next == prev {
				continue // an older run than the last applied
			}
			ups = append(ups, historyArgs(&next)...)
			res.Targets++
			if next.Confirmed && !prev.Confirmed {
				res.Confirmed++
				if _, err := event.ExecContext(ctx, runID, next.TargetID, "confirmed", formatInstant(next.ConfirmedAt)); err != nil {
					return fmt.Errorf("target %d: %w", next.TargetID, err)
				}
			}
			if next.Recovered && next.RecoveredRun == runID && prev.Failing() {
				res.Recovered++
				if _, err := event.ExecContext(ctx, runID, next.TargetID, "recovered", formatInstant(next.RecoveredAt)); err != nil {
					return fmt.Errorf("target %d: %w", next.TargetID, err)
				}
			}
		}
		if err := upsert(); err != nil {
			return err
		}
	}
	return markStage(ctx, tx, runID, audit.StageHistory)
}

// TargetHistories returns the history of each of targetIDs that has one
// (targets never checked, or unknown IDs, are absent from the map). All IDs
// are looked up in one query. It is safe for concurrent use.
func (db *DB) TargetHistories(ctx context.Context, targetIDs []int64) (map[int64]audit.TargetHistory, error) {
	out := make(map[int64]audit.TargetHistory, len(targetIDs))
	if len(targetIDs) == 0 {
		return out, nil
	}
	rows, err := db.read.QueryContext(ctx, `
		SELECT h.target_id, `+prefixed("h.", historyColumns)+`
		FROM (SELECT DISTINCT value AS id FROM `+db.idListSQL(1)+` AS ids) w
		JOIN target_history h ON h.target_id = w.id`, idList(targetIDs))
	if err != nil {
		return nil, fmt.Errorf("target histories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		h, ok, err := scanHistory(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("target histories: %w", err)
		}
		if ok {
			out[h.TargetID] = h
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("target histories: %w", err)
	}
	return out, nil
}

// RunHistories returns the history of every target a run checked, keyed
// by target ID (targets the history does not know yet, because the run
// was not applied, are absent). An unknown run yields an error wrapping
// audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) RunHistories(ctx context.Context, runID int64) (map[int64]audit.TargetHistory, error) {
	out := map[int64]audit.TargetHistory{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT h.target_id, `+prefixed("h.", historyColumns)+`
			FROM checks c JOIN target_history h ON h.target_id = c.target_id
			WHERE c.run_id = $1`, runID, func(rows *sql.Rows) error {
			h, ok, err := scanHistory(rows.Scan)
			if ok {
				out[h.TargetID] = h
			}
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("histories of run %d: %w", runID, err)
	}
	return out, nil
}

// TargetTimeline returns the checks of a target in every run the database
// still holds, oldest first (runs removed by Prune are gone; the target's
// TargetHistory keeps their summary). An unknown target yields none. It is
// safe for concurrent use.
func (db *DB) TargetTimeline(ctx context.Context, targetID int64) ([]store.TimelineEntry, error) {
	rows, err := db.read.QueryContext(ctx, `
		SELECT run_id, verdict, status, checked_at FROM checks
		WHERE target_id = $1 ORDER BY run_id`, targetID)
	if err != nil {
		return nil, fmt.Errorf("timeline of target %d: %w", targetID, err)
	}
	defer rows.Close()
	var out []store.TimelineEntry
	for rows.Next() {
		var (
			e  store.TimelineEntry
			v  string
			at sql.NullString
		)
		if err := rows.Scan(&e.RunID, &v, &e.Status, &at); err != nil {
			return nil, fmt.Errorf("timeline of target %d: %w", targetID, err)
		}
		e.Verdict = audit.Verdict(v)
		if e.CheckedAt, err = parseInstant(at); err != nil {
			return nil, fmt.Errorf("timeline of target %d: %w", targetID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("timeline of target %d: %w", targetID, err)
	}
	return out, nil
}

// idList renders IDs as a JSON array, for idListSQL.
func idList(ids []int64) string {
	b := make([]byte, 0, 2+8*len(ids))
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}
