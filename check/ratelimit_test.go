package check

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// TestRun_RateLimitedHostGivenUp: a host that answers 429 to everything
// costs a bounded number of requests and a bounded time, whatever the
// number of its targets: after GiveUpStreak refusals in a row (one per
// wave) it is given up, its remaining targets are tried once more at the
// end of the run and then recorded rate-limited ("not checked"). Other
// hosts are not affected.
//
// This replaces the earlier rule (slowed to one request at a time for the
// rest of the run, given up after three 429s): see issue 11.
func TestRun_RateLimitedHostGivenUp(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		maxReqs    int
	}{
		// Waves while the limit halves (4, 2, 1, ...), one counted
		// refusal each, up to the streak; then one try at the end.
		{"Always429", "", 4 + 2 + politeness.DefaultGiveUpStreak + 1},
		// A Retry-After beyond MaxRetryWait makes its URL rate-limited
		// with its retry time and pauses the host for MaxRetryWait; the
		// one request after each of two pauses is refused the same way:
		// the limit covers the host, which is given up, and the
		// end-of-run try would fall inside the window: the first wave and
		// those two requests are sent.
		{"RetryAfterBeyondCap", "3600", 4 + 2},
		{"RetryAfterWithinCap", "0", 4 + 2 + politeness.DefaultGiveUpStreak + 1},
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
			o.MaxRetryWait = 50 * time.Millisecond
			start := time.Now()
			got := collect(t, New(o), targets)
			elapsed := time.Since(start)

			attempts, notChecked := 0, 0
			for i := range n {
				c := got[fmt.Sprintf("%s/%d", limited.URL, i)]
				if c.Verdict != audit.VerdictRateLimited || c.Verdict.Broken() {
					t.Errorf("%s: verdict %q, want rate-limited", c.URL, c.Verdict)
				}
				attempts += c.Attempts
				if strings.HasPrefix(c.Reason, "not checked: ") {
					notChecked++
					if !strings.Contains(c.Reason, "given up") {
						t.Errorf("%s: reason %q", c.URL, c.Reason)
					}
				} else if tt.retryAfter == "3600" && !strings.Contains(c.Reason, "retry after ") {
					t.Errorf("%s: refused for an hour, reason %q lacks the retry time", c.URL, c.Reason)
				}
				if f := got[fmt.Sprintf("%s/%d", fine.URL, i)]; f.Verdict != audit.VerdictOK || f.Attempts != 1 {
					t.Errorf("%s: %q after %d attempts, want ok after 1", f.URL, f.Verdict, f.Attempts)
				}
			}
			reqs := int(limited.requests.Load())
			if attempts != reqs {
				t.Errorf("attempts recorded %d, requests served %d", attempts, reqs)
			}
			if reqs > tt.maxReqs {
				t.Errorf("%d requests to the rate-limiting host, want at most %d (not %d: one per target and retry)", reqs, tt.maxReqs, n*(o.Retries+1))
			}
			if notChecked < n-tt.maxReqs {
				t.Errorf("%d targets not checked, want at least %d", notChecked, n-tt.maxReqs)
			}
			// Time: a pause of at most MaxRetryWait per counted refusal,
			// independent of n (with generous slack for a loaded machine;
			// the request count above is the sharp bound).
			if bound := time.Duration(3*politeness.DefaultGiveUpStreak)*o.MaxRetryWait + 3*time.Second; elapsed > bound {
				t.Errorf("took %v, want under %v", elapsed, bound)
			}
		})
	}
}

// windowServer is a host enforcing a token bucket (rate a second, burst):
// beyond it, 429 with Retry-After (whole seconds until a token is back),
// and that window covers every further request. It counts the requests
// that arrive inside an open window although the client sent them after
// it had received the 429 that opened it (stampTransport says when each
// request was sent and when each 429 was received): what a polite client
// must never do. Requests already on the wire are not the client's fault,
// nor are those decided before the refusal reached the scheduler, which
// can take a few milliseconds on a loaded machine: a request sent more
// than stampGrace after the 429 was received counts (a client that sleeps
// on its own and ignores the pause is caught all the same: the windows
// last a second).
type windowServer struct {
	*server
	rate, burst float64

	mu         sync.Mutex
	tokens     float64
	at         time.Time
	windows    []*window
	violations atomic.Int64
	refused    atomic.Int64
	ok         atomic.Int64
}

type window struct {
	end      time.Time
	received atomic.Int64 // unix nanos the client got the 429 (0: not yet)
}

func newWindowServer(t testing.TB, rate, burst float64) *windowServer {
	ws := &windowServer{server: newServer(t), rate: rate, burst: burst, tokens: burst, at: time.Now()}
	ws.handle("/", ws.serve)
	return ws
}

