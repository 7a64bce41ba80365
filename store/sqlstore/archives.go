package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// The archives stage of a run (migration 0003) stores snapshot checks,
// nearest mementos, drift measurements, identifier checks, suggestions and
// save requests under the run. Each Save method stores a batch in one write
// transaction (all or none) and is the save function of an audit.Batcher;
// each read method returns a run's rows. A link ID, when given, must be a
// link of the record's run: otherwise nothing is stored and the error wraps
// audit.ErrNotFound, as for an unknown run.

// linkOfRun is the condition that parameter ?2 (a link ID or NULL) is a
// link of run ?1.
const linkOfRun = `(CAST($2 AS BIGINT) IS NULL OR EXISTS (SELECT 1 FROM links WHERE id = $2 AND run_id = $1))`

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// saveBatch stores n records with query (its first two parameters the run
// and the link, see linkOfRun) in one transaction.
func (db *DB) saveBatch(ctx context.Context, what string, runIDs []int64, query string, n int, args func(i int) ([]any, string)) error {
	if n == 0 {
		return nil
	}
	err := db.writeBatch(ctx, runIDs, query, n, func(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, i int) error {
		a, desc := args(i)
		res, err := stmt.ExecContext(ctx, a...)
		if err == nil {
			var k int64
			if k, err = res.RowsAffected(); err == nil && k == 0 {
				err = fmt.Errorf("link %v of run %v: %w", a[1], a[0], audit.ErrNotFound)
			}
		}
		if err != nil {
			return fmt.Errorf("%s %d of the batch (%s): %w", what, i, desc, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save %ss: %w", what, err)
	}
	return nil
}

// ClearArchives deletes what the archives stage found for a run (snapshot
// checks and the pwid snapshots they resolved, mementos, drift and drift
// failures, identifier checks, suggestions), in one write
// transaction, so that the stage can run again. The run's Save Page Now
// requests are kept: they were sent, and the stage run again does not send
// them again (robust.Options.Saved). An unknown run yields an error
// wrapping audit.ErrNotFound.
func (db *DB) ClearArchives(ctx context.Context, runID int64) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("clear archive results: %w", err)
	}
	defer tx.Rollback()
	if err := requireRuns(ctx, tx, []int64{runID}); err != nil {
		return fmt.Errorf("clear archive results: %w", err)
	}
	for _, t := range []string{"snapshot_checks", "snapshot_skips", "mementos", "drifts", "drift_failures", "identifier_checks", "suggestions"} {
		// Table names are constants of this function.
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE run_id = $1`, runID); err != nil {
			return fmt.Errorf("clear archive results: %s: %w", t, err)
		}
	}
	// The pwid snapshots the stage resolved (SaveSnapshotChecks).
	if _, err := tx.ExecContext(ctx, `DELETE FROM snapshots WHERE source = 'pwid'
		AND link_id IN (SELECT id FROM links WHERE run_id = $1)`, runID); err != nil {
		return fmt.Errorf("clear archive results: pwid snapshots: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("clear archive results: commit: %w", err)
	}
	return nil
}

func runIDsOf[T any](items []T, id func(*T) int64) []int64 {
	out := make([]int64, len(items))
	for i := range items {
		out[i] = id(&items[i])
	}
	return out
}

// SaveSnapshotChecks stores snapshot checks. Durations are stored in whole
// milliseconds. It is safe for concurrent use.
//
// The check of a pwid that resolved to a replay URL (Source "pwid", URL
// set, LinkID set) also stores that snapshot in the snapshots table, with
// source 'pwid' (in the same transaction): url the resolved URL, datetime
// the pwid's archival time (DeclaredDatetime), ord the order of the link's
// pwid snapshots, target_id the URL's target (created if new), so that a
// pwid is a snapshot of its link like a data-versionurl entry.
// ClearArchives deletes them with the checks.
func (db *DB) SaveSnapshotChecks(ctx context.Context, checks []audit.SnapshotCheck) error {
	const q = `INSERT INTO snapshot_checks (run_id, link_id, source, declared, url, final_url, verdict,
		status, reason, memento_datetime, declared_datetime, declared_date_only, datetime_mismatch,
		declared_delta_ms, versiondate_delta_ms, original, original_mismatch, checked_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18
		WHERE ` + linkOfRun
	if len(checks) == 0 {
		return nil
	}
	now := formatInstant(time.Now())
	err := db.writeBatch(ctx, runIDsOf(checks, func(c *audit.SnapshotCheck) int64 { return c.RunID }), q, len(checks),
		func(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, i int) error {
			c := &checks[i]
			res, err := stmt.ExecContext(ctx, c.RunID, nullID(c.LinkID), c.Source, c.Declared, c.URL, c.FinalURL, string(c.Verdict),
				c.Status, c.Reason, formatInstant(c.MementoDatetime), formatInstant(c.DeclaredDatetime),
				boolInt(c.DeclaredDateOnly), boolInt(c.DatetimeMismatch), millis(c.DeclaredDelta),
				millis(c.VersionDateDelta), c.Original, boolInt(c.OriginalMismatch), formatInstant(c.CheckedAt))
			if err == nil {
				var k int64
				if k, err = res.RowsAffected(); err == nil && k == 0 {
					err = fmt.Errorf("link %v of run %v: %w", c.LinkID, c.RunID, audit.ErrNotFound)
				}
			}
			if err == nil && c.Source == "pwid" && c.URL != "" && c.LinkID != 0 {
				err = savePWIDSnapshot(ctx, tx, c, now)
			}
			if err != nil {
				return fmt.Errorf("snapshot check %d of the batch (%s): %w", i, quote(c.Declared), err)
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("save snapshot checks: %w", err)
	}
	return nil
}

// savePWIDSnapshot stores the snapshot a pwid resolved to (see
// SaveSnapshotChecks).
func savePWIDSnapshot(ctx context.Context, tx *sql.Tx, c *audit.SnapshotCheck, now any) error {
	var target any
	if p, err := urls.ParseURL(c.URL); err == nil {
		if norm, u := p.Key(), p.NetURL(); u.Scheme == "http" || u.Scheme == "https" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO targets (url, host, scheme, first_seen_run, first_seen_at)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT (url) DO NOTHING`, norm, u.Host, u.Scheme, c.RunID, now); err != nil {
				return fmt.Errorf("pwid snapshot target: %w", err)
			}
			var id int64
			if err := tx.QueryRowContext(ctx, `SELECT id FROM targets WHERE url = $1`, norm).Scan(&id); err != nil {
				return fmt.Errorf("pwid snapshot target: %w", err)
			}
			target = id
		}
	}
	raw := ""
	if !c.DeclaredDatetime.IsZero() {
		raw = c.DeclaredDatetime.UTC().Format(time.RFC3339)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO snapshots (link_id, source, ord, url, datetime, date_only, datetime_raw, rel, target_id)
		SELECT $1, 'pwid', (SELECT count(*) FROM snapshots WHERE link_id = $1 AND source = 'pwid'), $2, $3, 0, $4, NULL, $5`,
		c.LinkID, c.URL, formatSpecTime(audit.NewTime(c.DeclaredDatetime)), raw, target)
	if err != nil {
		return fmt.Errorf("pwid snapshot: %w", err)
	}
	return nil
}

// PWIDSnapshots returns the pwid snapshots of a run's links, by link and
// order. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) PWIDSnapshots(ctx context.Context, runID int64) ([]store.PWIDSnapshot, error) {
	var out []store.PWIDSnapshot
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT s.link_id, s.ord, s.url, s.datetime, s.target_id
			FROM snapshots s JOIN links l ON l.id = s.link_id
			WHERE l.run_id = $1 AND s.source = 'pwid' ORDER BY s.link_id, s.ord`, runID, func(rows *sql.Rows) error {
			var (
				p      store.PWIDSnapshot
				dt     sql.NullString
				target sql.NullInt64
			)
			if err := rows.Scan(&p.LinkID, &p.Ord, &p.URL, &dt, &target); err != nil {
				return err
			}
			t, err := parseSpecTime(dt)
			if err != nil {
				return err
			}
			p.Datetime, p.TargetID = t.Time, target.Int64
			out = append(out, p)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("pwid snapshots of run %d: %w", runID, err)
	}
	return out, nil
}

// SnapshotChecks returns the snapshot checks of a run in the order they
// were saved. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) SnapshotChecks(ctx context.Context, runID int64) ([]audit.SnapshotCheck, error) {
	var out []audit.SnapshotCheck
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT run_id, link_id, source, declared, url, final_url, verdict, status, reason,
			memento_datetime, declared_datetime, declared_date_only, datetime_mismatch, declared_delta_ms,
			versiondate_delta_ms, original, original_mismatch, checked_at
			FROM snapshot_checks WHERE run_id = $1 ORDER BY id`, runID, func(rows *sql.Rows) error {
			var (
				c                 audit.SnapshotCheck
				link              sql.NullInt64
				verdict           string
				md, dd, checkedAt sql.NullString
				delta, vdelta     int64
			)
			if err := rows.Scan(&c.RunID, &link, &c.Source, &c.Declared, &c.URL, &c.FinalURL, &verdict, &c.Status,
				&c.Reason, &md, &dd, &c.DeclaredDateOnly, &c.DatetimeMismatch, &delta, &vdelta, &c.Original,
				&c.OriginalMismatch, &checkedAt); err != nil {
				return err
			}
			c.LinkID, c.Verdict = link.Int64, audit.SnapshotVerdict(verdict)
			c.DeclaredDelta, c.VersionDateDelta = time.Duration(delta)*time.Millisecond, time.Duration(vdelta)*time.Millisecond
			var err error
			if c.MementoDatetime, err = parseInstant(md); err != nil {
				return err
			}
			if c.DeclaredDatetime, err = parseInstant(dd); err != nil {
				return err
			}
			if c.CheckedAt, err = parseInstant(checkedAt); err != nil {
				return err
			}
			out = append(out, c)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot checks of run %d: %w", runID, err)
	}
	return out, nil
}

// SaveMementos stores nearest-memento records. A run keeps one record per
// (link, archive); saving the pair again is an error (ClearArchives first).
// It is safe for concurrent use.
func (db *DB) SaveMementos(ctx context.Context, ms []audit.Memento) error {
	const q = `INSERT INTO mementos (run_id, link_id, target_id, archive, wanted, wanted_from, url, datetime,
		distance_ms, representative, nearest, count, first, last, error, checked_at, status, uri_r, reused)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19
		WHERE CAST($2 AS BIGINT) IS NOT NULL AND ` + linkOfRun
	return db.saveBatch(ctx, "memento", runIDsOf(ms, func(m *audit.Memento) int64 { return m.RunID }), q, len(ms),
		func(i int) ([]any, string) {
			m := &ms[i]
			return []any{m.RunID, nullID(m.LinkID), nullID(m.TargetID), m.Archive, formatInstant(m.Wanted), m.WantedFrom,
				m.URL, formatInstant(m.Datetime), millis(m.Distance), boolInt(m.Representative), boolInt(m.Nearest),
				m.Count, formatInstant(m.First), formatInstant(m.Last), m.Error, formatInstant(m.CheckedAt),
				m.Status, m.URIR, boolInt(m.Reused)}, m.Archive
		})
}

// Mementos returns the nearest-memento records of a run ordered by link,
// then archive. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) Mementos(ctx context.Context, runID int64) ([]audit.Memento, error) {
	var out []audit.Memento
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT run_id, link_id, target_id, archive, wanted, wanted_from, url, datetime,
			distance_ms, representative, nearest, count, first, last, error, checked_at, status, uri_r, reused
			FROM mementos WHERE run_id = $1 ORDER BY link_id, archive`, runID, func(rows *sql.Rows) error {
			var (
				m                                  audit.Memento
				target                             sql.NullInt64
				wanted, dt, first, last, checkedAt sql.NullString
				distance                           int64
			)
			if err := rows.Scan(&m.RunID, &m.LinkID, &target, &m.Archive, &wanted, &m.WantedFrom, &m.URL, &dt,
				&distance, &m.Representative, &m.Nearest, &m.Count, &first, &last, &m.Error, &checkedAt,
				&m.Status, &m.URIR, &m.Reused); err != nil {
				return err
			}
			m.TargetID = target.Int64
			m.Distance = time.Duration(distance) * time.Millisecond
			for _, p := range []struct {
				dst *time.Time
				src sql.NullString
			}{{&m.Wanted, wanted}, {&m.Datetime, dt}, {&m.First, first}, {&m.Last, last}, {&m.CheckedAt, checkedAt}} {
				t, err := parseInstant(p.src)
				if err != nil {
					return err
				}
				*p.dst = t
			}
			out = append(out, m)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("mementos of run %d: %w", runID, err)
	}
	return out, nil
}

