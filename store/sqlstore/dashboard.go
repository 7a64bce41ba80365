package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// The read-only queries behind the dashboard (package dashboard): one
// target across runs, search, the progress of a running run. They read
// only columns the URL interning of links and findings leaves in place
// (pages.url, targets.url, IDs, verdicts), so they stay valid whichever
// form a row's URLs are stored in.

// OpenReadOnlyWith opens an existing database for reading only: both pools
// are opened with mode=ro and query_only, no migration runs, and every
// write method of the returned DB fails. It takes no lock, so it can stay
// open while `linkrot audit` writes (WAL) and while cron runs start and
// end. A database written by a newer linkrot yields an error wrapping
// ErrNewerSchema; one that needs migrations an error saying so. A
// PostgreSQL URL opens pools whose sessions are read-only
// (default_transaction_read_only).
func OpenReadOnlyWith(ctx context.Context, path string, e Engines) (*DB, error) {
	if store.IsPostgresURL(path) {
		db, err := openPostgres(ctx, path, true, e)
		if err != nil {
			return nil, fmt.Errorf("open store read-only: %w", err)
		}
		return db, nil
	}
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("open store read-only: invalid database path %q", path)
	}
	if e.SQLite == nil {
		return nil, errors.New("open store read-only: no SQLite engine given (package store/sqlite)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store read-only: %w", err)
	}
	// mode=ro makes SQLite refuse every write; query_only makes it refuse
	// them even where mode=ro would not apply. No journal_mode pragma: a
	// read-only connection must not try to change it.
	name := fileURI(abs) + "?mode=ro&" + strings.Join([]string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()),
		"_pragma=query_only(1)",
		"_pragma=foreign_keys(1)",
	}, "&")
	pool, err := e.SQLite.OpenDB(name)
	if err != nil {
		return nil, fmt.Errorf("open store read-only: %w", err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	pool.SetMaxOpenConns(n)
	pool.SetMaxIdleConns(n)
	var v int
	if err := pool.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store read-only: %w", err)
	}
	switch latest := latestVersion(); {
	case v > latest:
		pool.Close()
		return nil, fmt.Errorf("open store read-only: %w", newerSchemaError(v))
	case v < latest:
		pool.Close()
		return nil, fmt.Errorf("open store read-only: schema version %d is older than %d: open it once read-write (any linkrot command) to migrate it", v, latest)
	}
	// Both fields point at the same read-only pool: a write method fails
	// with SQLite's "attempt to write a readonly database".
	return &DB{path: abs, eng: e, write: pool, read: pool}, nil
}

// Target returns the target with the given ID; an unknown ID yields an
// error wrapping audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) Target(ctx context.Context, id int64) (*store.TargetInfo, error) {
	var (
		t     store.TargetInfo
		first sql.NullInt64
		at    sql.NullString
	)
	err := db.read.QueryRowContext(ctx, `SELECT id, url, host, scheme, first_seen_run, first_seen_at
		FROM targets WHERE id = $1`, id).Scan(&t.ID, &t.URL, &t.Host, &t.Scheme, &first, &at)
	if errors.Is(err, sql.ErrNoRows) {
		err = audit.ErrNotFound
	}
	if err == nil {
		t.FirstSeenRun = first.Int64
		t.FirstSeenAt, err = parseInstant(at)
	}
	if err != nil {
		return nil, fmt.Errorf("target %d: %w", id, err)
	}
	return &t, nil
}

