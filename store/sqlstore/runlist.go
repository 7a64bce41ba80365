package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// RunSummaries returns the runs, newest first, at most limit of them
// (limit <= 0: all), with their counts. It is safe for concurrent use.
func (db *DB) RunSummaries(ctx context.Context, limit int) ([]store.RunSummary, error) {
	if limit <= 0 {
		limit = noLimit
	}
	broken, brokenArgs := verdictSet(audit.Verdict.Broken)
	args := append(brokenArgs, limit)
	rows, err := db.read.QueryContext(ctx, `
		SELECT `+prefixed("r.", runColumns)+`,
			(SELECT count(*) FROM pages WHERE run_id = r.id),
			(SELECT count(*) FROM links WHERE run_id = r.id),
			(SELECT count(*) FROM run_targets WHERE run_id = r.id),
			(SELECT count(*) FROM checks WHERE run_id = r.id),
			(SELECT count(*) FROM checks WHERE run_id = r.id AND verdict IN (`+broken+`)),
			(SELECT count(*) FROM findings WHERE run_id = r.id),
			(SELECT count(*) FROM history_events WHERE run_id = r.id AND event = 'confirmed'),
			EXISTS (SELECT 1 FROM run_stages WHERE run_id = r.id AND stage = '`+audit.StageAbandoned+`')
		FROM runs r
		ORDER BY r.started_at DESC, r.id DESC
		LIMIT $1`, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []store.RunSummary
	for rows.Next() {
		var s store.RunSummary
		r, err := scanRunRow(rows.Scan, &s.Pages, &s.Links, &s.Targets, &s.Checked, &s.Broken, &s.Findings, &s.Confirmed, &s.Abandoned)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		s.Run = *r
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// scanRunRow reads runColumns (and extra destinations after them) with
// scan, like scanRun does for a single row.
func scanRunRow(scan func(...any) error, extra ...any) (*audit.Run, error) {
	var (
		r                 audit.Run
		started, finished sql.NullString
		status            string
		seeds, args       string
	)
	dst := append([]any{&r.ID, &started, &finished, &status, &r.Mode, &seeds, &args, &r.Version, &r.Error}, extra...)
	if err := scan(dst...); err != nil {
		return nil, err
	}
	r.Status = audit.RunStatus(status)
	var err error
	if r.StartedAt, err = parseInstant(started); err != nil {
		return nil, fmt.Errorf("started_at: %w", err)
	}
	if r.FinishedAt, err = parseInstant(finished); err != nil {
		return nil, fmt.Errorf("finished_at: %w", err)
	}
	if r.Seeds, err = unmarshalStrings(seeds); err != nil {
		return nil, fmt.Errorf("seeds: %w", err)
	}
	if r.Args, err = unmarshalStrings(args); err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	return &r, nil
}
