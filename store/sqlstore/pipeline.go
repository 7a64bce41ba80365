package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
)

// This file holds what the streaming pipeline (package linkrot) reads and
// writes beyond the stage-by-stage methods: checks keyed by URL while the
// crawl that creates their targets is still running, and the links that
// findings are derived from, streamed rather than loaded.

// SaveChecksByURL stores checks whose TargetID may be 0: such a check's
// target is looked up by its URL (Check.URL), which a page saved earlier
// (SaveCrawl, SavePages) must have created. Checks whose target does not
// exist are left out and returned, so that the caller can report them.
// It is otherwise SaveChecks: one transaction, all or nothing.
func (db *DB) SaveChecksByURL(ctx context.Context, checks []audit.Check) (missing []audit.Check, err error) {
	var urls []string
	for _, c := range checks {
		if c.TargetID == 0 {
			urls = append(urls, c.URL)
		}
	}
	ids, err := db.TargetIDs(ctx, urls)
	if err != nil {
		return nil, err
	}
	out := checks[:0:0]
	for _, c := range checks {
		if c.TargetID == 0 {
			id, ok := ids[c.URL]
			if !ok {
				missing = append(missing, c)
				continue
			}
			c.TargetID = id
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return missing, nil
	}
	return missing, db.SaveChecks(ctx, out)
}

// TargetIDs returns the IDs of the targets with the given (normalized)
// URLs; URLs without a target are absent from the map. It is safe for
// concurrent use.
func (db *DB) TargetIDs(ctx context.Context, urls []string) (map[string]int64, error) {
	out := make(map[string]int64, len(urls))
	const chunk = 500
	// SQLite: the URLs as one JSON array (a short statement, not one of
	// 500 placeholders to compile each time), unless one is not valid
	// UTF-8, which JSON cannot carry.
	asJSON := db.dialect == dialectSQLite
	for _, u := range urls {
		if !utf8.ValidString(u) {
			asJSON = false
			break
		}
	}
	for len(urls) > 0 {
		n := min(chunk, len(urls))
		part := urls[:n]
		urls = urls[n:]
		query := `SELECT id, url FROM targets WHERE url IN (` + params(1, len(part)) + `)`
		var args []any
		if asJSON {
			js, err := marshalJSON(part)
			if err != nil {
				return nil, fmt.Errorf("target ids: %w", err)
			}
			query, args = targetsByURLsSQL, []any{js}
		} else {
			args = make([]any, len(part))
			for i, u := range part {
				args[i] = u
			}
		}
		rows, err := db.read.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, fmt.Errorf("target ids: %w", err)
		}
		for rows.Next() {
			var (
				id int64
				u  string
			)
			if err := rows.Scan(&id, &u); err != nil {
				rows.Close()
				return nil, fmt.Errorf("target ids: %w", err)
			}
			out[u] = id
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("target ids: %w", err)
		}
	}
	return out, nil
}

// UncheckedTargets calls fn for every target of a run (linked from one of
// its pages) that has no check in the run yet, in URL order: what a
// resumed run still has to check. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) UncheckedTargets(ctx context.Context, runID int64, fn func(audit.TargetRef) error) error {
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT t.id, t.url FROM targets t
			WHERE t.id IN (SELECT target_id FROM links WHERE run_id = $1 AND target_id IS NOT NULL)
			  AND NOT EXISTS (SELECT 1 FROM checks c WHERE c.run_id = $1 AND c.target_id = t.id)
			ORDER BY t.url`, runID, func(rows *sql.Rows) error {
			var r audit.TargetRef
			if err := rows.Scan(&r.ID, &r.URL); err != nil {
				return err
			}
			return fn(r)
		})
	})
	if err != nil {
		return fmt.Errorf("unchecked targets of run %d: %w", runID, err)
	}
	return nil
}

// TargetURLs calls fn with the URL of every target a run links to, in no
// particular order.
func (db *DB) TargetURLs(ctx context.Context, runID int64, fn func(url string) error) error {
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT t.url FROM targets t
			WHERE t.id IN (SELECT target_id FROM links WHERE run_id = $1 AND target_id IS NOT NULL)`, runID, func(rows *sql.Rows) error {
			var u string
			if err := rows.Scan(&u); err != nil {
				return err
			}
			return fn(u)
		})
	})
	if err != nil {
		return fmt.Errorf("targets of run %d: %w", runID, err)
	}
	return nil
}