// SaveDrifts stores drift measurements; Jaccard, Dice and Cosine are
// stored only when TextMeasured (NULL otherwise, read back as 0). It is
// safe for concurrent use.
func (db *DB) SaveDrifts(ctx context.Context, ds []audit.Drift) error {
	const q = `INSERT INTO drifts (run_id, link_id, target_id, kind, reference_url, reference_time, live_url,
		simhash_distance, text_measured, jaccard, dice, cosine, words_reference, words_live, word_change, band,
		excerpt_reference, excerpt_live, measured_at, reference_note)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20
		WHERE ` + linkOfRun
	return db.saveBatch(ctx, "drift", runIDsOf(ds, func(d *audit.Drift) int64 { return d.RunID }), q, len(ds),
		func(i int) ([]any, string) {
			d := &ds[i]
			var j, dc, c any
			if d.TextMeasured {
				j, dc, c = d.Jaccard, d.Dice, d.Cosine
			}
			return []any{d.RunID, nullID(d.LinkID), d.TargetID, d.Kind, d.ReferenceURL, formatInstant(d.ReferenceTime),
				d.LiveURL, d.SimHashDistance, boolInt(d.TextMeasured), j, dc, c, d.WordsReference, d.WordsLive,
				d.WordChange, d.Band, d.ExcerptReference, d.ExcerptLive, formatInstant(d.MeasuredAt), d.ReferenceNote}, quote(d.LiveURL)
		})
}

