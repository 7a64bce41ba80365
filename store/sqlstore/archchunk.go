package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// The archives stage works through a run in chunks of targets (by target
// ID range), so that its memory grows with a chunk, not with the run: the
// methods below read one chunk each, by indexed queries (the run's targets
// by run_targets' key, links by links_target_id, checks by their primary
// key (run_id, target_id)). A
// range [from, to] with to = 0 means the links without a target.

// targetsAfterSQL reads TargetsAfter's targets of the run $1 after $2, at
// most $3, in ID order, from run_targets' key.
const targetsAfterSQL = `
			SELECT t.id, t.url, t.host,
				(SELECT count(*) FROM links l WHERE l.target_id = t.id AND +l.run_id = $1)
			FROM run_targets rt JOIN targets t ON t.id = rt.target_id
			WHERE rt.run_id = $1 AND rt.target_id > $2
			ORDER BY rt.target_id LIMIT $3`

// TargetsAfter returns up to limit targets linked from a run whose ID is
// greater than after, in ID order, with the number of the run's links to
// each. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) TargetsAfter(ctx context.Context, runID, after int64, limit int) ([]audit.TargetRef, error) {
	var refs []audit.TargetRef
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return eachRow(ctx, tx, targetsAfterSQL, []any{runID, after, limit}, func(rows *sql.Rows) error {
			var r audit.TargetRef
			if err := rows.Scan(&r.ID, &r.URL, &r.Host, &r.LinkCount); err != nil {
				return err
			}
			refs = append(refs, r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("targets of run %d after %d: %w", runID, after, err)
	}
	return refs, nil
}

// linksInRange is the condition on the links aliased l of a run (?1) to
// the targets of a range (?2, ?3), or without a target when ?3 is 0;
// "+l.run_id" keeps SQLite on links_target_id. The CAST keeps PostgreSQL
// from typing ?3 as an integer (int4) after the literal 0: the last chunk
// ends at the largest int64.
const linksInRange = ` ((CAST($3 AS BIGINT) = 0 AND l.target_id IS NULL) OR l.target_id BETWEEN $2 AND $3) AND +l.run_id = $1 `

// EachTargetLink calls fn for each link of a run to a target with ID in
// [from, to] (to = 0: each link without a target), in link ID order, with
// its page's URL, its target's URL ("" when none), the link with its
// Robust Links and mset data (no diagnostics) and the pwids it carries.
// The link and pwids are fn's to keep. An unknown run yields an error
// wrapping audit.ErrNotFound.
func (db *DB) EachTargetLink(ctx context.Context, runID, from, to int64, fn func(linkID int64, pageURL, targetURL string, targetID int64, l *audit.Link, pwids []audit.PWID) error) error {
	type item struct {
		id, target      int64
		page, targetURL string
		link            *audit.Link
		pwids           []audit.PWID
	}
	var (
		items []*item
		byID  = map[int64]*item{}
	)
	args := []any{runID, from, to}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		var (
			row    linkRow
			target sql.NullInt64
			tURL   sql.NullString
		)
		err := eachRow(ctx, tx, `
			SELECT l.id, p.url, l.target_id, lt.url, `+linkRowSQL+`
			FROM links l JOIN pages p ON p.id = l.page_id`+linkTargetJoin+`
			WHERE`+linksInRange+`ORDER BY l.id`, args, func(rows *sql.Rows) error {
			it := &item{link: &audit.Link{}}
			if err := rows.Scan(append([]any{&it.id, &it.page, &target, &tURL}, row.dest(it.link)...)...); err != nil {
				return err
			}
			if err := row.fill(it.link); err != nil {
				return fmt.Errorf("link %d: %w", it.id, err)
			}
			it.target, it.targetURL = target.Int64, tURL.String
			items = append(items, it)
			byID[it.id] = it
			return nil
		})
		if err != nil {
			return fmt.Errorf("read links: %w", err)
		}
		if len(items) == 0 {
			return nil
		}
		var snap snapshotRow
		err = eachRow(ctx, tx, `
			SELECT s.link_id, s.source, s.url, s.datetime, s.date_only, s.datetime_raw, s.rel
			FROM links l JOIN snapshots s ON s.link_id = l.id
			WHERE`+linksInRange+`ORDER BY s.link_id, s.source, s.ord`, args, func(rows *sql.Rows) error {
			var id int64
			if err := rows.Scan(&id, &snap.source, &snap.u, &snap.dt, &snap.dateOnly, &snap.raw, &snap.rel); err != nil {
				return err
			}
			it := byID[id]
			if it == nil {
				return fmt.Errorf("snapshot of link %d, not read", id)
			}
			if err := snap.addTo(it.link); err != nil {
				return fmt.Errorf("snapshot of link %d: %w", id, err)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("read snapshots: %w", err)
		}
		err = eachRow(ctx, tx, `
			SELECT m.link_id, m.datetime
			FROM links l JOIN mset_temporal m ON m.link_id = l.id
			WHERE`+linksInRange+`ORDER BY m.link_id, m.ord`, args, func(rows *sql.Rows) error {
			var (
				id int64
				dt sql.NullString
			)
			if err := rows.Scan(&id, &dt); err != nil {
				return err
			}
			it := byID[id]
			if it == nil {
				return fmt.Errorf("mset of link %d, not read", id)
			}
			t, err := parseSpecTime(dt)
			if err != nil {
				return fmt.Errorf("mset of link %d: datetime: %w", id, err)
			}
			if it.link.Mset == nil {
				it.link.Mset = &audit.Mset{}
			}
			it.link.Mset.Temporal = append(it.link.Mset.Temporal, t)
			return nil
		})
		if err != nil {
			return fmt.Errorf("read mset temporal: %w", err)
		}
		err = eachRow(ctx, tx, `
			SELECT w.link_id, l.ord, w.raw, w.archive_id, w.datetime, w.content_spec, w.item, w.source
			FROM links l JOIN pwids w ON w.link_id = l.id
			WHERE`+linksInRange+`ORDER BY w.page_id, w.ord`, args, func(rows *sql.Rows) error {
			var (
				id, ord int64
				dt      sql.NullString
				w       audit.PWID
			)
			if err := rows.Scan(&id, &ord, &w.Raw, &w.ArchiveID, &dt, &w.ContentSpec, &w.Item, &w.Source); err != nil {
				return err
			}
			it := byID[id]
			if it == nil {
				return fmt.Errorf("pwid of link %d, not read", id)
			}
			var err error
			if w.Datetime, err = parseSpecTime(dt); err != nil {
				return fmt.Errorf("pwid of link %d: datetime: %w", id, err)
			}
			w.Link = int(ord)
			it.pwids = append(it.pwids, w)
			return nil
		})
		if err != nil {
			return fmt.Errorf("read pwids: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("links of run %d to targets %d-%d: %w", runID, from, to, err)
	}
	for _, it := range items {
		if err := fn(it.id, it.page, it.targetURL, it.target, it.link, it.pwids); err != nil {
			return err
		}
	}
	return nil
}

// ChecksOf returns the checks of a run of the targets with ID in [from,
// to], in target ID order, as Checks gives them. An unknown run yields an
// error wrapping audit.ErrNotFound.
func (db *DB) ChecksOf(ctx context.Context, runID, from, to int64) ([]audit.Check, error) {
	var out []audit.Check
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return eachRow(ctx, tx, selectCheckSQL+`
			FROM checks c JOIN targets t ON t.id = c.target_id
			WHERE c.run_id = $1 AND c.target_id BETWEEN $2 AND $3
			ORDER BY c.target_id`, []any{runID, from, to}, func(rows *sql.Rows) error {
			c, err := scanCheck(rows)
			if err != nil {
				return err
			}
			out = append(out, *c)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("checks of run %d of targets %d-%d: %w", runID, from, to, err)
	}
	return out, nil
}

// TargetsFirstSeenOf is TargetsFirstSeen for the targets with ID in
// [from, to].
func (db *DB) TargetsFirstSeenOf(ctx context.Context, runID, from, to int64) (map[int64]time.Time, error) {
	out := map[int64]time.Time{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return eachRow(ctx, tx, `SELECT t.id, t.first_seen_at FROM run_targets rt JOIN targets t ON t.id = rt.target_id
			WHERE rt.run_id = $1 AND rt.target_id BETWEEN $2 AND $3`,
			[]any{runID, from, to}, instantsByID(out))
	})
	if err != nil {
		return nil, fmt.Errorf("first sight of the targets %d-%d of run %d: %w", from, to, runID, err)
	}
	return out, nil
}

// LinksFirstSeenOf is LinksFirstSeen for the links to the targets with ID
// in [from, to]. The CROSS JOIN keeps SQLite going from each link to its
// first sight (an automatic index on first), not from each first sight
// through every link of its target: a page linked from every page would
// be quadratic.
func (db *DB) LinksFirstSeenOf(ctx context.Context, runID, from, to int64) (map[int64]time.Time, error) {
	out := map[int64]time.Time{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return eachRow(ctx, tx, `
			WITH first AS (
				SELECT p2.url AS page_url, l2.target_id AS target_id,
					min(coalesce(p2.fetched_at, r2.started_at)) AS seen
				FROM links l2
				JOIN pages p2 ON p2.id = l2.page_id
				JOIN runs r2 ON r2.id = l2.run_id
				WHERE l2.target_id BETWEEN $2 AND $3
					AND r2.started_at <= (SELECT started_at FROM runs WHERE id = $1)
				GROUP BY p2.url, l2.target_id)
			SELECT l.id, f.seen
			FROM links l
			JOIN pages p ON p.id = l.page_id
			CROSS JOIN first f
			WHERE f.page_url = p.url AND f.target_id = l.target_id
				AND l.target_id BETWEEN $2 AND $3 AND +l.run_id = $1`, []any{runID, from, to}, instantsByID(out))
	})
	if err != nil {
		return nil, fmt.Errorf("first sight of the links of run %d to targets %d-%d: %w", runID, from, to, err)
	}
	return out, nil
}

// FirstFingerprintsOf is FirstFingerprints for the targets with ID in
// [from, to].
func (db *DB) FirstFingerprintsOf(ctx context.Context, runID, from, to int64) (map[int64]*audit.Check, error) {
	out, err := db.firstFingerprints(ctx, runID, ` AND w.target_id BETWEEN $2 AND $3`, from, to)
	if err != nil {
		return nil, fmt.Errorf("targets %d-%d: %w", from, to, err)
	}
	return out, nil
}

// EachOriginalLink calls fn for each link of a run that declares a
// data-originalurl, with its target's URL ("" when none) and the link
// (Robust Links attributes, without snapshots), in link ID order; fn must
// not use the store. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) EachOriginalLink(ctx context.Context, runID int64, fn func(linkID int64, targetURL string, l *audit.Link) error) error {
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		var (
			row  linkRow
			tURL sql.NullString
		)
		return eachRow(ctx, tx, `
			SELECT l.id, lt.url, `+linkRowSQL+`
			FROM links l`+linkTargetJoin+`
			WHERE l.run_id = $1 AND l.has_robust = 1 AND l.originalurl IS NOT NULL
			ORDER BY l.id`, []any{runID}, func(rows *sql.Rows) error {
			var (
				id int64
				l  audit.Link
			)
			if err := rows.Scan(append([]any{&id, &tURL}, row.dest(&l)...)...); err != nil {
				return err
			}
			if err := row.fill(&l); err != nil {
				return fmt.Errorf("link %d: %w", id, err)
			}
			return fn(id, tURL.String, &l)
		})
	})
	if err != nil {
		return fmt.Errorf("links with an original URL of run %d: %w", runID, err)
	}
	return nil
}

