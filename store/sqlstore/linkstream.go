package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// PageList returns the pages of a run in the order they were saved, with
// their IDs, like Pages but without their links (and the links' data) and
// evidence: redirects, identifiers and page diagnostics only. Its memory
// grows with the pages, not the links; EachLink streams the links.
func (db *DB) PageList(ctx context.Context, runID int64) ([]*audit.Page, []int64, error) {
	var (
		pages []*audit.Page
		ids   []int64
	)
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		var err error
		pages, ids, err = readPages(ctx, tx, runID, false)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("pages of run %d: %w", runID, err)
	}
	return pages, ids, nil
}

// readPageParts reads the identifiers and page diagnostics of a run's
// pages (for PageList).
func readPageParts(ctx context.Context, tx *sql.Tx, runID int64, page func(int64) (*audit.Page, error)) error {
	err := each(ctx, tx, `
		SELECT i.page_id, i.url, i.rel, i.source
		FROM identifiers i JOIN pages p ON p.id = i.page_id
		WHERE p.run_id = $1 ORDER BY i.page_id, i.ord`, runID, func(rows *sql.Rows) error {
		var (
			pageID int64
			id     audit.Identifier
		)
		if err := rows.Scan(&pageID, &id.URL, &id.Rel, &id.Source); err != nil {
			return err
		}
		p, err := page(pageID)
		if err != nil {
			return err
		}
		p.Identifiers = append(p.Identifiers, id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read identifiers: %w", err)
	}
	err = each(ctx, tx, `
		SELECT page_id, field, code, message
		FROM diagnostics WHERE run_id = $1 AND link_id IS NULL
		ORDER BY page_id, ord`, runID, func(rows *sql.Rows) error {
		var (
			pageID int64
			d      audit.Diagnostic
		)
		if err := rows.Scan(&pageID, &d.Field, &d.Code, &d.Message); err != nil {
			return err
		}
		p, err := page(pageID)
		if err != nil {
			return err
		}
		p.Diagnostics = append(p.Diagnostics, d)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read diagnostics: %w", err)
	}
	return nil
}

// EachLink calls fn for every link of a run in the order they were saved
// (page order, then document order: link IDs grow with both), with its
// Robust Links, mset data and diagnostics, as Pages would give them. It
// reads in one read transaction and holds one link at a time, so that a
// run of millions of links can be walked in bounded memory; the
// *StoredLink is valid during the call only. It stops at fn's first
// error and returns it. An unknown run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) EachLink(ctx context.Context, runID int64, fn func(*store.StoredLink) error) error {
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error { return eachLink(ctx, tx, runID, fn) })
	if err != nil {
		return fmt.Errorf("links of run %d: %w", runID, err)
	}
	return nil
}

// linkChunk is how many links eachLink reads at a time: each chunk's
// links and their snapshots, mset datetimes and diagnostics are read by
// queries that finish before the next starts (PostgreSQL, unlike SQLite,
// cannot interleave result sets on one connection), then handed out.
const linkChunk = 2048

// snapshotRow is a row of snapshots as the link readers scan it
// (link_id apart).
type snapshotRow struct {
	source, u, raw string
	dt, rel        sql.NullString
	dateOnly       bool
}

// addTo adds the snapshot to its link: a Robust Links snapshot
// (data-versionurl) or a copy of the link's mset.
func (r *snapshotRow) addTo(l *audit.Link) error {
	t, err := parseSpecTime(r.dt)
	if err != nil {
		return fmt.Errorf("datetime: %w", err)
	}
	switch r.source {
	case "versionurl":
		if l.Robust == nil {
			l.Robust = &audit.Robust{}
		}
		l.Robust.Snapshots = append(l.Robust.Snapshots, audit.Snapshot{
			URL: r.u, Datetime: t, DateOnly: r.dateOnly, DatetimeRaw: r.raw})
	case "mset":
		if l.Mset == nil {
			l.Mset = &audit.Mset{}
		}
		c := audit.Copy{URL: r.u, Datetime: t, DateOnly: r.dateOnly, DatetimeRaw: r.raw}
		if r.rel.Valid {
			rel := r.rel.String
			c.Rel = &rel
		}
		l.Mset.Copies = append(l.Mset.Copies, c)
	}
	return nil
}

func eachLink(ctx context.Context, tx *sql.Tx, runID int64, fn func(*store.StoredLink) error) error {
	var (
		snapRow snapshotRow
		tempRow sql.NullString
		diagRow audit.Diagnostic
	)
	subs := []struct {
		query string
		scan  func(*sql.Rows) (int64, error)
		apply func(l *audit.Link) error
	}{
		{`SELECT s.link_id, s.source, s.url, s.datetime, s.date_only, s.datetime_raw, s.rel
			FROM snapshots s
			WHERE s.link_id BETWEEN $1 AND $2 ORDER BY s.link_id, s.source, s.ord`,
			func(r *sql.Rows) (id int64, err error) {
				err = r.Scan(&id, &snapRow.source, &snapRow.u, &snapRow.dt, &snapRow.dateOnly, &snapRow.raw, &snapRow.rel)
				return id, err
			},
			func(l *audit.Link) error {
				if err := snapRow.addTo(l); err != nil {
					return fmt.Errorf("snapshot: %w", err)
				}
				return nil
			}},
		{`SELECT m.link_id, m.datetime
			FROM mset_temporal m
			WHERE m.link_id BETWEEN $1 AND $2 ORDER BY m.link_id, m.ord`,
			func(r *sql.Rows) (id int64, err error) {
				err = r.Scan(&id, &tempRow)
				return id, err
			},
			func(l *audit.Link) error {
				t, err := parseSpecTime(tempRow)
				if err != nil {
					return fmt.Errorf("mset: datetime: %w", err)
				}
				if l.Mset == nil {
					l.Mset = &audit.Mset{}
				}
				l.Mset.Temporal = append(l.Mset.Temporal, t)
				return nil
			}},
		{`SELECT link_id, field, code, message FROM diagnostics
			WHERE link_id BETWEEN $1 AND $2 ORDER BY link_id NULLS FIRST, ord`,
			func(r *sql.Rows) (id int64, err error) {
				err = r.Scan(&id, &diagRow.Field, &diagRow.Code, &diagRow.Message)
				return id, err
			},
			func(l *audit.Link) error {
				l.Diagnostics = append(l.Diagnostics, diagRow)
				return nil
			}},
	}
	var (
		target sql.NullInt64
		row    linkRow
	)
	chunk := make([]store.StoredLink, 0, linkChunk)
	index := make(map[int64]int, linkChunk)
	// A run's links are written together, so their IDs make one range
	// (or a few, when runs wrote at once): the chunks are read along the
	// table's own order inside the run's first and last ID ("+l.run_id"
	// keeps SQLite from going through links_run_id and looking each row up
	// again in the table), and the rows of the chunk's snapshots, mset
	// datetimes and diagnostics by link ID range (rows of other runs'
	// links in the range are skipped by index).
	var after, lastID sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT min(id) - 1, max(id) FROM links WHERE run_id = $1`, runID).Scan(&after, &lastID); err != nil {
		return err
	}
	if !lastID.Valid {
		return nil // no links
	}
	for {
		chunk = chunk[:0]
		clear(index)
		rows, err := tx.QueryContext(ctx, `
			SELECT l.id, l.page_id, l.target_id, `+linkRowSQL+`, l.line, l.col, l.line_hash
			FROM links l`+linkTargetJoin+`WHERE +l.run_id = $1 AND l.id > $2 AND l.id <= $3 ORDER BY l.id LIMIT $4`,
			runID, after.Int64, lastID.Int64, linkChunk)
		if err != nil {
			return err
		}
		for rows.Next() {
			chunk = append(chunk, store.StoredLink{})
			cur := &chunk[len(chunk)-1]
			l := &cur.Link
			dest := append([]any{&cur.ID, &cur.PageID, &target}, row.dest(l)...)
			if err := rows.Scan(append(dest, &l.Line, &l.Column, &l.LineHash)...); err != nil {
				rows.Close()
				return err
			}
			cur.TargetID = target.Int64
			if err := row.fill(l); err != nil {
				rows.Close()
				return fmt.Errorf("link %d: %w", cur.ID, err)
			}
			index[cur.ID] = len(chunk) - 1
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		if len(chunk) == 0 {
			return nil
		}
		first, last := chunk[0].ID, chunk[len(chunk)-1].ID
		for _, sub := range subs {
			if err := eachRow(ctx, tx, sub.query, []any{first, last}, func(r *sql.Rows) error {
				id, err := sub.scan(r)
				if err != nil {
					return err
				}
				i, ok := index[id]
				if !ok {
					return nil // a link of another run inside the chunk's ID range
				}
				if err := sub.apply(&chunk[i].Link); err != nil {
					return fmt.Errorf("link %d: %w", id, err)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		for i := range chunk {
			if err := fn(&chunk[i]); err != nil {
				return err
			}
		}
		after.Int64 = last
	}
}

// linkRowSQL is the columns of a link that linkRow scans, from "links l"
// joined by linkTargetJoin.
const linkRowSQL = `l.element, l.attr, ` + hrefSQL + `, ` + rawHrefSQL + `, l.text, l.rel, l.resource,
	l.has_robust, l.originalurl, l.originalurl_raw, l.originalurl_inferred, l.versiondate,
	l.versiondate_date_only, l.versiondate_raw, l.versionurl_raw, l.has_mset, l.mset_raw`

// linkRow scans the columns of linkRowSQL into an audit.Link: dest gives
// the Scan destinations (the link's own fields and the row's), fill sets
// what is built from the row's (Rel, Robust, Mset).
type linkRow struct {
	rel                          string
	hasRobust, hasMset           bool
	original, originalRaw, vdate sql.NullString
	vdRaw, vuRaw, msetRaw        sql.NullString
	inferred, dateOnly           sql.NullBool
}

func (r *linkRow) dest(l *audit.Link) []any {
	return []any{&l.Element, &l.Attr, &l.Href, &l.RawHref, &l.Text, &r.rel, &l.Resource,
		&r.hasRobust, &r.original, &r.originalRaw, &r.inferred, &r.vdate, &r.dateOnly,
		&r.vdRaw, &r.vuRaw, &r.hasMset, &r.msetRaw}
}

func (r *linkRow) fill(l *audit.Link) error {
	l.Rel, l.Robust, l.Mset = nil, nil, nil
	if r.rel != "" {
		l.Rel = strings.Split(r.rel, " ")
	}
	if r.hasRobust {
		vd, err := parseSpecTime(r.vdate)
		if err != nil {
			return fmt.Errorf("versiondate: %w", err)
		}
		l.Robust = &audit.Robust{
			OriginalURL:      r.original.String,
			OriginalInferred: r.inferred.Bool,
			OriginalRaw:      r.originalRaw.String,
			VersionDate:      vd,
			VersionDateOnly:  r.dateOnly.Bool,
			VersionDateRaw:   r.vdRaw.String,
			VersionURLRaw:    r.vuRaw.String,
		}
	}
	if r.hasMset {
		l.Mset = &audit.Mset{Raw: r.msetRaw.String}
	}
	return nil
}
