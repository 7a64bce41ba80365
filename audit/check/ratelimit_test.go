package check

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// TestRun_RateLimitedHostGivenUp: a host that answers 429 to everything
// costs a bounded number of requests and a bounded time, whatever the
// number of its targets: after a few 429s in a row it is given up and its
// remaining targets are recorded rate-limited without a request. Other
// hosts are not affected.
func TestRun_RateLimitedHostGivenUp(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		maxReqs    func(o Options) int
	}{
		// Backoff and 429s in a row: the first wave, then at most
		// giveUpAfter429s counted answers plus the retries in flight.
		{"Always429", "", func(o Options) int { return o.PerHost * (o.Retries + 1) }},
		// A Retry-After beyond --max-retry-wait gives the host up at once:
		// only the first wave is sent.
		{"RetryAfterBeyondCap", "3600", func(o Options) int { return o.PerHost }},
		// A Retry-After within the cap is honoured, then 429s in a row.
		{"RetryAfterWithinCap", "0", func(o Options) int { return o.PerHost * (o.Retries + 1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limited := newServer(t)
			limited.handle("/", func(w http.ResponseWriter, r *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(http.StatusTooManyRequests)
			})
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
			o.RetryBase = 5 * time.Millisecond
			o.MaxRetryWait = 50 * time.Millisecond
			start := time.Now()
			got := collect(t, New(o), targets)
			elapsed := time.Since(start)

			attempts, notFetched := 0, 0
			for i := range n {
				c := got[fmt.Sprintf("%s/%d", limited.URL, i)]
				if c.Verdict != audit.VerdictRateLimited {
					t.Errorf("%s: verdict %q, want rate-limited", c.URL, c.Verdict)
				}
				attempts += c.Attempts
				if c.Attempts == 0 {
					notFetched++
					if !strings.HasPrefix(c.Reason, "not fetched: ") || !strings.Contains(c.Reason, "given up") {
						t.Errorf("%s: reason %q", c.URL, c.Reason)
					}
				}
				if f := got[fmt.Sprintf("%s/%d", fine.URL, i)]; f.Verdict != audit.VerdictOK || f.Attempts != 1 {
					t.Errorf("%s: %q after %d attempts, want ok after 1", f.URL, f.Verdict, f.Attempts)
				}
			}
			reqs := int(limited.requests.Load())
			if attempts != reqs {
				t.Errorf("attempts recorded %d, requests served %d", attempts, reqs)
			}
			if max := tt.maxReqs(o); reqs > max {
				t.Errorf("%d requests to the rate-limiting host, want at most %d (not %d: one per target and retry)", reqs, max, n*(o.Retries+1))
			}
			if notFetched < n-tt.maxReqs(o) {
				t.Errorf("%d targets not fetched, want at least %d", notFetched, n-tt.maxReqs(o))
			}
			// Time: a few waits of at most MaxRetryWait each (the first
			// wave's retries, the streak), independent of n; without the
			// give-up every target costs about one MaxRetryWait.
			if bound := time.Duration(4*(o.Retries+1)) * o.MaxRetryWait; elapsed > bound {
				t.Errorf("took %v, want under %v", elapsed, bound)
			}
		})
	}
}

// TestHostTable_GiveUp: the streak counts 429s to requests made after the
// host was slowed, any other answer breaks it, and a host slowed to the
// cap is given up at the next 429.
func TestHostTable_GiveUp(t *testing.T) {
	o := Options{PerHost: 4, RetryBase: 10 * time.Millisecond, MaxRetryWait: time.Second}
	before := time.Now()
	t.Run("Streak", func(t *testing.T) {
		h := newHostTable(&o)
		h.slowDown("a:80", 0, before)
		for range 3 { // the rest of the first wave
			h.slowDown("a:80", 0, before)
		}
		if _, ok := h.givenUp("a:80"); ok {
			t.Fatal("given up after one wave")
		}
		if limit, delay := h.policy("a:80"); limit != 1 || delay != o.RetryBase {
			t.Errorf("policy %d, %v; want 1, %v (one wave doubles nothing)", limit, delay, o.RetryBase)
		}
		h.slowDown("a:80", 0, time.Now())
		h.slowDown("a:80", 0, time.Now())
		h.answered("a:80", time.Now()) // a 200 in between
		h.slowDown("a:80", 0, time.Now())
		h.slowDown("a:80", 0, time.Now())
		if _, ok := h.givenUp("a:80"); ok {
			t.Fatal("given up although the streak was broken")
		}
		h.slowDown("a:80", 0, time.Now())
		why, ok := h.givenUp("a:80")
		if !ok || !strings.Contains(why, "a:80") {
			t.Fatalf("not given up after %d 429s in a row (%q)", giveUpAfter429s, why)
		}
		if limit, delay := h.policy("a:80"); limit != o.PerHost || delay != 0 {
			t.Errorf("policy of a host given up: %d, %v; want %d, 0 (its targets are not fetched)", limit, delay, o.PerHost)
		}
		if _, ok := h.givenUp("b:80"); ok {
			t.Error("another host given up")
		}
	})
	t.Run("AtCap", func(t *testing.T) {
		h := newHostTable(&o)
		h.slowDown("a:80", o.MaxRetryWait, before) // Retry-After equal to the cap
		if _, ok := h.givenUp("a:80"); ok {
			t.Fatal("given up at the first 429")
		}
		h.slowDown("a:80", 0, time.Now())
		if _, ok := h.givenUp("a:80"); !ok {
			t.Fatal("a host slowed to the cap that answers 429 again is not given up")
		}
	})
	t.Run("RetryAfterBeyondCap", func(t *testing.T) {
		h := newHostTable(&o)
		h.slowDown("a:80", time.Hour, before)
		if _, ok := h.givenUp("a:80"); !ok {
			t.Fatal("Retry-After beyond the cap: not given up")
		}
	})
}
