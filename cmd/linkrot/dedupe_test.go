package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// TestAuditCommand_SharedTargetFetchedOnce: a URL linked from 100
// distinct pages (with and without fragments, relative spellings of the
// same URL) is one target, fetched once by linkrot audit, end to end.
func TestAuditCommand_SharedTargetFetchedOnce(t *testing.T) {
	const pages = 100
	var shared atomic.Int64
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/shared" {
			shared.Add(1)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!DOCTYPE html><title>Shared</title><main><p id="sec">A page many pages link to, with enough words to fingerprint.</p></main>`)
			return
		}
		http.NotFound(w, r) // the soft-404 probe
	}))
	defer ext.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			var b strings.Builder
			for i := range pages {
				fmt.Fprintf(&b, "<a href=\"/p/%d\">page %d</a>\n", i, i)
			}
			fmt.Fprint(w, b.String())
			return
		}
		// strconv, not Sscanf: a soft-404 probe /p/4xyz… must not be page 4.
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil || !strings.HasPrefix(r.URL.Path, "/p/") || i < 0 || i >= pages {
			http.NotFound(w, r)
			return
		}
		// The same target in several spellings: fragments are stripped,
		// the scheme is case-insensitive.
		href := ext.URL + "/shared"
		switch i % 3 {
		case 1:
			href += fmt.Sprintf("#sec-%d", i)
		case 2:
			href = strings.Replace(href, "http://", "HTTP://", 1) + "#sec"
		}
		fmt.Fprintf(w, `<p>Page %d links to <a href="%s">the shared page</a>.</p>`, i, href)
	}))
	defer site.Close()

	dbPath := filepath.Join(t.TempDir(), "shared.db")
	code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", dbPath, "--allow-private", "--no-archives", "--no-report", "--timeout", "5s")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if n := shared.Load(); n != 1 {
		t.Errorf("the shared URL was fetched %d times, want 1", n)
	}

	db := openDB(t, dbPath)
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	links, err := db.LinkRefs(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	linking := map[string]bool{}
	targets := map[int64]bool{}
	for _, l := range links {
		if strings.HasPrefix(strings.ToLower(l.Href), ext.URL+"/shared") {
			linking[l.PageURL] = true
			targets[l.TargetID] = true
		}
	}
	if len(linking) != pages || len(targets) != 1 {
		t.Fatalf("%d pages link to the shared URL through %d targets, want %d pages, 1 target", len(linking), len(targets), pages)
	}
	checks, err := db.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range checks {
		if strings.HasPrefix(c.URL, ext.URL+"/shared") {
			n++
			if c.Verdict != audit.VerdictOK || c.Attempts != 1 {
				t.Errorf("shared target: %s after %d attempts, want ok after 1", c.Verdict, c.Attempts)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d checks of the shared URL, want 1", n)
	}
}
