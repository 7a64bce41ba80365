package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// readTx runs fn in a read-only transaction on the read pool, so that every
// query of fn sees the same committed state, after checking that the run
// exists (audit.ErrNotFound otherwise).
func (db *DB) readTx(ctx context.Context, runID int64, fn func(tx *sql.Tx) error) error {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = $1`, runID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return audit.ErrNotFound
	}
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// each runs query, whose one parameter is runID, and calls scan for
// every row.
func each(ctx context.Context, tx *sql.Tx, query string, runID int64, scan func(*sql.Rows) error) error {
	return eachRow(ctx, tx, query, []any{runID}, scan)
}

// Targets returns the distinct targets linked from the pages of a run, in
// ID order, with the number of links to each. Links without a target (see
// SavePages) and snapshot URLs are not included. An unknown run yields an
// error wrapping audit.ErrNotFound; a run without links yields none.
func (db *DB) Targets(ctx context.Context, runID int64) ([]audit.TargetRef, error) {
	var refs []audit.TargetRef
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT t.id, t.url, t.host, count(*)
			FROM links l JOIN targets t ON t.id = l.target_id
			WHERE l.run_id = $1
			GROUP BY t.id
			ORDER BY t.id`, runID, func(rows *sql.Rows) error {
			var r audit.TargetRef
			if err := rows.Scan(&r.ID, &r.URL, &r.Host, &r.LinkCount); err != nil {
				return err
			}
			refs = append(refs, r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("targets of run %d: %w", runID, err)
	}
	return refs, nil
}

// Pages returns every page of a run in the order they were saved, rebuilt
// with all SavePages stored: redirects, links with their Robust Links and
// mset data and diagnostics, identifiers, pwids and page diagnostics. Times
// are in UTC; slices with nothing stored are nil. An unknown run yields an
// error wrapping audit.ErrNotFound.
//
// Pages loads the whole run into memory; it is meant for tests, tools and
// runs of moderate size.
func (db *DB) Pages(ctx context.Context, runID int64) ([]*audit.Page, error) {
	var pages []*audit.Page
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		var err error
		pages, _, err = readPages(ctx, tx, runID, true)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pages of run %d: %w", runID, err)
	}
	return pages, nil
}

