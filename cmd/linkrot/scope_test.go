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
	"time"

	"github.com/linkrot/linkrot/audit"
)

// checksByURL returns the latest run's checks by URL.
func checksByURL(t *testing.T, dbPath string) map[string]audit.Check {
	t.Helper()
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
	out := map[string]audit.Check{}
	for _, c := range checks {
		out[c.URL] = c
	}
	return out
}

// TestAudit_CrawlTraps: linkrot audit of a site with a calendar, a session
// id in every link and recursing relative links ends with the default
// guards, says so in the terminal summary, stores the traps and reports
// them in the machine outputs.
func TestAudit_CrawlTraps(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0\n")
		case p == "/":
			fmt.Fprint(w, `<title>home</title><a href="/calendar?m=0">calendar</a> <a href="/shop?sid=0123456789abcdef0123456789abcdef">shop</a> <a href="/more/">more</a>`)
		case p == "/calendar":
			var m int
			fmt.Sscan(r.URL.Query().Get("m"), &m)
			fmt.Fprintf(w, `<title>month %d</title><a href="/calendar?m=%d">next</a>`, m, m+1)
		case p == "/shop":
			fmt.Fprintf(w, `<title>shop</title><a href="/shop?sid=%032x">again</a>`, time.Now().UnixNano())
		case strings.HasPrefix(p, "/more/"):
			fmt.Fprint(w, `<title>more</title><a href="more/">more</a>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	dbPath := filepath.Join(t.TempDir(), "traps.db")
	code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", dbPath, "--no-archives", "--no-report", "--fail-on", "none",
		"--retries", "0", "--no-soft404", "--max-query-variants", "20")
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "Crawl traps: 3 found") || !strings.Contains(stdout, "query-variants") {
		t.Errorf("summary lacks the crawl traps:\n%s", stdout)
	}
	db := openDB(t, dbPath)
	r, err := db.LatestRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	traps, err := db.CrawlTraps(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[audit.TrapKind]audit.CrawlTrap{}
	for _, tr := range traps {
		kinds[tr.Kind] = tr
	}
	if tr := kinds[audit.TrapQueryVariants]; tr.Pattern != site.URL+"/calendar?…" || tr.Limit != 20 || tr.Cut < 1 {
		t.Errorf("calendar trap = %+v", tr)
	}
	if tr := kinds[audit.TrapSessionID]; tr.Cut < 1 || tr.PageURL == "" {
		t.Errorf("session trap = %+v", tr)
	}
	if tr := kinds[audit.TrapRepeatedSegments]; tr.Pattern != site.URL+"/(more/){3,}" {
		t.Errorf("recursion trap = %+v", tr)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := run(t, "", "report", "--db", dbPath, "--format", "json", "--out", out); code != exitOK {
		t.Fatalf("report exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"crawl_traps"`) || !strings.Contains(string(b), `"kind": "crawl-trap"`) {
		t.Errorf("json report lacks crawl_traps")
	}
}