// Drifts returns the drift measurements of a run: memento drift by link,
// then first-seen drift by target. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) Drifts(ctx context.Context, runID int64) ([]audit.Drift, error) {
	var out []audit.Drift
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT run_id, link_id, target_id, kind, reference_url, reference_time, live_url,
			simhash_distance, text_measured, jaccard, dice, cosine, words_reference, words_live, word_change, band,
			excerpt_reference, excerpt_live, measured_at, reference_note
			FROM drifts WHERE run_id = $1 ORDER BY kind DESC, link_id NULLS FIRST, target_id, id`, runID, func(rows *sql.Rows) error {
			var (
				d             audit.Drift
				link          sql.NullInt64
				j, dc, c      sql.NullFloat64
				ref, measured sql.NullString
			)
			if err := rows.Scan(&d.RunID, &link, &d.TargetID, &d.Kind, &d.ReferenceURL, &ref, &d.LiveURL,
				&d.SimHashDistance, &d.TextMeasured, &j, &dc, &c, &d.WordsReference, &d.WordsLive, &d.WordChange,
				&d.Band, &d.ExcerptReference, &d.ExcerptLive, &measured, &d.ReferenceNote); err != nil {
				return err
			}
			d.LinkID = link.Int64
			d.Jaccard, d.Dice, d.Cosine = j.Float64, dc.Float64, c.Float64
			var err error
			if d.ReferenceTime, err = parseInstant(ref); err != nil {
				return err
			}
			if d.MeasuredAt, err = parseInstant(measured); err != nil {
				return err
			}
			out = append(out, d)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("drifts of run %d: %w", runID, err)
	}
	return out, nil
}

// SaveDriftFailures stores drift measurements that could not be made
// (migration 0005). It is safe for concurrent use.
func (db *DB) SaveDriftFailures(ctx context.Context, fs []audit.DriftFailure) error {
	const q = `INSERT INTO drift_failures (run_id, link_id, target_id, kind, reference_url, live_url, reason, measured_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE ` + linkOfRun
	return db.saveBatch(ctx, "drift failure", runIDsOf(fs, func(f *audit.DriftFailure) int64 { return f.RunID }), q, len(fs),
		func(i int) ([]any, string) {
			f := &fs[i]
			return []any{f.RunID, nullID(f.LinkID), f.TargetID, f.Kind, f.ReferenceURL, f.LiveURL, f.Reason,
				formatInstant(f.MeasuredAt)}, quote(f.LiveURL)
		})
}

// DriftFailures returns the drift measurements of a run that could not be
// made, by link. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) DriftFailures(ctx context.Context, runID int64) ([]audit.DriftFailure, error) {
	var out []audit.DriftFailure
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT run_id, link_id, target_id, kind, reference_url, live_url, reason, measured_at
			FROM drift_failures WHERE run_id = $1 ORDER BY link_id NULLS FIRST, id`, runID, func(rows *sql.Rows) error {
			var (
				f        audit.DriftFailure
				link     sql.NullInt64
				measured sql.NullString
			)
			if err := rows.Scan(&f.RunID, &link, &f.TargetID, &f.Kind, &f.ReferenceURL, &f.LiveURL, &f.Reason, &measured); err != nil {
				return err
			}
			f.LinkID = link.Int64
			var err error
			if f.MeasuredAt, err = parseInstant(measured); err != nil {
				return err
			}
			out = append(out, f)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("drift failures of run %d: %w", runID, err)
	}
	return out, nil
}

