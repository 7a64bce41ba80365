package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/linkrot/linkrot/audit"
)

// landerServer serves a page of check's parked fixtures for every
// URL, as a parked domain does.
func landerServer(t *testing.T, fixture string) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "check", "testdata", "parked", fixture))
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestAuditCommand_Parked audits a loopback site that links to landers of
// four kinds and to two real pages about domains: the landers are parked
// in the database, the real pages ok, and the findings, the Markdown
// summary and the HTML report say what to do about a parked domain.
func TestAuditCommand_Parked(t *testing.T) {
	targets := map[string]struct {
		srv  *httptest.Server
		path string
		want audit.Verdict
	}{
		"sedo":      {landerServer(t, "sedo.html"), "/trails/lake-district", audit.VerdictParked},
		"script":    {landerServer(t, "script-only.html"), "/topos/gimmer", audit.VerdictParked},
		"registrar": {landerServer(t, "registrar-registered.html"), "/lists/wainwrights", audit.VerdictParked},
		"spanish":   {landerServer(t, "lander-es.html"), "/rutas/picos", audit.VerdictParked},
		"blog":      {pageServer(t, "/2025/03/how-i-buy-expired-domains", "blog-buying-domains.html"), "/2025/03/how-i-buy-expired-domains", audit.VerdictOK},
		"article":   {pageServer(t, "/web/domain-parking-explained", "parking-article.html"), "/web/domain-parking-explained", audit.VerdictOK},
	}
	var links strings.Builder
	for name, tg := range targets {
		fmt.Fprintf(&links, `<li><a href="%s%s">%s</a></li>`, tg.srv.URL, tg.path, name)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Fell walks</title></head><body><main><h1>Further reading</h1><ul>%s</ul></main></body></html>`, links.String())
	}))
	t.Cleanup(site.Close)

	dir := t.TempDir()
	dbPath := filepath.Join(dir, "parked.db")
	code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", dbPath, "--allow-private", "--no-archives", "--timeout", "2s", "--retries", "0", "--no-report")
	if code != exitFindings {
		t.Fatalf("exit %d, want %d (parked is in the default --fail-on); stderr:\n%s\nstdout:\n%s", code, exitFindings, stderr, stdout)
	}
	if !strings.Contains(stdout, "4 parked") {
		t.Errorf("summary does not count 4 parked targets:\n%s", stdout)
	}

	db := openDB(t, dbPath)
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := db.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	byURL := map[string]audit.Check{}
	for _, c := range checks {
		byURL[c.URL] = c
	}
	for name, tg := range targets {
		c, ok := byURL[tg.srv.URL+tg.path]
		if !ok {
			t.Errorf("%s: no check", name)
			continue
		}
		if c.Verdict != tg.want {
			t.Errorf("%s: %s (%s), want %s", name, c.Verdict, c.Reason, tg.want)
		}
		if tg.want == audit.VerdictParked && (c.Soft404 == nil || c.Soft404.Parked < 1 || !strings.HasPrefix(c.Reason, "parked domain (score ")) {
			t.Errorf("%s: stored evidence %+v, reason %q", name, c.Soft404, c.Reason)
		}
	}
	findings, err := db.Findings(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	parked := 0
	for _, f := range findings {
		if f.Verdict == audit.VerdictParked {
			parked++
			if !strings.Contains(f.Message, "Fix: "+audit.FixAdvice(audit.VerdictParked)) {
				t.Errorf("finding %q lacks the fix", f.Message)
			}
		}
	}
	if parked != 4 {
		t.Errorf("%d parked findings, want 4: %+v", parked, findings)
	}

	code, md, stderr := run(t, "", "report", "--db", dbPath, "--format", "markdown")
	if code != 0 {
		t.Fatalf("report exit %d: %s", code, stderr)
	}
	if !strings.Contains(md, "**parked**: the domain is parked") || strings.Count(md, "| parked (200) |") != 4 {
		t.Errorf("markdown summary lacks the parked targets or their fix:\n%s", md)
	}

	// The HTML report, in a browser: the fix of a parked target says the
	// domain will not come back.
	if code, _, stderr := run(t, "", "report", "--db", dbPath, "--out", filepath.Join(dir, "r")); code != 0 {
		t.Fatalf("report exit %d: %s", code, stderr)
	}
	b := newBrowser(t)
	u := "file://" + filepath.ToSlash(filepath.Join(dir, "r", "index.html"))
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(u+"#broken"), chromedp.WaitVisible(`#t-broken tbody tr`)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, openAll("#t-broken"), nil)
	var advice []string
	b.Eval(t, `Array.from(document.querySelectorAll('#t-broken tr.detail p.advice')).map(function (p) { return p.textContent; })`, &advice)
	if len(advice) != 4 {
		t.Fatalf("%d parked fixes shown, want 4: %q", len(advice), advice)
	}
	for _, a := range advice {
		if a != audit.FixAdvice(audit.VerdictParked) {
			t.Errorf("fix shown: %q", a)
		}
	}
	b.Check(t, "parked fixes")
}

// pageServer serves one page of check's parked fixtures at path,
// and 404 elsewhere.
func pageServer(t *testing.T, path, fixture string) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "check", "testdata", "parked", fixture))
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}
