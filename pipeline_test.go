package linkrot_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// mustOpen opens a fresh store with a new run of seed.
func mustOpen(tb testing.TB, seed string) (*sqlstore.DB, *audit.Run) {
	tb.Helper()
	ctx := context.Background()
	store, err := engines.Open(ctx, filepath.Join(tb.TempDir(), "linkrot.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	run := &audit.Run{StartedAt: time.Now().UTC(), Mode: "site", Seeds: []string{seed}}
	if err := store.CreateRun(ctx, run); err != nil {
		tb.Fatal(err)
	}
	return store, run
}

// openJob builds run, already in store, from set (Open), without an
// archives stage unless set has one: the tests' runs as linkrot audit
// builds them.
func openJob(tb testing.TB, store *sqlstore.DB, run *audit.Run, set linkrot.Settings) *linkrot.Job {
	tb.Helper()
	if set.Input.Kind == "" {
		set.Input = linkrot.SiteInput(run.Seeds...)
	}
	job, err := linkrot.Open(context.Background(), store, run, set, linkrot.OpenOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(job.Close)
	return job
}

// TestAudit_OneBudgetPerHost: the crawl and the checks share one
// politeness scheduler, so a host with PerHost 1 never has two requests
// in flight, although pages are crawled while the targets the crawl does
// not fetch (beyond MaxDepth) are checked on the same host.
func TestAudit_OneBudgetPerHost(t *testing.T) {
	var inFlight, peak, total atomic.Int64
	hits := sync.Map{}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		total.Add(1)
		c, _ := hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		c.(*atomic.Int64).Add(1)
		time.Sleep(5 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch {
		case r.URL.Path == "/":
			for i := range 8 {
				fmt.Fprintf(w, `<a href="/p%d">p%d</a> `, i, i)
			}
		case len(r.URL.Path) > 2 && r.URL.Path[1] == 'p':
			// Depth 1 pages link to depth 2 URLs, which the crawl does not
			// fetch (MaxDepth 1): the checker does, on the same host.
			for i := range 4 {
				fmt.Fprintf(w, `<a href="/x%s-%d">x</a> `, r.URL.Path[2:], i)
			}
			fmt.Fprint(w, `<a href="/">home</a>`)
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		default:
			fmt.Fprintf(w, `<title>%s</title><p>A page deeper down.</p>`, r.URL.Path)
		}
	}))
	defer site.Close()
	store, run := mustOpen(t, site.URL+"/")
	set := linkrot.Settings{
		Input:    linkrot.SiteInput(run.Seeds...),
		PerHost:  1,
		Timeout:  10 * time.Second,
		Crawl:    linkrot.CrawlSettings{MaxDepth: 1},
		Check:    linkrot.CheckSettings{Workers: 8, NoSoft404: true},
		Archives: linkrot.ArchiveSettings{Off: true},
	}
	job, err := linkrot.Open(context.Background(), store, run, set, linkrot.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	sum, err := job.Audit(context.Background(), store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := peak.Load(); got != 1 {
		t.Errorf("peak requests in flight on the host = %d, want 1 (one budget for crawl and checks)", got)
	}
	// 1 home + 8 pages crawled, 32 deeper URLs checked live, robots.txt:
	// each URL once.
	if got := total.Load(); got != 1+8+32+1 {
		t.Errorf("%d requests, want %d", got, 1+8+32+1)
	}
	hits.Range(func(k, v any) bool {
		if n := v.(*atomic.Int64).Load(); n != 1 {
			t.Errorf("%s requested %d times", k, n)
		}
		return true
	})
	if sum.Checks.Targets != 1+8+32 || sum.Checks.FromCrawl != 9 || sum.Checks.Fetched != 32 {
		t.Errorf("counts %+v, want 41 targets: 9 from the crawl, 32 fetched", *sum.Checks)
	}
}

// TestAudit_Streams: checks start while the crawl is still running: a
// check of an external target completes before the crawl's last page is
// fetched.
func TestAudit_Streams(t *testing.T) {
	var lastPage, firstCheck atomic.Int64
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		firstCheck.CompareAndSwap(0, time.Now().UnixNano())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<p>external</p>`)
	}))
	defer ext.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var i int
		fmt.Sscanf(r.URL.Path, "/p%d", &i)
		if i < 20 {
			time.Sleep(10 * time.Millisecond)
			fmt.Fprintf(w, `<a href="/p%d">next</a> <a href="%s/e%d">ext</a>`, i+1, ext.URL, i)
			return
		}
		lastPage.Store(time.Now().UnixNano())
		fmt.Fprint(w, `<p>the end</p>`)
	}))
	defer site.Close()
	store, run := mustOpen(t, site.URL+"/p0")
	job := openJob(t, store, run, linkrot.Settings{
		PerHost: 4,
		// The external site is on loopback too.
		Check:    linkrot.CheckSettings{Workers: 8, NoSoft404: true, AllowPrivate: true},
		Archives: linkrot.ArchiveSettings{Off: true},
	})
	if _, err := job.Audit(context.Background(), store, nil); err != nil {
		t.Fatal(err)
	}
	if firstCheck.Load() == 0 || lastPage.Load() == 0 || firstCheck.Load() >= lastPage.Load() {
		t.Errorf("first external check at %d, last page at %d: the checks waited for the crawl", firstCheck.Load(), lastPage.Load())
	}
}
