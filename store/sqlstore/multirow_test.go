package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// multiRowPages returns pages whose link counts straddle the chunk sizes
// of the multi-row link INSERTs (linkChunks), one of them with more links
// than SQLite's parameters allow in one statement (32,766 / 26), whose
// links carry snapshots, mset data and diagnostics and are referred to by
// pwids: the rows that need the IDs of links written many at a time. The
// links of every other page are plain (no Robust Links, no mset data:
// insertPlainLinksSQL), the largest page's included.
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
			if k%2 == 0 {
				l.Robust, l.Mset = nil, nil
			}
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

// scanAny scans the current row of rows, of n columns, as the driver
// gives the values.
func scanAny(rows *sql.Rows, n int) ([]any, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, rows.Scan(ptrs...)
}

// tableRows returns every row of table in rowid order, each column as
// the driver returns it, leaving out the columns in skip.
func tableRows(t *testing.T, db *DB, table string, skip ...string) [][]any {
	t.Helper()
	rows, err := db.read.Query(`SELECT * FROM ` + table + ` ORDER BY rowid NULLS FIRST`)
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
		vals, err := scanAny(rows, len(cols))
		if err != nil {
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

// TestSavePages_MultiRowLinks: links and targets written many rows per
// statement (SQLite) give exactly the rows, IDs included, that one
// statement per row gives, in every table, and read back as saved: each
// snapshot, mset row, diagnostic and pwid under its own link, across chunk
// boundaries, in a batch after earlier ones (IDs not starting at 1), with a
// gap left by a deleted run, targets of earlier runs and batches, and
// pages not written (a URL the run has) whose links create no target.
func TestSavePages_MultiRowLinks(t *testing.T) {
	ctx := context.Background()
	multi, byRow := MustOpen(t), MustOpen(t)
	byRow.rowByRow = true
	for _, db := range []*DB{multi, byRow} {
		first := mustCreateRun(t, db)
		mustSave(t, db, first, fullPage(url0), fullPage("https://example.org/other"))
		gone := mustCreateRun(t, db)
		mustSave(t, db, gone, fullPage(url0))
		mustSave(t, db, mustCreateRun(t, db), fullPage(url0))
		if _, err := db.write.ExecContext(ctx, `DELETE FROM runs WHERE id = $1`, gone); err != nil {
			t.Fatal(err)
		}
		runID := mustCreateRun(t, db)
		pages := multiRowPages()
		// Pages that are not written (their URL is the run's already, from
		// this batch or an earlier one), whose links' targets must not be
		// created, though their own URL's target is.
		skipped := func(u string) *audit.Page {
			p := fullPage(u)
			for i := range p.Links {
				if p.Links[i].Href != "" {
					p.Links[i].Href = "https://skipped.example/" + fmt.Sprint(i)
				}
			}
			return p
		}
		// Two batches: the second's IDs follow the first's, and it finds
		// some of its targets in the DB's cache.
		batch1 := append(pages[:6:6], skipped(pages[2].URL))
		if err := db.SaveCrawl(ctx, runID, batch1, nil); err != nil {
			t.Fatal(err)
		}
		second := append([]*audit.Page{skipped(pages[0].URL)}, pages[6:]...)
		second = append(second, skipped(pages[8].URL), fullPage("https://example.org/multi/last"))
		second[len(second)-1].Links[0].Href = pages[1].Links[0].Href
		if err := db.SaveCrawl(ctx, runID, second, nil); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db, `SELECT count(*) FROM targets WHERE url LIKE '%skipped%'`); n != 0 {
			t.Errorf("%d targets of the links of pages not written", n)
		}
		got := mustPages(t, db, runID)
		want := append(multiRowPages(), fullPage("https://example.org/multi/last"))
		want[len(want)-1].Links[0].Href = want[1].Links[0].Href
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

func TestSaveChecks_ManyRows(t *testing.T) { forEachBackend(t, testSaveChecks_ManyRows) }

// testSaveChecks_ManyRows: a batch of more checks than one multi-row
// INSERT writes (SQLite), mixing new checks with checks that replace one
// of an earlier batch or of the same batch, reads back as one statement
// per check would leave it: the last check of a target wins, whole. A bad
// check in the middle of a chunk (unknown target, wrong URL) fails the
// batch with its index, and nothing of the batch is stored.
func testSaveChecks_ManyRows(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	const n = 120
	page := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/", Parsed: true}, RequestURL: "https://example.org/", Status: 200}
	var urls []string
	for i := range n {
		u := fmt.Sprintf("https://t.example/%d", i)
		urls = append(urls, u)
		page.Links = append(page.Links, audit.Link{Element: "a", Attr: "href", Href: u, RawHref: u})
	}
	mustSave(t, db, runID, page)
	ids, err := db.TargetIDs(ctx, urls)
	if err != nil || len(ids) != n {
		t.Fatalf("target ids: %d, %v", len(ids), err)
	}
	check := func(i int, v audit.Verdict) audit.Check {
		c := benchCheck(runID, ids[urls[i]], urls[i], i)
		c.Verdict = v
		if i%3 == 0 {
			c.URL = "" // not compared with the target's
		}
		if i%4 == 1 {
			c.FromCrawl = true
		}
		if i%5 == 2 {
			c.Soft404 = &audit.Soft404Evidence{ProbeURL: urls[i] + "-probe", ProbeStatus: 200, Similarity: 0.9,
				Score: 0.8, Signals: []audit.Soft404Signal{{Name: "probe", Score: 0.8}}}
			c.Verdict = audit.VerdictSoft404
		}
		if i%7 == 3 {
			c.Redirects = nil
			c.Headers = map[string]string{"Etag": `W/"x\y"`, "Link": "<https://t.example/é>; rel=\"a&b\""}
		}
		return c
	}
	var first []audit.Check
	for i := range 10 {
		first = append(first, check(i, audit.VerdictTimeout))
	}
	if err := db.SaveChecks(ctx, first); err != nil {
		t.Fatal(err)
	}
	want := map[int64]audit.Check{}
	for _, c := range first {
		want[c.TargetID] = c
	}
	var batch []audit.Check
	for i := 5; i < 100; i++ {
		batch = append(batch, check(i, audit.VerdictOK))
		switch i {
		case 40, 71: // replaced in the same batch, while still queued
			batch = append(batch, check(i-2, audit.VerdictGone))
		case 90: // written long before
			batch = append(batch, check(20, audit.VerdictGone))
		}
	}
	for _, c := range batch {
		want[c.TargetID] = c
	}
	if err := db.SaveChecks(ctx, batch); err != nil {
		t.Fatal(err)
	}
	got, err := db.Checks(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d checks stored, want %d", len(got), len(want))
	}
	for _, c := range got {
		w := want[c.TargetID]
		if c.Verdict != w.Verdict || c.FromCrawl != w.FromCrawl || (c.Soft404 == nil) != (w.Soft404 == nil) ||
			!reflect.DeepEqual(c.Headers, w.Headers) || !reflect.DeepEqual(c.Redirects, w.Redirects) || c.ETag != w.ETag {
			t.Errorf("check of %s read back as %+v\nwant %+v", c.URL, c, w)
		}
		if w.Soft404 != nil && (c.Soft404.Score != w.Soft404.Score || !reflect.DeepEqual(c.Soft404.Signals, w.Soft404.Signals)) {
			t.Errorf("soft-404 evidence of %s read back as %+v, want %+v", c.URL, c.Soft404, w.Soft404)
		}
	}

	for _, bad := range []struct {
		at   int
		edit func(c *audit.Check)
		want string
	}{
		{57, func(c *audit.Check) { c.TargetID = 1 << 40 }, "not found"},
		{40, func(c *audit.Check) { c.URL = urls[0] }, "URL is not the target's URL"},
	} {
		var batch []audit.Check
		for i := 100; i < n; i++ {
			batch = append(batch, check(i, audit.VerdictOK))
		}
		for i := 10; len(batch) < 70; i++ {
			batch = append(batch, check(i, audit.VerdictOK))
		}
		bad.edit(&batch[bad.at])
		err := db.SaveChecks(ctx, batch)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("check %d of the batch", bad.at)) ||
			!strings.Contains(err.Error(), bad.want) {
			t.Errorf("batch with a bad check at %d: %v", bad.at, err)
		}
		if k := count(t, db, `SELECT count(*) FROM checks`); k != len(want) {
			t.Errorf("failed batch left %d checks, want %d", k, len(want))
		}
	}
}

// TestHeadersJSON: the header maps and string lists headersJSON and
// stringsJSON write without encoding/json come out as marshalJSON writes
// them, and the others go through it.
func TestHeadersJSON(t *testing.T) {
	cases := []map[string]string{
		nil, {},
		{"Content-Type": "text/html", "content-type": "x", "Etag": `"abc"`, "X": `a\b`, "Link": `<a>; rel="x&y"`},
		{"A": "é", "B": "tab\there", "C": "\u2028", "D": "bad \xff utf-8", "E": "\x00\x1f\x7f"},
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(" !\"#&'<>\\azAZ09:;{}[]~\x7e\x7f\t")
	for range 300 {
		m := map[string]string{}
		for range r.IntN(6) {
			var k, v []byte
			for range r.IntN(5) {
				k = append(k, alphabet[r.IntN(len(alphabet))])
			}
			for range r.IntN(12) {
				v = append(v, alphabet[r.IntN(len(alphabet))])
			}
			m[string(k)] = string(v)
		}
		cases = append(cases, m)
	}
	for _, h := range cases {
		var list []string
		for k, v := range h {
			list = append(list, k, v)
		}
		got, err := stringsJSON(list)
		if err != nil {
			t.Fatal(err)
		}
		if list == nil {
			list = []string{}
		}
		if want, err := marshalJSON(list); err != nil || got != want {
			t.Errorf("stringsJSON(%q) = %s, want %s (%v)", list, got, want, err)
		}
		got, err = headersJSON(h)
		if err != nil {
			t.Fatal(err)
		}
		m := h
		if m == nil {
			m = map[string]string{}
		}
		want, err := marshalJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("headersJSON(%q) = %s, want %s", h, got, want)
		}
	}
}

// TestBeginBatch: a writer batch runs with its statement journal in
// memory (temp_store=MEMORY, 2), and the write connection is back to the
// default (0) after it, whether it committed, rolled back or its context
// was cancelled.
func TestBeginBatch(t *testing.T) {
	db := MustOpen(t)
	tempStore := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) int {
		t.Helper()
		var v int
		if err := q.QueryRowContext(context.Background(), `PRAGMA temp_store`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, commit := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		tx, end, err := db.beginBatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v := tempStore(tx); v != 2 {
			t.Errorf("temp_store in the batch = %d, want 2 (memory)", v)
		}
		if commit {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		} else {
			cancel()
		}
		end()
		cancel()
		if v := tempStore(db.write); v != 0 {
			t.Errorf("temp_store after the batch (commit %v) = %d, want 0", commit, v)
		}
	}
	runID := mustCreateRun(t, db)
	mustSave(t, db, runID, multiRowPages()...)
	if v := tempStore(db.write); v != 0 {
		t.Errorf("temp_store after SavePages = %d, want 0", v)
	}
}

// TestSavePages_TargetsOfEarlierRuns: targets that exist but are in no
// cache (a DB opened again), mixed with new ones, get their IDs and new
// ones the IDs one statement per target gives, whether the batch guesses
// new targets (INSERTs that find some taken) or existing ones (a lookup
// first): the rows equal those written row by row.
func TestSavePages_TargetsOfEarlierRuns(t *testing.T) {
	ctx := context.Background()
	page := func(u string, hrefs ...string) *audit.Page {
		p := &audit.Page{Extraction: audit.Extraction{URL: u, Parsed: true}, RequestURL: u, Status: 200}
		for _, h := range hrefs {
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: h, RawHref: h})
		}
		return p
	}
	old := func(i int) string { return fmt.Sprintf("https://old.example/%d", i) }
	var dbs []*DB
	for _, byRow := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "linkrot.db")
		first := openClosed(t, path)
		var hrefs []string
		for i := range 150 {
			hrefs = append(hrefs, old(i))
		}
		mustSave(t, first, mustCreateRun(t, first), page("https://example.org/", hrefs...))
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		db := openClosed(t, path) // empty caches
		db.rowByRow = byRow
		runID := mustCreateRun(t, db)
		var batch []*audit.Page
		// New targets among old ones: the first pages' INSERTs find
		// some taken; then mostly old ones, and the guess turns.
		for k := range 6 {
			var hrefs []string
			for i := range 25 {
				hrefs = append(hrefs, old(k*25+i))
				if k < 2 || i%10 == 0 {
					hrefs = append(hrefs, fmt.Sprintf("https://new.example/%d/%d", k, i))
				}
			}
			batch = append(batch, page(fmt.Sprintf("https://example.org/%d", k), hrefs...))
		}
		mustSave(t, db, runID, batch[:3]...)
		mustSave(t, db, runID, batch[3:]...)
		if n := count(t, db, `SELECT count(*) FROM targets WHERE url LIKE 'https://old.example/%'`); n != 150 {
			t.Errorf("%d old targets, want 150", n)
		}
		if n := count(t, db, `SELECT count(*) FROM links l`+linkTargetJoin+`
			WHERE l.run_id = ? AND (lt.url IS NULL OR lt.url <> `+hrefSQL+`)`, runID); n != 0 {
			t.Errorf("%d links under the wrong target", n)
		}
		if err := db.IntegrityCheck(ctx); err != nil {
			t.Error(err)
		}
		dbs = append(dbs, db)
	}
	for _, table := range []string{"targets", "links", "pages"} {
		a := tableRows(t, dbs[0], table, "first_seen_at", "fetched_at")
		b := tableRows(t, dbs[1], table, "first_seen_at", "fetched_at")
		if !reflect.DeepEqual(a, b) {
			t.Errorf("table %s: %d rows written many per statement differ from the %d rows written one by one", table, len(a), len(b))
		}
	}
}

