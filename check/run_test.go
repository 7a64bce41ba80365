package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

func TestRun_PerHostLimit(t *testing.T) {
	const perHost = 3
	type host struct {
		s   *server
		cur concurrency
	}
	hosts := make([]*host, 4)
	var targets []Target
	for i := range hosts {
		h := &host{s: newServer(t)}
		hosts[i] = h
		h.s.handle("/", func(w http.ResponseWriter, r *http.Request) {
			h.cur.enter()
			defer h.cur.exit()
			time.Sleep(5 * time.Millisecond)
			w.Header().Set("Content-Type", "text/html")
			// Unknown URLs are soft 404s, so every directory is probed:
			// probes count against the limit too.
			w.Write([]byte(layout("<p>" + r.URL.Path + "</p>")))
		})
		for j := range 30 {
			targets = append(targets, Target{URL: fmt.Sprintf("%s/d%d/p%d", h.s.URL, j%5, j)})
		}
	}
	o := testOptions()
	o.Workers = 32
	o.PerHost = perHost
	// A transport without its own per-host connection cap: the scheduler
	// alone must keep the limit.
	o.Transport = &http.Transport{}
	got := collect(t, New(o), targets)
	if len(got) != len(targets) {
		t.Fatalf("%d results, want %d", len(got), len(targets))
	}
	for i, h := range hosts {
		if p := h.cur.peak.Load(); p > perHost || p < 2 {
			t.Errorf("host %d: peak concurrency %d, want 2..%d", i, p, perHost)
		}
		if n := h.s.requests.Load(); n != 30+5 {
			t.Errorf("host %d: %d requests, want 35 (30 targets, 5 probes)", i, n)
		}
	}
}

func TestRun_Duplicates(t *testing.T) {
	s := newServer(t)
	var hits atomic.Int64
	s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
	})
	targets := make([]Target, 100)
	for i := range targets {
		targets[i] = Target{ID: int64(i), URL: s.URL + "/t"}
	}
	var n atomic.Int64
	err := New(testOptions()).Run(context.Background(), targets, func(audit.Check) { n.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 1 || n.Load() != 1 {
		t.Errorf("fetched %d times, emitted %d times; want 1, 1", hits.Load(), n.Load())
	}
}

func TestRun_SkippedAndMixed(t *testing.T) {
	s := newServer(t)
	s.handle("/ok", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "text/plain") })
	targets := []Target{
		{ID: 1, URL: "mailto:a@b.c"},
		{ID: 2, URL: s.URL + "/ok"},
		{ID: 3, URL: s.URL + "/missing"},
		{ID: 4, URL: "javascript:void(0)"},
	}
	got := collect(t, New(testOptions()), targets)
	want := map[string]audit.Verdict{
		"mailto:a@b.c": audit.VerdictSkipped, s.URL + "/ok": audit.VerdictOK,
		s.URL + "/missing": audit.VerdictNotFound, "javascript:void(0)": audit.VerdictSkipped,
	}
	for u, v := range want {
		if got[u].Verdict != v {
			t.Errorf("%s: %q, want %q", u, got[u].Verdict, v)
		}
	}
}

