package dashboard

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// Hostile strings of the fixture, as crawled link text and URLs: if one
// ever runs, it sets window.__xss (the browser test checks it).
const (
	hostileText  = `<script>window.__xss=1</script>click me`
	hostileAttr  = `"><img src=x onerror="window.__xss=2">`
	hostileHref  = `javascript:window.__xss=3`
	hostileTitle = `</title><script>window.__xss=4</script>`
)

const (
	site      = "https://site.example/"
	fineURL   = "https://site.example/fine"
	gonePath  = "https://site.example/gone"
	movedURL  = "https://ext.example/old"
	replURL   = "https://ext.example/new"
	slowURL   = "https://slow.example/x"
	evilURL   = "https://evil.example/x"
	aboutURL  = "https://site.example/about"
	archiveAt = "https://web.archive.org/web/2024/https://site.example/gone"
)

// fixture is a database with three finished runs of one site, built
// through the store's write API, and its path.
type fixture struct {
	path    string
	runs    []int64
	targets map[string]int64
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "linkrot.db")
	db, err := engines.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := &fixture{path: path}
	t0 := time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)
	// Per run: the verdict of the gone target, and whether the fragment
	// finding exists.
	goneVerdicts := []audit.Verdict{audit.VerdictOK, audit.VerdictNotFound, audit.VerdictGone}
	for i, gv := range goneVerdicts {
		start := t0.Add(time.Duration(i) * 24 * time.Hour)
		run := &audit.Run{Mode: "site", Seeds: []string{site}, Version: "test", StartedAt: start}
		if err := db.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		f.runs = append(f.runs, run.ID)
		index := &audit.Page{Extraction: audit.Extraction{URL: site, Title: "Home", Parsed: true}, Status: 200,
			ContentType: "text/html", FetchedAt: start}
		index.Links = []audit.Link{
			{Element: "a", Attr: "href", Href: fineURL, RawHref: "/fine", Text: "a fine page"},
			{Element: "a", Attr: "href", Href: gonePath, RawHref: "/gone", Text: "a page that goes away"},
			{Element: "a", Attr: "href", Href: movedURL, RawHref: movedURL, Text: "moved elsewhere"},
			{Element: "a", Attr: "href", Href: hostileHref, RawHref: hostileHref, Text: hostileText},
			{Element: "a", Attr: "href", Href: evilURL, RawHref: evilURL, Text: hostileAttr},
			{Element: "a", Attr: "href", Href: aboutURL, RawHref: "/about", Text: "about"},
		}
		if i == 2 {
			index.Links = append(index.Links,
				audit.Link{Element: "a", Attr: "href", Href: fineURL + "#missing", RawHref: "/fine#missing", Text: "a section that is gone"},
				audit.Link{Element: "img", Attr: "src", Href: slowURL, RawHref: slowURL, Text: "", Resource: true})
		}
		about := &audit.Page{Extraction: audit.Extraction{URL: aboutURL, Title: hostileTitle, Parsed: true}, Status: 200,
			ContentType: "text/html", Depth: 1, FetchedAt: start}
		about.Links = []audit.Link{{Element: "a", Attr: "href", Href: gonePath, RawHref: "/gone", Text: "gone again"}}
		if i == 2 {
			// The about page protects its link with Robust Links in run 3.
			about.Links[0].Robust = &audit.Robust{OriginalURL: gonePath, OriginalRaw: gonePath}
		}
		if err := db.SavePages(ctx, run.ID, []*audit.Page{index, about}); err != nil {
			t.Fatal(err)
		}
		refs, err := db.Targets(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		f.targets = map[string]int64{}
		for _, r := range refs {
			f.targets[r.URL] = r.ID
		}
		at := start.Add(time.Minute)
		checks := []audit.Check{
			{RunID: run.ID, TargetID: f.targets[fineURL], URL: fineURL, Verdict: audit.VerdictOK, Status: 200, CheckedAt: at},
			{RunID: run.ID, TargetID: f.targets[gonePath], URL: gonePath, Verdict: gv, Status: map[audit.Verdict]int{audit.VerdictOK: 200, audit.VerdictNotFound: 404, audit.VerdictGone: 410}[gv], CheckedAt: at, Reason: "HTTP status"},
			{RunID: run.ID, TargetID: f.targets[movedURL], URL: movedURL, Verdict: audit.VerdictMoved, Status: 200, FinalURL: replURL, Replacement: replURL,
				Redirects: []audit.Redirect{{From: movedURL, To: replURL, Status: 301}}, CheckedAt: at},
			{RunID: run.ID, TargetID: f.targets[evilURL], URL: evilURL, Verdict: audit.VerdictTimeout, ErrorClass: "timeout", Reason: hostileText, CheckedAt: at},
			{RunID: run.ID, TargetID: f.targets[aboutURL], URL: aboutURL, Verdict: audit.VerdictOK, Status: 200, CheckedAt: at},
		}
		if err := db.SaveChecks(ctx, checks); err != nil {
			t.Fatal(err)
		}
		links, err := db.LinkRefs(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		var findings []audit.Finding
		for _, l := range links {
			var v audit.Verdict
			switch {
			case l.TargetID == f.targets[gonePath] && gv.Broken():
				v = gv
			case l.TargetID == f.targets[evilURL]:
				v = audit.VerdictTimeout
			case l.Fragment == "missing":
				v = audit.VerdictFragmentMissing
			default:
				continue
			}
			findings = append(findings, audit.Finding{RunID: run.ID, PageURL: l.PageURL, LinkID: l.LinkID, Target: l.Href,
				Verdict: v, Message: "link " + string(v) + ": " + l.Text})
		}
		if err := db.SaveFindings(ctx, findings); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			var goneLink int64
			for _, l := range links {
				if l.TargetID == f.targets[gonePath] {
					goneLink = l.LinkID
					break
				}
			}
			if err := db.SaveMementos(ctx, []audit.Memento{{RunID: run.ID, LinkID: goneLink, TargetID: f.targets[gonePath],
				Archive: "web.archive.org", Wanted: t0, WantedFrom: "first-seen", URL: archiveAt, Datetime: t0.AddDate(0, -2, 0), Nearest: true, CheckedAt: at}}); err != nil {
				t.Fatal(err)
			}
			if err := db.SaveDrifts(ctx, []audit.Drift{{RunID: run.ID, LinkID: goneLink, TargetID: f.targets[gonePath], Kind: "memento",
				ReferenceURL: archiveAt, ReferenceTime: t0.AddDate(0, -2, 0), LiveURL: gonePath, SimHashDistance: 30,
				TextMeasured: true, Jaccard: 0.1, WordsReference: 900, WordsLive: 20, Band: audit.BandOffTopic, MeasuredAt: at}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.ApplyHistory(ctx, run.ID, audit.ConfirmRule{After: 2}); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, run.ID, audit.RunComplete, start.Add(5*time.Minute), ""); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// openRO opens the fixture read-only as the dashboard does.
func (f *fixture) openRO(t testing.TB) *sqlstore.DB {
	t.Helper()
	db, err := engines.OpenReadOnly(context.Background(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
