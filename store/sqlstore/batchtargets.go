package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// The targets a batch of pages needs are found and created together on
// SQLite (batchTargets): one query for those that exist and multi-row
// INSERTs for the others, instead of one or two statements per target.

// targetChunks are the row counts of the multi-row target INSERTs that
// Open prepares (5 columns each), largest first.
var targetChunks = []int{64, 32, 16, 8, 4, 2, 1}

// insertTargetsSQL inserts n targets (SQLite); a URL that exists already
// is skipped (createTargets finds it then).
func insertTargetsSQL(n int) string { return targetsSQL.in(anonymous, n) }

func buildInsertTargetsSQL(n int, p *paramList) string {
	return `INSERT INTO targets (url, host, scheme, first_seen_run, first_seen_at) VALUES ` +
		p.rows(5, n) + ` ON CONFLICT (url) DO NOTHING`
}

// targetsByURLsSQL reads the ID and URL of the targets whose URLs are in
// a JSON array (SQLite): a short statement, not one of hundreds of
// placeholders compiled each time.
const targetsByURLsSQL = `SELECT id, url FROM targets WHERE url IN (SELECT value FROM json_each($1))`

// newTarget is a target batchTargets creates.
type newTarget struct{ norm, host, scheme string }

// rawTarget is a raw URL batchTargets resolved, for the caches of target.
type rawTarget struct {
	raw, norm string
	httpOnly  bool
}

// batchTargets finds or creates, before the pages are written, every
// target that writing them creates one by one (saver.page: a page's own
// URL, then for each link its href and its snapshots' URLs), in the same
// order, so that new targets get the IDs they would get one by one, and
// fills the caches of target with them. A page that will not be written
// (its URL is the run's already, or an earlier page's of the batch) has
// its own URL's target only, as in page. Nothing is done when a page URL
// is not valid UTF-8 (the lookup passes URLs as JSON text): page then
// looks up each target itself. URLs that are not valid UTF-8 are left to
// it too.
func (s *saver) batchTargets(ctx context.Context, pages []*audit.Page) error {
	urls := make([]string, 0, len(pages))
	for _, p := range pages {
		if !utf8.ValidString(p.URL) {
			return nil
		}
		urls = append(urls, p.URL)
	}
	stored := make(map[string]bool)
	err := s.eachByJSON(ctx, `SELECT url FROM pages WHERE run_id = $1 AND url IN (SELECT value FROM json_each($2))`,
		s.runID, urls, func(rows *sql.Rows) error {
			var u string
			if err := rows.Scan(&u); err != nil {
				return err
			}
			stored[u] = true
			return nil
		})
	if err != nil {
		return fmt.Errorf("pages stored: %w", err)
	}

	var (
		want    []newTarget
		wanted  = make(map[string]bool)
		resolve []rawTarget
		queued  = make(map[rawTarget]bool)
		addErr  error
	)
	// add adds the target of raw, the href of l when l is not nil (and
	// httpOnly false): its key is then store.LinkTargetKey's, and raw is parsed
	// only for a target to create.
	add := func(raw string, httpOnly bool, l *audit.Link) {
		cache := s.byRaw
		if httpOnly {
			cache = s.byRawHTTP
		}
		if _, ok := cache[raw]; ok {
			return
		}
		key := rawTarget{raw: raw, httpOnly: httpOnly} // norm not known yet
		if queued[key] {
			return
		}
		var (
			norm string
			u    *url.URL
			ok   bool
		)
		if l != nil {
			norm, ok = store.LinkTargetKey(l)
		} else {
			norm, u, ok = targetURLOf(raw, httpOnly)
		}
		if !ok {
			cache[raw] = targetOf{}
			return
		}
		if !utf8.ValidString(norm) {
			return // looked up by page
		}
		queued[key] = true
		r := key
		r.norm = norm
		resolve = append(resolve, r)
		if _, ok := s.byNorm[norm]; ok || wanted[norm] {
			return
		}
		if s.shared != nil {
			if id, ok := s.shared.Get(norm); ok {
				s.byNorm[norm] = id
				return
			}
		}
		if u == nil {
			var err error
			if u, err = hrefURL(raw, norm); err != nil {
				addErr = cmp.Or(addErr, err)
				return
			}
		}
		wanted[norm] = true
		want = append(want, newTarget{norm, u.Host, u.Scheme})
	}
	seen := make(map[string]bool, len(pages))
	for _, p := range pages {
		add(p.URL, false, nil)
		if seen[p.URL] || stored[p.URL] {
			continue // page skips it
		}
		seen[p.URL] = true
		for i := range p.Links {
			l := &p.Links[i]
			if l.Checked() { // a connection hint has no target
				add(l.Href, false, l)
			}
			if l.Robust != nil {
				for _, sn := range l.Robust.Snapshots {
					add(sn.URL, true, nil)
				}
			}
			if l.Mset != nil {
				for _, c := range l.Mset.Copies {
					add(c.URL, true, nil)
				}
			}
		}
	}
	if addErr != nil {
		return addErr
	}
	if err := s.createTargets(ctx, want); err != nil {
		return err
	}
	for _, r := range resolve {
		cache := s.byRaw
		if r.httpOnly {
			cache = s.byRawHTTP
		}
		cache[r.raw] = targetOf{s.byNorm[r.norm], r.norm}
	}
	return nil
}

