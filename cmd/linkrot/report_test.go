package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/report"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// reportTime is the fixed time stamped into reports by the tests.
var reportTime = time.Date(2024, 4, 1, 12, 0, 0, 0, time.UTC)

func fixReportTime(t *testing.T) {
	t.Helper()
	old := reportNow
	reportNow = func() time.Time { return reportTime }
	t.Cleanup(func() { reportNow = old })
}

// fixtureRun is one run of a report fixture database: the pages crawled
// and, per target URL, the check the run recorded.
type fixtureRun struct {
	started time.Time
	seeds   []string
	pages   []*audit.Page
	checks  map[string]audit.Check
	// anchors are the ids of fetched targets, for #fragment findings.
	anchors map[string][]string
	// archives, when set, saves what the archives stage would have found
	// for the run (its links are given by page URL and text).
	archives func(ctx context.Context, db *sqlstore.DB, runID int64, link func(page, text string) audit.LinkRef) error
}

// buildReportDB writes runs into a fresh database at path through the
// store's APIs, derives findings and fixes as the check stage does, saves
// the archive results a run has, and applies the history of each run as
// linkrot audit does (default confirmation rule).
func buildReportDB(t testing.TB, path string, runs ...fixtureRun) {
	t.Helper()
	ctx := context.Background()
	db, err := engines.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, fr := range runs {
		r := &audit.Run{StartedAt: fr.started, Mode: "site", Seeds: fr.seeds, Args: []string{"audit", fr.seeds[0]}, Version: "test"}
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := db.SavePages(ctx, r.ID, fr.pages); err != nil {
			t.Fatal(err)
		}
		refs, err := db.Targets(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var checks []audit.Check
		anchors := map[string][]string{}
		for _, ref := range refs {
			c, ok := fr.checks[ref.URL]
			if !ok {
				continue
			}
			c.RunID, c.TargetID, c.URL = r.ID, ref.ID, ref.URL
			if c.CheckedAt.IsZero() {
				c.CheckedAt = fr.started.Add(time.Minute)
			}
			checks = append(checks, c)
			if as, ok := fr.anchors[ref.URL]; ok {
				anchors[ref.URL] = as
			}
		}
		if err := db.SaveChecks(ctx, checks); err != nil {
			t.Fatal(err)
		}
		links, err := db.LinkRefs(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := linkrot.DeriveFindings(ctx, db, r, anchors, true); err != nil {
			t.Fatal(err)
		}
		if fr.archives != nil {
			find := func(page, text string) audit.LinkRef {
				for _, l := range links {
					if l.PageURL == page && l.Text == text {
						return l
					}
				}
				t.Fatalf("fixture: no link %q on %s", text, page)
				return audit.LinkRef{}
			}
			if err := fr.archives(ctx, db, r.ID, find); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.ApplyHistory(ctx, r.ID, audit.DefaultConfirmRule); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, r.ID, audit.RunComplete, fr.started.Add(5*time.Minute), ""); err != nil {
			t.Fatal(err)
		}
	}
}

func page(u, title string, at time.Time, links ...audit.Link) *audit.Page {
	return &audit.Page{
		Extraction:  audit.Extraction{URL: u, Base: u, Title: title, Links: links, Parsed: true},
		RequestURL:  u,
		Status:      200,
		ContentType: "text/html; charset=utf-8",
		Charset:     "utf-8",
		Size:        2048,
		FetchedAt:   at,
		Duration:    120 * time.Millisecond,
	}
}

func a(href, text string) audit.Link {
	return audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href, Text: text}
}

func specTime(s string) audit.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return audit.NewTime(t)
}

func okCheck() audit.Check {
	return audit.Check{Verdict: audit.VerdictOK, Status: 200, Attempts: 1, ContentType: "text/html",
		Timings: audit.Timings{DNS: 2 * time.Millisecond, Connect: 3 * time.Millisecond, FirstByte: 40 * time.Millisecond, Total: 55 * time.Millisecond}}
}