// FindingLinks streams the links of a run that can give a finding or a
// link-maintenance record, each with its target's check: every link of a
// target whose check in the run is neither ok nor redirected, and the
// links with a #fragment of the other checked targets for which keep
// reports true (nil keeps them all). keep sees the check and the
// fragment only, and is asked once per target and fragment (however many
// links carry it): the run's pairs are read from run_fragments, and only
// the links of the kept pairs are read whole, so that a documentation
// tree's tens of thousands of #anchor links that name an anchor cost a
// few thousand small rows. Links come grouped by target, in target ID order, a target's
// links in link ID order (the order of pages and positions in which the
// writer stored them). Links whose target has no check are left out. An
// unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) FindingLinks(ctx context.Context, runID int64, keep func(c *audit.Check, fragment string) bool, fn func(audit.LinkRef, *audit.Check) error) error {
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		// Three statements are read side by side, merged by target: the
		// checks of the targets that can give something, the whole links
		// of the broken ones, and the fragment links. On PostgreSQL the
		// first two (and the reads of kept links) run on other
		// connections of the read pool: one connection cannot interleave
		// result sets (the run's checks and links are written before this
		// stage).
		aside := tx.QueryContext
		if db.dialect == dialectPostgres {
			aside = db.read.QueryContext
		}
		checks, err := aside(ctx, selectCheckSQL+`
			FROM checks c JOIN targets t ON t.id = c.target_id
			WHERE c.run_id = $1 AND (c.verdict NOT IN ('ok', 'redirected') OR EXISTS (
				SELECT 1 FROM run_fragments rf WHERE rf.run_id = $2 AND rf.target_id = c.target_id))
			ORDER BY c.target_id`, runID, runID)
		if err != nil {
			return err
		}
		defer checks.Close()
		var next *audit.Check // the check read ahead
		checkOf := func(targetID int64) (*audit.Check, error) {
			for next == nil || next.TargetID < targetID {
				if !checks.Next() {
					return nil, checks.Err()
				}
				c, err := scanCheck(checks)
				if err != nil {
					return nil, err
				}
				next = c
			}
			if next.TargetID != targetID {
				return nil, nil
			}
			return next, nil
		}
		// The links of the targets whose check is not ok, driven by those
		// checks (CROSS JOIN keeps SQLite's loop order, "+l.run_id" keeps
		// it from scanning the run's links by links_run_id): the index
		// links_target_id gives them in link order.
		broken, err := aside(ctx, `
			SELECT `+findingLinkColumns+`
			FROM checks c CROSS JOIN links l
			JOIN pages p ON p.id = l.page_id`+linkTargetJoin+`
			WHERE c.run_id = $1 AND c.verdict NOT IN ('ok', 'redirected')
				AND l.target_id = c.target_id AND +l.run_id = c.run_id
			ORDER BY c.target_id, l.id`, runID)
		if err != nil {
			return err
		}
		defer broken.Close()
		var brokenNext *audit.LinkRef
		nextBroken := func() error {
			brokenNext = nil
			if !broken.Next() {
				return broken.Err()
			}
			r, err := scanFindingLink(broken)
			brokenNext = &r
			return err
		}
		// The run's (target, fragment) pairs, from run_fragments (0019):
		// keep decides once per pair, and only the links of the kept
		// pairs are read whole. (A link without a target, whose URL did
		// not parse, has no check: InvalidURLLinks hands it over.)
		frags, err := tx.QueryContext(ctx, `
			SELECT target_id, fragment FROM run_fragments
			WHERE run_id = $1 ORDER BY target_id, fragment`, runID)
		if err != nil {
			return err
		}
		defer frags.Close()
		type fragPair struct {
			target   int64
			fragment string
		}
		var fragNext *fragPair
		nextFrag := func() error {
			fragNext = nil
			if !frags.Next() {
				return frags.Err()
			}
			var f fragPair
			if err := frags.Scan(&f.target, &f.fragment); err != nil {
				return err
			}
			fragNext = &f
			return nil
		}
		// Kept pairs are read whole a target at a time, in target order,
		// a target's links in link order.
		var (
			kept       []fragPair                 // in target order
			keptChecks = map[int64]*audit.Check{} // by target ID
		)
		flushKept := func() error {
			for lo := 0; lo < len(kept); {
				target := kept[lo].target
				hi := lo
				var fragments []string
				for ; hi < len(kept) && kept[hi].target == target; hi++ {
					fragments = append(fragments, kept[hi].fragment)
				}
				list, err := json.Marshal(fragments)
				if err != nil {
					return err
				}
				rows, err := aside(ctx, `
					SELECT `+findingLinkColumns+`
					FROM links l JOIN pages p ON p.id = l.page_id`+linkTargetJoin+`
					WHERE l.target_id = $1 AND +l.run_id = $2 AND l.fragment IN `+db.textListSQL(3)+`
					ORDER BY l.id`, target, runID, string(list))
				if err != nil {
					return err
				}
				// Read before fn is called: fn may read too, and on
				// PostgreSQL each open result set holds a connection.
				var refs []audit.LinkRef
				for rows.Next() {
					r, err := scanFindingLink(rows)
					if err != nil {
						rows.Close()
						return err
					}
					refs = append(refs, r)
				}
				if err := errors.Join(rows.Err(), rows.Close()); err != nil {
					return err
				}
				for _, r := range refs {
					if err := fn(r, keptChecks[target]); err != nil {
						return err
					}
				}
				lo = hi
			}
			kept = kept[:0]
			clear(keptChecks)
			return nil
		}
		if err := nextBroken(); err != nil {
			return err
		}
		if err := nextFrag(); err != nil {
			return err
		}
		for brokenNext != nil || fragNext != nil {
			var target int64
			switch {
			case brokenNext == nil:
				target = fragNext.target
			case fragNext == nil:
				target = brokenNext.TargetID
			default:
				target = min(brokenNext.TargetID, fragNext.target)
			}
			c, err := checkOf(target)
			if err != nil {
				return err
			}
			if c != nil && c.Verdict != audit.VerdictOK && c.Verdict != audit.VerdictRedirected {
				// In target order: the kept links of targets before it
				// first.
				if err := flushKept(); err != nil {
					return err
				}
			}
			for brokenNext != nil && brokenNext.TargetID == target {
				if c != nil {
					if err := fn(*brokenNext, c); err != nil {
						return err
					}
				}
				if err := nextBroken(); err != nil {
					return err
				}
			}
			for fragNext != nil && fragNext.target == target {
				// A broken target's fragment links came whole above.
				if c != nil && (c.Verdict == audit.VerdictOK || c.Verdict == audit.VerdictRedirected) &&
					(keep == nil || keep(c, fragNext.fragment)) {
					kept, keptChecks[target] = append(kept, *fragNext), c
				}
				if err := nextFrag(); err != nil {
					return err
				}
			}
			if len(kept) >= 512 {
				if err := flushKept(); err != nil {
					return err
				}
			}
		}
		return flushKept()
	})
	if err != nil {
		return fmt.Errorf("finding links of run %d: %w", runID, err)
	}
	return nil
}

