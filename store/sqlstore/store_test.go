package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/store/storetest"
)

// MustOpen opens a fresh database in a temporary directory, closed when the
// test ends; under forEachBackend's postgres subtest, a fresh PostgreSQL
// database.
func MustOpen(tb testing.TB) *DB {
	tb.Helper()
	if isPostgresTest(tb) {
		return openPostgresTest(tb)
	}
	return openClosed(tb, filepath.Join(tb.TempDir(), "linkrot.db"))
}

// openAtVersion opens a store at path whose schema is migrated to version
// n only, as linkrot n wrote it (compact: the links' and findings' interned
// URL form, 0008 on; run_fragments from 0019 on); the caller closes its
// write and read pools.
func openAtVersion(tb testing.TB, path string, n int, compact bool) *DB {
	tb.Helper()
	ctx := context.Background()
	write, err := sql.Open("sqlite", dsn(path, "_txlock=immediate"))
	if err != nil {
		tb.Fatal(err)
	}
	write.SetMaxOpenConns(1)
	for _, m := range migrations()[:n] {
		if err := applyMigration(ctx, write, m); err != nil {
			tb.Fatal(err)
		}
	}
	read, err := sql.Open("sqlite", dsn(path, "_pragma=query_only(1)"))
	if err != nil {
		tb.Fatal(err)
	}
	return &DB{path: path, write: write, read: read, compact: compact, fragments: n >= 19, runTargets: n >= 20}
}

// mustCreateRun creates a run and returns its ID.
func mustCreateRun(tb testing.TB, db *DB) int64 {
	tb.Helper()
	return storetest.MustCreateRun(tb, db)
}

func mustSave(tb testing.TB, db *DB, runID int64, pages ...*audit.Page) {
	tb.Helper()
	storetest.MustSave(tb, db, runID, pages...)
}

func mustPages(tb testing.TB, db *DB, runID int64) []*audit.Page {
	tb.Helper()
	pages, err := db.Pages(context.Background(), runID)
	if err != nil {
		tb.Fatal(err)
	}
	return pages
}

func count(tb testing.TB, db *DB, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := db.read.QueryRow(query, args...).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func strp(s string) *string { return &s }

func at(s string) audit.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return audit.NewTime(t)
}

const pwidText = "urn:pwid:archive.org:2016-01-22T11:20:29Z:page:https://www.dr.dk"
const pwidHref = "pwid:archive.org:2019-03-01T10:00:00Z:part:https://example.com/x"
const pwidVersion = "urn:pwid:webarchive.org.uk:2020-05-01T12:00:00Z:page:https://example.com/a"

