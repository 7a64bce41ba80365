package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/politeness"
)

// TestCrawl_SharedSchedulerBindsChecks: the crawl sets the site's
// robots.txt Crawl-delay on the shared Scheduler, so the checks of the
// same run keep to it too: one request at a time, 200ms apart.
func TestCrawl_SharedSchedulerBindsChecks(t *testing.T) {
	var (
		mu       sync.Mutex
		inFlight int
		peak     int
		starts   []time.Time
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nCrawl-delay: 0.2\n"))
			return
		}
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		starts = append(starts, time.Now())
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<p>page</p>`))
	}))
	defer srv.Close()
	sched := politeness.New(politeness.Options{PerHost: 8})
	if _, err := crawler.New(crawler.Options{PerHost: 8, Scheduler: sched}, &memSink{}).Crawl(context.Background(), []string{srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	starts = nil
	mu.Unlock()
	var targets []check.Target
	for i := range 4 {
		targets = append(targets, check.Target{URL: fmt.Sprintf("%s/c%d", srv.URL, i)})
	}
	chk := check.New(check.Options{AllowPrivate: true, Workers: 8, PerHost: 8, DisableSoft404: true, Scheduler: sched})
	if err := chk.Run(context.Background(), targets, func(c audit.Check) {
		if c.Verdict != audit.VerdictOK {
			t.Errorf("%s: %s", c.URL, c.Verdict)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if peak != 1 || len(starts) != 4 {
		t.Fatalf("%d check requests, %d at once; want 4, one at a time under the crawl's Crawl-delay", len(starts), peak)
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < 180*time.Millisecond {
			t.Errorf("check request %d came %v after the previous one; Crawl-delay asks for 200ms", i, gap)
		}
	}
}

// TestCrawl_429RetriedAfterPause: a page answered 429 with Retry-After is
// fetched again once the pause is over, and no request to the host starts
// inside it.
func TestCrawl_429RetriedAfterPause(t *testing.T) {
	var (
		mu       sync.Mutex
		until    time.Time
		inWindow int
		refused  bool
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if time.Now().Before(until) {
			inWindow++
		}
		if r.URL.Path == "/b" && !refused {
			refused = true
			until = time.Now().Add(time.Second)
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			w.Write([]byte(`<a href="/b">b</a> <a href="/c">c</a> <a href="/d">d</a>`))
		default:
			w.Write([]byte(`<p>` + r.URL.Path + `</p>`))
		}
	}))
	defer srv.Close()
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{PerHost: 1, IgnoreRobots: true}, sink).Crawl(context.Background(), []string{srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	if len(sink.pages) != 4 || !refused {
		t.Fatalf("%d pages (refused %v), want 4 with /b refused once", len(sink.pages), refused)
	}
	for _, p := range sink.pages {
		if p.Status != http.StatusOK {
			t.Errorf("%s: status %d, want 200 after the pause", p.URL, p.Status)
		}
	}
	if inWindow != 0 {
		t.Errorf("%d requests inside the Retry-After window", inWindow)
	}
}

// TestCrawl_TimeoutLeavesOutPause: the request timeout counts the time a
// request is on the network, not the time it waits for its host's pause:
// with a 2-second Retry-After and a 1-second timeout, the pages queued
// behind the pause are fetched after it, not failed as timeouts; a page
// that is slow on the network still times out.
func TestCrawl_TimeoutLeavesOutPause(t *testing.T) {
	var (
		mu      sync.Mutex
		refused bool
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Path == "/b" && !refused {
			refused = true
			mu.Unlock()
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		mu.Unlock()
		if r.URL.Path == "/slow" {
			time.Sleep(1500 * time.Millisecond)
		}
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			w.Write([]byte(`<a href="/b">b</a> <a href="/c">c</a> <a href="/d">d</a> <a href="/slow">slow</a>`))
		default:
			w.Write([]byte(`<p>` + r.URL.Path + `</p>`))
		}
	}))
	defer srv.Close()
	sink := &memSink{}
	start := time.Now()
	if _, err := crawler.New(crawler.Options{PerHost: 1, IgnoreRobots: true, Timeout: time.Second}, sink).Crawl(context.Background(), []string{srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	if len(sink.pages) != 5 || !refused {
		t.Fatalf("%d pages (refused %v), want 5 with /b refused once", len(sink.pages), refused)
	}
	for _, p := range sink.pages {
		slow := strings.HasSuffix(p.URL, "/slow")
		switch {
		case slow && !strings.Contains(p.FetchError, "timeout"):
			t.Errorf("%s: status %d, error %q; want a timeout (1.5 s on the network, timeout 1 s)", p.URL, p.Status, p.FetchError)
		case !slow && (p.Status != http.StatusOK || p.FetchError != ""):
			t.Errorf("%s: status %d, error %q; want 200 after the pause", p.URL, p.Status, p.FetchError)
		}
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("crawl took %v: the pause of 2 s was not kept", took)
	}
}