func TestRun_Conditional(t *testing.T) {
	s := newServer(t)
	var sawINM, sawIMS atomic.Value
	s.handle("/t", func(w http.ResponseWriter, r *http.Request) {
		sawINM.Store(r.Header.Get("If-None-Match"))
		sawIMS.Store(r.Header.Get("If-Modified-Since"))
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v2"`)
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	})
	u := s.URL + "/t"
	prev := &audit.Check{
		RunID: 7, TargetID: 3, URL: u, Verdict: audit.VerdictOK, Status: 200, FinalURL: u,
		ETag: `"v1"`, LastModified: "Wed, 01 Jan 2025 00:00:00 GMT", SHA256: "abc", SimHash: 42, Words: 9,
		Soft404: &audit.Soft404Evidence{ProbeURL: u + "x", ProbeStatus: 404},
	}
	c := New(testOptions())

	got := c.CheckOne(context.Background(), Target{ID: 3, URL: u, Previous: prev})
	if sawINM.Load() != `"v1"` || sawIMS.Load() != prev.LastModified {
		t.Errorf("server saw If-None-Match %q If-Modified-Since %q", sawINM.Load(), sawIMS.Load())
	}
	if !got.Reused || got.ReusedFrom != 7 || got.Verdict != audit.VerdictOK || got.SHA256 != "abc" || got.SimHash != 42 ||
		got.Soft404 == nil || got.Soft404.ProbeStatus != 404 || got.RunID != 0 || got.Attempts != 1 {
		t.Errorf("304: got %+v, want the previous check reused from run 7", got)
	}
	if got.Soft404 == prev.Soft404 {
		t.Errorf("evidence shared with the previous check, not copied")
	}

	// No validators for a transient verdict, nor when anchors are wanted.
	for _, tgt := range []Target{
		{URL: u, Previous: &audit.Check{RunID: 7, Verdict: audit.VerdictTimeout, ETag: `"v1"`}},
		{URL: u, Previous: prev, WantAnchors: true},
	} {
		got := c.CheckOne(context.Background(), tgt)
		if sawINM.Load() != "" || got.Reused || got.Verdict != audit.VerdictOK || got.ETag != `"v2"` {
			t.Errorf("sent If-None-Match %q, reused %v, verdict %q etag %q", sawINM.Load(), got.Reused, got.Verdict, got.ETag)
		}
	}
}

func TestRun_CancelNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		var servers []*server
		var targets []Target
		for i := range 4 {
			s := newServer(t)
			servers = append(servers, s)
			s.handle("/fast", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "text/plain") })
			s.handle("/", func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
			})
			targets = append(targets, Target{URL: s.URL + "/fast"})
			for j := range 50 {
				targets = append(targets, Target{URL: fmt.Sprintf("%s/slow/%d-%d", s.URL, i, j)})
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		var emitted atomic.Int64
		done := make(chan error)
		go func() {
			done <- New(testOptions()).Run(ctx, targets, func(audit.Check) {
				emitted.Add(1)
			})
		}()
		time.Sleep(200 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %v, want context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after cancellation")
		}
		if n := emitted.Load(); n != 4 {
			t.Errorf("%d results emitted, want the 4 fast ones", n)
		}
		for _, s := range servers {
			s.Close()
		}
	}()
	// Give exiting goroutines (closed connections, servers) a moment.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

func TestRun_DNSCache(t *testing.T) {
	s := newServer(t)
	s.handle("/", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "text/plain") })
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]
	res := &countingResolver{Resolver: fakeResolver{"site.test": {"127.0.0.1"}}}
	o := testOptions()
	o.Resolver = res
	var targets []Target
	for i := range 40 {
		targets = append(targets, Target{URL: fmt.Sprintf("http://site.test:%s/%d", port, i)})
	}
	// Also the literal address: no lookup at all.
	targets = append(targets, Target{URL: s.URL + "/literal"})
	got := collect(t, New(o), targets)
	for u, c := range got {
		if c.Verdict != audit.VerdictOK {
			t.Errorf("%s: %q %s", u, c.Verdict, c.Reason)
		}
	}
	if n := res.n.Load(); n != 1 {
		t.Errorf("%d lookups, want 1", n)
	}
}

func TestRun_HostDelayHoldsNoWorker(t *testing.T) {
	var mu sync.Mutex
	var order []string
	var starts []time.Time
	mk := func(name string) *server {
		s := newServer(t)
		s.handle("/", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			order = append(order, name)
			if name == "A" {
				starts = append(starts, time.Now())
			}
			mu.Unlock()
			w.Header().Set("Content-Type", "text/plain")
		})
		return s
	}
	a, b := mk("A"), mk("B")
	var targets []Target
	for i := range 3 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/%d", a.URL, i)})
	}
	for i := range 3 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/%d", b.URL, i)})
	}
	o := testOptions()
	o.Workers = 1
	o.HostDelay = 60 * time.Millisecond
	collect(t, New(o), targets)
	// One worker: had it slept through A's delay, A's targets would come
	// first in a row.
	if got := strings.Join(order, ""); got != "ABABAB" {
		t.Errorf("request order %s, want ABABAB", got)
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < o.HostDelay-5*time.Millisecond {
			t.Errorf("A's requests %d and %d %v apart, want at least %v", i-1, i, d, o.HostDelay)
		}
	}
}