// fullPage returns a page using every feature the store keeps.
func fullPage(url string) *audit.Page {
	return &audit.Page{
		Extraction: audit.Extraction{
			URL:   url,
			Base:  "https://example.org/docs/",
			Title: "Docs",
			Identifiers: []audit.Identifier{
				{URL: "https://doi.org/10.1234/abc", Rel: "cite-as", Source: "html"},
				{URL: "https://example.org/id/1", Rel: "identifier", Source: "header"},
			},
			PWIDs: []audit.PWID{
				{Raw: pwidText, ArchiveID: "archive.org", Datetime: at("2016-01-22T11:20:29Z"),
					ContentSpec: "page", Item: "https://www.dr.dk", Source: "text", Link: -1},
				{Raw: pwidHref, ArchiveID: "archive.org", Datetime: at("2019-03-01T10:00:00Z"),
					ContentSpec: "part", Item: "https://example.com/x", Source: "href", Link: 2},
				{Raw: pwidVersion, ArchiveID: "webarchive.org.uk", Datetime: at("2020-05-01T12:00:00Z"),
					ContentSpec: "page", Item: "https://example.com/a", Source: "versionurl", Link: 0},
			},
			Diagnostics: []audit.Diagnostic{
				{Field: "link-header", Code: "link-header-invalid", Message: `cannot parse "<x"`},
			},
			Links: []audit.Link{
				{
					Element: "a", Attr: "href", Href: "https://example.com/a#sec", RawHref: "https://example.com/a#sec",
					Text: "A", Rel: []string{"nofollow", "external"},
					Robust: &audit.Robust{
						OriginalURL:     "https://example.com/a",
						OriginalRaw:     "https://example.com/a",
						VersionDate:     at("2020-05-01T12:00:00Z"),
						VersionDateOnly: true,
						VersionDateRaw:  "2020-05-01",
						VersionURLRaw:   "https://web.archive.org/web/20200501/https://example.com/a " + pwidVersion,
						Snapshots: []audit.Snapshot{
							{URL: "https://web.archive.org/web/20200501/https://example.com/a",
								Datetime: at("2020-05-01T12:00:00Z"), DateOnly: true, DatetimeRaw: "2020-05-01"},
							{URL: pwidVersion, Datetime: at("2020-05-01T12:00:00Z")},
						},
					},
					Diagnostics: []audit.Diagnostic{
						{Field: "data-versiondate", Code: "versiondate-date-only", Message: "date without time: noon UTC assumed"},
					},
				},
				{
					Element: "a", Attr: "href", Href: "https://example.net/b", RawHref: "//example.net/b", Text: "B",
					Robust: &audit.Robust{
						OriginalURL:      "https://example.net/b",
						OriginalInferred: true,
						VersionDateRaw:   "yesterday",
					},
					Mset: &audit.Mset{
						Raw:      "{2019-01-01} {2021-06-30T08:00:00Z} <https://archive.today/abc> rel=memento ...",
						Temporal: []audit.Time{at("2019-01-01T12:00:00Z"), at("2021-06-30T08:00:00Z")},
						Copies: []audit.Copy{
							{URL: "https://archive.today/abc", Datetime: at("2021-06-30T08:00:00Z"),
								DatetimeRaw: "2021-06-30T08:00:00Z", Rel: strp("memento")},
							{URL: "https://mirror.example.net/b"},
							{URL: "ftp://mirror.example.net/b", Datetime: at("2019-01-01T12:00:00Z"),
								DateOnly: true, DatetimeRaw: "2019-01-01", Rel: strp("")},
						},
					},
					Diagnostics: []audit.Diagnostic{
						{Field: "data-versiondate", Code: "versiondate-invalid", Message: `"yesterday" is not a date`},
						{Field: "data-versionurl", Code: "versionurl-missing", Message: "data-versiondate without data-versionurl"},
					},
				},
				{Element: "a", Attr: "href", Href: pwidHref, RawHref: pwidHref, Text: "pwid link"},
				{Element: "img", Attr: "src", Href: "https://example.org/logo.png", RawHref: "../logo.png",
					Text: "logo", Resource: true},
				{Element: "a", Attr: "href", Href: "http://[::1", RawHref: "http://[::1", Text: "broken"},
				{Element: "a", Attr: "href", Href: "mailto:someone@example.org", RawHref: "mailto:someone@example.org",
					Robust: &audit.Robust{VersionURLRaw: " "}},
				{Element: "a", Attr: "href", Href: "", RawHref: ""},
			},
			Parsed: true,
		},
		RequestURL:  "http://example.org/docs",
		Depth:       1,
		Status:      200,
		ContentType: "text/html; charset=utf-8",
		Charset:     "utf-8",
		Size:        12345,
		Truncated:   true,
		FetchedAt:   time.Date(2024, 3, 1, 10, 0, 0, 123456789, time.UTC),
		Duration:    1500 * time.Millisecond,
		Redirects: []audit.Redirect{
			{From: "http://example.org/docs", To: "https://example.org/docs", Status: 301},
			{From: "https://example.org/docs", To: url0, Status: 308},
		},
	}
}

const url0 = "https://example.org/docs/"

// failedPage is a page whose fetch failed: nothing extracted.
func failedPage(url string) *audit.Page {
	return &audit.Page{
		Extraction: audit.Extraction{URL: url},
		RequestURL: url,
		Depth:      2,
		FetchError: "dial tcp 192.0.2.1:443: connect: connection refused",
		Duration:   30 * time.Second,
	}
}