// TargetChecks returns the checks of a target in every run the database
// holds, newest run first, at most limit of them (limit <= 0: all), with
// every stored field (see Checks). It is safe for concurrent use.
func (db *DB) TargetChecks(ctx context.Context, targetID int64, limit int) ([]audit.Check, error) {
	if limit <= 0 {
		limit = noLimit
	}
	rows, err := db.read.QueryContext(ctx, selectCheckSQL+`
		FROM checks c JOIN targets t ON t.id = c.target_id
		WHERE c.target_id = $1
		ORDER BY c.run_id DESC
		LIMIT $2`, targetID, limit)
	if err != nil {
		return nil, fmt.Errorf("checks of target %d: %w", targetID, err)
	}
	defer rows.Close()
	var out []audit.Check
	for rows.Next() {
		c, err := scanCheck(rows)
		if err != nil {
			return nil, fmt.Errorf("checks of target %d: %w", targetID, err)
		}
		out = append(out, *c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checks of target %d: %w", targetID, err)
	}
	return out, nil
}

// TargetLinks returns the links to a target in the latest run that has
// any, in page then document order, at most limit of them (limit <= 0:
// all). It is safe for concurrent use.
func (db *DB) TargetLinks(ctx context.Context, targetID int64, limit int) ([]store.TargetLink, error) {
	if limit <= 0 {
		limit = noLimit
	}
	rows, err := db.read.QueryContext(ctx, `
		SELECT l.run_id, l.id, p.url, l.element, l.text
		FROM links l JOIN pages p ON p.id = l.page_id
		WHERE l.target_id = $1 AND l.run_id = (SELECT max(run_id) FROM run_targets WHERE target_id = $1)
		ORDER BY l.page_id, l.ord
		LIMIT $2`, targetID, limit)
	if err != nil {
		return nil, fmt.Errorf("links to target %d: %w", targetID, err)
	}
	defer rows.Close()
	var out []store.TargetLink
	for rows.Next() {
		var l store.TargetLink
		if err := rows.Scan(&l.RunID, &l.LinkID, &l.PageURL, &l.Element, &l.Text); err != nil {
			return nil, fmt.Errorf("links to target %d: %w", targetID, err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("links to target %d: %w", targetID, err)
	}
	return out, nil
}

// TargetMementos returns the nearest-memento records of a target across
// runs, newest run first, at most limit (limit <= 0: all). Only the
// fields the dashboard shows are set: RunID, LinkID, TargetID, Archive,
// URL, Datetime, Nearest, Count, Error and CheckedAt.
func (db *DB) TargetMementos(ctx context.Context, targetID int64, limit int) ([]audit.Memento, error) {
	if limit <= 0 {
		limit = noLimit
	}
	rows, err := db.read.QueryContext(ctx, `SELECT run_id, link_id, archive, url, datetime, nearest, count, error, checked_at
		FROM mementos WHERE target_id = $1 ORDER BY run_id DESC, link_id, archive LIMIT $2`, targetID, limit)
	if err != nil {
		return nil, fmt.Errorf("mementos of target %d: %w", targetID, err)
	}
	defer rows.Close()
	var out []audit.Memento
	for rows.Next() {
		var (
			m       audit.Memento
			dt, cat sql.NullString
		)
		if err := rows.Scan(&m.RunID, &m.LinkID, &m.Archive, &m.URL, &dt, &m.Nearest, &m.Count, &m.Error, &cat); err != nil {
			return nil, fmt.Errorf("mementos of target %d: %w", targetID, err)
		}
		m.TargetID = targetID
		if m.Datetime, err = parseInstant(dt); err == nil {
			m.CheckedAt, err = parseInstant(cat)
		}
		if err != nil {
			return nil, fmt.Errorf("mementos of target %d: %w", targetID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mementos of target %d: %w", targetID, err)
	}
	return out, nil
}

// TargetDrifts returns the drift measurements of a target across runs,
// newest run first, at most limit (limit <= 0: all), every field set as
// by Drifts.
func (db *DB) TargetDrifts(ctx context.Context, targetID int64, limit int) ([]audit.Drift, error) {
	if limit <= 0 {
		limit = noLimit
	}
	rows, err := db.read.QueryContext(ctx, `SELECT run_id, link_id, kind, reference_url, reference_time, live_url,
		simhash_distance, text_measured, jaccard, dice, cosine, words_reference, words_live, word_change, band,
		excerpt_reference, excerpt_live, measured_at
		FROM drifts WHERE target_id = $1 ORDER BY run_id DESC, kind DESC, link_id NULLS FIRST, id LIMIT $2`, targetID, limit)
	if err != nil {
		return nil, fmt.Errorf("drift of target %d: %w", targetID, err)
	}
	defer rows.Close()
	var out []audit.Drift
	for rows.Next() {
		var (
			d             audit.Drift
			link          sql.NullInt64
			j, dc, c      sql.NullFloat64
			ref, measured sql.NullString
		)
		if err := rows.Scan(&d.RunID, &link, &d.Kind, &d.ReferenceURL, &ref, &d.LiveURL,
			&d.SimHashDistance, &d.TextMeasured, &j, &dc, &c, &d.WordsReference, &d.WordsLive, &d.WordChange,
			&d.Band, &d.ExcerptReference, &d.ExcerptLive, &measured); err != nil {
			return nil, fmt.Errorf("drift of target %d: %w", targetID, err)
		}
		d.TargetID, d.LinkID = targetID, link.Int64
		d.Jaccard, d.Dice, d.Cosine = j.Float64, dc.Float64, c.Float64
		if d.ReferenceTime, err = parseInstant(ref); err == nil {
			d.MeasuredAt, err = parseInstant(measured)
		}
		if err != nil {
			return nil, fmt.Errorf("drift of target %d: %w", targetID, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("drift of target %d: %w", targetID, err)
	}
	return out, nil
}

// RunFindingRefs returns the findings of a run that are tied to a link,
// with their IDs, ordered by ID. It is safe for concurrent use.
func (db *DB) RunFindingRefs(ctx context.Context, runID int64) ([]store.FindingRef, error) {
	rows, err := db.read.QueryContext(ctx, `
		SELECT f.id, f.run_id, f.link_id, coalesce(l.target_id, 0), p.url, f.verdict, f.message, f.fragment
		FROM findings f JOIN links l ON l.id = f.link_id JOIN pages p ON p.id = l.page_id
		WHERE f.run_id = $1 ORDER BY f.id`, runID)
	if err != nil {
		return nil, fmt.Errorf("findings of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []store.FindingRef
	for rows.Next() {
		var (
			f store.FindingRef
			v string
		)
		if err := rows.Scan(&f.ID, &f.RunID, &f.LinkID, &f.TargetID, &f.PageURL, &v, &f.Message, &f.Fragment); err != nil {
			return nil, fmt.Errorf("findings of run %d: %w", runID, err)
		}
		f.Verdict = audit.Verdict(v)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("findings of run %d: %w", runID, err)
	}
	return out, nil
}

// UnprotectedLinks counts, for each of runIDs, the links to http(s)
// targets that are not resources and carry no snapshot: neither Robust
// Links attributes nor an mset. A run without such links is absent.
func (db *DB) UnprotectedLinks(ctx context.Context, runIDs []int64) (map[int64]int, error) {
	out := make(map[int64]int, len(runIDs))
	if len(runIDs) == 0 {
		return out, nil
	}
	rows, err := db.read.QueryContext(ctx, `
		SELECT l.run_id, count(*)
		FROM links l JOIN targets t ON t.id = l.target_id
		WHERE l.run_id IN `+db.idListSQL(1)+`
			AND l.resource = 0 AND l.has_robust = 0 AND l.has_mset = 0 AND t.scheme IN ('http', 'https')
		GROUP BY l.run_id`, idList(runIDs))
	if err != nil {
		return nil, fmt.Errorf("unprotected links: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("unprotected links: %w", err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("unprotected links: %w", err)
	}
	return out, nil
}

// SearchTargets returns the targets whose URL contains q (case-insensitive
// for ASCII), ordered by URL, at most limit. q is bound as a parameter
// and matched as a substring (the URL changes when its occurrences of q
// are removed: written so in both engines' SQL, which name their
// substring search differently), so '%' and '_' are plain characters.
func (db *DB) SearchTargets(ctx context.Context, q string, limit int) ([]store.SearchHit, error) {
	return db.search(ctx, "targets", `
		SELECT t.id, t.url, coalesce((SELECT max(run_id) FROM run_targets WHERE target_id = t.id), 0)
		FROM targets t WHERE replace(lower(t.url), lower($1), '') <> lower(t.url)
		ORDER BY t.url LIMIT $2`, q, limit)
}

// SearchPages returns the crawled pages whose URL contains q
// (case-insensitive for ASCII), once per URL with the latest run that
// crawled it, ordered by URL, at most limit.
func (db *DB) SearchPages(ctx context.Context, q string, limit int) ([]store.SearchHit, error) {
	return db.search(ctx, "pages", `
		SELECT 0, url, max(run_id) FROM pages WHERE replace(lower(url), lower($1), '') <> lower(url)
		GROUP BY url ORDER BY url LIMIT $2`, q, limit)
}

func (db *DB) search(ctx context.Context, what, query, q string, limit int) ([]store.SearchHit, error) {
	if q == "" || limit <= 0 {
		return nil, nil
	}
	rows, err := db.read.QueryContext(ctx, query, q, limit)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", what, err)
	}
	defer rows.Close()
	var out []store.SearchHit
	for rows.Next() {
		var h store.SearchHit
		if err := rows.Scan(&h.ID, &h.URL, &h.RunID); err != nil {
			return nil, fmt.Errorf("search %s: %w", what, err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search %s: %w", what, err)
	}
	return out, nil
}

// RunningRuns returns the progress of every run whose status is running,
// newest first. A run that was killed without finishing also has that
// status until it is resumed or abandoned. It is safe for concurrent use.
func (db *DB) RunningRuns(ctx context.Context) ([]store.RunProgress, error) {
	broken, args := verdictSet(audit.Verdict.Broken)
	rows, err := db.read.QueryContext(ctx, `
		SELECT r.id, r.status,
			(SELECT count(*) FROM pages WHERE run_id = r.id),
			(SELECT count(*) FROM links WHERE run_id = r.id),
			(SELECT count(*) FROM checks WHERE run_id = r.id),
			(SELECT count(*) FROM checks WHERE run_id = r.id AND verdict IN (`+broken+`)),
			(SELECT count(*) FROM findings WHERE run_id = r.id)
		FROM runs r WHERE r.status = 'running'
			AND NOT EXISTS (SELECT 1 FROM run_stages WHERE run_id = r.id AND stage = '`+audit.StageAbandoned+`')
		ORDER BY r.id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("running runs: %w", err)
	}
	defer rows.Close()
	var out []store.RunProgress
	for rows.Next() {
		var (
			p store.RunProgress
			s string
		)
		if err := rows.Scan(&p.RunID, &s, &p.Pages, &p.Links, &p.Checked, &p.Broken, &p.Findings); err != nil {
			return nil, fmt.Errorf("running runs: %w", err)
		}
		p.Status = audit.RunStatus(s)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("running runs: %w", err)
	}
	return out, nil
}