// TestRun_RateLimitedHostPaused: after 429s without Retry-After the host
// is paused (DefaultPause, capped at MaxRetryWait) and its concurrency cut;
// no request is sent inside a pause (beyond stampGrace, see windowServer).
// (Replaces the earlier "one at a time, RetryBase apart, for the rest of
// the run" rule: issue 11.)
func TestRun_RateLimitedHostPaused(t *testing.T) {
	s := newServer(t)
	s.handle("/", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		w.WriteHeader(http.StatusTooManyRequests)
	})
	var targets []Target
	for i := range 12 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/%d", s.URL, i)})
	}
	o := testOptions()
	o.Retries = -1
	o.PerHost = 4
	o.MaxRetryWait = 100 * time.Millisecond
	rec := &pauseRecorder{next: &http.Transport{}, pause: o.MaxRetryWait}
	o.Transport = rec
	got := collect(t, New(o), targets)
	for u, c := range got {
		if c.Verdict != audit.VerdictRateLimited {
			t.Errorf("%s: %q", u, c.Verdict)
		}
	}
	// One request per target, and one more try at the end of the run
	// once the host was given up.
	if n := len(rec.starts); n > len(targets)+1 || n < 5 {
		t.Errorf("%d requests for %d targets without retries", n, len(targets))
	}
	for _, st := range rec.starts {
		for _, rcv := range rec.refusals {
			if st.After(rcv.Add(stampGrace)) && st.Before(rcv.Add(o.MaxRetryWait)) {
				t.Errorf("a request sent %v after a 429 was received, inside the %v pause", st.Sub(rcv), o.MaxRetryWait)
			}
		}
	}
}

// pauseRecorder records when each request is sent and each 429 received.
type pauseRecorder struct {
	next     http.RoundTripper
	pause    time.Duration
	mu       sync.Mutex
	starts   []time.Time
	refusals []time.Time
}

func (p *pauseRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	p.starts = append(p.starts, time.Now())
	p.mu.Unlock()
	resp, err := p.next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		p.mu.Lock()
		p.refusals = append(p.refusals, time.Now())
		p.mu.Unlock()
	}
	return resp, err
}

func TestCheckOne_RetryAfter(t *testing.T) {
	s := newServer(t)
	var mu sync.Mutex
	var times []time.Time
	s.handle("/soon", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		n := len(times)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
	})
	s.handle("/later", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	o := testOptions()
	o.MaxRetryWait = 2 * time.Second
	c := New(o)
	start := time.Now()
	got := c.CheckOne(context.Background(), Target{URL: s.URL + "/soon"})
	// Bounded time: the 1s Retry-After, not more (and under the cap).
	if d := time.Since(start); d > o.MaxRetryWait {
		t.Errorf("took %v, want about the 1s Retry-After, under MaxRetryWait %v", d, o.MaxRetryWait)
	}
	if got.Verdict != audit.VerdictOK || len(times) != 2 {
		t.Fatalf("verdict %q after %d requests, want ok after 2", got.Verdict, len(times))
	}
	if d := times[1].Sub(times[0]); d < 900*time.Millisecond {
		t.Errorf("retried after %v, want Retry-After's 1s honoured", d)
	}
	start = time.Now()
	got = c.CheckOne(context.Background(), Target{URL: s.URL + "/later"})
	// A Retry-After beyond the cap is not waited for at all.
	if d := time.Since(start); d > o.MaxRetryWait/2 {
		t.Errorf("took %v with Retry-After 3600 beyond the %v cap, want no wait", d, o.MaxRetryWait)
	}
	if got.Verdict != audit.VerdictRateLimited || got.Attempts != 1 || !strings.Contains(got.Reason, "exceeds") {
		t.Errorf("verdict %q attempts %d reason %q; want rate-limited at once, Retry-After beyond the cap", got.Verdict, got.Attempts, got.Reason)
	}
}
