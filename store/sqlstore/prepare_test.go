package sqlstore

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// secretPage is a page with a URL password in its URL, a link and its
// evidence, and text to compress.
func secretPage(i int) *audit.Page {
	u := fmt.Sprintf("https://user:s3cr3t@example.org/p%d", i)
	return &audit.Page{
		Extraction: audit.Extraction{URL: u, Links: []audit.Link{{Element: "a", Attr: "href",
			Href: "https://bob:hunter2@example.org/t", RawHref: "https://bob:hunter2@example.org/t"}}},
		RequestURL: u, Status: 200,
		Evidence: &audit.PageEvidence{HTML: true, Text: strings.Repeat(fmt.Sprintf("words of page %d ", i), 50),
			Headers: map[string]string{"Location": "https://user:s3cr3t@example.org/x"}},
	}
}

// storedPages returns the run's page URLs with their evidence
// text, inflated, and fails if a password is anywhere in the file's rows
// of pages, links and page_evidence.
func storedPages(t *testing.T, db *DB, runID int64) map[string]string {
	t.Helper()
	rows, err := db.read.Query(`SELECT p.url, e.text, e.headers FROM pages p JOIN page_evidence e ON e.page_id = p.id
		WHERE p.run_id = $1`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var (
			u, headers string
			blob       []byte
		)
		if err := rows.Scan(&u, &blob, &headers); err != nil {
			t.Fatal(err)
		}
		text, err := inflateText(blob)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(u+headers, "s3cr3t") {
			t.Errorf("a password is stored: page %s, headers %s", u, headers)
		}
		out[u] = text
	}
	if n := count(t, db, `SELECT count(*) FROM links WHERE raw_href LIKE '%hunter2%' OR href LIKE '%hunter2%'`); n != 0 {
		t.Errorf("%d links keep a password", n)
	}
	return out
}

// TestPreparePage: a page prepared on the producer's goroutine is stored
// exactly as one that was not (passwords redacted, the same text); a
// page whose evidence text changed after it was prepared is stored with
// the new text; pages are prepared concurrently.
func TestPreparePage(t *testing.T) {
	db := MustOpen(t)
	plainRun, preparedRun := mustCreateRun(t, db), mustCreateRun(t, db)
	var plain, prep []*audit.Page
	for i := range 40 {
		plain = append(plain, secretPage(i))
		prep = append(prep, secretPage(i))
	}
	var wg sync.WaitGroup
	for _, p := range prep {
		wg.Go(func() { db.PreparePage(p) })
	}
	wg.Wait()
	for _, p := range prep {
		pp := prepared(p)
		if pp == nil || pp.packed == nil {
			t.Fatalf("page %s is not prepared: %#v", p.URL, p.Prepared)
		}
		if strings.Contains(p.URL, "s3cr3t") || strings.Contains(p.Links[0].Href, "hunter2") {
			t.Errorf("PreparePage left a password in %s, %s", p.URL, p.Links[0].Href)
		}
	}
	// Changed after it was prepared: the writer compresses the new text.
	prep[7].Evidence.Text = "a different text"
	want := map[string]string{}
	for i, p := range plain {
		want[strings.Replace(p.URL, "s3cr3t", "***", 1)] = p.Evidence.Text
		if i == 7 {
			want[strings.Replace(p.URL, "s3cr3t", "***", 1)] = "a different text"
		}
	}
	mustSave(t, db, plainRun, plain...)
	mustSave(t, db, preparedRun, prep...)
	gotPlain, gotPrep := storedPages(t, db, plainRun), storedPages(t, db, preparedRun)
	if len(gotPrep) != 40 {
		t.Fatalf("%d prepared pages stored, want 40", len(gotPrep))
	}
	for u, text := range gotPrep {
		if text != want[u] {
			t.Errorf("prepared page %s: stored text %.40q, want %.40q", u, text, want[u])
		}
		if u != "https://user:***@example.org/p7" && text != gotPlain[u] {
			t.Errorf("page %s: prepared, stored text %.40q; not prepared, %.40q", u, text, gotPlain[u])
		}
	}
}

// TestPagesBatch_ForeignKeys: a batch of pages runs without SQLite's
// foreign-key lookups, and leaves the file as consistent as with them
// (foreign_key_check finds nothing) and the write connection with them
// on again, after a committed batch and after a failed one: a delete
// after it still cascades.
func TestPagesBatch_ForeignKeys(t *testing.T) {
	ctx := t.Context()
	db := MustOpen(t)
	fkOn := func(when string) {
		t.Helper()
		var on int
		if err := db.write.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&on); err != nil {
			t.Fatal(err)
		}
		if on != 1 {
			t.Fatalf("%s: the write connection has foreign_keys = %d", when, on)
		}
	}
	fkOn("on open")
	tx, end, err := db.beginPagesBatch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var inBatch int
	if err := tx.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&inBatch); err != nil {
		t.Fatal(err)
	}
	end()
	if inBatch != 0 {
		t.Errorf("a batch of pages runs with foreign_keys = %d", inBatch)
	}
	fkOn("after an empty batch")
	run := mustCreateRun(t, db)
	pages := append(fragmentPages("p"), secretPage(1), secretPage(2))
	pages[0].Links = append(pages[0].Links, audit.Link{Element: "a", Attr: "href", Href: "https://example.org/r", RawHref: "https://example.org/r",
		Robust: &audit.Robust{VersionURLRaw: "https://web.archive.org/web/2020/https://example.org/r",
			Snapshots: []audit.Snapshot{{URL: "https://web.archive.org/web/2020/https://example.org/r"}}}})
	pages[1].PWIDs = []audit.PWID{{Raw: "urn:pwid:archive.org:2020-01-01T00:00:00Z:page:https://example.org/", Link: -1}}
	pages[1].Identifiers = []audit.Identifier{{Rel: "identifier", URL: "https://doi.org/10.1000/1", Source: "html"}}
	if err := db.SaveCrawl(ctx, run, pages, []audit.FrontierEntry{{URL: "https://example.org/next", Depth: 2}}); err != nil {
		t.Fatal(err)
	}
	fkOn("after a batch of pages")
	bad := fragmentPages("q")[:1]
	bad[0].PWIDs = []audit.PWID{{Raw: "urn:pwid:x", Link: 99}} // no link 99: the batch fails
	if err := db.SavePages(ctx, run, bad); err == nil {
		t.Fatal("a page with a pwid of link 99 was saved")
	}
	fkOn("after a failed batch")
	rows, err := db.write.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, parent string
		var rowid, fk any
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			t.Fatal(err)
		}
		t.Errorf("foreign_key_check: a row of %s (rowid %v) refers to a missing row of %s", table, rowid, parent)
	}
	rows.Close()
	for _, table := range []string{"snapshots", "pwids", "identifiers", "crawl_frontier"} {
		if n := count(t, db, `SELECT count(*) FROM `+table); n == 0 {
			t.Errorf("no row in %s: the batch does not test its references", table)
		}
	}
	if _, err := db.write.ExecContext(ctx, `DELETE FROM runs WHERE id = $1`, run); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"pages", "links", "snapshots", "run_targets", "crawl_frontier"} {
		if n := count(t, db, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("deleting the run left %d rows in %s: no cascade", n, table)
		}
	}
}