// createTargets sets byNorm for each of want, targets in no cache,
// inserting those that do not exist, in order. As findOrInsertTarget, it
// begins with whichever statement the DB's guess says will settle most:
// the INSERTs when recent targets were new (a first run), a lookup of all
// of them first when they existed (a run again over the same site).
func (s *saver) createTargets(ctx context.Context, want []newTarget) error {
	if len(want) == 0 {
		return nil
	}
	if s.exists.likely() {
		if err := s.findTargets(ctx, want); err != nil {
			return err
		}
		fresh := want[:0:0]
		for _, t := range want {
			if id, ok := s.byNorm[t.norm]; ok {
				s.existing(t.norm, id, true)
			} else {
				fresh = append(fresh, t)
			}
		}
		want = fresh
	}
	var args []any
	for len(want) > 0 {
		n := rowsNext(targetChunks, len(want))
		chunk := want[:n]
		want = want[n:]
		args = args[:0]
		for _, t := range chunk {
			args = append(args, t.norm, t.host, t.scheme, s.runID, s.now)
		}
		stmt, err := s.db.txStmt(ctx, s.tx, insertTargetsSQL(n))
		if err != nil {
			return err
		}
		res, err := stmt.ExecContext(ctx, args...)
		stmt.Close()
		if err != nil {
			return fmt.Errorf("insert %d targets from %s: %w", n, quote(chunk[0].norm), err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return err
		}
		var last int64
		if k > 0 { // otherwise the last insert rowid is not this statement's
			if last, err = res.LastInsertId(); err != nil {
				return err
			}
		}
		if k == int64(n) {
			// Consecutive IDs, as for links (see saver.links).
			for i, t := range chunk {
				s.newTarget(t.norm, last-int64(n-1-i))
			}
			continue
		}
		// Some existed: the k rows inserted have the k IDs up to last.
		if err := s.findTargets(ctx, chunk); err != nil {
			return err
		}
		for _, t := range chunk {
			id, ok := s.byNorm[t.norm]
			switch {
			case !ok:
				return fmt.Errorf("target %s neither inserted nor found", quote(t.norm))
			case k > 0 && id > last-k:
				s.newTarget(t.norm, id)
			default:
				s.existing(t.norm, id, true)
			}
		}
	}
	return nil
}

// newTarget records the target norm this transaction inserted with id.
func (s *saver) newTarget(norm string, id int64) {
	s.byNorm[norm] = id
	s.created = append(s.created, norm)
	s.exists.saw(false)
}

// findTargets sets byNorm for those of want that exist. A URL found
// before this call is looked up again and its ID set again.
func (s *saver) findTargets(ctx context.Context, want []newTarget) error {
	norms := make([]string, len(want))
	for i, t := range want {
		norms[i] = t.norm
	}
	err := s.eachByJSON(ctx, targetsByURLsSQL, nil, norms, func(rows *sql.Rows) error {
		var (
			id int64
			u  string
		)
		if err := rows.Scan(&id, &u); err != nil {
			return err
		}
		s.byNorm[u] = id
		return nil
	})
	if err != nil {
		return fmt.Errorf("targets stored: %w", err)
	}
	return nil
}

// eachByJSON runs query in the saver's transaction with its arguments:
// run (unless nil) and list as one JSON array, in parts of 1,000 strings,
// and calls scan for each row.
func (s *saver) eachByJSON(ctx context.Context, query string, run any, list []string, scan func(*sql.Rows) error) error {
	for len(list) > 0 {
		n := min(len(list), 1000)
		js, err := stringsJSON(list[:n])
		if err != nil {
			return err
		}
		args := []any{js}
		if run != nil {
			args = []any{run, js}
		}
		if err := eachRow(ctx, s.tx, query, args, scan); err != nil {
			return err
		}
		list = list[n:]
	}
	return nil
}