// ClearFirstSeenDrift deletes a run's first-seen drift measurements, so
// that they can be measured again without the rest of the archives stage
// (--no-archives). An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) ClearFirstSeenDrift(ctx context.Context, runID int64) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("clear first-seen drift: %w", err)
	}
	defer tx.Rollback()
	if err := requireRuns(ctx, tx, []int64{runID}); err != nil {
		return fmt.Errorf("clear first-seen drift: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM drifts WHERE run_id = $1 AND kind = 'first-seen'`, runID); err != nil {
		return fmt.Errorf("clear first-seen drift: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("clear first-seen drift: commit: %w", err)
	}
	return nil
}

// SaveIdentifierChecks stores identifier checks (LinkingPages as a JSON
// array). It is safe for concurrent use.
func (db *DB) SaveIdentifierChecks(ctx context.Context, ics []audit.IdentifierCheck) error {
	const q = `INSERT INTO identifier_checks (run_id, access_url, identifier, rel, own_page, linking_pages,
		resolves, leads_back, status, how, reason, checked_at)
		SELECT $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13
		WHERE ` + linkOfRun
	encoded := make([]string, len(ics))
	for i := range ics {
		pages := ics[i].LinkingPages
		if pages == nil {
			pages = []string{}
		}
		s, err := marshalJSON(pages)
		if err != nil {
			return fmt.Errorf("save identifier checks: linking pages: %w", err)
		}
		encoded[i] = s
	}
	return db.saveBatch(ctx, "identifier check", runIDsOf(ics, func(c *audit.IdentifierCheck) int64 { return c.RunID }), q, len(ics),
		func(i int) ([]any, string) {
			c := &ics[i]
			return []any{c.RunID, nil, c.AccessURL, c.Identifier, c.Rel, boolInt(c.OwnPage), encoded[i],
				boolInt(c.Resolves), boolInt(c.LeadsBack), c.Status, c.How, c.Reason, formatInstant(c.CheckedAt)}, quote(c.Identifier)
		})
}

// IdentifierChecks returns the identifier checks of a run ordered by access
// URL, then identifier. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) IdentifierChecks(ctx context.Context, runID int64) ([]audit.IdentifierCheck, error) {
	var out []audit.IdentifierCheck
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT run_id, access_url, identifier, rel, own_page, linking_pages, resolves,
			leads_back, status, how, reason, checked_at
			FROM identifier_checks WHERE run_id = $1 ORDER BY access_url, identifier, id`, runID, func(rows *sql.Rows) error {
			var (
				c         audit.IdentifierCheck
				pages     string
				checkedAt sql.NullString
			)
			if err := rows.Scan(&c.RunID, &c.AccessURL, &c.Identifier, &c.Rel, &c.OwnPage, &pages, &c.Resolves,
				&c.LeadsBack, &c.Status, &c.How, &c.Reason, &checkedAt); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(pages), &c.LinkingPages); err != nil {
				return fmt.Errorf("linking pages: %w", err)
			}
			if len(c.LinkingPages) == 0 {
				c.LinkingPages = nil
			}
			var err error
			if c.CheckedAt, err = parseInstant(checkedAt); err != nil {
				return err
			}
			out = append(out, c)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("identifier checks of run %d: %w", runID, err)
	}
	return out, nil
}

// SaveSuggestions stores suggestions. A run keeps one suggestion per
// (link, reason); saving the pair again is an error. It is safe for
// concurrent use.
func (db *DB) SaveSuggestions(ctx context.Context, sgs []audit.Suggestion) error {
	const q = `INSERT INTO suggestions (run_id, link_id, page_url, href, text, reason, originalurl, versiondate,
		versionurl, html)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
		WHERE CAST($2 AS BIGINT) IS NOT NULL AND ` + linkOfRun
	return db.saveBatch(ctx, "suggestion", runIDsOf(sgs, func(s *audit.Suggestion) int64 { return s.RunID }), q, len(sgs),
		func(i int) ([]any, string) {
			s := &sgs[i]
			return []any{s.RunID, nullID(s.LinkID), s.PageURL, s.Href, s.Text, s.Reason, s.OriginalURL,
				formatInstant(s.VersionDate), s.VersionURL, s.HTML}, quote(s.Href)
		})
}

// Suggestions returns the suggestions of a run ordered by page URL, then
// link, then reason. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) Suggestions(ctx context.Context, runID int64) ([]audit.Suggestion, error) {
	var out []audit.Suggestion
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT run_id, link_id, page_url, href, text, reason, originalurl, versiondate,
			versionurl, html FROM suggestions WHERE run_id = $1 ORDER BY page_url, link_id, reason`, runID, func(rows *sql.Rows) error {
			var (
				s  audit.Suggestion
				vd sql.NullString
			)
			if err := rows.Scan(&s.RunID, &s.LinkID, &s.PageURL, &s.Href, &s.Text, &s.Reason, &s.OriginalURL, &vd,
				&s.VersionURL, &s.HTML); err != nil {
				return err
			}
			var err error
			if s.VersionDate, err = parseInstant(vd); err != nil {
				return err
			}
			out = append(out, s)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("suggestions of run %d: %w", runID, err)
	}
	return out, nil
}

