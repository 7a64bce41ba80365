package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/crawltest"
)

func TestAuditCommand_Verdicts(t *testing.T) {
	rot := crawltest.NewRot(t)
	dbPath := filepath.Join(t.TempDir(), "rot.db")
	code, stdout, stderr := run(t, "", "audit", rot.URL+"/", "--db", dbPath, "--allow-private", "--timeout", "1s", "--retries", "0", "--no-archives")
	if code != exitFindings {
		t.Fatalf("exit %d, want %d (broken links found); stderr:\n%s\nstdout:\n%s", code, exitFindings, stderr, stdout)
	}
	for _, want := range []string{"Checked ", "not-found", "Top broken targets:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	db := openDB(t, dbPath)
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != audit.RunComplete {
		t.Errorf("run status %s", r.Status)
	}
	checks, err := db.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]audit.Check{}
	for _, c := range checks {
		verdicts[strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(c.URL, rot.URL), rot.Soft.URL), rot.Slow.URL)] = c
	}
	want := map[string]audit.Verdict{
		"/fine.html":                audit.VerdictOK,
		"/old-url":                  audit.VerdictMoved,
		"/gone":                     audit.VerdictGone,
		"/missing":                  audit.VerdictNotFound,
		"/temp":                     audit.VerdictRedirected,
		"/deep/path/article":        audit.VerdictRedirectToRoot,
		"/shop/discontinued-widget": audit.VerdictSoft404,
		"/articles/real-looking":    audit.VerdictSoft404,
		"/articles/":                audit.VerdictOK,
		"/slow":                     audit.VerdictTimeout,
		"http://169.254.169.254/latest/meta-data/": audit.VerdictRefused,
		"mailto:webmaster@example.org":             audit.VerdictSkipped,
	}
	for path, v := range want {
		c, ok := verdicts[path]
		if !ok {
			t.Errorf("%s: no check (have %d checks)", path, len(checks))
			continue
		}
		if c.Verdict != v {
			t.Errorf("%s: verdict %s (%s), want %s", path, c.Verdict, c.Reason, v)
		}
	}
	if c := verdicts["/old-url"]; !strings.HasSuffix(c.Replacement, "/new-url.html") {
		t.Errorf("moved target replacement = %q", c.Replacement)
	}
	if c := verdicts["/articles/real-looking"]; c.Soft404 == nil || c.Soft404.ProbeStatus != 200 || c.Soft404.Similarity < 0.5 {
		t.Errorf("soft-404 evidence = %+v", c.Soft404)
	}
	if c := verdicts["/fine.html"]; c.SHA256 == "" || c.SimHash == 0 {
		t.Errorf("fine page has no fingerprint: %+v", c)
	}
	// /fine.html?from=many is linked 100 times from many.html: the crawler
	// fetched it once as a page of the site, and the checker judged it
	// from that response.
	if n := rot.Hits("/fine.html?from=many"); n != 1 {
		t.Errorf("/fine.html?from=many fetched %d times, want 1 (the crawl's request, reused by the check)", n)
	}
	// One request per URL in the run: every page of the site (redirecting
	// ones, 404 and 410 included) was requested once, by the crawler, and
	// judged from that response; the only requests of the checker to the
	// site are the soft-404 probes (random URLs, one per directory).
	probes := 0
	for path, n := range rot.AllHits() {
		if n != 1 {
			t.Errorf("%s requested %d times, want once", path, n)
		}
		if isProbePath(path) {
			probes++
		}
	}
	if probes != 2 { // "/" and "/shop/"
		t.Errorf("%d soft-404 probes of the site, want 2: %v", probes, rot.AllHits())
	}
	for _, path := range []string{"/fine.html", "/fine.html?from=many", "/old-url", "/gone", "/missing", "/temp", "/deep/path/article", "/shop/discontinued-widget", "/"} {
		if c := verdicts[path]; !c.FromCrawl || c.Attempts != 0 {
			t.Errorf("%s: not judged from the crawl (from_crawl %v, %d attempts)", path, c.FromCrawl, c.Attempts)
		}
	}
	if c := verdicts["/articles/"]; c.FromCrawl || c.Attempts == 0 {
		t.Errorf("/articles/ on another host: from_crawl %v, %d attempts; want fetched", c.FromCrawl, c.Attempts)
	}
	if c := verdicts["/shop/discontinued-widget"]; c.Soft404 == nil || c.Soft404.ProbeStatus != 200 || c.Soft404.Similarity < 0.9 {
		t.Errorf("internal soft-404 evidence = %+v", c.Soft404)
	}
	if c := verdicts["/temp"]; len(c.Redirects) != 1 || c.Redirects[0].Status != 302 || !strings.HasSuffix(c.FinalURL, "/fine.html") {
		t.Errorf("/temp from the crawl: redirects %+v, final %s", c.Redirects, c.FinalURL)
	}
	if !strings.Contains(stdout, "from the crawl") {
		t.Errorf("summary does not say what was judged from the crawl:\n%s", stdout)
	}

	findings, err := db.Findings(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var fragMissing, fragOK bool
	for _, f := range findings {
		if f.Verdict == audit.VerdictFragmentMissing {
			fragMissing = fragMissing || f.Fragment == "no-such-section"
			fragOK = fragOK || f.Fragment == "section-2"
		}
	}
	if !fragMissing || fragOK {
		t.Errorf("fragment findings wrong (missing found %v, existing flagged %v): %+v", fragMissing, fragOK, findings)
	}

	// linkrot fixes lists the UNLINKR triple for the moved link.
	code, out, _ := run(t, "", "fixes", "--db", dbPath, "--format", "json")
	if code != 0 {
		t.Fatalf("fixes exit %d", code)
	}
	var fixes []audit.Maintenance
	if err := json.Unmarshal([]byte(out), &fixes); err != nil {
		t.Fatal(err)
	}
	if len(fixes) != 1 || fixes[0].Source != rot.URL+"/" || !strings.HasSuffix(fixes[0].Target, "/old-url") || !strings.HasSuffix(fixes[0].Replacement, "/new-url.html") {
		t.Errorf("fixes = %+v", fixes)
	}
	code, out, _ = run(t, "", "fixes", "--db", dbPath, "--format", "unlinkr")
	if code != 0 || !strings.HasPrefix(out, "UNLINKR "+rot.URL+"/ ") {
		t.Errorf("unlinkr output = %q", out)
	}

	// A second audit (a new run) with --max-age reuses the non-transient
	// results of the first and checks again only what failed transiently.
	// The site's own pages are judged from the new run's crawl instead.
	// (/gone is still requested by the crawler: it is a page of the site.)
	slowBefore := rot.SlowHits()
	code, _, stderr = run(t, "", "audit", rot.URL+"/", "--db", dbPath, "--allow-private", "--max-age", "1h", "--timeout", "1s", "--retries", "0", "--no-archives", "--no-report")
	if code != exitFindings {
		t.Fatalf("second audit exit %d: %s", code, stderr)
	}
	if rot.SlowHits() == slowBefore {
		t.Errorf("--max-age: the transient timeout was reused instead of checked again")
	}
	r2, err := db.LatestRun(ctx)
	if err != nil || r2.ID == r.ID {
		t.Fatalf("second run = %+v, %v", r2, err)
	}
	checks2, err := db.Checks(ctx, r2.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks2 {
		switch {
		case strings.HasSuffix(c.URL, "/gone"):
			if c.Reused || !c.FromCrawl || c.Verdict != audit.VerdictGone {
				t.Errorf("/gone in run 2 = %+v, want judged from the run's crawl", c)
			}
		case c.URL == rot.Soft.URL+"/articles/":
			if !c.Reused || c.ReusedFrom != r.ID || c.Verdict != audit.VerdictOK {
				t.Errorf("/articles/ on another host in run 2 = %+v, want reused from run %d", c, r.ID)
			}
		case strings.HasSuffix(c.URL, "/slow"):
			if c.Reused {
				t.Errorf("transient /slow was reused: %+v", c)
			}
		}
	}
}

func TestAuditCommand_FailOn(t *testing.T) {
	rot := crawltest.NewRot(t)
	dbPath := filepath.Join(t.TempDir(), "rot.db")
	code, _, stderr := run(t, "", "audit", rot.URL+"/fine.html", "--db", dbPath, "--fail-on", "none", "--max-depth", "0", "--no-archives")
	if code != exitOK {
		t.Errorf("--fail-on none: exit %d (%s)", code, stderr)
	}
	if code, _, _ := run(t, "", "audit", rot.URL+"/", "--db", dbPath, "--fail-on", "bogus", "--no-archives"); code != exitUsage {
		t.Errorf("--fail-on bogus: exit %d, want usage error", code)
	}
}

// isProbePath reports whether path is a soft-404 probe: its last segment is
// 26 random base32 characters (check.probeFor).
func isProbePath(path string) bool {
	return probePath.MatchString(path)
}

var probePath = regexp.MustCompile(`/[a-z2-7]{26}/?$`)

// TestAudit_MaxTimePartialReport stops an audit with --max-time while a
// page of the site hangs: the run is recorded as interrupted, the HTML
// report and the machine outputs of what was done are written anyway,
// marked incomplete (the run's status), and --resume then finishes the
// run.
func TestAudit_MaxTimePartialReport(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>Home</title><a href="/a">a</a> <a href="/hang">hang</a> <a href="/missing">missing</a>`)
		case "/a":
			fmt.Fprint(w, `<!doctype html><title>A</title><p>Page a.</p><a href="/">home</a>`)
		case "/hang":
			select {
			case <-release:
			case <-r.Context().Done():
			}
			fmt.Fprint(w, `<!doctype html><title>Slow</title><p>Finally.</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "linkrot.db")
	reportDir := filepath.Join(dir, "report")
	code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", db, "--report", reportDir, "--output", "json",
		"--max-time", "1500ms", "--retries", "0", "--no-archives", "--fail-on", "none")
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d (interrupted)\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, stdout, stderr)
	}
	if !strings.Contains(stdout, "was interrupted") || !strings.Contains(stdout, "Report: ") {
		t.Errorf("stdout does not say the report is partial:\n%s", stdout)
	}
	html, err := os.ReadFile(filepath.Join(reportDir, "index.html"))
	if err != nil {
		t.Fatalf("no HTML report: %v", err)
	}
	if !strings.Contains(string(html), "interrupted") {
		t.Errorf("the HTML report does not say the run was interrupted")
	}
	js, err := os.ReadFile(filepath.Join(reportDir, "report.json"))
	if err != nil {
		t.Fatalf("no JSON output: %v", err)
	}
	if !strings.Contains(string(js), `"interrupted"`) || !strings.Contains(string(js), "/missing") {
		t.Errorf("report.json lacks the run status or what was checked:\n%.2000s", js)
	}
	d := openDB(t, db)
	r, err := d.LatestRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != audit.RunInterrupted {
		t.Errorf("run status %s, want interrupted", r.Status)
	}
	d.Close()

	unblock()
	code, stdout, stderr = run(t, "", "audit", "--resume", "--db", db, "--report", reportDir, "--fail-on", "none")
	if code != exitOK || !strings.Contains(stdout, "Resuming run 1") {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	d = openDB(t, db)
	if r, err = d.LatestRun(context.Background()); err != nil || r.Status != audit.RunComplete {
		t.Errorf("after the resume: run %+v, %v", r, err)
	}
}
