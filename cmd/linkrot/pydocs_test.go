package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/linkrot/linkrot/urls"
)

// pyDocs is the HTML documentation of Python 3.11 as Debian packages it
// (python3.11-doc): about 530 pages and 9,000 links to other sites, among
// them https://schemers.org/...r5rs-Z-H-9.html#%_sec_6.2, whose fragment
// net/url rejects (issue 24).
const pyDocs = "/usr/share/doc/python3.11/html"

// offlineTransport is the checker's transport in TestAudit_PythonDocs:
// requests to the loopback site go to it, every other host is answered
// 404 from memory (no request leaves the machine), and every request's
// host and target are recorded.
type offlineTransport struct {
	mu   sync.Mutex
	seen map[string][]string // host -> request targets (RequestURI)
}

func (o *offlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	o.mu.Lock()
	o.seen[req.URL.Host] = append(o.seen[req.URL.Host], req.URL.RequestURI())
	o.mu.Unlock()
	if req.URL.Hostname() == "127.0.0.1" {
		return http.DefaultTransport.RoundTrip(req)
	}
	return &http.Response{
		StatusCode: http.StatusNotFound, Status: "404 Not Found", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/plain"}},
		Body:    io.NopCloser(strings.NewReader("offline")),
		Request: req, ContentLength: 7,
	}, nil
}

// TestAudit_PythonDocs audits the Python documentation end to end through
// Run, as a build directory and as a site served on loopback: the run
// ends with exit 0 or 1 (never 3), every link whose href is an absolute
// http(s) URL has a target and that target a check, and the schemers.org
// link is checked at its URL without the fragment. External hosts are
// answered from memory (testCheckTransport). The tree is installed by CI
// (python3.11-doc); without it the test is skipped, unless
// LINKROT_REQUIRE_PYDOCS=1 makes its absence a failure.
func TestAudit_PythonDocs(t *testing.T) {
	if _, err := os.Stat(filepath.Join(pyDocs, "whatsnew", "2.6.html")); err != nil {
		if os.Getenv("LINKROT_REQUIRE_PYDOCS") == "1" {
			t.Fatalf("LINKROT_REQUIRE_PYDOCS=1 but the Python documentation is missing: %v (install python3.11-doc)", err)
		}
		t.Skipf("%s not installed (python3.11-doc): %v", pyDocs, err)
	}
	site := httptest.NewServer(http.FileServer(http.Dir(pyDocs)))
	defer site.Close()
	// The served site is crawled from index.html, the whole tree; under
	// the race detector (some fifteen times the CPU) only the page with
	// the schemers.org link and 9 pages around it, the site's own pages
	// not checked (recorded skipped), while the build directory covers
	// the whole tree's extraction and storage.
	served := []string{site.URL + "/index.html"}
	const minPages, minAbs = 500, 8000
	if raceEnabled {
		served = []string{site.URL + "/whatsnew/2.6.html", "--max-pages", "10", "--skip", `^http://127\.0\.0\.1:`}
	}
	for _, mode := range []struct {
		name  string
		input []string
	}{
		{"build directory", []string{pyDocs}},
		{"served site", served},
	} {
		t.Run(mode.name, func(t *testing.T) {
			ot := &offlineTransport{seen: map[string][]string{}}
			testCheckTransport = ot
			defer func() { testCheckTransport = nil }()
			dir := t.TempDir()
			dbPath := filepath.Join(dir, "py.db")
			args := append([]string{"audit"}, mode.input...)
			args = append(args, "--db", dbPath, "--no-archives", "--no-soft404", "--retries", "0", "--timeout", "10s", "--no-report")
			code, stdout, stderr := run(t, "", args...)
			if code != 0 && code != exitFindings {
				t.Fatalf("exit %d, want 0 or %d; stderr:\n%s\nstdout:\n%s", code, exitFindings, stderr, stdout)
			}
			db, err := sql.Open("sqlite", dbPath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			count := func(q string) int {
				t.Helper()
				var n int
				if err := db.QueryRow(q).Scan(&n); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return n
			}
			// Every link whose href is an absolute http(s) URL has a target
			// (a link without one keeps its href in links.href: url_form bit
			// 1 derives the href from the target) and the target a check.
			if n := count(`SELECT count(*) FROM links WHERE target_id IS NULL AND (url_form & 1) = 0
				AND (lower(ltrim(href)) LIKE 'http://%' OR lower(ltrim(href)) LIKE 'https://%')`); n != 0 {
				t.Errorf("%d links with an absolute http(s) href have no target", n)
			}
			if n := count(`SELECT count(*) FROM links l WHERE l.target_id IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM checks c WHERE c.target_id = l.target_id AND c.run_id = l.run_id)`); n != 0 {
				t.Errorf("%d links whose target has no check", n)
			}
			sdb := openDB(t, dbPath)
			r, err := sdb.LatestRun(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			pages, err := sdb.Pages(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			checks, err := sdb.Checks(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			checked := map[string]bool{}
			for _, c := range checks {
				checked[c.URL] = true
			}
			parsed, abs := 0, 0
			var bad []string
			for _, p := range pages {
				if p.Parsed {
					parsed++
				}
				for _, l := range p.Links {
					if h := strings.ToLower(strings.TrimSpace(l.RawHref)); !strings.HasPrefix(h, "http://") && !strings.HasPrefix(h, "https://") {
						continue
					}
					abs++
					if n, err := urls.NormalizeURL(l.Href); err != nil || !checked[n] {
						bad = append(bad, fmt.Sprintf("%q (target %q, %v)", l.RawHref, n, err))
					}
				}
			}
			wantPages, wantAbs := minPages, minAbs
			if raceEnabled && mode.name == "served site" {
				wantPages, wantAbs = 10, 300
			}
			if parsed < wantPages || abs < wantAbs {
				t.Fatalf("%d pages parsed, %d links with an absolute http(s) href: not the whole tree", parsed, abs)
			}
			if len(bad) > 0 {
				t.Errorf("%d of %d absolute links without a checked target, e.g. %s", len(bad), abs, strings.Join(bad[:min(len(bad), 5)], ", "))
			}
			const schemers = "https://schemers.org/Documents/Standards/R5RS/HTML/r5rs-Z-H-9.html"
			var verdict string
			if err := db.QueryRow(`SELECT c.verdict FROM checks c JOIN targets t ON t.id = c.target_id WHERE t.url = ?`, schemers).Scan(&verdict); err != nil {
				t.Fatalf("the schemers.org target: %v", err)
			}
			if verdict != "not-found" {
				t.Errorf("schemers.org verdict %q, want not-found (the offline answer)", verdict)
			}
			ot.mu.Lock()
			got := ot.seen["schemers.org"]
			ot.mu.Unlock()
			if len(got) != 1 || got[0] != "/Documents/Standards/R5RS/HTML/r5rs-Z-H-9.html" {
				t.Errorf("requests to schemers.org: %q, want the page without its fragment, once", got)
			}
		})
	}
}