// SaveSaveRequests stores records of Save Page Now requests. It is safe
// for concurrent use.
func (db *DB) SaveSaveRequests(ctx context.Context, rs []audit.SaveRequest) error {
	const q = `INSERT INTO save_requests (run_id, url, archive, job_id, status, memento, reason, requested)
		SELECT $1, $3, $4, $5, $6, $7, $8, $9 WHERE ` + linkOfRun
	return db.saveBatch(ctx, "save request", runIDsOf(rs, func(r *audit.SaveRequest) int64 { return r.RunID }), q, len(rs),
		func(i int) ([]any, string) {
			r := &rs[i]
			return []any{r.RunID, nil, r.URL, r.Archive, r.JobID, r.Status, r.Memento, r.Reason, formatInstant(r.Requested)}, quote(r.URL)
		})
}

// SaveRequests returns the save requests of a run in the order they were
// saved. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) SaveRequests(ctx context.Context, runID int64) ([]audit.SaveRequest, error) {
	var out []audit.SaveRequest
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT run_id, url, archive, job_id, status, memento, reason, requested
			FROM save_requests WHERE run_id = $1 ORDER BY id`, runID, func(rows *sql.Rows) error {
			var (
				r   audit.SaveRequest
				req sql.NullString
			)
			if err := rows.Scan(&r.RunID, &r.URL, &r.Archive, &r.JobID, &r.Status, &r.Memento, &r.Reason, &req); err != nil {
				return err
			}
			var err error
			if r.Requested, err = parseInstant(req); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("save requests of run %d: %w", runID, err)
	}
	return out, nil
}

// instantsByID is the row callback of a query of (id, instant) rows: it
// reads each into out.
func instantsByID(out map[int64]time.Time) func(*sql.Rows) error {
	return func(rows *sql.Rows) error {
		var (
			id   int64
			seen sql.NullString
		)
		if err := rows.Scan(&id, &seen); err != nil {
			return err
		}
		t, err := parseInstant(seen)
		if err != nil {
			return err
		}
		out[id] = t
		return nil
	}
}

// TargetsFirstSeen returns, for every target linked from a run, when
// linkrot first saw it (targets.first_seen_at). An unknown run yields an
// error wrapping audit.ErrNotFound.
func (db *DB) TargetsFirstSeen(ctx context.Context, runID int64) (map[int64]time.Time, error) {
	out := map[int64]time.Time{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT DISTINCT t.id, t.first_seen_at
			FROM links l JOIN targets t ON t.id = l.target_id WHERE l.run_id = $1`, runID, instantsByID(out))
	})
	if err != nil {
		return nil, fmt.Errorf("first sight of the targets of run %d: %w", runID, err)
	}
	return out, nil
}

