package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/maintain"
)

// TestFixes_NeverReplacesIdentifier: a page cites its own persistent
// identifier (rel="identifier", and a link to it), which redirects
// permanently to the page: linkrot fixes does not propose replacing the
// identifier with the location; a moved ordinary link is proposed, with
// the evidence it rests on.
func TestFixes_NeverReplacesIdentifier(t *testing.T) {
	var site *httptest.Server
	// The resolver of the identifier is another host (as doi.org is).
	resolver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/id/42" {
			http.Redirect(w, r, site.URL+"/paper", http.StatusMovedPermanently)
			return
		}
		http.NotFound(w, r)
	}))
	defer resolver.Close()
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><body><p><a href="/paper">The paper</a>.</p></body></html>`)
		case "/paper":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<html><head><link rel="identifier" href="%[2]s/id/42"></head><body>
<p>Cite this page as <a href="%[2]s/id/42">%[2]s/id/42</a>. See also <a href="%[1]s/old">the old page</a>.</p></body></html>`, site.URL, resolver.URL)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/new":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<html><body><p>new</p></body></html>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	dbPath := filepath.Join(t.TempDir(), "fixes.db")
	if code, out, stderr := run(t, "", "audit", site.URL+"/", "--db", dbPath, "--no-report", "--no-archives", "--fail-on", "none", "--allow-private"); code != exitOK {
		t.Fatalf("audit exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, _ := run(t, "", "fixes", "--db", dbPath)
	if code != exitOK {
		t.Fatalf("fixes exit %d", code)
	}
	if !strings.Contains(out, site.URL+"/old\n    → "+site.URL+"/new") || !strings.Contains(out, "evidence: the live check of run 1 saw a permanent redirect (301)") {
		t.Errorf("the moved link is not proposed with its evidence:\n%s", out)
	}
	if strings.Contains(out, "/id/42\n    → ") || !strings.Contains(out, "an identifier is never replaced") ||
		!strings.Contains(out, `why kept: the target is an identifier, declared rel="identifier" by `+site.URL+"/paper") {
		t.Errorf("the identifier is proposed for replacement or not explained:\n%s", out)
	}
	code, out, stderr := run(t, "", "fixes", "--db", dbPath, "--format", "json")
	var recs []maintain.Proposal
	if err := json.Unmarshal([]byte(out), &recs); err != nil || code != exitOK {
		t.Fatalf("json: %v (exit %d)", err, code)
	}
	if len(recs) != 1 || !strings.HasSuffix(recs[0].Target, "/old") || recs[0].Evidence == "" {
		t.Errorf("json fixes = %+v", recs)
	}
	if !strings.Contains(stderr, "not proposed: "+resolver.URL+"/id/42") {
		t.Errorf("stderr lacks the identifier note: %q", stderr)
	}
	code, out, _ = run(t, "", "fixes", "--db", dbPath, "--format", "unlinkr")
	if code != exitOK || strings.Contains(out, "/id/42") || !strings.Contains(out, "/old") {
		t.Errorf("unlinkr = %q", out)
	}
}