// readPages reads the pages of a run and their IDs; full adds their links
// (with everything of them) and evidence.
func readPages(ctx context.Context, tx *sql.Tx, runID int64, full bool) ([]*audit.Page, []int64, error) {
	var (
		pages []*audit.Page
		ids   []int64
	)
	byID := make(map[int64]*audit.Page)
	page := func(id int64) (*audit.Page, error) {
		p, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("row refers to page %d, not in the run", id)
		}
		return p, nil
	}

	err := each(ctx, tx, `
		SELECT id, url, request_url, depth, status, content_type, charset, size, truncated,
			parsed, title, base, fetch_error, fetched_at, duration_ms
		FROM pages WHERE run_id = $1 ORDER BY id`, runID, func(rows *sql.Rows) error {
		var (
			id         int64
			p          audit.Page
			fetchedAt  sql.NullString
			durationMS int64
		)
		if err := rows.Scan(&id, &p.URL, &p.RequestURL, &p.Depth, &p.Status, &p.ContentType,
			&p.Charset, &p.Size, &p.Truncated, &p.Parsed, &p.Title, &p.Base, &p.FetchError,
			&fetchedAt, &durationMS); err != nil {
			return err
		}
		var err error
		if p.FetchedAt, err = parseInstant(fetchedAt); err != nil {
			return fmt.Errorf("page %d: fetched_at: %w", id, err)
		}
		p.Duration = time.Duration(durationMS) * time.Millisecond
		byID[id] = &p
		pages = append(pages, &p)
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read pages: %w", err)
	}

	err = each(ctx, tx, `
		SELECT d.page_id, d.from_url, d.to_url, d.status
		FROM redirects d JOIN pages p ON p.id = d.page_id
		WHERE p.run_id = $1 ORDER BY d.page_id, d.hop`, runID, func(rows *sql.Rows) error {
		var (
			pageID int64
			r      audit.Redirect
		)
		if err := rows.Scan(&pageID, &r.From, &r.To, &r.Status); err != nil {
			return err
		}
		p, err := page(pageID)
		if err != nil {
			return err
		}
		p.Redirects = append(p.Redirects, r)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read redirects: %w", err)
	}
	if !full {
		return pages, ids, readPageParts(ctx, tx, runID, page)
	}
	if err := readEvidence(ctx, tx, runID, page); err != nil {
		return nil, nil, fmt.Errorf("read evidence: %w", err)
	}

	// Links are appended to their page's slice; pointers into the slices
	// are taken only once all are loaded.
	type linkPos struct {
		page *audit.Page
		idx  int
	}
	linkPositions := make(map[int64]linkPos)
	var row linkRow
	err = each(ctx, tx, `
		SELECT l.page_id, l.id, `+linkRowSQL+`
		FROM links l`+linkTargetJoin+`WHERE l.run_id = $1 ORDER BY l.page_id, l.ord`, runID, func(rows *sql.Rows) error {
		var (
			pageID, linkID int64
			l              audit.Link
		)
		if err := rows.Scan(append([]any{&pageID, &linkID}, row.dest(&l)...)...); err != nil {
			return err
		}
		if err := row.fill(&l); err != nil {
			return fmt.Errorf("link %d: %w", linkID, err)
		}
		p, err := page(pageID)
		if err != nil {
			return err
		}
		p.Links = append(p.Links, l)
		linkPositions[linkID] = linkPos{p, len(p.Links) - 1}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read links: %w", err)
	}
	link := func(id int64) (*audit.Link, error) {
		pos, ok := linkPositions[id]
		if !ok {
			return nil, fmt.Errorf("row refers to link %d, not in the run", id)
		}
		return &pos.page.Links[pos.idx], nil
	}

	err = each(ctx, tx, `
		SELECT s.link_id, s.source, s.url, s.datetime, s.date_only, s.datetime_raw, s.rel
		FROM snapshots s JOIN links l ON l.id = s.link_id
		WHERE l.run_id = $1 ORDER BY s.link_id, s.source, s.ord`, runID, func(rows *sql.Rows) error {
		var (
			linkID      int64
			source, u   string
			dt, rel     sql.NullString
			dateOnly    bool
			datetimeRaw string
		)
		if err := rows.Scan(&linkID, &source, &u, &dt, &dateOnly, &datetimeRaw, &rel); err != nil {
			return err
		}
		t, err := parseSpecTime(dt)
		if err != nil {
			return fmt.Errorf("snapshot of link %d: datetime: %w", linkID, err)
		}
		l, err := link(linkID)
		if err != nil {
			return err
		}
		switch source {
		case "versionurl":
			if l.Robust == nil {
				l.Robust = &audit.Robust{}
			}
			l.Robust.Snapshots = append(l.Robust.Snapshots, audit.Snapshot{
				URL: u, Datetime: t, DateOnly: dateOnly, DatetimeRaw: datetimeRaw,
			})
		case "mset":
			if l.Mset == nil {
				l.Mset = &audit.Mset{}
			}
			c := audit.Copy{URL: u, Datetime: t, DateOnly: dateOnly, DatetimeRaw: datetimeRaw}
			if rel.Valid {
				c.Rel = &rel.String
			}
			l.Mset.Copies = append(l.Mset.Copies, c)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read snapshots: %w", err)
	}

	err = each(ctx, tx, `
		SELECT m.link_id, m.datetime
		FROM mset_temporal m JOIN links l ON l.id = m.link_id
		WHERE l.run_id = $1 ORDER BY m.link_id, m.ord`, runID, func(rows *sql.Rows) error {
		var (
			linkID int64
			dt     sql.NullString
		)
		if err := rows.Scan(&linkID, &dt); err != nil {
			return err
		}
		t, err := parseSpecTime(dt)
		if err != nil {
			return fmt.Errorf("mset of link %d: datetime: %w", linkID, err)
		}
		l, err := link(linkID)
		if err != nil {
			return err
		}
		if l.Mset == nil {
			l.Mset = &audit.Mset{}
		}
		l.Mset.Temporal = append(l.Mset.Temporal, t)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read mset temporal: %w", err)
	}

	err = each(ctx, tx, `
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
		return nil, nil, fmt.Errorf("read identifiers: %w", err)
	}

	err = each(ctx, tx, `
		SELECT w.page_id, l.ord, w.raw, w.archive_id, w.datetime, w.content_spec, w.item, w.source
		FROM pwids w JOIN pages p ON p.id = w.page_id LEFT JOIN links l ON l.id = w.link_id
		WHERE p.run_id = $1 ORDER BY w.page_id, w.ord`, runID, func(rows *sql.Rows) error {
		var (
			pageID  int64
			linkOrd sql.NullInt64
			dt      sql.NullString
			w       audit.PWID
		)
		if err := rows.Scan(&pageID, &linkOrd, &w.Raw, &w.ArchiveID, &dt, &w.ContentSpec,
			&w.Item, &w.Source); err != nil {
			return err
		}
		var err error
		if w.Datetime, err = parseSpecTime(dt); err != nil {
			return fmt.Errorf("pwid of page %d: datetime: %w", pageID, err)
		}
		w.Link = -1
		if linkOrd.Valid {
			w.Link = int(linkOrd.Int64)
		}
		p, err := page(pageID)
		if err != nil {
			return err
		}
		p.PWIDs = append(p.PWIDs, w)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read pwids: %w", err)
	}

	err = each(ctx, tx, `
		SELECT page_id, link_id, field, code, message
		FROM diagnostics WHERE run_id = $1
		ORDER BY page_id, link_id NULLS FIRST, ord`, runID, func(rows *sql.Rows) error {
		var (
			pageID int64
			linkID sql.NullInt64
			d      audit.Diagnostic
		)
		if err := rows.Scan(&pageID, &linkID, &d.Field, &d.Code, &d.Message); err != nil {
			return err
		}
		if linkID.Valid {
			l, err := link(linkID.Int64)
			if err != nil {
				return err
			}
			l.Diagnostics = append(l.Diagnostics, d)
			return nil
		}
		p, err := page(pageID)
		if err != nil {
			return err
		}
		p.Diagnostics = append(p.Diagnostics, d)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read diagnostics: %w", err)
	}
	return pages, ids, nil
}