// goldenRuns is the small fixed database of the golden tests: two runs of
// one site, in which a target that was fine rots, one moves, one is a soft
// 404, a #fragment disappears, one dead since the first run is confirmed
// broken, one that timed out recovers, and a page linked twice (the study)
// drifts off-topic for the link whose memento was measured.
func goldenRuns() []fixtureRun {
	seeds := []string{"https://site.example/"}
	t1 := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	t2 := time.Date(2024, 4, 1, 10, 0, 0, 0, time.UTC)
	robust := a("https://ext.example/study", "the 2019 study")
	robust.Robust = &audit.Robust{
		OriginalURL: "https://ext.example/study", OriginalRaw: "https://ext.example/study",
		VersionDate: specTime("2019-06-01T12:00:00Z"), VersionDateOnly: true, VersionDateRaw: "2019-06-01",
		VersionURLRaw: "https://archive.example/web/20190601120000/https://ext.example/study",
		Snapshots:     []audit.Snapshot{{URL: "https://archive.example/web/20190601120000/https://ext.example/study"}},
	}
	bad := a("https://ext.example/paper", "a paper")
	bad.Robust = &audit.Robust{OriginalURL: "https://ext.example/paper", OriginalRaw: "https://ext.example/paper", VersionDateRaw: "2024-02-30"}
	bad.Diagnostics = []audit.Diagnostic{{Field: "data-versiondate", Code: "invalid-datetime", Message: `"2024-02-30" is not a valid date`}}
	pagesAt := func(at time.Time) []*audit.Page {
		home := page("https://site.example/", "Home", at,
			a("https://site.example/about.html", "About us"),
			a("https://ext.example/gone", "the old workshop"),
			a("https://ext.example/moved", "our partner"),
			robust, bad,
			a("https://site.example/about.html#team", "the team"),
			a("https://ext.example/dead", "a dead project"),
		)
		home.Identifiers = []audit.Identifier{{URL: "https://doi.example/10.1/site", Rel: "cite-as", Source: "html"}}
		about := page("https://site.example/about.html", "About", at.Add(time.Second),
			a("https://ext.example/gone", "workshop programme"),
			a("https://blog.example/post", "a post we liked"),
			a("https://site.example/about.html#history", "our history"),
			a("mailto:editors@site.example", "write to us"),
			a("https://ext.example/flaky", "a flaky server"),
			a("https://ext.example/study", "the study, cited again"),
		)
		return []*audit.Page{home, about}
	}
	moved := okCheck()
	moved.Verdict, moved.Replacement, moved.FinalURL = audit.VerdictMoved, "https://ext.example/new-home", "https://ext.example/new-home"
	moved.Redirects = []audit.Redirect{{From: "https://ext.example/moved", To: "https://ext.example/new-home", Status: 301}}
	moved.Headers = map[string]string{"Location": "https://ext.example/new-home"}
	soft := okCheck()
	soft.Verdict, soft.Reason = audit.VerdictSoft404, "probe answered 200 with text 0.97 similar"
	soft.Soft404 = &audit.Soft404Evidence{ProbeURL: "https://blog.example/x8f2k", ProbeStatus: 200, Similarity: 0.97, Score: 1.6,
		Signals: []audit.Soft404Signal{{Name: "probe", Score: 1, Match: "probe answered 200 with text 0.97 similar (threshold 0.90)", Where: "probe"},
			{Name: "words", Score: 0.6, Match: `page not found: "Page not found – Blog"`, Where: "title"}}}
	gone := okCheck()
	gone.Verdict, gone.Status = audit.VerdictGone, 410
	skipped := audit.Check{Verdict: audit.VerdictSkipped, Reason: "mailto: is not checked"}
	dead := okCheck()
	dead.Verdict, dead.Status = audit.VerdictNotFound, 404
	timeout := audit.Check{Verdict: audit.VerdictTimeout, ErrorClass: "timeout", Attempts: 2, Reason: "no answer in 10s"}
	run1 := map[string]audit.Check{
		"https://site.example/about.html": okCheck(), "https://ext.example/gone": okCheck(),
		"https://ext.example/moved": okCheck(), "https://ext.example/study": okCheck(), "https://ext.example/paper": okCheck(),
		"https://blog.example/post": okCheck(), "mailto:editors@site.example": skipped,
		"https://ext.example/dead": dead, "https://ext.example/flaky": timeout,
	}
	run2 := map[string]audit.Check{
		"https://site.example/about.html": okCheck(), "https://ext.example/gone": gone,
		"https://ext.example/moved": moved, "https://ext.example/study": okCheck(), "https://ext.example/paper": okCheck(),
		"https://blog.example/post": soft, "mailto:editors@site.example": skipped,
		"https://ext.example/dead": dead, "https://ext.example/flaky": okCheck(),
	}
	// The archives stage of each run: the study, cited twice, has a
	// memento and a drift measured for its Robust Link only (the other
	// link has no date of its own); the workshop's first link a memento.
	study := func(band string, run2 bool) func(context.Context, *sqlstore.DB, int64, func(string, string) audit.LinkRef) error {
		return func(ctx context.Context, db *sqlstore.DB, runID int64, link func(string, string) audit.LinkRef) error {
			l := link("https://site.example/", "the 2019 study")
			at := t1
			if run2 {
				at = t2
			}
			m := audit.Memento{RunID: runID, LinkID: l.LinkID, TargetID: l.TargetID, Archive: "wayback",
				Wanted: time.Date(2019, 6, 1, 12, 0, 0, 0, time.UTC), WantedFrom: "versiondate",
				URL: "https://archive.example/web/20190601120000/https://ext.example/study", Datetime: time.Date(2019, 6, 1, 12, 0, 0, 0, time.UTC),
				Representative: true, Nearest: true, CheckedAt: at}
			ms := []audit.Memento{m}
			if run2 {
				w := link("https://site.example/", "the old workshop")
				ms = append(ms, audit.Memento{RunID: runID, LinkID: w.LinkID, TargetID: w.TargetID, Archive: "wayback",
					Wanted: t1, WantedFrom: "first-seen", URL: "https://archive.example/web/20240301000000/https://ext.example/gone",
					Datetime: t1.Add(-24 * time.Hour), Distance: 24 * time.Hour, Representative: true, Nearest: true, CheckedAt: at})
			}
			if err := db.SaveMementos(ctx, ms); err != nil {
				return err
			}
			d := audit.Drift{RunID: runID, LinkID: l.LinkID, TargetID: l.TargetID, Kind: "memento", TextMeasured: true,
				ReferenceURL: "https://archive.example/web/20190601120000id_/https://ext.example/study", ReferenceTime: m.Datetime,
				LiveURL: "https://ext.example/study", SimHashDistance: 6, Jaccard: 0.8, Dice: 0.89, Cosine: 0.93,
				WordsReference: 300, WordsLive: 310, WordChange: 0.033, Band: band, MeasuredAt: at}
			if band == audit.BandOffTopic {
				d.SimHashDistance, d.Jaccard, d.Dice, d.Cosine, d.WordsLive, d.WordChange = 38, 0.02, 0.04, 0.1, 90, -0.7
				d.ExcerptReference, d.ExcerptLive = "We measured link rot in 2019 scholarly articles…", "This domain is for sale."
			}
			return db.SaveDrifts(ctx, []audit.Drift{d})
		}
	}
	return []fixtureRun{
		{started: t1, seeds: seeds, pages: pagesAt(t1), checks: run1, anchors: map[string][]string{"https://site.example/about.html": {"team", "history"}},
			archives: study(audit.BandMinor, false)},
		{started: t2, seeds: seeds, pages: pagesAt(t2), checks: run2, anchors: map[string][]string{"https://site.example/about.html": {"history"}},
			archives: study(audit.BandOffTopic, true)},
	}
}