func notFoundPage(url string) *audit.Page {
	return &audit.Page{
		Extraction:  audit.Extraction{URL: url, Title: "Not Found", Parsed: true},
		RequestURL:  url,
		Status:      404,
		ContentType: "text/html",
		Charset:     "windows-1252",
		Size:        10,
		FetchedAt:   time.Date(2024, 3, 1, 10, 0, 1, 0, time.UTC),
	}
}

func diffPages(t *testing.T, got, want []*audit.Page) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d pages, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if reflect.DeepEqual(g, w) {
			continue
		}
		// Narrow the difference down for the message.
		gv, wv := reflect.ValueOf(*g), reflect.ValueOf(*w)
		for f := 0; f < gv.NumField(); f++ {
			if !reflect.DeepEqual(gv.Field(f).Interface(), wv.Field(f).Interface()) {
				t.Errorf("page %d: field %s differs:\n got %#v\nwant %#v", i, gv.Type().Field(f).Name,
					gv.Field(f).Interface(), wv.Field(f).Interface())
			}
		}
		for j := range min(len(g.Links), len(w.Links)) {
			if !reflect.DeepEqual(g.Links[j], w.Links[j]) {
				t.Errorf("page %d: link %d:\n got %#v\nwant %#v", i, j, g.Links[j], w.Links[j])
			}
		}
	}
}

func TestStore_RoundTrip(t *testing.T) { forEachBackend(t, testStore_RoundTrip) }