// findingLinkColumns are the columns of a link FindingLinks gives
// (scanFindingLink), from links l, pages p and linkTargetJoin.
const findingLinkColumns = `l.id, l.page_id, p.url, l.target_id, ` + hrefSQL + `, l.fragment, l.element, l.attr, l.text, l.resource`

// scanFindingLink reads a row of findingLinkColumns (and dest after
// them); a link without a target (links.target_id NULL) has TargetID 0.
func scanFindingLink(rows *sql.Rows, dest ...any) (audit.LinkRef, error) {
	var (
		r      audit.LinkRef
		target sql.NullInt64
	)
	err := rows.Scan(append([]any{&r.LinkID, &r.PageID, &r.PageURL, &target, &r.Href, &r.Fragment, &r.Element, &r.Attr, &r.Text, &r.Resource}, dest...)...)
	r.TargetID = target.Int64
	return r, err
}

// InvalidURLLinks streams the links of a run whose URL did not parse: those
// stored without a target that carry a diagnostic of code
// audit.CodeInvalidURL on their URL attribute, each with that diagnostic
// (the first, should there be several), in link ID order. fn may write to
// the store (the rows are read in a read transaction of their own). An
// unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) InvalidURLLinks(ctx context.Context, runID int64, fn func(audit.LinkRef, audit.Diagnostic) error) error {
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `
			SELECT `+findingLinkColumns+`, d.field, d.code, d.message
			FROM diagnostics d JOIN links l ON l.id = d.link_id
			JOIN pages p ON p.id = l.page_id`+linkTargetJoin+`
			WHERE d.run_id = $1 AND d.code = $2 AND d.field = l.attr AND l.target_id IS NULL
			ORDER BY l.id, d.ord`, runID, audit.CodeInvalidURL)
		if err != nil {
			return err
		}
		defer rows.Close()
		var last int64
		for rows.Next() {
			var d audit.Diagnostic
			r, err := scanFindingLink(rows, &d.Field, &d.Code, &d.Message)
			if err != nil {
				return err
			}
			if r.LinkID == last {
				continue
			}
			last = r.LinkID
			if err := fn(r, d); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("links with an invalid URL in run %d: %w", runID, err)
	}
	return nil
}