func (ws *windowServer) serve(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	sent, _ := strconv.ParseInt(r.Header.Get("X-Test-Sent"), 10, 64)
	ws.mu.Lock()
	live := ws.windows[:0]
	for _, win := range ws.windows {
		if now.Before(win.end) {
			live = append(live, win)
			if rcv := win.received.Load(); rcv != 0 && sent > rcv+int64(stampGrace) {
				ws.violations.Add(1)
			}
		}
	}
	ws.windows = live
	ws.tokens = math.Min(ws.burst, ws.tokens+now.Sub(ws.at).Seconds()*ws.rate)
	ws.at = now
	if ws.tokens >= 1 {
		ws.tokens--
		ws.mu.Unlock()
		ws.ok.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		return
	}
	wait := time.Duration((1 - ws.tokens) / ws.rate * float64(time.Second))
	secs := int64(math.Ceil(wait.Seconds()))
	win := &window{end: now.Add(time.Duration(secs) * time.Second)}
	ws.windows = append(ws.windows, win)
	id := registerWindow(win)
	ws.mu.Unlock()
	ws.refused.Add(1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	w.Header().Set("X-Test-Window", strconv.FormatInt(id, 10))
	w.WriteHeader(http.StatusTooManyRequests)
}

// stampGrace is how long after a 429 was received a request may still be
// sent, having been decided before (see windowServer).
const stampGrace = 25 * time.Millisecond

var (
	windowsMu sync.Mutex
	windowsBy = map[int64]*window{}
	windowSeq int64
)

func registerWindow(w *window) int64 {
	windowsMu.Lock()
	defer windowsMu.Unlock()
	windowSeq++
	windowsBy[windowSeq] = w
	return windowSeq
}

// stampTransport stamps each request with the time it is sent and tells
// the windowServer when its 429s arrive.
type stampTransport struct{ next http.RoundTripper }

func (s stampTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Sent", strconv.FormatInt(time.Now().UnixNano(), 10))
	resp, err := s.next.RoundTrip(r)
	if err == nil {
		if id, _ := strconv.ParseInt(resp.Header.Get("X-Test-Window"), 10, 64); id != 0 {
			windowsMu.Lock()
			w := windowsBy[id]
			windowsMu.Unlock()
			if w != nil {
				w.received.CompareAndSwap(0, time.Now().UnixNano())
			}
		}
	}
	return resp, err
}

func loopbackTransport(perHost int) http.RoundTripper {
	return stampTransport{&http.Transport{MaxConnsPerHost: perHost, MaxIdleConnsPerHost: perHost}}
}

// TestRun_RetryAfterWindowNeverViolated: under high concurrency, no
// request to a host that answered 429 with Retry-After is sent inside
// that window, every target ends ok (the refusals are retried after the
// pause), and the other host is not slowed.
func TestRun_RetryAfterWindowNeverViolated(t *testing.T) {
	ws := newWindowServer(t, 40, 10)
	fast := newServer(t)
	fast.handle("/", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "text/plain") })
	const n = 60
	var targets []Target
	for i := range n {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/%d", ws.URL, i)})
	}
	for i := range 200 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/%d", fast.URL, i)})
	}
	o := testOptions()
	o.Workers = 64
	o.PerHost = 32
	o.Retries = 10
	o.MaxRetryWait = 5 * time.Second
	o.Transport = loopbackTransport(o.PerHost)
	got := collect(t, New(o), targets)
	for u, c := range got {
		if c.Verdict != audit.VerdictOK {
			t.Errorf("%s: %q (%s) after %d attempts", u, c.Verdict, c.Reason, c.Attempts)
		}
	}
	if v := ws.violations.Load(); v != 0 {
		t.Errorf("%d requests sent inside a Retry-After window", v)
	}
	if ws.refused.Load() == 0 {
		t.Error("the server never refused: the test tests nothing")
	}
	t.Logf("limited host: %d ok, %d refused", ws.ok.Load(), ws.refused.Load())
}

// TestRun_FivePercent429Once: on a host where 5% of the URLs answer 429
// (Retry-After: 1) to their first request only, every target ends ok and
// none is called broken.
func TestRun_FivePercent429Once(t *testing.T) {
	s := newServer(t)
	var seen sync.Map
	s.handle("/", func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if i%20 == 7 {
			first, loaded := seen.LoadOrStore(i, time.Now())
			if !loaded || time.Since(first.(time.Time)) < time.Second {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain")
	})
	var targets []Target
	for i := range 400 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/%d", s.URL, i)})
	}
	o := testOptions()
	o.Workers = 64
	o.PerHost = 32
	o.MaxRetryWait = 5 * time.Second
	start := time.Now()
	got := collect(t, New(o), targets)
	for u, c := range got {
		if c.Verdict.Broken() || c.Verdict != audit.VerdictOK {
			t.Errorf("%s: %q (%s)", u, c.Verdict, c.Reason)
		}
	}
	t.Logf("%d targets in %v, %d requests", len(targets), time.Since(start), s.requests.Load())
}