func testStore_RoundTrip(t *testing.T) {
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	want := []*audit.Page{fullPage(url0), failedPage("https://example.org/down"), notFoundPage("https://example.org/gone")}
	mustSave(t, db, runID, want...)
	diffPages(t, mustPages(t, db, runID), want)

	t.Run("Columns", func(t *testing.T) {
		// What the checker and reports query directly.
		if got := count(t, db, `SELECT count(*) FROM links l JOIN link_urls u ON u.link_id = l.id
			WHERE l.fragment = 'sec' AND u.href = 'https://example.com/a#sec'`); got != 1 {
			t.Errorf("fragment not stored")
		}
		// Interned (0008): that href is stored through its target.
		if got := count(t, db, `SELECT count(*) FROM links WHERE fragment = 'sec' AND href = '' AND (url_form & 1) <> 0`); got != 1 {
			t.Errorf("href of a link to a target stored verbatim, not through the target")
		}
		if got := count(t, db, `SELECT count(*) FROM links WHERE target_id IS NULL`); got != 2 {
			t.Errorf("links without target = %d, want 2 (unparseable, empty)", got)
		}
		if got := count(t, db, `SELECT count(*) FROM links WHERE originalurl IS NULL AND has_robust = 1`); got != 1 {
			t.Errorf("robust links with null originalurl = %d, want 1", got)
		}
		// Snapshot targets: http(s) only; the pwid and ftp snapshots have none.
		if got := count(t, db, `SELECT count(*) FROM snapshots WHERE target_id IS NOT NULL`); got != 3 {
			t.Errorf("snapshots with target = %d, want 3", got)
		}
		if got := count(t, db, `SELECT count(*) FROM snapshots WHERE source = 'versionurl' AND url = $1`, pwidVersion); got != 1 {
			t.Errorf("pwid snapshot from versionurl = %d rows, want 1", got)
		}
		if got := count(t, db, `SELECT count(*) FROM pwids WHERE link_id IS NULL`); got != 1 {
			t.Errorf("text pwids = %d, want 1", got)
		}
		if got := count(t, db, `SELECT count(*) FROM pages p JOIN targets t ON t.id = p.target_id WHERE t.url = $1`, url0); got != 1 {
			t.Errorf("page's own target missing")
		}
		if got := count(t, db, `SELECT count(*) FROM targets WHERE url = 'https://example.com/a'`); got != 1 {
			t.Errorf("link target not normalized without fragment")
		}
	})

	t.Run("Stats", func(t *testing.T) {
		got, err := db.RunStats(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		want := &audit.RunStats{
			Pages:       3,
			ErrorPages:  2, // fetch error, 404
			Links:       7,
			Targets:     5, // example.com/a, example.net/b, pwid:, logo, mailto:
			RobustLinks: 3,
			MsetLinks:   1,
			Snapshots:   5, // 2 versionurl + 3 mset copies
			Identifiers: 2,
			PWIDs:       3,
			Diagnostics: 4, // 1 page + 3 link
			Redirects:   2,
		}
		if *got != *want {
			t.Errorf("RunStats = %+v, want %+v", *got, *want)
		}
	})

	t.Run("Targets", func(t *testing.T) {
		refs, err := db.Targets(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		got := make(map[string]audit.TargetRef)
		for _, r := range refs {
			got[r.URL] = r
		}
		for _, w := range []audit.TargetRef{
			{URL: "https://example.com/a", Host: "example.com", LinkCount: 1},
			{URL: "https://example.net/b", Host: "example.net", LinkCount: 1},
			{URL: pwidHref, Host: "", LinkCount: 1},
			{URL: "https://example.org/logo.png", Host: "example.org", LinkCount: 1},
			{URL: "mailto:someone@example.org", Host: "", LinkCount: 1},
		} {
			g, ok := got[w.URL]
			if !ok {
				t.Errorf("target %s missing", w.URL)
				continue
			}
			if g.Host != w.Host || g.LinkCount != w.LinkCount || g.ID == 0 {
				t.Errorf("target %s = %+v, want host %q, %d links", w.URL, g, w.Host, w.LinkCount)
			}
		}
		if len(refs) != 5 {
			t.Errorf("got %d targets, want 5: %+v", len(refs), refs)
		}
	})
}

func TestStore_TargetDedup(t *testing.T) { forEachBackend(t, testStore_TargetDedup) }

func testStore_TargetDedup(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	run1 := mustCreateRun(t, db)
	run2 := mustCreateRun(t, db)

	page := func(url string) *audit.Page {
		return &audit.Page{
			Extraction: audit.Extraction{URL: url, Parsed: true, Links: []audit.Link{
				{Element: "a", Attr: "href", Href: "HTTP://Example.org:80/a#x"},
				{Element: "a", Attr: "href", Href: "http://example.org/a"},
				{Element: "a", Attr: "href", Href: "http://example.org/./b/../a?q=1"},
				{Element: "a", Attr: "href", Href: "https://Example.org:8443/a"},
			}},
			Status: 200,
		}
	}
	mustSave(t, db, run1, page("https://example.org/1"))
	// A second batch of the same run, and another run.
	mustSave(t, db, run1, page("https://example.org/2"))
	mustSave(t, db, run2, page("https://example.org/1"))

	targetOf := func(runID int64) map[string]int64 {
		t.Helper()
		refs, err := db.Targets(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		m := make(map[string]int64)
		for _, r := range refs {
			m[r.URL] = r.ID
		}
		return m
	}
	refs, err := db.Targets(ctx, run1)
	if err != nil {
		t.Fatal(err)
	}
	want := []audit.TargetRef{
		{URL: "http://example.org/a", Host: "example.org", LinkCount: 4},
		{URL: "http://example.org/a?q=1", Host: "example.org", LinkCount: 2},
		{URL: "https://example.org:8443/a", Host: "example.org:8443", LinkCount: 2},
	}
	for i := range refs {
		refs[i].ID = 0
	}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("Targets(run1) = %+v\nwant %+v", refs, want)
	}
	t1, t2 := targetOf(run1), targetOf(run2)
	if !reflect.DeepEqual(t1, t2) {
		t.Errorf("runs see different target IDs: %v vs %v", t1, t2)
	}
	// Targets of links and pages together: 3 link targets + 2 page URLs.
	if got := count(t, db, `SELECT count(*) FROM targets`); got != 5 {
		t.Errorf("targets rows = %d, want 5", got)
	}
	if got := count(t, db, `SELECT count(*) FROM targets WHERE first_seen_run = $1`, run1); got != 5 {
		t.Errorf("targets first seen in run 1 = %d, want 5", got)
	}
	stats, err := db.RunStats(ctx, run1)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Targets != 3 || stats.Links != 8 {
		t.Errorf("RunStats(run1) targets %d, links %d; want 3, 8", stats.Targets, stats.Links)
	}
}

func TestStore_HostileStrings(t *testing.T) { forEachBackend(t, testStore_HostileStrings) }

func testStore_HostileStrings(t *testing.T) {
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	inject := `'); DROP TABLE links;--`
	nul := "a\x00b\x00"
	bad := "\xff\xfe\xc3\x28 invalid \xed\xa0\x80 UTF-8"
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	quotes := `"double" 'single' ` + "`back`" + ` \backslash ;`

	p := &audit.Page{
		Extraction: audit.Extraction{
			URL:   "https://example.org/" + inject,
			Base:  nul,
			Title: quotes + bad,
			Identifiers: []audit.Identifier{
				{URL: inject, Rel: nul, Source: bad},
			},
			PWIDs: []audit.PWID{{Raw: big, Item: nul, Source: "text", Link: -1}},
			Diagnostics: []audit.Diagnostic{
				{Field: inject, Code: nul, Message: big},
			},
			Links: []audit.Link{
				{Element: "a", Attr: "href", Href: "https://example.org/?q=" + inject, RawHref: inject, Text: big,
					Rel: []string{"');DROP", nul}},
				{Element: "a", Attr: "href", Href: "https://example.org/" + nul, RawHref: nul, Text: bad},
				{Element: "a", Attr: "href", Href: bad, RawHref: bad, Text: quotes,
					Robust: &audit.Robust{OriginalURL: inject, OriginalRaw: nul, VersionDateRaw: bad,
						VersionURLRaw: big, Snapshots: []audit.Snapshot{{URL: inject + nul, DatetimeRaw: bad}}},
					Mset:        &audit.Mset{Raw: big, Copies: []audit.Copy{{URL: bad, Rel: strp(inject)}}},
					Diagnostics: []audit.Diagnostic{{Field: bad, Code: quotes, Message: nul}},
				},
			},
			Parsed: true,
		},
		RequestURL:  bad,
		ContentType: nul,
		Charset:     inject,
		FetchError:  quotes,
		Redirects:   []audit.Redirect{{From: inject, To: nul + bad, Status: 302}},
	}
	mustSave(t, db, runID, p)
	validTextDeep(p) // NUL and invalid UTF-8 read back as U+FFFD, on both engines
	diffPages(t, mustPages(t, db, runID), []*audit.Page{p})

	if got := count(t, db, `SELECT count(*) FROM links`); got != 3 {
		t.Errorf("links = %d, want 3", got)
	}
	if got := count(t, db, `SELECT count(*) FROM links WHERE text = $1`, big); got != 1 {
		t.Errorf("1 MiB text not found by equality")
	}
	if got := count(t, db, `SELECT count(*) FROM links WHERE octet_length(text) = $1`, len(big)); got != 1 {
		t.Errorf("1 MiB text has the wrong length")
	}
	if err := db.IntegrityCheck(context.Background()); err != nil {
		t.Error(err)
	}
}

// errAfter is a context whose Err reports cancellation after n calls, to
// fail a batch part-way through.
type errAfter struct {
	context.Context
	n atomic.Int64
}

func (c *errAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestStore_BatchAtomicity(t *testing.T) { forEachBackend(t, testStore_BatchAtomicity) }

func testStore_BatchAtomicity(t *testing.T) {
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	targetsBefore := count(t, db, `SELECT count(*) FROM targets`)

	batch := func() []*audit.Page {
		bad := fullPage("https://example.org/bad")
		return []*audit.Page{
			fullPage("https://example.org/1"),
			fullPage("https://example.org/2"),
			bad,
			fullPage("https://example.org/3"),
		}
	}

	t.Run("InvalidPage", func(t *testing.T) {
		b := batch()
		b[2].PWIDs[1].Link = 99
		err := db.SavePages(context.Background(), runID, b)
		if err == nil {
			t.Fatal("SavePages succeeded")
		}
		if !strings.Contains(err.Error(), "out of range") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("CancelledMidBatch", func(t *testing.T) {
		ctx := &errAfter{Context: context.Background()}
		// A later page sees a cancelled context: database/sql consults Err
		// as each query's rows close (the run's check, and on SQLite the
		// lookups of the batch's pages and targets), then the writer
		// before each page.
		ctx.n.Store(5)
		err := db.SavePages(ctx, runID, batch())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("SavePages: %v, want context.Canceled", err)
		}
		// database/sql may consult Err too; what matters is that pages were
		// written before the cancellation.
		if !strings.Contains(err.Error(), "stopped before page") || strings.Contains(err.Error(), "before page 1 ") {
			t.Errorf("SavePages: %v, want it to stop after the first page", err)
		}
	})
	t.Run("CancelledBefore", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := db.SavePages(ctx, runID, batch()); !errors.Is(err, context.Canceled) {
			t.Fatalf("SavePages: %v, want context.Canceled", err)
		}
	})
	t.Run("NilPage", func(t *testing.T) {
		b := batch()
		b[3] = nil
		if err := db.SavePages(context.Background(), runID, b); err == nil {
			t.Fatal("SavePages accepted a nil page")
		}
	})

	for _, table := range []string{"pages", "links", "redirects", "snapshots", "mset_temporal",
		"identifiers", "pwids", "diagnostics"} {
		if got := count(t, db, `SELECT count(*) FROM `+table); got != 0 {
			t.Errorf("%s has %d rows after failed batches", table, got)
		}
	}
	if got := count(t, db, `SELECT count(*) FROM targets`); got != targetsBefore {
		t.Errorf("targets: %d rows after failed batches, want %d", got, targetsBefore)
	}

	// The store still works afterwards.
	mustSave(t, db, runID, batch()...)
	if got := len(mustPages(t, db, runID)); got != 4 {
		t.Errorf("pages = %d after a good batch, want 4", got)
	}
}

// benchPages returns n pages of one run, each with links links: most point
// into the site (shared targets), some outside, some with Robust Links.
func benchPages(batch, n, links int) []*audit.Page {
	pages := make([]*audit.Page, n)
	for i := range pages {
		p := &audit.Page{
			Extraction: audit.Extraction{
				URL:    fmt.Sprintf("https://example.org/b%d/p%d", batch, i),
				Title:  fmt.Sprintf("Page %d of batch %d", i, batch),
				Parsed: true,
				Links:  make([]audit.Link, links),
			},
			RequestURL:  fmt.Sprintf("https://example.org/b%d/p%d", batch, i),
			Status:      200,
			ContentType: "text/html",
			Charset:     "utf-8",
			Size:        20000,
			FetchedAt:   time.Now(),
			Duration:    120 * time.Millisecond,
		}
		for j := range p.Links {
			l := audit.Link{Element: "a", Attr: "href", Text: "some anchor text"}
			switch {
			case j%10 == 0:
				l.Href = fmt.Sprintf("https://ext%d.example.net/x/%d", j, batch*n+i)
				l.Robust = &audit.Robust{
					OriginalURL:    l.Href,
					VersionDate:    at("2020-01-01T12:00:00Z"),
					VersionDateRaw: "2020-01-01",
					VersionURLRaw:  "https://web.archive.org/web/2020/" + l.Href,
					Snapshots: []audit.Snapshot{{URL: "https://web.archive.org/web/2020/" + l.Href,
						Datetime: at("2020-01-01T12:00:00Z"), DatetimeRaw: "2020-01-01"}},
				}
			default:
				l.Href = fmt.Sprintf("https://example.org/p%d#s", (i*links+j)%5000)
			}
			l.RawHref = l.Href
			p.Links[j] = l
		}
		pages[i] = p
	}
	return pages
}

// TestStore_ConcurrentDBs runs writers on two DB values of one file at once,
// as two processes would: busy_timeout and BEGIN IMMEDIATE must keep
// SQLITE_BUSY from reaching them. On PostgreSQL (two DBs on one database)
// the writers share targets without waiting for each other.
func TestStore_ConcurrentDBs(t *testing.T) { forEachBackend(t, testStore_ConcurrentDBs) }

func testStore_ConcurrentDBs(t *testing.T) {
	ctx := context.Background()
	path := testDBName(t)
	var dbs [2]*DB
	for i := range dbs {
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[i] = db
	}

	const writers, batches, perBatch = 2, 6, 10
	var wg sync.WaitGroup
	errs := make(chan error, len(dbs)*writers*batches)
	runs := make(chan int64, len(dbs)*writers)
	for d, db := range dbs {
		for w := range writers {
			wg.Go(func() {
				r := &audit.Run{Mode: "site", Version: fmt.Sprintf("db%d-w%d", d, w)}
				if err := db.CreateRun(ctx, r); err != nil {
					errs <- err
					return
				}
				runs <- r.ID
				for b := range batches {
					if err := db.SavePages(ctx, r.ID, benchPages(b, perBatch, 5)); err != nil {
						errs <- err
						return
					}
					// Reads interleave with the other DB's writes.
					if _, err := db.RunStats(ctx, r.ID); err != nil {
						errs <- err
						return
					}
				}
				if err := db.FinishRun(ctx, r.ID, audit.RunComplete, time.Now(), ""); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	close(runs)
	for err := range errs {
		t.Error(err)
	}
	for runID := range runs {
		stats, err := dbs[0].RunStats(ctx, runID)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Pages != batches*perBatch || stats.Links != batches*perBatch*5 {
			t.Errorf("run %d: %d pages, %d links; want %d, %d", runID, stats.Pages, stats.Links,
				batches*perBatch, batches*perBatch*5)
		}
	}
	if err := dbs[1].IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestStore_Writer drives the store through audit.Writer, as the crawler
// does: many producers, one committing goroutine.
func TestStore_Writer(t *testing.T) { forEachBackend(t, testStore_Writer) }

func testStore_Writer(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	w := audit.NewWriter(ctx, db, runID, audit.WriterOptions{BatchSize: 20, FlushInterval: 10 * time.Millisecond, QueueSize: 16})

	const producers, each = 8, 25
	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			for _, p := range benchPages(g, each, 5) {
				w.Add(p)
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := w.Saved(); got != producers*each {
		t.Errorf("Saved = %d, want %d", got, producers*each)
	}
	pages := mustPages(t, db, runID)
	if len(pages) != producers*each {
		t.Fatalf("stored %d pages, want %d", len(pages), producers*each)
	}
	seen := make(map[string]bool)
	for _, p := range pages {
		if len(p.Links) != 5 {
			t.Errorf("page %s has %d links, want 5", p.URL, len(p.Links))
		}
		seen[p.URL] = true
	}
	for g := range producers {
		for i := range each {
			if u := fmt.Sprintf("https://example.org/b%d/p%d", g, i); !seen[u] {
				t.Errorf("page %s missing", u)
			}
		}
	}
}

// SQLite-only: it breaks a foreign key behind the store's back with foreign_keys off, which PostgreSQL does not allow.
func TestStore_IntegrityCheck(t *testing.T) {
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	mustSave(t, db, runID, fullPage(url0))
	if err := db.IntegrityCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Break a foreign key behind the store's back.
	raw := rawDB(t, db.Path(), "_pragma=busy_timeout(10000)&_pragma=foreign_keys(0)")
	if _, err := raw.Exec(`UPDATE links SET target_id = 999999 WHERE target_id IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	err := db.IntegrityCheck(context.Background())
	if !errors.Is(err, store.ErrIntegrity) {
		t.Fatalf("IntegrityCheck = %v, want ErrIntegrity", err)
	}
}

// BenchmarkSavePages measures SavePages on batches of 200 pages of 50 links
// each, the Writer's default batch size.
func BenchmarkSavePages(b *testing.B) {
	const perBatch, links = 200, 50
	db := MustOpen(b)
	runID := mustCreateRun(b, db)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pages := benchPages(i, perBatch, links)
		b.StartTimer()
		if err := db.SavePages(ctx, runID, pages); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(b.N*perBatch*links)/b.Elapsed().Seconds(), "links/s")
}