// LinksFirstSeen returns, for every link of a run with a target, when
// linkrot first saw that link: the earliest fetch (pages.fetched_at, else
// the run's start) of the same page URL linking to the same target, in
// this run or an earlier one (by start time). Runs removed by prune no
// longer count. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) LinksFirstSeen(ctx context.Context, runID int64) (map[int64]time.Time, error) {
	out := map[int64]time.Time{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			WITH first AS (
				SELECT p2.url AS page_url, l2.target_id AS target_id,
					min(coalesce(p2.fetched_at, r2.started_at)) AS seen
				FROM links l2
				JOIN pages p2 ON p2.id = l2.page_id
				JOIN runs r2 ON r2.id = l2.run_id
				WHERE l2.target_id IN (SELECT target_id FROM run_targets WHERE run_id = $1)
					AND r2.started_at <= (SELECT started_at FROM runs WHERE id = $1)
				GROUP BY p2.url, l2.target_id)
			SELECT l.id, f.seen
			FROM links l
			JOIN pages p ON p.id = l.page_id
			JOIN first f ON f.page_url = p.url AND f.target_id = l.target_id
			WHERE l.run_id = $1`, runID, instantsByID(out))
	})
	if err != nil {
		return nil, fmt.Errorf("first sight of the links of run %d: %w", runID, err)
	}
	return out, nil
}

// LinkDates returns the distinct dates LinksFirstSeen gives the links of
// run runID to the target with URL targetURL stored so far (none when the
// run has no link to it yet): the nearest-memento questions the archives
// stage asks about a broken target, asked while the run's checks go on.
func (db *DB) LinkDates(ctx context.Context, runID int64, targetURL string) ([]time.Time, error) {
	var out []time.Time
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("first sight of the links of run %d: %w", runID, err)
	}
	defer tx.Rollback()
	err = eachRow(ctx, tx, `
		SELECT DISTINCT f.seen FROM (
			SELECT min(coalesce(p2.fetched_at, r2.started_at)) AS seen
			FROM links l2
			JOIN pages p2 ON p2.id = l2.page_id
			JOIN runs r2 ON r2.id = l2.run_id
			WHERE l2.target_id = (SELECT id FROM targets WHERE url = $2)
				AND r2.started_at <= (SELECT started_at FROM runs WHERE id = $1)
				AND p2.url IN (SELECT p.url FROM links l JOIN pages p ON p.id = l.page_id
					WHERE l.run_id = $1 AND l.target_id = (SELECT id FROM targets WHERE url = $2))
			GROUP BY p2.url) f`, []any{runID, targetURL}, func(rows *sql.Rows) error {
		var seen sql.NullString
		if err := rows.Scan(&seen); err != nil {
			return err
		}
		t, err := parseInstant(seen)
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("first sight of the links of run %d to %s: %w", runID, targetURL, err)
	}
	return out, nil
}

// FirstFingerprints returns, for every target checked in a run, the
// earliest check of that target in any run (up to and including this one)
// that fingerprinted it (SHA256 set): the reference of first-seen drift.
// Earliest is by CheckedAt, then run ID. An unknown run yields an error
// wrapping audit.ErrNotFound.
func (db *DB) FirstFingerprints(ctx context.Context, runID int64) (map[int64]*audit.Check, error) {
	return db.firstFingerprints(ctx, runID, "")
}

// EarlierFingerprints is FirstFingerprints without the targets whose
// earliest fingerprint is the run's own (first-seen drift has nothing to
// compare them with): on a run that links to new targets only, nothing is
// read into memory. When no run before it has a fingerprinted check (a
// database's first run), there are none, and the run's checks are not
// read at all.
func (db *DB) EarlierFingerprints(ctx context.Context, runID int64) (map[int64]*audit.Check, error) {
	// A reference is a check of a run with a smaller ID (p.run_id <=
	// w.run_id in firstFingerprints, the run's own excluded): without one
	// in the whole database, every target's earliest is the run's own.
	var earlier bool
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM checks WHERE run_id < $1 AND sha256 <> '')`, runID).Scan(&earlier)
	})
	if err != nil {
		return nil, fmt.Errorf("first fingerprints for run %d: %w", runID, err)
	}
	if !earlier {
		return map[int64]*audit.Check{}, nil
	}
	return db.firstFingerprints(ctx, runID, ` AND c.run_id <> w.run_id`)
}

