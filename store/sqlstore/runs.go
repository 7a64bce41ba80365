package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// instantLayout formats observation times (run start and end, page fetch):
// RFC 3339 in UTC with a fixed nine-digit fraction, so that the text sorts
// in time order. time.RFC3339Nano parses it.
const instantLayout = "2006-01-02T15:04:05.000000000Z07:00"

// formatInstant returns t as stored text, or NULL for the zero time.
func formatInstant(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(instantLayout)
}

// parseInstant reads what formatInstant wrote; NULL is the zero time.
func parseInstant(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s.String)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// formatSpecTime returns a datetime parsed from markup (Robust Links, mset,
// pwid) as RFC 3339 UTC text to the second, or NULL for the zero time.
func formatSpecTime(t audit.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// parseSpecTime reads what formatSpecTime wrote; NULL is the zero Time.
func parseSpecTime(s sql.NullString) (audit.Time, error) {
	if !s.Valid {
		return audit.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s.String)
	if err != nil {
		return audit.Time{}, err
	}
	return audit.NewTime(t), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CreateRun inserts r, sets r.ID and sets r.Status to audit.RunRunning. A
// zero r.StartedAt is set to the current time. r.FinishedAt and r.Error are
// not stored (FinishRun records them) and are cleared. Seeds and Args are
// stored as JSON arrays (invalid UTF-8 in them becomes U+FFFD); empty ones
// read back as nil.
func (db *DB) CreateRun(ctx context.Context, r *audit.Run) error {
	if r.StartedAt.IsZero() {
		r.StartedAt = time.Now()
	}
	// URL passwords are never stored (the command line may hold one).
	seeds, err := marshalStrings(redactAll(r.Seeds))
	if err != nil {
		return fmt.Errorf("create run: %w", err)
	}
	args, err := marshalStrings(redactAll(r.Args))
	if err != nil {
		return fmt.Errorf("create run: %w", err)
	}
	var id int64
	err = db.write.QueryRowContext(ctx,
		`INSERT INTO runs (started_at, status, mode, seeds, args, version, error)
		 VALUES ($1, $2, $3, $4, $5, $6, '') RETURNING id`,
		formatInstant(r.StartedAt), string(audit.RunRunning), r.Mode, seeds, args, r.Version).Scan(&id)
	if err != nil {
		return fmt.Errorf("create run: %w", err)
	}
	r.ID = id
	// A SQLite rowid of a deleted run can come back: what the writer
	// remembers of a run's fragments and targets is not this one's.
	db.fragSeen.forget(id)
	db.targetSeen.forget(id)
	r.Status = audit.RunRunning
	r.FinishedAt = time.Time{}
	r.Error = ""
	return nil
}

func marshalStrings(s []string) (string, error) {
	if s == nil {
		s = []string{}
	}
	b, err := json.Marshal(s)
	return string(b), err
}

func unmarshalStrings(s string) ([]string, error) {
	var v []string
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, err
	}
	if len(v) == 0 {
		return nil, nil
	}
	return v, nil
}

// FinishRun records the end of a run: its final status (complete,
// interrupted or failed; anything else is an error), the time it finished
// (the current time when finishedAt is zero) and, for a failed run, the
// error message. It returns an error wrapping audit.ErrNotFound for an
// unknown run. Finishing a run again overwrites the earlier outcome.
func (db *DB) FinishRun(ctx context.Context, runID int64, status audit.RunStatus, finishedAt time.Time, errMsg string) error {
	switch status {
	case audit.RunComplete, audit.RunInterrupted, audit.RunFailed:
	default:
		return fmt.Errorf("finish run %d: invalid final status %q", runID, status)
	}
	if finishedAt.IsZero() {
		finishedAt = time.Now()
	}
	res, err := db.write.ExecContext(ctx,
		`UPDATE runs SET finished_at = $1, status = $2, error = $3 WHERE id = $4`,
		formatInstant(finishedAt), string(status), errMsg, runID)
	if err != nil {
		return fmt.Errorf("finish run %d: %w", runID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("finish run %d: %w", runID, err)
	}
	if n == 0 {
		return fmt.Errorf("finish run %d: %w", runID, audit.ErrNotFound)
	}
	return nil
}

const runColumns = `id, started_at, finished_at, status, mode, seeds, args, version, error`

func scanRun(row *sql.Row) (*audit.Run, error) {
	var (
		r                 audit.Run
		started, finished sql.NullString
		status            string
		seeds, args       string
	)
	if err := row.Scan(&r.ID, &started, &finished, &status, &r.Mode, &seeds, &args, &r.Version, &r.Error); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, audit.ErrNotFound
		}
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

// Run returns the run with the given ID, or an error wrapping
// audit.ErrNotFound. Its times are in UTC.
func (db *DB) Run(ctx context.Context, runID int64) (*audit.Run, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, runID))
	if err != nil {
		return nil, fmt.Errorf("get run %d: %w", runID, err)
	}
	return r, nil
}

