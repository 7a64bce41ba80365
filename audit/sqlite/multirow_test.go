package sqlite

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// multiRowPages returns pages whose link counts straddle the chunk sizes
// of the multi-row link INSERTs (linkChunks), one of them with more links
// than SQLite's parameters allow in one statement (32,766 / 26), whose
// links carry snapshots, mset data and diagnostics and are referred to by
// pwids: the rows that need the IDs of links written many at a time.
func multiRowPages() []*audit.Page {
	model := fullPage(url0).Links
	var pages []*audit.Page
	for k, n := range []int{0, 1, 5, 7, 8, 9, 63, 64, 65, 130, 1301} {
		p := fullPage(fmt.Sprintf("https://example.org/multi/%d", k))
		p.Redirects = nil
		p.Links = nil
		for i := range n {
			l := model[i%len(model)]
			if l.Href != "" && l.Href != "http://[::1" {
				// A target per link and snapshots' targets among them,
				// created in order.
				l.Href += fmt.Sprintf("?p=%d&i=%d", k, i)
			}
			l.Line, l.Column, l.LineHash = i+1, i%3, fmt.Sprint("h", i)
			p.Links = append(p.Links, l)
		}
		p.PWIDs = nil
		for _, i := range []int{0, 1, 7, 8, 63, 64, 65, 129, 1300} {
			if i < n {
				p.PWIDs = append(p.PWIDs, audit.PWID{Raw: pwidHref, ArchiveID: "archive.org",
					Datetime: at("2019-03-01T10:00:00Z"), ContentSpec: "part", Item: "https://example.com/x",
					Source: "href", Link: i})
			}
		}
		pages = append(pages, p)
	}
	return pages
}

// tableRows returns every row of table in rowid order, each column as
// the driver returns it, leaving out the columns in skip.
func tableRows(t *testing.T, db *DB, table string, skip ...string) [][]any {
	t.Helper()
	rows, err := db.read.Query(`SELECT * FROM ` + table + ` ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var row []any
	col:
		for i, c := range cols {
			for _, s := range skip {
				if c == s {
					continue col
				}
			}
			row = append(row, vals[i])
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSavePages_MultiRowLinks: links written many rows per statement
// (SQLite) give exactly the rows, IDs included, that one statement per
// link gives, in every table, and read back as saved: each snapshot, mset
// row, diagnostic and pwid under its own link, across chunk boundaries, in
// a batch after earlier ones (IDs not starting at 1) and with a gap left
// by a deleted run.
func TestSavePages_MultiRowLinks(t *testing.T) {
	ctx := context.Background()
	multi, byRow := MustOpen(t), MustOpen(t)
	byRow.linksByRow = true
	for _, db := range []*DB{multi, byRow} {
		first := mustCreateRun(t, db)
		mustSave(t, db, first, fullPage(url0), fullPage("https://example.org/other"))
		gone := mustCreateRun(t, db)
		mustSave(t, db, gone, fullPage(url0))
		mustSave(t, db, mustCreateRun(t, db), fullPage(url0))
		if _, err := db.write.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, gone); err != nil {
			t.Fatal(err)
		}
		runID := mustCreateRun(t, db)
		pages := multiRowPages()
		// Two batches: the second's IDs follow the first's.
		if err := db.SaveCrawl(ctx, runID, pages[:6], nil); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveCrawl(ctx, runID, pages[6:], nil); err != nil {
			t.Fatal(err)
		}
		got := mustPages(t, db, runID)
		want := multiRowPages()
		if len(got) != len(want) {
			t.Fatalf("%d pages read back, want %d", len(got), len(want))
		}
		for i, p := range got {
			w := want[i]
			if len(p.Links) != len(w.Links) {
				t.Fatalf("page %s: %d links read back, want %d", p.URL, len(p.Links), len(w.Links))
			}
			for j := range p.Links {
				wl := w.Links[j]
				wl.Line, wl.Column, wl.LineHash = 0, 0, "" // Pages leaves positions out
				if !reflect.DeepEqual(p.Links[j], wl) {
					t.Fatalf("page %s link %d read back as %+v, want %+v", p.URL, j, p.Links[j], wl)
				}
			}
			if !reflect.DeepEqual(p.PWIDs, w.PWIDs) {
				t.Errorf("page %s: pwids %+v, want %+v", p.URL, p.PWIDs, w.PWIDs)
			}
		}
		if err := db.IntegrityCheck(ctx); err != nil {
			t.Error(err)
		}
	}
	if n := count(t, multi, `SELECT count(*) FROM links`); n < 1650 {
		t.Fatalf("%d links stored", n)
	}
	for _, table := range []string{"pages", "links", "targets", "snapshots", "mset_temporal", "diagnostics",
		"pwids", "identifiers", "redirects", "page_evidence"} {
		a := tableRows(t, multi, table, "first_seen_at", "fetched_at")
		b := tableRows(t, byRow, table, "first_seen_at", "fetched_at")
		if !reflect.DeepEqual(a, b) {
			t.Errorf("table %s: %d rows written many per statement differ from the %d rows written one by one", table, len(a), len(b))
			for i := range min(len(a), len(b)) {
				if !reflect.DeepEqual(a[i], b[i]) {
					t.Errorf("first difference, row %d:\n%v\n%v", i, a[i], b[i])
					break
				}
			}
		}
	}
}

// TestLinkRowsNext: a page's links are cut into the prepared chunk sizes,
// largest first, and every size is one Open prepares.
func TestLinkRowsNext(t *testing.T) {
	for n, want := range map[int][]int{
		1: {1}, 5: {5}, 8: {8}, 9: {8, 1}, 63: {32, 16, 8, 7}, 64: {64}, 65: {64, 1}, 130: {64, 64, 2},
	} {
		var got []int
		for left := n; left > 0; {
			c := linkRowsNext(left)
			got = append(got, c)
			left -= c
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d links: chunks %v, want %v", n, got, want)
		}
	}
	prepared := map[string]bool{}
	for _, q := range writerSQL() {
		prepared[q] = true
	}
	for _, c := range linkChunks {
		if !prepared[insertLinksSQL(c)] {
			t.Errorf("the INSERT of %d links is not prepared by Open", c)
		}
	}
}