// firstFingerprints is FirstFingerprints with a condition on the earliest
// check c and the run's check w, whose parameters are args.
func (db *DB) firstFingerprints(ctx context.Context, runID int64, cond string, args ...any) (map[int64]*audit.Check, error) {
	out := map[int64]*audit.Check{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return eachRow(ctx, tx, selectCheckSQL+`
			FROM checks w
			JOIN checks c ON c.target_id = w.target_id AND c.run_id = (
				SELECT p.run_id FROM checks p
				WHERE p.target_id = w.target_id AND p.sha256 != '' AND p.run_id <= w.run_id
				ORDER BY p.checked_at NULLS FIRST, p.run_id
				LIMIT 1)
			JOIN targets t ON t.id = c.target_id
			WHERE w.run_id = $1`+cond, append([]any{runID}, args...), func(rows *sql.Rows) error {
			c, err := scanCheck(rows)
			if err != nil {
				return err
			}
			out[c.TargetID] = c
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("first fingerprints for run %d: %w", runID, err)
	}
	return out, nil
}

// SaveSnapshotSkips stores declared snapshots that were not checked
// (migration 0010). It is safe for concurrent use.
func (db *DB) SaveSnapshotSkips(ctx context.Context, ss []audit.SnapshotSkip) error {
	const q = `INSERT INTO snapshot_skips (run_id, link_id, source, declared, declared_datetime, reason)
		SELECT $1, $2, $3, $4, $5, $6 WHERE CAST($2 AS BIGINT) IS NOT NULL AND ` + linkOfRun
	return db.saveBatch(ctx, "snapshot skip", runIDsOf(ss, func(s *audit.SnapshotSkip) int64 { return s.RunID }), q, len(ss),
		func(i int) ([]any, string) {
			s := &ss[i]
			return []any{s.RunID, nullID(s.LinkID), s.Source, s.Declared, formatInstant(s.Datetime), s.Reason}, quote(s.Declared)
		})
}

// SnapshotSkips returns the declared snapshots of a run that were not
// checked, by link. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) SnapshotSkips(ctx context.Context, runID int64) ([]audit.SnapshotSkip, error) {
	var out []audit.SnapshotSkip
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT run_id, link_id, source, declared, declared_datetime, reason
			FROM snapshot_skips WHERE run_id = $1 ORDER BY link_id, id`, runID, func(rows *sql.Rows) error {
			var (
				s  audit.SnapshotSkip
				dt sql.NullString
			)
			if err := rows.Scan(&s.RunID, &s.LinkID, &s.Source, &s.Declared, &dt, &s.Reason); err != nil {
				return err
			}
			t, err := parseInstant(dt)
			if err != nil {
				return err
			}
			s.Datetime = t
			out = append(out, s)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot skips of run %d: %w", runID, err)
	}
	return out, nil
}

// KnownLookups returns the answered lookups ('found' or 'no-memento') of
// runs other than runID checked at or after since, newest first: the
// answers a run may reuse (--archive-max-age). Failed lookups are never
// returned, so they are asked again. Rows copied from earlier runs are
// left out: their checked_at is the original answer's.
func (db *DB) KnownLookups(ctx context.Context, runID int64, since time.Time) ([]audit.Memento, error) {
	var out []audit.Memento
	rows, err := db.read.QueryContext(ctx, `SELECT archive, uri_r, wanted, url, datetime, distance_ms, representative,
			count, first, last, error, checked_at, status
		FROM mementos
		WHERE status IN ('found', 'no-memento') AND uri_r <> '' AND run_id <> $1 AND reused = 0 AND checked_at >= $2
		ORDER BY checked_at DESC NULLS LAST`, runID, formatInstant(since))
	if err != nil {
		return nil, fmt.Errorf("known lookups: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			m                                  audit.Memento
			wanted, dt, first, last, checkedAt sql.NullString
			distance                           int64
		)
		if err := rows.Scan(&m.Archive, &m.URIR, &wanted, &m.URL, &dt, &distance, &m.Representative,
			&m.Count, &first, &last, &m.Error, &checkedAt, &m.Status); err != nil {
			return nil, fmt.Errorf("known lookups: %w", err)
		}
		m.Distance = time.Duration(distance) * time.Millisecond
		for _, p := range []struct {
			dst *time.Time
			src sql.NullString
		}{{&m.Wanted, wanted}, {&m.Datetime, dt}, {&m.First, first}, {&m.Last, last}, {&m.CheckedAt, checkedAt}} {
			t, err := parseInstant(p.src)
			if err != nil {
				return nil, fmt.Errorf("known lookups: %w", err)
			}
			*p.dst = t
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("known lookups: %w", err)
	}
	return out, nil
}
