package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/linkrot/linkrot/audit"
)

// PreviousRun returns the run a run is compared with: the latest earlier
// run (lower ID) of the same site (same mode and seeds) that completed. It
// returns an error wrapping audit.ErrNotFound when there is none, or when
// runID itself does not exist. It is safe for concurrent use.
func (db *DB) PreviousRun(ctx context.Context, runID int64) (*audit.Run, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx, `
		SELECT `+prefixed("p.", runColumns)+`
		FROM runs r JOIN runs p ON p.mode = r.mode AND p.seeds = r.seeds AND p.id < r.id
		WHERE r.id = $1 AND p.status = 'complete'
		ORDER BY p.id DESC LIMIT 1`, runID))
	if err != nil {
		return nil, fmt.Errorf("previous run of %d: %w", runID, err)
	}
	return r, nil
}

// SinceLastRun returns what changed in run runID since the previous run of
// the same site (PreviousRun), or, when there is none, a RunDiff with From
// 0 in which everything broken is new. It is the "since last run" section
// of a report. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) SinceLastRun(ctx context.Context, runID int64) (*audit.RunDiff, error) {
	var from int64
	prev, err := db.PreviousRun(ctx, runID)
	switch {
	case err == nil:
		from = prev.ID
	case !errors.Is(err, audit.ErrNotFound):
		return nil, err
	}
	return db.Diff(ctx, from, runID)
}

// Diff compares two runs (from may be 0: no earlier run) and returns what is
// new in to: targets newly broken, newly confirmed broken (confirmed by a
// run after from, up to to, and still broken in to), recovered, newly moved
// and, when the database holds drift measurements, newly drifted (see
// audit.RunDiff; DriftAvailable says whether run to holds drift
// measurements). Confirmations come from the history ApplyHistory
// records; a run not yet applied confirms nothing. An unknown run yields
// an error wrapping audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) Diff(ctx context.Context, from, to int64) (*audit.RunDiff, error) {
	var before []audit.Check
	if from != 0 {
		var err error
		if before, err = db.diffChecks(ctx, from); err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
	}
	after, err := db.diffChecks(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	d := audit.DiffChecks(before, after, nil) // Pages: see pagesLinking, at the end
	d.From, d.To = from, to

	byTarget := make(map[int64]*audit.Check, len(after))
	for i := range after {
		byTarget[after[i].TargetID] = &after[i]
	}
	confirmed, err := db.confirmedBetween(ctx, from, to)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	prevVerdict := make(map[int64]audit.Verdict, len(before))
	for _, c := range before {
		prevVerdict[c.TargetID] = c.Verdict
	}
	for _, id := range confirmed {
		c := byTarget[id]
		if c == nil || !c.Verdict.Broken() {
			continue // recovered again, or no longer linked
		}
		d.NewlyConfirmed = append(d.NewlyConfirmed, audit.Change{TargetID: id, URL: c.URL, Verdict: c.Verdict,
			Status: c.Status, Previous: prevVerdict[id]})
	}
	audit.SortChanges(d.NewlyConfirmed)

	hasDrift, err := db.hasDrift(ctx)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	if hasDrift {
		bandsBefore, err := db.driftBands(ctx, from)
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		bandsAfter, err := db.driftBands(ctx, to)
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		d.DriftAvailable = len(bandsAfter) > 0
		for id, band := range bandsAfter {
			if audit.DriftRank(band) < audit.DriftRank(audit.BandMajor) ||
				audit.DriftRank(bandsBefore[id]) >= audit.DriftRank(band) {
				continue
			}
			ch := audit.Change{TargetID: id, Band: band, PreviousBand: bandsBefore[id]}
			if c := byTarget[id]; c != nil {
				ch.URL, ch.Verdict, ch.Status, ch.Previous = c.URL, c.Verdict, c.Status, prevVerdict[id]
			} else if err := db.read.QueryRowContext(ctx, `SELECT url FROM targets WHERE id = $1`, id).Scan(&ch.URL); err != nil {
				return nil, fmt.Errorf("diff: drifted target %d: %w", id, err)
			}
			d.NewlyDrifted = append(d.NewlyDrifted, ch)
		}
		audit.SortChanges(d.NewlyDrifted)
	}
	lists := []*[]audit.Change{&d.NewBroken, &d.NewlyConfirmed, &d.Recovered, &d.NewlyMoved, &d.NewlyDrifted}
	var ids []int64
	for _, l := range lists {
		for _, c := range *l {
			ids = append(ids, c.TargetID)
		}
	}
	pages, err := db.pagesLinking(ctx, to, ids)
	if err != nil {
		return nil, fmt.Errorf("diff: pages of run %d: %w", to, err)
	}
	for _, l := range lists {
		for i := range *l {
			(*l)[i].Pages = pages[(*l)[i].TargetID]
		}
	}
	return &d, nil
}

// pagesByTargetMax is the most targets pagesLinking counts one by one;
// beyond it, it counts them all in one pass over the run's links.
var pagesByTargetMax = 64