// HasChecksBefore reports whether the database holds checks of runs other
// than runID: only then can earlier results be reused (--max-age) or
// requests be made conditional.
func (db *DB) HasChecksBefore(ctx context.Context, runID int64) (bool, error) {
	var one int
	err := db.read.QueryRowContext(ctx, `SELECT 1 FROM checks WHERE run_id <> $1 LIMIT 1`, runID).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("earlier checks: %w", err)
	}
	return true, nil
}

// PageAnchors returns the anchors stored with the evidence of the run's
// page whose own URL is the target targetURL (normalized). A target that
// is no page of the run with evidence yields an error wrapping
// audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) PageAnchors(ctx context.Context, runID int64, targetURL string) ([]string, error) {
	var raw string
	err := db.read.QueryRowContext(ctx, `
		SELECT e.anchors FROM page_evidence e JOIN pages p ON p.id = e.page_id
		WHERE p.run_id = $1 AND p.target_id = (SELECT id FROM targets WHERE url = $2)
		ORDER BY p.id LIMIT 1`, runID, targetURL).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		err = audit.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("anchors of %s in run %d: %w", quote(targetURL), runID, err)
	}
	var anchors []string
	if err := json.Unmarshal([]byte(raw), &anchors); err != nil {
		return nil, fmt.Errorf("anchors of %s in run %d: %w", quote(targetURL), runID, err)
	}
	if anchors == nil {
		anchors = []string{}
	}
	return anchors, nil
}

// PageResponse returns what a run's crawl got for the page whose own URL
// is the target targetURL (normalized): the page as PageResponses returns
// it, without its redirects, and its Evidence without Anchors and Text
// (PageContent reads them). A URL that is no page of the run yields an
// error wrapping audit.ErrNotFound; a page without evidence has a nil
// Evidence. It is safe for concurrent use.
func (db *DB) PageResponse(ctx context.Context, runID int64, targetURL string) (*audit.Page, error) {
	var (
		id         int64
		p          audit.Page
		fetchedAt  sql.NullString
		durationMS int64
	)
	err := db.read.QueryRowContext(ctx, `
		SELECT id, url, request_url, depth, status, content_type, size, truncated,
			fetch_error, fetched_at, duration_ms
		FROM pages WHERE run_id = $1 AND target_id = (SELECT id FROM targets WHERE url = $2)
		ORDER BY id LIMIT 1`, runID, targetURL).Scan(&id, &p.URL, &p.RequestURL, &p.Depth, &p.Status, &p.ContentType,
		&p.Size, &p.Truncated, &p.FetchError, &fetchedAt, &durationMS)
	if errors.Is(err, sql.ErrNoRows) {
		err = audit.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("page %s of run %d: %w", quote(targetURL), runID, err)
	}
	if p.FetchedAt, err = parseInstant(fetchedAt); err != nil {
		return nil, fmt.Errorf("page %d: fetched_at: %w", id, err)
	}
	p.Duration = time.Duration(durationMS) * time.Millisecond
	e, err := scanEvidence(db.read.QueryRowContext(ctx, `SELECT `+evidenceColumns+` FROM page_evidence e WHERE e.page_id = $1`, id).Scan, false)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("evidence of page %d: %w", id, err)
	default:
		p.Evidence = e
	}
	return &p, nil
}
