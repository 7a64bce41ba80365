package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
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
			WHERE t.id IN (SELECT target_id FROM run_targets WHERE run_id = $1)
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
			WHERE t.id IN (SELECT target_id FROM run_targets WHERE run_id = $1)`, runID, func(rows *sql.Rows) error {
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
// target whose check is broken (audit.Verdict.Broken) or moved, and the
// links with a #fragment of the targets whose check is ok or redirected
// whose (target, fragment) pair keep keeps (nil keeps them all). The
// links of targets with any other verdict (skipped, blocked,
// rate-limited, refused: linkrot could not tell) give nothing and are
// left out, as are links whose target has no check.
//
// keep is asked once per distinct (target, fragment) pair of the run, in
// target order, with the check and the fragment only, so its answer must
// depend on them alone; every link of a kept pair is given. A
// documentation tree links to the same anchors of the same pages again
// and again (Sphinx: a tenth as many distinct pairs as fragment links),
// and most fragments name an anchor: the pairs are read from
// run_fragments, where the writer stored each once, the links of a kept
// pair found by their target, and only those links read whole.
//
// Links come grouped by target, in target ID order, a target's links in
// link ID order (the order of pages and positions in which the writer
// stored them). The memory held is bounded by the link IDs of one
// target's kept pairs, not by the run. An unknown run yields an error
// wrapping audit.ErrNotFound.
func (db *DB) FindingLinks(ctx context.Context, runID int64, keep func(c *audit.Check, fragment string) bool, fn func(audit.LinkRef, *audit.Check) error) error {
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		// Three statements are read side by side, merged by target: the
		// checks of the targets that can give something, the whole links
		// of the broken ones, and the fragment pairs. On PostgreSQL the
		// first two (and the reads of kept links) run on other
		// connections of the read pool: one connection cannot interleave
		// result sets (the run's checks and links are written before this
		// stage).
		aside := tx.QueryContext
		if db.dialect == dialectPostgres {
			aside = db.read.QueryContext
		}
		checks, err := aside(ctx, findingChecksSQL, runID, runID)
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
		// The links of the broken and moved targets, in target and link
		// order.
		broken, err := aside(ctx, findingBrokenSQL, runID)
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
		// The distinct (target, fragment) pairs, from run_fragments
		// (0019), in target order. A link without a target (its URL did
		// not parse) has no check: InvalidURLLinks hands it over.
		pairs, err := tx.QueryContext(ctx, findingPairsSQL, runID)
		if err != nil {
			return err
		}
		defer pairs.Close()
		var (
			havePair   bool // a pair is read ahead
			pairTarget int64
			pairFrag   string
		)
		nextPair := func() error {
			if havePair = pairs.Next(); !havePair {
				return pairs.Err()
			}
			return pairs.Scan(&pairTarget, &pairFrag)
		}
		// The kept links are read whole in batches, in the order they
		// were kept (target, then link).
		var (
			kept       []int64                    // link IDs
			keptChecks = map[int64]*audit.Check{} // by target ID
		)
		flushKept := func() error {
			for i := 0; i < len(kept); i += keptBatch {
				batch := kept[i:min(i+keptBatch, len(kept))]
				rows, err := aside(ctx, `
					SELECT `+findingLinkColumns+`
					FROM links l JOIN pages p ON p.id = l.page_id`+linkTargetJoin+`
					WHERE l.id IN `+db.idListSQL(1)+`
					ORDER BY l.target_id NULLS FIRST, l.id`, idList(batch))
				if err != nil {
					return err
				}
				// Read before fn is called: fn may read too, and on
				// PostgreSQL each open result set holds a connection.
				refs := make([]audit.LinkRef, 0, len(batch))
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
					if err := fn(r, keptChecks[r.TargetID]); err != nil {
						return err
					}
				}
			}
			kept = kept[:0]
			clear(keptChecks)
			return nil
		}
		if err := nextBroken(); err != nil {
			return err
		}
		if err := nextPair(); err != nil {
			return err
		}
		var keptFrags []string // of the current target
		for brokenNext != nil || havePair {
			var target int64
			switch {
			case brokenNext == nil:
				target = pairTarget
			case !havePair:
				target = brokenNext.TargetID
			default:
				target = min(brokenNext.TargetID, pairTarget)
			}
			c, err := checkOf(target)
			if err != nil {
				return err
			}
			judged := c != nil && (c.Verdict == audit.VerdictOK || c.Verdict == audit.VerdictRedirected)
			if c != nil && !judged {
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
			keptFrags = keptFrags[:0]
			for havePair && pairTarget == target {
				// A broken target's fragment links came whole above.
				if judged && (keep == nil || keep(c, pairFrag)) {
					keptFrags = append(keptFrags, pairFrag)
				}
				if err := nextPair(); err != nil {
					return err
				}
			}
			if len(keptFrags) > 0 {
				ids, err := db.fragmentLinkIDs(ctx, aside, runID, target, keptFrags)
				if err != nil {
					return err
				}
				kept, keptChecks[target] = append(kept, ids...), c
			}
			if len(kept) >= keptBatch {
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

// The statements of FindingLinks (TestFindingLinks_Plan reads their
// SQLite plans).
var (
	// findingChecksSQL reads the checks of the targets that can give
	// something: those whose every link is read, and those whose fragment
	// links are judged (run_fragments tells which have any).
	findingChecksSQL = selectCheckSQL + `
		FROM checks c JOIN targets t ON t.id = c.target_id
		WHERE c.run_id = $1 AND (c.verdict IN ` + wholeVerdictsSQL + ` OR c.verdict IN ('ok', 'redirected') AND EXISTS (
			SELECT 1 FROM run_fragments rf WHERE rf.run_id = $2 AND rf.target_id = c.target_id))
		ORDER BY c.target_id`
	// findingBrokenSQL reads the links of the broken and moved targets,
	// driven by their checks (CROSS JOIN keeps SQLite's loop order,
	// "+l.run_id" keeps it from scanning the run's links by
	// links_run_id): the index links_target_id gives them in link order.
	findingBrokenSQL = `
		SELECT ` + findingLinkColumns + `
		FROM checks c CROSS JOIN links l
		JOIN pages p ON p.id = l.page_id` + linkTargetJoin + `
		WHERE c.run_id = $1 AND c.verdict IN ` + wholeVerdictsSQL + `
			AND l.target_id = c.target_id AND +l.run_id = c.run_id
		ORDER BY c.target_id, l.id`
)

// findingPairsSQL reads the distinct (target, fragment) pairs of a run's
// links, in target order, from run_fragments (0019): the writer stored
// each once. (The order of a target's fragments does not matter.)
const findingPairsSQL = `
	SELECT target_id, fragment FROM run_fragments
	WHERE run_id = $1 ORDER BY target_id`

// fragmentLinkIDsSQL reads the IDs of a run's ($1) links to a target ($2)
// whose fragment is one of n ($3, ...): the target's links from
// links_target_id ("+l.run_id" keeps SQLite from scanning the run's links
// by links_run_id instead), their fragments compared.
func fragmentLinkIDsSQL(n int) string {
	return `
		SELECT l.id FROM links l
		WHERE l.target_id = $2 AND +l.run_id = $1 AND l.fragment IN (` + params(3, n) + `)`
}

// keptBatch is how many kept links FindingLinks reads whole in one
// statement.
const keptBatch = 512

// wholeVerdictsSQL lists, as SQL, the verdicts whose every link
// FindingLinks gives: those that are a finding whatever the link
// (audit.Verdict.Broken) and moved (a maintenance record). They are the
// package's constants, quoted as SQL string literals.
var wholeVerdictsSQL = func() string {
	list, _ := verdictSet(func(v audit.Verdict) bool { return v.Broken() || v == audit.VerdictMoved })
	return "(" + list + ")"
}()

// fragmentLinkIDs returns, in ID order, the IDs of the run's links to
// target whose fragment is one of frags (distinct, not empty): found by
// the index links_target_id, a few hundred fragments a statement. A
// fragment that is not valid text (store.ValidText; an older SQLite file
// may hold one) cannot be bound as it is stored: the target's fragment
// links are then read and compared here.
func (db *DB) fragmentLinkIDs(ctx context.Context, query func(context.Context, string, ...any) (*sql.Rows, error), runID, target int64, frags []string) ([]int64, error) {
	var (
		ids     []int64
		bound   []any
		invalid map[string]bool
	)
	for _, f := range frags {
		if !store.IsValidText(f) {
			if invalid == nil {
				invalid = map[string]bool{}
			}
			invalid[f] = true
			continue
		}
		bound = append(bound, f)
	}
	const chunk = 200
	for len(bound) > 0 {
		part := bound[:min(chunk, len(bound))]
		bound = bound[len(part):]
		rows, err := query(ctx, fragmentLinkIDsSQL(len(part)), append([]any{runID, target}, part...)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			ids = append(ids, id)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	if invalid != nil {
		rows, err := query(ctx, `
			SELECT l.id, l.fragment FROM links l
			WHERE l.target_id = $2 AND +l.run_id = $1 AND l.fragment <> ''`, runID, target)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var (
				id   int64
				frag string
			)
			if err := rows.Scan(&id, &frag); err != nil {
				rows.Close()
				return nil, err
			}
			if invalid[frag] {
				ids = append(ids, id)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	slices.Sort(ids)
	return ids, nil
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
//
// The findings stage asks it once per target whose fragments it judges:
// its statement is prepared once (parsing it anew each time cost more
// than running it).
func (db *DB) PageAnchors(ctx context.Context, runID int64, targetURL string) ([]string, error) {
	var raw string
	st, err := db.anchorsStmt.get(ctx, db.read, pageAnchorsSQL)
	if err == nil {
		err = st.QueryRowContext(ctx, runID, targetURL).Scan(&raw)
	}
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

// pageAnchorsSQL is PageAnchors' statement.
const pageAnchorsSQL = `
	SELECT e.anchors FROM page_evidence e JOIN pages p ON p.id = e.page_id
	WHERE p.run_id = $1 AND p.target_id = (SELECT id FROM targets WHERE url = $2)
	ORDER BY p.id LIMIT 1`

// readStmt is a statement of a pool prepared on first use and kept until
// close. It is safe for concurrent use.
type readStmt struct {
	mu     sync.Mutex
	st     *sql.Stmt
	closed bool
}

// get returns the statement, preparing query on pool the first time (a
// failed prepare is tried again next time).
func (r *readStmt) get(ctx context.Context, pool *sql.DB, query string) (*sql.Stmt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st != nil {
		return r.st, nil
	}
	if r.closed {
		return nil, errors.New("sql: database is closed")
	}
	st, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	r.st = st
	return st, nil
}

// close closes the statement, if it was prepared; get fails after it.
func (r *readStmt) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.st == nil {
		return nil
	}
	err := r.st.Close()
	r.st = nil
	return err
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