// pagesLinking returns the number of pages of a run that link to each of
// the targets ids (those no page links to are missing). A diff names the
// targets that changed, usually a handful of a run's thousands: those are
// counted by links_target_id; many are counted in one pass over the run's
// links.
func (db *DB) pagesLinking(ctx context.Context, runID int64, ids []int64) (map[int64]int, error) {
	pages := map[int64]int{}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return pages, nil
	}
	scan := func(rows *sql.Rows) error {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		pages[id] = n
		return nil
	}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		if len(ids) > pagesByTargetMax {
			return each(ctx, tx, `SELECT target_id, count(DISTINCT page_id) FROM links
				WHERE run_id = $1 AND target_id IS NOT NULL GROUP BY target_id`, runID, scan)
		}
		args := []any{runID}
		for _, id := range ids {
			args = append(args, id)
		}
		// "+l.run_id" keeps SQLite on links_target_id.
		return eachRow(ctx, tx, `SELECT l.target_id, count(DISTINCT l.page_id) FROM links l
			WHERE l.target_id IN (`+params(2, len(ids))+`) AND +l.run_id = $1
			GROUP BY l.target_id`, args, scan)
	})
	return pages, err
}

// diffChecks returns the checks of a run ordered by target URL (as
// Checks) with only what a diff reads: TargetID, URL, Verdict, Status and
// Replacement. The whole checks of two large runs were the peak of a
// run's memory.
func (db *DB) diffChecks(ctx context.Context, runID int64) ([]audit.Check, error) {
	var out []audit.Check
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT c.target_id, t.url, c.verdict, c.status, c.replacement
			FROM checks c JOIN targets t ON t.id = c.target_id
			WHERE c.run_id = $1
			ORDER BY t.url`, runID, func(rows *sql.Rows) error {
			c := audit.Check{RunID: runID}
			var verdict string
			if err := rows.Scan(&c.TargetID, &c.URL, &verdict, &c.Status, &c.Replacement); err != nil {
				return err
			}
			c.Verdict = audit.Verdict(verdict)
			out = append(out, c)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("checks of run %d: %w", runID, err)
	}
	return out, nil
}

// confirmedBetween returns the targets confirmed broken by a run after from
// and up to to.
func (db *DB) confirmedBetween(ctx context.Context, from, to int64) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT DISTINCT target_id FROM history_events
		WHERE event = 'confirmed' AND run_id > $1 AND run_id <= $2 ORDER BY target_id`, from, to)
	if err != nil {
		return nil, fmt.Errorf("confirmed targets: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("confirmed targets: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// NewlyConfirmed returns how many targets run runID itself confirmed
// broken (see ApplyHistory) that its checks still find broken. It is not
// what --fail-on new counts: that is SinceLastRun's NewlyConfirmed, which
// also holds the targets that runs of other sites in the same database
// confirmed since the site's previous run. It is safe for concurrent use.
func (db *DB) NewlyConfirmed(ctx context.Context, runID int64) (int, error) {
	broken, args := verdictSet(audit.Verdict.Broken)
	var n int
	err := db.read.QueryRowContext(ctx, `
		SELECT count(*) FROM history_events e
		JOIN checks c ON c.run_id = e.run_id AND c.target_id = e.target_id
		WHERE e.run_id = $1 AND e.event = 'confirmed' AND c.verdict IN (`+broken+`)`,
		append([]any{runID}, args...)...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("newly confirmed in run %d: %w", runID, err)
	}
	return n, nil
}

// driftTable is where the archives stage stores drift measurements
// (audit.Drift); Diff reads run_id, target_id and band from it when it
// exists.
const driftTable = "drifts"

// hasDrift reports whether the database has a drift table with the columns
// Diff needs. Databases made before the archives stage existed have none.
func (db *DB) hasDrift(ctx context.Context) (bool, error) {
	q := `SELECT name FROM pragma_table_info($1)`
	if db.dialect == dialectPostgres {
		q = `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`
	}
	rows, err := db.read.QueryContext(ctx, q, driftTable)
	if err != nil {
		return false, fmt.Errorf("drift table: %w", err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return false, fmt.Errorf("drift table: %w", err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("drift table: %w", err)
	}
	return slices.Contains(cols, "run_id") && slices.Contains(cols, "target_id") && slices.Contains(cols, "band"), nil
}

// driftBands returns the worst drift band measured per target in a run (0:
// none).
func (db *DB) driftBands(ctx context.Context, runID int64) (map[int64]string, error) {
	out := map[int64]string{}
	if runID == 0 {
		return out, nil
	}
	rows, err := db.read.QueryContext(ctx, `SELECT target_id, band FROM `+driftTable+` WHERE run_id = $1`, runID)
	if err != nil {
		return nil, fmt.Errorf("drift of run %d: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   sql.NullInt64
			band sql.NullString
		)
		if err := rows.Scan(&id, &band); err != nil {
			return nil, fmt.Errorf("drift of run %d: %w", runID, err)
		}
		if id.Valid && audit.DriftRank(band.String) > audit.DriftRank(out[id.Int64]) {
			out[id.Int64] = band.String
		}
	}
	return out, rows.Err()
}
