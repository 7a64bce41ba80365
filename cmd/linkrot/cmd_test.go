package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/crawltest"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
)

var update = flag.Bool("update", false, "rewrite golden files")

// run executes the command in-process and returns exit code, stdout, stderr.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func openDB(t testing.TB, path string) *sqlstore.DB {
	t.Helper()
	db, err := engines.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func latest(t *testing.T, db *sqlstore.DB) (*audit.Run, []*audit.Page) {
	t.Helper()
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := db.Pages(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	return r, pages
}

func pageByPath(pages []*audit.Page, path string) *audit.Page {
	for _, p := range pages {
		if strings.HasSuffix(p.RequestURL, path) {
			return p
		}
	}
	return nil
}

func TestCrawlCommand_Site(t *testing.T) {
	site := crawltest.NewBasic(t)
	dbPath := filepath.Join(t.TempDir(), "linkrot.db")
	code, stdout, stderr := run(t, "", "crawl", site.URL+"/", "--db", dbPath)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "Crawled 10 pages") {
		t.Errorf("summary = %q", stdout)
	}
	db := openDB(t, dbPath)
	r, pages := latest(t, db)
	if r.Status != audit.RunComplete || r.Mode != "site" {
		t.Errorf("run = %+v", r)
	}
	if len(pages) != 10 {
		t.Fatalf("%d pages in the database, want 10", len(pages))
	}
	home := pageByPath(pages, "/")
	if home == nil || home.Title != "Basic fixture site" || len(home.Identifiers) != 1 || len(home.PWIDs) != 1 {
		t.Fatalf("home page from db = %+v", home)
	}
	var robust *audit.Link
	for i := range home.Links {
		if home.Links[i].Robust != nil {
			robust = &home.Links[i]
		}
	}
	if robust == nil || len(robust.Robust.Snapshots) != 2 || robust.Robust.Snapshots[1].Datetime.Format("2006-01-02T15:04:05Z07:00") != "2024-11-21T10:03:33Z" {
		t.Errorf("robust link from db = %+v", robust)
	}
	if p := pageByPath(pages, "/latin1.html"); p == nil || p.Charset != "windows-1252" || p.Links[0].Text != "Schöne Grüße – “quoted”" {
		t.Errorf("latin1 page from db = %+v", p)
	}
	if p := pageByPath(pages, "/redirect-me"); p == nil || len(p.Redirects) != 1 || p.Redirects[0].Status != 301 {
		t.Errorf("redirect page from db = %+v", p)
	}
	if p := pageByPath(pages, "/missing.html"); p == nil || p.Status != 404 {
		t.Errorf("404 page from db = %+v", p)
	}
	st, err := db.RunStats(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.RobustLinks != 2 || st.MsetLinks != 1 || st.Identifiers != 1 || st.PWIDs != 1 {
		t.Errorf("stats = %+v", st)
	}
	// Links to /a.html come from several pages; the target is stored once.
	targets, err := db.Targets(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tg := range targets {
		if strings.HasSuffix(tg.URL, "/a.html") {
			n++
			if tg.LinkCount != 3 { // from /, /b/ and /latin1.html
				t.Errorf("a.html link count = %d, want 3", tg.LinkCount)
			}
		}
	}
	if n != 1 {
		t.Errorf("a.html stored as %d targets, want 1", n)
	}
	if err := db.IntegrityCheck(context.Background()); err != nil {
		t.Error(err)
	}

	// A second run keeps the first one and reuses its targets.
	if code, _, stderr := run(t, "", "crawl", site.URL+"/", "--db", dbPath, "--max-pages", "2"); code != 0 {
		t.Fatalf("second run exit %d: %s", code, stderr)
	}
	r2, pages2 := latest(t, db)
	if r2.ID == r.ID || len(pages2) != 2 {
		t.Errorf("second run %d has %d pages", r2.ID, len(pages2))
	}
}

func TestCrawlCommand_Inputs(t *testing.T) {
	site := crawltest.NewBasic(t)
	tests := []struct {
		name      string
		stdin     string
		args      []string
		mode      string
		wantPages int
		wantPath  string
	}{
		{"URLList", site.URL + "/orphan.html\n# comment\n\n" + site.URL + "/b/\n", []string{"--urls", "-"}, "urls", 2, "/orphan.html"},
		{"Sitemap", "", []string{"--sitemap", site.URL + "/sitemap_index.xml"}, "sitemap", 11, "/orphan.html"},
		// Every document of the directory is a seed (orphan.html and
		// latin1.html too), and embedded resources are read from disk
		// (style.css, logo.png): 13 pages.
		{"Dir", "", []string{crawltest.Dir("basic"), "--base", "https://example.org/"}, "dir", 13, "/b/d.html"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "x.db")
			args := append([]string{"crawl", "--db", dbPath}, tt.args...)
			code, _, stderr := run(t, tt.stdin, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			r, pages := latest(t, openDB(t, dbPath))
			if r.Mode != tt.mode || len(pages) != tt.wantPages {
				t.Errorf("mode %q with %d pages, want %q with %d", r.Mode, len(pages), tt.mode, tt.wantPages)
			}
			if pageByPath(pages, tt.wantPath) == nil {
				t.Errorf("page %s missing", tt.wantPath)
			}
		})
	}
}

func TestCrawlCommand_Usage(t *testing.T) {
	for _, args := range [][]string{
		{"crawl"},
		{"crawl", "ftp://example.org/"},
		{"crawl", "http://x.invalid/", "--include", "("},
		{"crawl", "http://x.invalid/", "--max-body", "lots"},
		{"nope"},
	} {
		if code, _, _ := run(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestExtractCommand_Golden(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "extract")
	code, stdout, stderr := run(t, "", "extract", "--base", "https://blog.example.org/posts/robust.html",
		"--headers", filepath.Join(dir, "spec-examples.head"), filepath.Join(dir, "spec-examples.html"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden := filepath.Join(dir, "spec-examples.json")
	if *update {
		if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if stdout != string(want) {
		t.Errorf("extract output differs from %s (review, then go test ./cmd/linkrot -run Golden -update):\n%s", golden, stdout)
	}
	// The documented schema: every top-level and link key is present.
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"url", "base", "identifiers", "pwids", "diagnostics", "links"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	for _, l := range doc["links"].([]any) {
		for _, k := range []string{"element", "href", "text", "rel", "robust", "mset", "diagnostics"} {
			if _, ok := l.(map[string]any)[k]; !ok {
				t.Errorf("link key %q missing in %v", k, l)
			}
		}
	}
}

func TestCrawlCommand_Interrupted(t *testing.T) {
	// The site cancels the command's context when /b/ is requested: like
	// Ctrl-C in the middle of a crawl.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	files := http.FileServer(http.Dir(crawltest.Dir("basic")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/b/" {
			cancel()
		}
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dbPath := filepath.Join(t.TempDir(), "x.db")
	var out, errb bytes.Buffer
	code := Run(ctx, []string{"crawl", srv.URL + "/", "--db", dbPath, "--concurrency", "1"}, strings.NewReader(""), &out, &errb)
	if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("exit %d, stderr %q; want %d and a message", code, errb.String(), exitInterrupted)
	}
	r, pages := latest(t, openDB(t, dbPath))
	if r.Status != audit.RunInterrupted || r.FinishedAt.IsZero() {
		t.Errorf("run = %+v, want interrupted and finished", r)
	}
	if len(pages) == 0 || pageByPath(pages, "/") == nil {
		t.Errorf("pages crawled before the interruption were lost: %d", len(pages))
	}
}