// LatestRun returns the run started last (the highest ID among equal start
// times), or an error wrapping audit.ErrNotFound when there is none.
func (db *DB) LatestRun(ctx context.Context) (*audit.Run, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx,
		`SELECT `+runColumns+` FROM runs ORDER BY started_at DESC, id DESC LIMIT 1`))
	if err != nil {
		return nil, fmt.Errorf("get latest run: %w", err)
	}
	return r, nil
}

// runStatsSQL counts what RunStats returns of the run $1. The links are
// counted by indexes only (links_run_id, and the partial links_robust and
// links_mset), the targets by run_targets: never by reading the run's
// links.
const runStatsSQL = `
		SELECT
			(SELECT count(*) FROM pages WHERE run_id = r.id),
			(SELECT count(*) FROM pages WHERE run_id = r.id AND (status >= 400 OR fetch_error <> '')),
			(SELECT count(*) FROM links WHERE run_id = r.id),
			(SELECT count(*) FROM run_targets WHERE run_id = r.id),
			(SELECT count(*) FROM links WHERE run_id = r.id AND has_robust = 1),
			(SELECT count(*) FROM links WHERE run_id = r.id AND has_mset = 1),
			(SELECT count(*) FROM snapshots s JOIN links l ON l.id = s.link_id WHERE l.run_id = r.id AND s.source <> 'pwid'),
			(SELECT count(*) FROM identifiers i JOIN pages p ON p.id = i.page_id WHERE p.run_id = r.id),
			(SELECT count(*) FROM pwids w JOIN pages p ON p.id = w.page_id WHERE p.run_id = r.id),
			(SELECT count(*) FROM diagnostics WHERE run_id = r.id),
			(SELECT count(*) FROM redirects d JOIN pages p ON p.id = d.page_id WHERE p.run_id = r.id)
		FROM runs r
		WHERE r.id = $1`

// RunStats counts what a run recorded. Targets counts the distinct targets
// its links point to; RobustLinks and MsetLinks count links carrying Robust
// Links attributes and an mset attribute; Snapshots counts data-versionurl
// entries and mset copies (not the pwid snapshots the archives stage
// resolves: PWIDs counts pwids); Diagnostics counts page- and link-level
// ones; ErrorPages counts pages with a status of 400 or more or a fetch
// error. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) RunStats(ctx context.Context, runID int64) (*audit.RunStats, error) {
	var s audit.RunStats
	err := db.read.QueryRowContext(ctx, runStatsSQL, runID).Scan(
		&s.Pages, &s.ErrorPages, &s.Links, &s.Targets, &s.RobustLinks, &s.MsetLinks,
		&s.Snapshots, &s.Identifiers, &s.PWIDs, &s.Diagnostics, &s.Redirects)
	if errors.Is(err, sql.ErrNoRows) {
		err = audit.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("run stats %d: %w", runID, err)
	}
	return &s, nil
}

// redactAll returns ss with URL passwords redacted (urls.RedactURLString:
// each is one command-line argument or URL), and the password and
// sslpassword parameters of a PostgreSQL URL too (libpq also takes the
// password as a query parameter: postgres://u@h/db?password=s).
func redactAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = redactDSNParams(urls.RedactURLString(s))
	}
	return out
}

// dsnSecretParam matches a password-bearing parameter of a PostgreSQL URL
// (?password=..., &sslpassword=...) up to the next '&', '#' or space.
var dsnSecretParam = regexp.MustCompile(`(?i)([?&](?:ssl)?password=)[^&#\s]*`)

// redactDSNParams replaces the values of the password parameters of a
// PostgreSQL URL in s (an argument such as --db=postgres://...) with
// urls.RedactedPassword; any other text is returned unchanged.
func redactDSNParams(s string) string {
	l := strings.ToLower(s)
	if !strings.Contains(l, "postgres://") && !strings.Contains(l, "postgresql://") {
		return s
	}
	return dsnSecretParam.ReplaceAllString(s, "${1}"+urls.RedactedPassword)
}
