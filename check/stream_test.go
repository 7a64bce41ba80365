package check

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// stream sends targets one by one to Checker.Stream, as the pipeline does,
// and collects what it emits.
func stream(t *testing.T, c *Checker, targets []Target) map[string]audit.Check {
	t.Helper()
	in := make(chan Target)
	var mu sync.Mutex
	got := map[string]audit.Check{}
	errc := make(chan error, 1)
	go func() {
		errc <- c.Stream(context.Background(), in, func(ch audit.Check) {
			mu.Lock()
			defer mu.Unlock()
			if _, dup := got[ch.URL]; dup {
				t.Errorf("emitted twice: %s", ch.URL)
			}
			got[ch.URL] = ch
		})
	}()
	for _, tg := range targets {
		in <- tg
	}
	close(in)
	if err := <-errc; err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return got
}

// Stream runs on Run's dispatcher: a host that keeps answering 429 is
// given up, its targets are tried once more after the input is closed and
// everything else is done, then recorded rate-limited (never broken),
// with the same bounded number of requests as Run; other hosts are
// checked as usual, within the shared Scheduler.
func TestStream_RateLimitedHostGivenUp(t *testing.T) {
	limited := newServer(t)
	limited.handle("/", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	fine := newServer(t)
	fine.handle("/", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "text/plain") })
	const n = 20
	var targets []Target
	for i := range n {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/%d", limited.URL, i)}, Target{URL: fmt.Sprintf("%s/%d", fine.URL, i)})
	}
	o := testOptions()
	o.PerHost = 4
	o.Retries = 2
	o.MaxRetryWait = 50 * time.Millisecond
	o.Scheduler = politeness.New(politeness.Options{PerHost: 4, MaxRetryWait: o.MaxRetryWait})
	got := stream(t, New(o), append(targets, Target{URL: "mailto:x@example.com"}))
	if len(got) != 2*n+1 {
		t.Fatalf("%d results, want %d", len(got), 2*n+1)
	}
	if c := got["mailto:x@example.com"]; c.Verdict != audit.VerdictSkipped {
		t.Errorf("mailto: verdict %q, want skipped", c.Verdict)
	}
	attempts, notChecked := 0, 0
	for i := range n {
		c := got[fmt.Sprintf("%s/%d", limited.URL, i)]
		if c.Verdict != audit.VerdictRateLimited {
			t.Errorf("%s: verdict %q (%s), want rate-limited", c.URL, c.Verdict, c.Reason)
		}
		attempts += c.Attempts
		if strings.HasPrefix(c.Reason, "not checked: ") {
			notChecked++
		}
		if f := got[fmt.Sprintf("%s/%d", fine.URL, i)]; f.Verdict != audit.VerdictOK || f.Attempts != 1 {
			t.Errorf("%s: %q after %d attempts, want ok after 1", f.URL, f.Verdict, f.Attempts)
		}
	}
	reqs := int(limited.requests.Load())
	if attempts != reqs {
		t.Errorf("attempts recorded %d, requests served %d", attempts, reqs)
	}
	if maxReqs := 4 + 2 + politeness.DefaultGiveUpStreak + 1; reqs > maxReqs {
		t.Errorf("%d requests to the rate-limiting host, want at most %d", reqs, maxReqs)
	}
	if notChecked == 0 {
		t.Error("no target recorded as not checked: the host was never given up")
	}
	if st := o.Scheduler.State(politeness.Key(mustURL(t, limited.URL))); st.GivenUp == "" {
		t.Errorf("shared scheduler does not know the host was given up: %+v", st)
	}
}

// Stream keeps a host's concurrency within the Scheduler's limit while
// targets keep arriving.
func TestStream_PerHostLimit(t *testing.T) {
	var cc concurrency
	srv := newServer(t)
	srv.handle("/", func(w http.ResponseWriter, r *http.Request) {
		cc.enter()
		defer cc.exit()
		time.Sleep(10 * time.Millisecond)
		w.Header().Set("Content-Type", "text/plain")
	})
	var targets []Target
	for i := range 40 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/%d", srv.URL, i)})
	}
	o := testOptions()
	o.Workers = 16
	o.PerHost = 2
	o.Transport = &http.Transport{}
	got := stream(t, New(o), targets)
	for _, tg := range targets {
		if c := got[tg.URL]; c.Verdict != audit.VerdictOK {
			t.Errorf("%s: %q (%s)", tg.URL, c.Verdict, c.Reason)
		}
	}
	if p := cc.peak.Load(); p > 2 || p < 1 {
		t.Errorf("peak concurrency %d, want 1..2", p)
	}
}