var goldenFormats = []struct {
	format, file string
}{
	{"html", "report.html"},
	{"json", "report.json"},
	{"csv", "report.csv"},
	{"junit", "report.junit.xml"},
	{"markdown", "report.md"},
	{"sarif", "report.sarif"},
}

// TestReportCommand_Golden renders the fixed database in every format and
// compares with testdata/golden (go test -run Golden ./cmd/linkrot -update
// rewrites them; review the diff).
func TestReportCommand_Golden(t *testing.T) {
	fixReportTime(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "golden.db")
	buildReportDB(t, dbPath, goldenRuns()...)
	for _, g := range goldenFormats {
		t.Run(g.format, func(t *testing.T) {
			var got []byte
			if g.format == "html" {
				out := filepath.Join(dir, "html")
				code, stdout, stderr := run(t, "", "report", "--db", dbPath, "--out", out)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if !strings.Contains(stdout, filepath.Join(out, "index.html")) {
					t.Errorf("stdout does not say where the report is: %q", stdout)
				}
				var err error
				if got, err = os.ReadFile(filepath.Join(out, "index.html")); err != nil {
					t.Fatal(err)
				}
			} else {
				code, stdout, stderr := run(t, "", "report", "--db", dbPath, "--format", g.format)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				got = []byte(stdout)
			}
			golden := filepath.Join("..", "..", "testdata", "golden", g.file)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (run with -update and review the diff):\n%s", g.format, golden, firstDiff(got, want))
			}
		})
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + clip(g) + "\nwant: " + clip(w)
		}
	}
	return "(same lines, different bytes)"
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func TestReportCommand_OutFile(t *testing.T) {
	fixReportTime(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "r.db")
	buildReportDB(t, dbPath, goldenRuns()...)
	out := filepath.Join(dir, "summary.md")
	if code, _, stderr := run(t, "", "report", "--db", dbPath, "--format", "markdown", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(b, []byte("Top broken targets")) {
		t.Fatalf("markdown file: %v\n%s", err, b)
	}
	if code, _, _ := run(t, "", "report", "--db", dbPath, "--format", "pdf"); code != exitUsage {
		t.Errorf("--format pdf: exit %d, want usage error", code)
	}
	if code, _, _ := run(t, "", "report", "--db", dbPath, "--run", "99"); code != exitUsage {
		t.Errorf("--run 99: exit %d, want usage error", code)
	}
	// linkrot report with a machine format writes only the file asked for:
	// no HTML report directory appears beside the database.
	if _, err := os.Stat(filepath.Join(dir, "linkrot-report")); err == nil {
		t.Errorf("report --format markdown --out FILE also wrote linkrot-report/")
	}
}

// TestAuditCommand_Report checks where linkrot audit writes its HTML
// report: linkrot-report/index.html beside the database by default,
// nothing with --no-report.
func TestAuditCommand_Report(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Home</title><a href="/">home</a>`)
	}))
	t.Cleanup(site.Close)
	args := func(db string) []string {
		return []string{"audit", site.URL + "/", "--db", db, "--no-archives", "--fail-on", "none", "--timeout", "2s", "--retries", "0"}
	}
	dir := t.TempDir()
	code, stdout, stderr := run(t, "", args(filepath.Join(dir, "site.db"))...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	index := filepath.Join(dir, "linkrot-report", report.IndexFile)
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatalf("no report beside the database: %v\n%s", err, stdout)
	}
	if !bytes.Contains(b, []byte("<title>linkrot report: ")) {
		t.Errorf("%s is not the HTML report", index)
	}
	if !strings.Contains(stdout, "Report: "+index) {
		t.Errorf("audit does not say where the report is:\n%s", stdout)
	}

	quiet := t.TempDir()
	code, stdout, stderr = run(t, "", append(args(filepath.Join(quiet, "site.db")), "--no-report")...)
	if code != exitOK {
		t.Fatalf("--no-report: exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "Report:") {
		t.Errorf("--no-report still reports a report:\n%s", stdout)
	}
	entries, err := os.ReadDir(quiet)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "site.db") {
			t.Errorf("--no-report left %s beside the database", e.Name())
		}
	}
}

// Payloads that must stay inert. Each sets window.__xss or opens a dialog
// if it ever runs (the browser test checks both).
const (
	xssScript  = `<script>window.__xss=1;alert(1)</script>`
	xssImg     = `"><img src=x onerror="window.__xss=1;alert(1)">`
	xssBreak   = `</script><script>window.__xss=1;alert(1)</script>`
	xssJS      = `javascript:window.__xss=1;alert(1)`
	xssJSUpper = `JaVaScRiPt:window.__xss=1`
	xssData    = `data:text/html,<script>window.__xss=1</script>`
	xssVB      = `vbscript:msgbox(1)`
	xssAttr    = `' onmouseover='window.__xss=1' x='`
)

var xssPayloads = []string{xssScript, xssImg, xssBreak, xssJS, xssJSUpper, xssData, xssVB, xssAttr}

// xssRuns is a database whose every crawled string carries a payload: page
// titles, anchor text, hrefs (javascript:, data:, vbscript:), Robust Links
// attributes, diagnostics, check reasons, Location headers, redirect
// targets and replacements. It has enough links for filtering and sorting
// to be visible in the browser test.
func xssRuns() []fixtureRun {
	t1 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	hostile := a("https://evil.example/"+xssImg, xssScript)
	hostile.Robust = &audit.Robust{
		OriginalURL: xssJS, OriginalRaw: xssImg, VersionDateRaw: xssBreak, VersionURLRaw: xssData,
		Snapshots: []audit.Snapshot{{URL: xssJS, DatetimeRaw: xssScript}, {URL: xssData}},
	}
	hostile.Mset = &audit.Mset{Raw: xssBreak, Copies: []audit.Copy{{URL: xssVB}}}
	hostile.Diagnostics = []audit.Diagnostic{{Field: xssAttr, Code: "invalid-url", Message: xssScript + xssImg}}
	links := []audit.Link{
		hostile,
		a(xssJS, xssImg),
		a(xssJSUpper, xssBreak),
		a(xssData, xssAttr),
		a(xssVB, "vb"),
		a("https://evil.example/moved", xssBreak),
		a("https://evil.example/redirect", "redirect"),
	}
	for i := range 30 {
		links = append(links, a("https://ok.example/page-"+strconv.Itoa(i), "fine link "+strconv.Itoa(i)))
	}
	for i := range 12 {
		links = append(links, a("https://dead.example/missing-"+strconv.Itoa(i), "dead link "+strconv.Itoa(i)))
	}
	p := page("https://site.example/"+xssScript, xssScript+xssImg, t1, links...)
	p.Diagnostics = []audit.Diagnostic{{Field: "link-header", Code: xssImg, Message: xssBreak}}
	p.Identifiers = []audit.Identifier{{URL: xssJS, Rel: "cite-as", Source: "html"}}
	checks := map[string]audit.Check{}
	moved := okCheck()
	moved.Verdict, moved.Replacement, moved.Reason = audit.VerdictMoved, xssJS, xssScript
	moved.Headers = map[string]string{"Location": xssJS, "Server": xssImg}
	moved.Redirects = []audit.Redirect{{From: "https://evil.example/moved", To: xssJS, Status: 301}}
	checks["https://evil.example/moved"] = moved
	redirect := okCheck()
	redirect.Verdict, redirect.FinalURL, redirect.Status = audit.VerdictNotFound, xssData, 404
	redirect.Redirects = []audit.Redirect{{From: "https://evil.example/redirect", To: xssBreak, Status: 302}}
	redirect.Headers = map[string]string{"Location": xssBreak}
	checks["https://evil.example/redirect"] = redirect
	for i := range 30 {
		checks["https://ok.example/page-"+strconv.Itoa(i)] = okCheck()
	}
	for i := range 12 {
		c := okCheck()
		c.Verdict, c.Status, c.Reason = audit.VerdictNotFound, 404, xssImg
		checks["https://dead.example/missing-"+strconv.Itoa(i)] = c
	}
	pageURL := "https://site.example/" + xssScript
	// What archives answered is hostile too: memento URLs, excerpts,
	// suggestion snippets, identifiers and their reasons.
	archives := func(ctx context.Context, db *sqlstore.DB, runID int64, link func(page, text string) audit.LinkRef) error {
		dead := link(pageURL, "dead link 0")
		evil := link(pageURL, xssScript)
		fine := link(pageURL, "fine link 0")
		at := t1.Add(time.Minute)
		if err := db.SaveMementos(ctx, []audit.Memento{
			{RunID: runID, LinkID: dead.LinkID, TargetID: dead.TargetID, Archive: xssImg, Wanted: t1, WantedFrom: "first-seen",
				URL: "https://archive.example/web/2024/" + xssBreak, Datetime: t1.Add(-time.Hour), Distance: time.Hour,
				Representative: true, Nearest: true, CheckedAt: at},
			{RunID: runID, LinkID: evil.LinkID, TargetID: evil.TargetID, Archive: "wayback", Wanted: t1, WantedFrom: "versiondate",
				URL: xssJS, Datetime: t1, Representative: true, Error: xssScript, CheckedAt: at},
		}); err != nil {
			return err
		}
		if err := db.SaveSuggestions(ctx, []audit.Suggestion{
			{RunID: runID, LinkID: dead.LinkID, PageURL: pageURL, Href: dead.Href, Text: "dead link 0", Reason: "broken-with-memento",
				OriginalURL: dead.Href, VersionDate: t1, VersionURL: "https://archive.example/web/2024/" + xssBreak,
				HTML: `<a href="` + xssJS + `" data-versionurl="` + xssData + `">` + xssScript + `</a>`},
		}); err != nil {
			return err
		}
		if err := db.SaveDrifts(ctx, []audit.Drift{
			{RunID: runID, LinkID: evil.LinkID, TargetID: evil.TargetID, Kind: "memento", TextMeasured: true, ReferenceURL: xssJS,
				ReferenceTime: t1, LiveURL: xssData, SimHashDistance: 40, Jaccard: 0.01, Dice: 0.02, Cosine: 0.03, WordsReference: 10,
				WordsLive: 20, WordChange: 1, Band: audit.BandOffTopic, ExcerptReference: xssBreak + xssImg, ExcerptLive: xssScript + xssAttr, MeasuredAt: at},
			{RunID: runID, LinkID: fine.LinkID, TargetID: fine.TargetID, Kind: "memento", TextMeasured: true,
				ReferenceURL: "https://archive.example/web/2023id_/" + fine.Href, ReferenceTime: t1.Add(-24 * time.Hour), LiveURL: fine.Href,
				SimHashDistance: 2, Jaccard: 0.9, Dice: 0.95, Cosine: 0.97, WordsReference: 100, WordsLive: 101, WordChange: 0.01,
				Band: audit.BandUnchanged, MeasuredAt: at},
			{RunID: runID, TargetID: fine.TargetID, Kind: "first-seen", ReferenceURL: fine.Href, ReferenceTime: t1.Add(-48 * time.Hour),
				LiveURL: fine.Href + "?" + xssAttr, SimHashDistance: 12, WordsReference: 100, WordsLive: 140, WordChange: 0.4,
				Band: audit.BandMajor, MeasuredAt: at},
		}); err != nil {
			return err
		}
		return db.SaveIdentifierChecks(ctx, []audit.IdentifierCheck{
			{RunID: runID, AccessURL: pageURL, Identifier: xssJS, Rel: "cite-as", OwnPage: true, Resolves: false,
				Reason: xssImg, CheckedAt: at},
			// A link target whose identifier does not resolve: that is its
			// problem, not that links should cite it.
			{RunID: runID, AccessURL: fine.Href, Identifier: "https://doi.example/10.1/" + xssBreak, Rel: "identifier", OwnPage: false,
				LinkingPages: []string{pageURL}, Resolves: false, Status: 404, Reason: xssScript, CheckedAt: at},
			{RunID: runID, AccessURL: "https://ok.example/page-1", Identifier: "https://doi.example/10.1/fine", Rel: "identifier", OwnPage: false,
				LinkingPages: []string{pageURL}, Resolves: true, LeadsBack: true, Status: 302, How: "redirect", CheckedAt: at},
		})
	}
	return []fixtureRun{{started: t1, seeds: []string{"https://site.example/?" + xssScript}, pages: []*audit.Page{p}, checks: checks, archives: archives}}
}

// xssReport writes the HTML report of xssRuns and returns its path.
func xssReport(t *testing.T) string {
	t.Helper()
	fixReportTime(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "xss.db")
	buildReportDB(t, dbPath, xssRuns()...)
	out := filepath.Join(dir, "report")
	if code, _, stderr := run(t, "", "report", "--db", dbPath, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return filepath.Join(out, "index.html")
}

func TestReportCommand_XSS(t *testing.T) {
	path := xssReport(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	dataRE := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`)
	// Outside the JSON data block (checked below), no payload may appear
	// as written: everything is entity-escaped.
	markup := dataRE.ReplaceAllString(doc, "")
	for _, p := range []string{xssScript, xssImg, xssBreak, xssAttr, "<script>window.__xss", "onerror=", "onmouseover=", "</script><script>"} {
		if strings.Contains(doc, p) && strings.Contains(markup, p) {
			t.Errorf("report contains %q unescaped", p)
		}
	}
	if n := strings.Count(doc, "<script"); n != 2 {
		t.Errorf("%d <script> elements, want 2 (the data and the report's own script)", n)
	}
	// Every element: no event handler attributes, no style attributes (the
	// CSP forbids them), and URLs only of allowed schemes or fragments.
	z := html.NewTokenizer(bytes.NewReader(b))
	links := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		for _, at := range tok.Attr {
			key := strings.ToLower(at.Key)
			switch {
			case strings.HasPrefix(key, "on"), key == "style", key == "srcdoc", key == "formaction":
				t.Errorf("<%s> has attribute %s=%q", tok.Data, at.Key, at.Val)
			case key == "href" || key == "src" || key == "action" || key == "xlink:href":
				links++
				v := strings.ToLower(strings.TrimSpace(at.Val))
				if !strings.HasPrefix(v, "#") && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "mailto:") {
					t.Errorf("<%s %s=%q>: not an allowed URL", tok.Data, at.Key, at.Val)
				}
			}
		}
	}
	if links == 0 {
		t.Error("no links found: tokenizer test saw nothing")
	}
	// The data block is JSON escaped for the script context: it holds the
	// payloads, but only with < and > as \u escapes.
	data := dataRE.FindStringSubmatch(doc)
	if data == nil {
		t.Fatal("no data block")
	}
	if strings.ContainsAny(data[1], "<>") {
		t.Error("data block contains raw < or >")
	}
	if !strings.Contains(data[1], `\u003c/script\u003e\u003cscript\u003ewindow.__xss=1`) {
		t.Error("data block lacks the escaped </script> payload: the test fixture is not what it claims")
	}
	// The CSP forbids anything but the report's own code.
	if !strings.Contains(doc, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;sha256-`) {
		t.Errorf("no restrictive CSP meta element")
	}
	// The machine formats carry the strings as data, escaped for their syntax.
	dbDir := filepath.Dir(filepath.Dir(path))
	for _, f := range []string{"json", "junit", "sarif", "markdown"} {
		code, out, stderr := run(t, "", "report", "--db", filepath.Join(dbDir, "xss.db"), "--format", f)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, stderr)
		}
		if strings.Contains(out, "<script>") || strings.Contains(out, "<img") {
			t.Errorf("%s output contains raw markup from the payloads", f)
		}
	}
}

