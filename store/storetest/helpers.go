package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

func at(s string) audit.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return audit.NewTime(t)
}

// archiveRun creates a run with one page and two links and returns the
// run, the link IDs and the target ID of the first link.
func archiveRun(t *testing.T, db store.Store) (runID int64, links []int64, target int64) {
	t.Helper()
	ctx := context.Background()
	runID = mustCreateRun(t, db)
	mustSave(t, db, runID, &audit.Page{
		Extraction: audit.Extraction{URL: "https://example.org/", Parsed: true, Links: []audit.Link{
			{Element: "a", Href: "https://other.example/a", Text: "A"},
			{Element: "a", Href: "https://other.example/b", Text: "B"},
		}},
		RequestURL: "https://example.org/", Status: 200, FetchedAt: time.Now(),
	})
	refs, err := db.LinkRefs(ctx, runID)
	if err != nil || len(refs) != 2 {
		t.Fatalf("LinkRefs = %+v, %v", refs, err)
	}
	return runID, []int64{refs[0].LinkID, refs[1].LinkID}, refs[0].TargetID
}

func diffChecks(t *testing.T, got, want []audit.Check) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d checks, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range want {
		if reflect.DeepEqual(got[i], want[i]) {
			continue
		}
		gv, wv := reflect.ValueOf(got[i]), reflect.ValueOf(want[i])
		for f := 0; f < gv.NumField(); f++ {
			if !reflect.DeepEqual(gv.Field(f).Interface(), wv.Field(f).Interface()) {
				t.Errorf("check %d (%s): field %s differs:\n got %#v\nwant %#v", i, want[i].URL,
					gv.Type().Field(f).Name, gv.Field(f).Interface(), wv.Field(f).Interface())
			}
		}
	}
}

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

// linkTargets saves, in runID, a page at pageURL linking to each of urls
// and returns the target IDs of all the run's targets by URL.
func linkTargets(tb testing.TB, db store.Store, runID int64, pageURL string, urls ...string) map[string]int64 {
	tb.Helper()
	p := &audit.Page{Extraction: audit.Extraction{URL: pageURL, Parsed: true}, Status: 200}
	for _, u := range urls {
		p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: u, RawHref: u})
	}
	mustSave(tb, db, runID, p)
	refs, err := db.Targets(context.Background(), runID)
	if err != nil {
		tb.Fatal(err)
	}
	ids := make(map[string]int64)
	for _, r := range refs {
		ids[r.URL] = r.ID
	}
	for _, u := range urls {
		if ids[u] == 0 {
			tb.Fatalf("no target for %s (already normalized URLs expected)", u)
		}
	}
	return ids
}

// linkedRun creates a run whose one page links to each of urls and returns
// the run and the target IDs by URL.
func linkedRun(tb testing.TB, db store.Store, urls ...string) (int64, map[string]int64) {
	tb.Helper()
	runID := mustCreateRun(tb, db)
	return runID, linkTargets(tb, db, runID, "https://example.org/index", urls...)
}

func mustChecks(tb testing.TB, db store.Store, runID int64) []audit.Check {
	tb.Helper()
	checks, err := db.Checks(context.Background(), runID)
	if err != nil {
		tb.Fatal(err)
	}
	return checks
}

// mustCreateRun creates a run and returns its ID.
func mustCreateRun(tb testing.TB, db store.Store) int64 {
	tb.Helper()
	r := &audit.Run{Mode: "site", Seeds: []string{"https://example.org/"}, Version: "test"}
	if err := db.CreateRun(context.Background(), r); err != nil {
		tb.Fatal(err)
	}
	return r.ID
}

func mustPages(tb testing.TB, db store.Store, runID int64) []*audit.Page {
	tb.Helper()
	pages, err := db.Pages(context.Background(), runID)
	if err != nil {
		tb.Fatal(err)
	}
	return pages
}

func mustSave(tb testing.TB, db store.Store, runID int64, pages ...*audit.Page) {
	tb.Helper()
	if err := db.SavePages(context.Background(), runID, pages); err != nil {
		tb.Fatal(err)
	}
}

func mustSaveChecks(tb testing.TB, db store.Store, checks ...audit.Check) {
	tb.Helper()
	if err := db.SaveChecks(context.Background(), checks); err != nil {
		tb.Fatal(err)
	}
}

// nightlyRunOf is nightlyRun for a run starting at a given time.
func nightlyRunOf(tb testing.TB, db store.Store, at time.Time, site string, verdicts map[string]audit.Verdict) (int64, map[string]int64) {
	tb.Helper()
	ctx := context.Background()
	r := &audit.Run{StartedAt: at, Mode: "site", Seeds: []string{site}, Version: "test"}
	if err := db.CreateRun(ctx, r); err != nil {
		tb.Fatal(err)
	}
	var urls []string
	for u := range verdicts {
		urls = append(urls, u)
	}
	ids := linkTargets(tb, db, r.ID, site, urls...)
	var checks []audit.Check
	for u, v := range verdicts {
		checks = append(checks, audit.Check{RunID: r.ID, TargetID: ids[u], URL: u, Verdict: v, CheckedAt: at.Add(time.Minute)})
	}
	mustSaveChecks(tb, db, checks...)
	if err := db.FinishRun(ctx, r.ID, audit.RunComplete, at.Add(time.Hour), ""); err != nil {
		tb.Fatal(err)
	}
	return r.ID, ids
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

// stored returns c as Checks returns it: UTC time, no anchors.
func stored(c audit.Check) audit.Check {
	c.CheckedAt = c.CheckedAt.UTC()
	c.Anchors = nil
	return c
}

func utc(y int, m time.Month, d, h, min, s, ns int) time.Time {
	return time.Date(y, m, d, h, min, s, ns, time.UTC)
}