// TestGeneratedSQL_ParamStyles: every generated multi-row statement binds
// the same values in both parameter styles: its numbered text names $1 to
// $N once each, in order of appearance, and its anonymous text has N
// anonymous parameters and no named one (SQLite would look a named one up
// by a linear scan for each value bound; see paramStyle).
func TestGeneratedSQL_ParamStyles(t *testing.T) {
	dollar := regexp.MustCompile(`\$[0-9]+`)
	for name, m := range map[string]*multiRowSQL{"links": &linksSQL, "plain links": &plainLinksSQL,
		"checks": &checksSQL, "targets": &targetsSQL, "frontier": &frontierSQL, "history": &historySQL,
		"fragments": &fragmentsSQL, "run targets": &runTargetsSQL} {
		for n := 1; n <= 64; n++ {
			num, anon := m.in(numbered, n), m.in(anonymous, n)
			got := dollar.FindAllString(num, -1)
			for i, p := range got {
				if p != "$"+strconv.Itoa(i+1) {
					t.Fatalf("%s, %d rows: parameter %d is %s, want $%d", name, n, i+1, p, i+1)
				}
			}
			if len(got) == 0 {
				t.Fatalf("%s, %d rows: no parameters", name, n)
			}
			if strings.Contains(anon, "$") || strings.Count(anon, "?") != len(got) {
				t.Errorf("%s, %d rows: anonymous text has %d ? and $ %v, want %d and none",
					name, n, strings.Count(anon, "?"), strings.Contains(anon, "$"), len(got))
			}
			if dollar.ReplaceAllString(num, "?") != anon {
				t.Errorf("%s, %d rows: the two styles differ beyond their parameters", name, n)
			}
		}
	}
}

// TestWriterSQL_FewNamedParams: no statement the SQLite writer prepares
// binds more than 40 named parameters ($n), the most a single row's
// statement takes: a multi-row statement with named parameters costs
// SQLite a linear scan of its names for each value bound (paramStyle).
func TestWriterSQL_FewNamedParams(t *testing.T) {
	dollar := regexp.MustCompile(`\$[0-9]+`)
	for _, q := range writerSQL() {
		if n := len(dollar.FindAllString(q, -1)); n > 40 {
			t.Errorf("%d named parameters in %.80s…", n, q)
		}
	}
}