// TestRun_LongWindowOneURL: on a host whose other URLs are fine, one URL
// answers 429 with a day-long Retry-After and another 503 with a
// Retry-After a day away (an HTTP date). Those two end rate-limited with
// their retry time, each requested once (no request inside its window:
// not even the targets that link to them under another spelling); every
// other target is checked ok, and the host is not given up. A shared
// scheduler shows what the checks left: two resource windows.
func TestRun_LongWindowOneURL(t *testing.T) {
	s := newServer(t)
	var bad429, bad503 atomic.Int64
	day := time.Now().Add(24 * time.Hour).UTC()
	s.handle("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy":
			bad429.Add(1)
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/maintenance":
			bad503.Add(1)
			w.Header().Set("Retry-After", day.Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.Header().Set("Content-Type", "text/plain")
		}
	})
	targets := []Target{{URL: s.URL + "/busy"}, {URL: s.URL + "/maintenance"}}
	for i := range 200 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/p%d", s.URL, i)})
	}
	o := testOptions()
	o.Workers = 16
	o.PerHost = 4
	o.MaxRetryWait = 300 * time.Millisecond
	sched := politeness.New(politeness.Options{PerHost: o.PerHost, MaxRetryWait: o.MaxRetryWait})
	o.Scheduler = sched
	got := collect(t, New(o), targets)
	for u, c := range got {
		switch strings.TrimPrefix(u, s.URL) {
		case "/busy", "/maintenance":
			if c.Verdict != audit.VerdictRateLimited || c.Verdict.Broken() {
				t.Errorf("%s: %q (%s), want rate-limited", u, c.Verdict, c.Reason)
			}
			i := strings.Index(c.Reason, "retry after ")
			if i < 0 {
				t.Errorf("%s: reason %q lacks the retry time", u, c.Reason)
				continue
			}
			at, err := time.Parse(time.RFC3339, strings.Fields(c.Reason[i+len("retry after "):])[0])
			if err != nil || at.Before(day.Add(-time.Minute)) || at.After(day.Add(time.Minute)) {
				t.Errorf("%s: retry time %v (%v), want about %v", u, at, err, day)
			}
		default:
			if c.Verdict != audit.VerdictOK {
				t.Errorf("%s: %q (%s)", u, c.Verdict, c.Reason)
			}
		}
	}
	if bad429.Load() != 1 || bad503.Load() != 1 {
		t.Errorf("refused URLs requested %d and %d times, want once each", bad429.Load(), bad503.Load())
	}
	st := sched.State(politeness.Key(mustURL(t, s.URL)))
	if st.GivenUp != "" || st.Windows != 2 {
		t.Errorf("host state %+v, want not given up, two resource windows", st)
	}

	// A later run sharing the scheduler does not ask again inside the
	// window: the target is rate-limited without a request.
	again := collect(t, New(o), []Target{{URL: s.URL + "/busy"}})
	if c := again[s.URL+"/busy"]; c.Verdict != audit.VerdictRateLimited || c.Attempts != 0 || !strings.Contains(c.Reason, "not requested") || !strings.Contains(c.Reason, "retry after ") {
		t.Errorf("/busy inside its window: %+v", c)
	}
	if bad429.Load() != 1 {
		t.Errorf("/busy requested %d times, want once", bad429.Load())
	}
}

// TestRun_LongWindowHostWide: every URL of a host answers 429 with a
// day-long Retry-After: after each of two pauses the cap allows, one more
// request is refused the same way and the host is given up, the reason
// saying the limit covers the host.
func TestRun_LongWindowHostWide(t *testing.T) {
	s := newServer(t)
	s.handle("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "86400")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	var targets []Target
	for i := range 30 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/p%d", s.URL, i)})
	}
	o := testOptions()
	o.PerHost = 2
	o.MaxRetryWait = 100 * time.Millisecond
	got := collect(t, New(o), targets)
	givenUp := 0
	for u, c := range got {
		if c.Verdict != audit.VerdictRateLimited {
			t.Errorf("%s: %q", u, c.Verdict)
		}
		if strings.Contains(c.Reason, "covers the host") && strings.Contains(c.Reason, "given up") {
			givenUp++
		}
	}
	if givenUp < 30-4 {
		t.Errorf("%d targets not checked with the host-wide reason, want at least %d", givenUp, 30-4)
	}
	if n := s.requests.Load(); n > 4 {
		t.Errorf("%d requests, want at most 4 (a wave of 2, one after each pause)", n)
	}
}
