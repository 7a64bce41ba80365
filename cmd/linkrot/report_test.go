package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/sqlite"
	"github.com/linkrot/linkrot/report"
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
}

// buildReportDB writes runs into a fresh database at path through the
// store's APIs and derives findings and fixes as the check stage does.
func buildReportDB(t testing.TB, path string, runs ...fixtureRun) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
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
		anchors, want := map[int64][]string{}, map[int64]bool{}
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
				anchors[ref.ID], want[ref.ID] = as, true
			}
		}
		if err := db.SaveChecks(ctx, checks); err != nil {
			t.Fatal(err)
		}
		links, err := db.LinkRefs(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := deriveFindings(ctx, db, r.ID, links, anchors, want, &checkResult{}); err != nil {
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
// one site, in which a target that was fine rots, one moved, one is a soft
// 404 and a #fragment disappears.
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
		)
		home.Identifiers = []audit.Identifier{{URL: "https://doi.example/10.1/site", Rel: "cite-as", Source: "html"}}
		about := page("https://site.example/about.html", "About", at.Add(time.Second),
			a("https://ext.example/gone", "workshop programme"),
			a("https://blog.example/post", "a post we liked"),
			a("https://site.example/about.html#history", "our history"),
			a("mailto:editors@site.example", "write to us"),
		)
		return []*audit.Page{home, about}
	}
	moved := okCheck()
	moved.Verdict, moved.Replacement, moved.FinalURL = audit.VerdictMoved, "https://ext.example/new-home", "https://ext.example/new-home"
	moved.Redirects = []audit.Redirect{{From: "https://ext.example/moved", To: "https://ext.example/new-home", Status: 301}}
	moved.Headers = map[string]string{"Location": "https://ext.example/new-home"}
	soft := okCheck()
	soft.Verdict, soft.Reason = audit.VerdictSoft404, "probe answered 200 with text 0.97 similar"
	soft.Soft404 = &audit.Soft404Evidence{ProbeURL: "https://blog.example/x8f2k", ProbeStatus: 200, Similarity: 0.97}
	gone := okCheck()
	gone.Verdict, gone.Status = audit.VerdictGone, 410
	skipped := audit.Check{Verdict: audit.VerdictSkipped, Reason: "mailto: is not checked"}
	run1 := map[string]audit.Check{
		"https://site.example/about.html": okCheck(), "https://ext.example/gone": okCheck(),
		"https://ext.example/moved": moved, "https://ext.example/study": okCheck(), "https://ext.example/paper": okCheck(),
		"https://blog.example/post": okCheck(), "mailto:editors@site.example": skipped,
	}
	run2 := map[string]audit.Check{
		"https://site.example/about.html": okCheck(), "https://ext.example/gone": gone,
		"https://ext.example/moved": moved, "https://ext.example/study": okCheck(), "https://ext.example/paper": okCheck(),
		"https://blog.example/post": soft, "mailto:editors@site.example": skipped,
	}
	return []fixtureRun{
		{started: t1, seeds: seeds, pages: pagesAt(t1), checks: run1, anchors: map[string][]string{"https://site.example/about.html": {"team", "history"}}},
		{started: t2, seeds: seeds, pages: pagesAt(t2), checks: run2, anchors: map[string][]string{"https://site.example/about.html": {"history"}}},
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
	// The audit command writes the report beside the database by default.
	if _, err := os.Stat(filepath.Join(dir, "linkrot-report")); err == nil {
		t.Errorf("report written without being asked")
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
	return []fixtureRun{{started: t1, seeds: []string{"https://site.example/?" + xssScript}, pages: []*audit.Page{p}, checks: checks}}
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
	b, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"runs":[[1,`)) || !bytes.Contains(b, []byte("fragment-missing")) {
		t.Errorf("demo report lacks the trend of both runs or the fragment finding")
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