// RunTargetIDs returns the IDs of the targets with the given URLs that
// links of a run point to, by URL (URLs of no such target are missing).
// An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) RunTargetIDs(ctx context.Context, runID int64, urls []string) (map[string]int64, error) {
	out := map[string]int64{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		for len(urls) > 0 {
			n := min(len(urls), 200)
			var args []any
			for _, u := range urls[:n] {
				args = append(args, u)
			}
			urls = urls[n:]
			err := eachRow(ctx, tx, `SELECT t.id, t.url FROM targets t
				WHERE t.url IN (`+params(1, n)+`)
					AND EXISTS (SELECT 1 FROM run_targets rt WHERE rt.run_id = $`+strconv.Itoa(n+1)+` AND rt.target_id = t.id)`,
				append(args, runID), func(rows *sql.Rows) error {
					var (
						id int64
						u  string
					)
					if err := rows.Scan(&id, &u); err != nil {
						return err
					}
					out[u] = id
					return nil
				})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("targets of run %d by URL: %w", runID, err)
	}
	return out, nil
}

// PageIdentifiers returns the pages of a run that declare identifiers, in
// the order they were saved, with their URL and identifiers only. An
// unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) PageIdentifiers(ctx context.Context, runID int64) ([]*audit.Page, error) {
	var (
		out  []*audit.Page
		last int64
	)
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT i.page_id, p.url, i.url, i.rel, i.source
			FROM identifiers i JOIN pages p ON p.id = i.page_id
			WHERE p.run_id = $1 ORDER BY i.page_id, i.ord`, runID, func(rows *sql.Rows) error {
			var (
				pageID int64
				u      string
				id     audit.Identifier
			)
			if err := rows.Scan(&pageID, &u, &id.URL, &id.Rel, &id.Source); err != nil {
				return err
			}
			if len(out) == 0 || pageID != last {
				out = append(out, &audit.Page{Extraction: audit.Extraction{URL: u}})
				last = pageID
			}
			p := out[len(out)-1]
			p.Identifiers = append(p.Identifiers, id)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("identifiers of the pages of run %d: %w", runID, err)
	}
	return out, nil
}

// SharedCheckURLs returns the URLs at which the checks of two or more of
// a run's targets ended (the final URL after redirects, else the
// target's): live pages the archives stage may need in more than one
// chunk. An unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) SharedCheckURLs(ctx context.Context, runID int64) ([]string, error) {
	var out []string
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT x.u FROM (
				SELECT CASE WHEN c.final_url <> '' THEN c.final_url ELSE t.url END AS u
				FROM checks c JOIN targets t ON t.id = c.target_id
				WHERE c.run_id = $1) x
			GROUP BY x.u HAVING count(*) > 1 ORDER BY x.u NULLS FIRST`, runID, func(rows *sql.Rows) error {
			var u string
			if err := rows.Scan(&u); err != nil {
				return err
			}
			out = append(out, u)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("shared check URLs of run %d: %w", runID, err)
	}
	return out, nil
}

// EachLinkTarget calls fn with the ID, target ID and target URL of each
// link of a run that has a target, in link ID order, streamed: what a
// study (linkrot study, whose links are its references) needs of its
// links, without the links' own columns.
func (db *DB) EachLinkTarget(ctx context.Context, runID int64, fn func(linkID, targetID int64, targetURL string) error) error {
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT l.id, t.id, t.url FROM links l JOIN targets t ON t.id = l.target_id
			WHERE l.run_id = $1 ORDER BY l.id`, runID, func(rows *sql.Rows) error {
			var (
				link, target int64
				u            string
			)
			if err := rows.Scan(&link, &target, &u); err != nil {
				return err
			}
			return fn(link, target, u)
		})
	})
	if err != nil {
		return fmt.Errorf("links of run %d: %w", runID, err)
	}
	return nil
}