// TestReportWrite_Escape checks that report files stay inside --out: the
// file name is fixed and written through os.Root.
func TestReportWrite_Escape(t *testing.T) {
	fixReportTime(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "r.db")
	buildReportDB(t, dbPath, goldenRuns()...)
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// A symlink named like the report, pointing outside the directory,
	// must not be followed.
	outside := filepath.Join(dir, "outside.html")
	if err := os.Symlink(outside, filepath.Join(out, ".index.html.tmp")); err != nil {
		t.Skip("no symlinks:", err)
	}
	code, _, stderr := run(t, "", "report", "--db", dbPath, "--out", out)
	if _, err := os.Stat(outside); err == nil {
		t.Fatalf("report followed a symlink out of --out (exit %d, %s)", code, stderr)
	}
	if code == 0 {
		if _, err := os.Stat(filepath.Join(out, report.IndexFile)); err != nil {
			t.Errorf("exit 0 but no report: %v", err)
		}
	}
}

// TestDemoCommand runs linkrot demo end to end: two audits of the built-in
// site on loopback and a report that shows what the fixtures contain.
func TestDemoCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := run(t, "", "demo", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Demo site:", "== Run 1", "== Run 2", "Report: ", "file://"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	db := openDB(t, filepath.Join(out, "linkrot.db"))
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != 2 || r.Status != audit.RunComplete {
		t.Errorf("latest run %d %s, want run 2 complete", r.ID, r.Status)
	}
	counts, err := db.VerdictCounts(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []audit.Verdict{audit.VerdictMoved, audit.VerdictGone, audit.VerdictNotFound, audit.VerdictSoft404,
		audit.VerdictRedirectToRoot, audit.VerdictRedirected, audit.VerdictOK} {
		if counts[v] == 0 {
			t.Errorf("no %s target in the demo (counts %v)", v, counts)
		}
	}
	stats, err := db.RunStats(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stats.RobustLinks < 8 || stats.MsetLinks != 1 || stats.Diagnostics == 0 || stats.Identifiers != 2 {
		t.Errorf("demo robustness data: %+v", stats)
	}
	// The archives stage found what the demo archive is made to show.
	snaps, err := db.SnapshotChecks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	snapVerdicts := map[audit.SnapshotVerdict]int{}
	for _, s := range snaps {
		snapVerdicts[s.Verdict]++
	}
	for _, v := range []audit.SnapshotVerdict{audit.SnapshotOK, audit.SnapshotMissing, audit.NotAMemento} {
		if snapVerdicts[v] == 0 {
			t.Errorf("no %s snapshot in the demo (%v)", v, snapVerdicts)
		}
	}
	drifts, err := db.Drifts(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	bands := map[string]int{}
	for _, d := range drifts {
		bands[d.Band]++
	}
	if bands[audit.BandOffTopic] == 0 {
		t.Errorf("no off-topic drift in the demo (bands %v)", bands)
	}
	mementos, err := db.Mementos(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	suggestions, err := db.Suggestions(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(mementos) == 0 || len(suggestions) == 0 {
		t.Errorf("demo has %d mementos and %d suggestions, want some of each", len(mementos), len(suggestions))
	}

	// The report's findings, through the JSON format: a link carries the
	// fragment-missing verdict, and what changed since run 1 is there.
	code, js, stderr := run(t, "", "report", "--db", filepath.Join(out, "linkrot.db"), "--format", "json")
	if code != 0 {
		t.Fatalf("report --format json: exit %d: %s", code, stderr)
	}
	var doc struct {
		Links []struct {
			ID      int64  `json:"id"`
			Href    string `json:"href"`
			Verdict string `json:"verdict"`
		} `json:"links"`
		Findings []struct {
			LinkID   *int64 `json:"link_id"`
			Verdict  string `json:"verdict"`
			Fragment string `json:"fragment"`
		} `json:"findings"`
		Runs  []json.RawMessage `json:"runs"`
		Since *struct {
			From      int64             `json:"from"`
			NewBroken []json.RawMessage `json:"new_broken"`
		} `json:"since_last_run"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	fragLinks := map[int64]string{}
	for _, l := range doc.Links {
		if l.Verdict == string(audit.VerdictFragmentMissing) {
			fragLinks[l.ID] = l.Href
		}
	}
	if len(fragLinks) == 0 {
		t.Error("no link of the demo has the fragment-missing verdict")
	}
	for _, f := range doc.Findings {
		if f.Verdict == string(audit.VerdictFragmentMissing) {
			if f.LinkID == nil || fragLinks[*f.LinkID] == "" || !strings.HasSuffix(fragLinks[*f.LinkID], "#"+f.Fragment) {
				t.Errorf("fragment finding %+v does not match a fragment-missing link (%v)", f, fragLinks)
			}
		}
	}
	if len(doc.Runs) != 2 {
		t.Errorf("the trend has %d runs, want 2", len(doc.Runs))
	}
	if doc.Since == nil || doc.Since.From != 1 || len(doc.Since.NewBroken) == 0 {
		t.Errorf("since last run: %+v, want changes since run 1 with new broken targets", doc.Since)
	}
	b, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`<h2 id="since">Since last run</h2>`)) {
		t.Error("the demo report has no since-last-run section")
	}
}

// BenchmarkReportCommand_100k times linkrot report (loading from SQLite and
// writing index.html) for a run of 100,000 links: 1,000 pages of 100 links
// to 50,000 targets, a tenth of them broken. With $LINKROT_BENCH_DB set, the
// database is built (once) at that path and kept, for measuring the binary
// (e.g. /usr/bin/time -v linkrot report --db "$LINKROT_BENCH_DB").
func BenchmarkReportCommand_100k(b *testing.B) {
	fixReportTimeB(b)
	dbPath := os.Getenv("LINKROT_BENCH_DB")
	if dbPath == "" {
		dbPath = filepath.Join(b.TempDir(), "bench.db")
	}
	if _, err := os.Stat(dbPath); err != nil {
		start := time.Now()
		buildBenchDB(b, dbPath)
		b.Logf("built %s in %v", dbPath, time.Since(start))
	}
	out := filepath.Join(b.TempDir(), "report")
	b.ResetTimer()
	for b.Loop() {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), []string{"report", "--db", dbPath, "--out", out}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
	b.StopTimer()
	st, err := os.Stat(filepath.Join(out, "index.html"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Size())/(1<<20), "MiB/report")
}

func fixReportTimeB(b *testing.B) {
	old := reportNow
	reportNow = func() time.Time { return reportTime }
	b.Cleanup(func() { reportNow = old })
}

func buildBenchDB(b *testing.B, path string) {
	const pages, perPage, targets = 1000, 100, 50_000
	t0 := time.Date(2024, 6, 1, 10, 0, 0, 0, time.UTC)
	fr := fixtureRun{started: t0, seeds: []string{"https://site.example/"}, checks: map[string]audit.Check{}}
	url := func(i int) string {
		return "https://host" + strconv.Itoa(i%300) + ".example/path/to/article-" + strconv.Itoa(i) + ".html"
	}
	for p := range pages {
		var links []audit.Link
		for j := range perPage {
			ti := ((p*perPage + j) * 7919) % targets
			l := a(url(ti), "a link to article "+strconv.Itoa(ti))
			if j%5 == 0 {
				l.Robust = &audit.Robust{OriginalURL: l.Href, VersionDate: specTime("2020-01-01T12:00:00Z"),
					Snapshots: []audit.Snapshot{{URL: "https://archive.example/web/20200101120000/" + l.Href}}}
			}
			links = append(links, l)
		}
		fr.pages = append(fr.pages, page("https://site.example/articles/"+strconv.Itoa(p)+".html", "Article "+strconv.Itoa(p), t0, links...))
	}
	for i := range targets {
		c := okCheck()
		if i%10 == 0 {
			c.Verdict, c.Status = audit.VerdictNotFound, 404
		}
		fr.checks[url(i)] = c
	}
	buildReportDB(b, path, fr)
}

// TestReport_PrunedHistory checks that a target's status in the report
// comes from its history across every run, which survives pruning: after
// run 1 is removed, the target dead since run 1 still shows when it first
// failed, that it is confirmed and its streak, and the workshop its last
// OK (in run 1).
func TestReport_PrunedHistory(t *testing.T) {
	fixReportTime(t)
	dbPath := filepath.Join(t.TempDir(), "r.db")
	buildReportDB(t, dbPath, goldenRuns()...)
	db := openDB(t, dbPath)
	if res, err := db.Prune(context.Background(), store.PruneOptions{Keep: 1}); err != nil || len(res.Runs) != 1 {
		t.Fatalf("prune: %v, %v", res, err)
	}
	code, out, stderr := run(t, "", "report", "--db", dbPath, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type history struct {
		FirstBroken    *string `json:"first_broken"`
		FirstBrokenRun int64   `json:"first_broken_run"`
		LastOK         *string `json:"last_ok"`
		LastOKRun      int64   `json:"last_ok_run"`
		Tracked        bool    `json:"tracked"`
		Confirmed      bool    `json:"confirmed"`
		FailedRuns     int     `json:"failed_runs"`
		Checks         []any   `json:"checks"`
	}
	var doc struct {
		Targets []struct {
			URL     string   `json:"url"`
			History *history `json:"history"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	hs := map[string]*history{}
	for _, tg := range doc.Targets {
		hs[tg.URL] = tg.History
	}
	str := func(s *string) string {
		if s == nil {
			return "null"
		}
		return *s
	}
	dead := hs["https://ext.example/dead"]
	if dead == nil || len(dead.Checks) != 1 || !dead.Tracked || !dead.Confirmed || dead.FailedRuns != 2 ||
		str(dead.FirstBroken) != "2024-03-01T10:01:00Z" || dead.FirstBrokenRun != 1 {
		t.Errorf("dead target after pruning run 1: %+v (first broken %s)", dead, str(dead.FirstBroken))
	}
	gone := hs["https://ext.example/gone"]
	if gone == nil || str(gone.LastOK) != "2024-03-01T10:01:00Z" || gone.LastOKRun != 0 || str(gone.FirstBroken) != "2024-04-01T10:01:00Z" {
		t.Errorf("gone target after pruning run 1: %+v (last OK %s)", gone, str(gone.LastOK))
	}
}
