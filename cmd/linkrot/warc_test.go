package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// wgetPath returns GNU wget's path; without it the test is skipped, or
// fails when LINKROT_REQUIRE_WGET=1 (CI installs Debian's wget).
func wgetPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("wget")
	if err != nil {
		if os.Getenv("LINKROT_REQUIRE_WGET") == "1" {
			t.Fatal("wget not found and LINKROT_REQUIRE_WGET=1 (CI installs Debian's wget)")
		}
		t.Skip("wget not installed")
	}
	return p
}

// TestAuditCommand_ArchiveWARCFromWget: a page is captured by GNU wget
// (--warc-file, a WARC writer no one here wrote), then changes;
// linkrot audit --archive-warc finds the capture as the memento of the
// link to it and measures the drift, with no network and no other
// archive asked.
func TestAuditCommand_ArchiveWARCFromWget(t *testing.T) {
	wget := wgetPath(t)
	var changed atomic.Bool
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path != "/article" {
			http.NotFound(w, r)
			return
		}
		if changed.Load() {
			fmt.Fprint(w, archPage(textCouncilB))
		} else {
			fmt.Fprint(w, archPage(textCouncilA))
		}
	}))
	defer ext.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>home</title></head><body><main><p>News of the day.</p>
<p><a href="%s/article">the council story</a></p></main></body></html>`, ext.URL)
	}))
	defer site.Close()

	dir := t.TempDir()
	warcBase := filepath.Join(dir, "crawl")
	cmd := exec.Command(wget, "--quiet", "--no-verbose", "--tries=1", "--timeout=10", "--no-proxy",
		"--warc-file="+warcBase, "--output-document="+filepath.Join(dir, "article.html"), ext.URL+"/article")
	cmd.Env = append(os.Environ(), "no_proxy=*", "http_proxy=", "https_proxy=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wget: %v\n%s", err, out)
	}
	warcFile := warcBase + ".warc.gz"
	if _, err := os.Stat(warcFile); err != nil {
		t.Fatalf("wget wrote no WARC: %v", err)
	}
	changed.Store(true) // the page has changed since the capture

	dbPath := filepath.Join(dir, "audit.db")
	code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", dbPath, "--timeout", "5s", "--no-report",
		"--archive-warc", warcFile, "--fail-on", "none", "--allow-private") // the article is on another loopback host
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	if strings.Contains(stderr, "WARC record not read") {
		t.Errorf("a record of wget's WARC was not read:\n%s", stderr)
	}
	if !strings.Contains(stdout, "1 with a representative memento; 0 lookups failed") {
		t.Errorf("summary does not show the memento:\n%s", stdout)
	}
	db := openDB(t, dbPath)
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := db.Mementos(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var found *audit.Memento
	for i := range ms {
		if ms[i].Archive == "warc" && ms[i].Status == audit.LookupFound {
			found = &ms[i]
		}
	}
	if found == nil || !strings.HasSuffix(found.URL, "/"+ext.URL+"/article") || !found.Representative {
		t.Fatalf("mementos = %+v, want the wget capture of %s/article", ms, ext.URL)
	}
	drifts, err := db.Drifts(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var d *audit.Drift
	for i := range drifts {
		if drifts[i].Kind == "memento" {
			d = &drifts[i]
		}
	}
	if d == nil {
		fails, _ := db.DriftFailures(ctx, r.ID)
		t.Fatalf("no memento drift measured; failures: %+v", fails)
	}
	if d.Band != audit.BandOffTopic && d.Band != audit.BandMajor {
		t.Errorf("drift band = %s (cosine %.2f), want major or off-topic: the story changed", d.Band, d.Cosine)
	}
	if d.ReferenceNote != "raw" || !strings.Contains(d.ReferenceURL, "id_/") {
		t.Errorf("drift reference %s (%s), want the raw capture", d.ReferenceURL, d.ReferenceNote)
	}
	if !strings.Contains(d.ExcerptReference, "approved") && !strings.Contains(d.ExcerptReference, "budget") {
		t.Errorf("reference excerpt %q is not the captured text", d.ExcerptReference)
	}
	// The index was built next to the database, and is reused.
	idx, _ := filepath.Glob(dbPath + ".warc-index/*.cdxj")
	if len(idx) != 1 {
		t.Errorf("index files = %v, want one next to the database", idx)
	}
}
