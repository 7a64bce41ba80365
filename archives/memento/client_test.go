package memento_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/httpx"
)

// day is a date of the fixture's captures.
func day(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }

const orig = "http://example.org/article"

// fixture returns an archive holding three captures of orig, and a Client
// that talks to it through the SSRF-guarded transport (loopback allowed).
func fixture(t *testing.T, opts archivetest.Options) (*archivetest.Archive, *memento.Client, memento.Archive) {
	t.Helper()
	fa := archivetest.New(t, opts)
	fa.Add(
		archivetest.Memento{Original: orig, Time: day(2020, 1, 10, 12), Body: "<html><body><p>first</p></body></html>"},
		archivetest.Memento{Original: orig, Time: day(2021, 6, 1, 8), Body: "<html><body><p>second</p></body></html>"},
		archivetest.Memento{Original: orig, Time: day(2023, 3, 3, 3), Body: "<html><body><p>third</p></body></html>"},
	)
	cfg := fa.Config("fixture", 60000)
	return fa, newClient(t, cfg), cfg
}

func newClient(t *testing.T, archives ...memento.Archive) *memento.Client {
	t.Helper()
	rt, done := httpx.NewTransport(httpx.Options{AllowPrivate: true, ConnectTimeout: 2 * time.Second})
	t.Cleanup(done)
	return memento.NewClient(memento.Options{Archives: archives, Transport: rt, Timeout: 5 * time.Second, MaxRetryWait: 5 * time.Second, OtherHostRate: 60000})
}

func TestNegotiate_302(t *testing.T) {
	fa, c, cfg := fixture(t, archivetest.Options{})
	n, err := c.Negotiate(context.Background(), cfg, orig, day(2021, 5, 20, 0))
	if err != nil {
		t.Fatal(err)
	}
	if n.Style != "302" || !n.Memento.Datetime.Equal(day(2021, 6, 1, 8)) || n.Memento.URL != fa.URLOf(orig, day(2021, 6, 1, 8), "") {
		t.Errorf("Negotiate = %+v", n)
	}
	// The Link header listed first, last and the selected memento, with
	// datetimes holding commas.
	if len(n.Candidates) != 3 || n.Original != orig || len(n.TimeMaps) != 1 {
		t.Errorf("Link info: candidates %+v, original %q, timemaps %v", n.Candidates, n.Original, n.TimeMaps)
	}
	// Datetime negotiation needed no request to the memento.
	if k := fa.Count("/web/2021"); k != 0 {
		t.Errorf("%d memento requests, want 0", k)
	}
}

func TestNegotiate_200(t *testing.T) {
	fa, c, _ := fixture(t, archivetest.Options{})
	cfg := fa.Config200("fixture200", 60000)
	n, err := c.Negotiate(context.Background(), cfg, orig, day(2019, 1, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	// Before the first memento: the first is selected (RFC 7089 4.5.3).
	if n.Style != "200" || !n.Memento.Datetime.Equal(day(2020, 1, 10, 12)) || n.Memento.URL != fa.URLOf(orig, day(2020, 1, 10, 12), "") {
		t.Errorf("Negotiate = %+v", n)
	}
}

func TestNegotiate_NoMemento(t *testing.T) {
	_, c, cfg := fixture(t, archivetest.Options{})
	_, err := c.Negotiate(context.Background(), cfg, "http://example.org/never-archived", day(2021, 1, 1, 0))
	if !errors.Is(err, memento.ErrNoMemento) {
		t.Errorf("err = %v, want ErrNoMemento", err)
	}
}

// TestNegotiate_302WithoutDatetime: a TimeGate redirecting to a URL that
// neither its Link header nor a Wayback timestamp dates: the memento is
// asked for its Memento-Datetime.
func TestNegotiate_302WithoutDatetime(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tg/http://e.org/":
			w.Header().Set("Location", srv.URL+"/m/abc")
			w.WriteHeader(http.StatusFound)
		case "/m/abc":
			w.Header().Set("Memento-Datetime", "Tue, 11 Sep 2001 20:36:26 GMT")
			w.Header().Set("Link", `<http://e.org/>; rel="original"`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cfg := memento.Archive{Name: "perma-like", TimeGate: srv.URL + "/tg/", Rate: 60000}
	c := newClient(t, cfg)
	n, err := c.Negotiate(context.Background(), cfg, "http://e.org/", day(2001, 9, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !n.Memento.Datetime.Equal(time.Date(2001, 9, 11, 20, 36, 26, 0, time.UTC)) || n.Memento.URL != srv.URL+"/m/abc" {
		t.Errorf("Negotiate = %+v", n)
	}
}

func TestFetchMemento(t *testing.T) {
	fa, c, _ := fixture(t, archivetest.Options{})
	fa.Add(
		archivetest.Memento{Original: "http://example.org/live", Time: day(2022, 1, 1, 0), Body: "<p>x</p>", NoDatetime: true},
		archivetest.Memento{Original: "http://example.org/moved", Time: day(2022, 2, 2, 0), Body: "<p>y</p>", LinkOriginal: "http://elsewhere.example/"},
		archivetest.Memento{Original: "http://example.org/gone", Time: day(2022, 3, 3, 0), Status: 404, Body: "not found"},
	)
	ctx := context.Background()
	t.Run("Exact", func(t *testing.T) {
		m, err := c.FetchMemento(ctx, fa.URLOf(orig, day(2021, 6, 1, 8), ""), 0)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != 200 || !m.Datetime.Equal(day(2021, 6, 1, 8)) || m.Original != orig || len(m.Redirects) != 0 ||
			!strings.Contains(string(m.Body), "second") || !strings.Contains(string(m.Body), "wm-ipp") {
			t.Errorf("memento = %+v", m)
		}
	})
	t.Run("RawMode", func(t *testing.T) {
		m, err := c.FetchMemento(ctx, memento.RawURL(fa.URLOf(orig, day(2021, 6, 1, 8), "")), 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(m.Body), "wm-ipp") || !strings.Contains(string(m.Body), "second") {
			t.Errorf("id_ body has the banner or lacks the content: %s", m.Body)
		}
	})
	t.Run("ClosestCapture", func(t *testing.T) {
		// The Wayback Machine redirects an inexact timestamp to the
		// closest capture, however far.
		m, err := c.FetchMemento(ctx, fa.URLOf(orig, day(2023, 1, 1, 0), ""), -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Redirects) != 1 || m.Redirects[0].Status != 302 || !m.Datetime.Equal(day(2023, 3, 3, 3)) ||
			m.FinalURL != fa.URLOf(orig, day(2023, 3, 3, 3), "") {
			t.Errorf("memento = %+v", m)
		}
	})
	t.Run("NoDatetime", func(t *testing.T) {
		m, err := c.FetchMemento(ctx, fa.URLOf("http://example.org/live", day(2022, 1, 1, 0), ""), -1)
		if err != nil || m.Status != 200 || !m.Datetime.IsZero() {
			t.Errorf("memento = %+v, %v", m, err)
		}
	})
	t.Run("OtherOriginal", func(t *testing.T) {
		m, err := c.FetchMemento(ctx, fa.URLOf("http://example.org/moved", day(2022, 2, 2, 0), ""), -1)
		if err != nil || m.Original != "http://elsewhere.example/" {
			t.Errorf("memento = %+v, %v", m, err)
		}
	})
	t.Run("ArchivedNotFound", func(t *testing.T) {
		m, err := c.FetchMemento(ctx, fa.URLOf("http://example.org/gone", day(2022, 3, 3, 0), ""), -1)
		if err != nil || m.Status != 404 || m.Datetime.IsZero() {
			t.Errorf("memento = %+v, %v", m, err)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		m, err := c.FetchMemento(ctx, fa.URLOf("http://example.org/never", day(2022, 3, 3, 0), ""), -1)
		if err != nil || m.Status != 404 || !m.Datetime.IsZero() {
			t.Errorf("memento = %+v, %v", m, err)
		}
	})
}

func TestTimeMap_Paged(t *testing.T) {
	fa, c, cfg := fixture(t, archivetest.Options{PageSize: 2})
	tm, err := c.TimeMap(context.Background(), cfg, orig)
	if err != nil {
		t.Fatal(err)
	}
	// Index TimeMap + 2 pages.
	if tm.Pages != 3 || len(tm.Mementos) != 3 || tm.Truncated || tm.Original != orig ||
		!tm.Mementos[0].Datetime.Equal(day(2020, 1, 10, 12)) || !tm.Mementos[2].Datetime.Equal(day(2023, 3, 3, 3)) {
		t.Errorf("TimeMap = %+v", tm)
	}
	if k := fa.Count("/timemap/link/"); k != 3 {
		t.Errorf("%d TimeMap requests, want 3", k)
	}
	if _, err := c.TimeMap(context.Background(), cfg, "http://example.org/never"); !errors.Is(err, memento.ErrNoMemento) {
		t.Errorf("TimeMap of nothing: %v", err)
	}
}

func TestParseTimeMap_RFCExample(t *testing.T) {
	// RFC 7089 Fig. 28, with its line breaks and a rel order of its own.
	body := `<http://a.example.org>;rel="original",
<http://arxiv.example.net/timemap/http://a.example.org>
  ; rel="self";type="application/link-format"
  ; from="Tue, 20 Jun 2000 18:02:59 GMT"; until="Wed, 09 Apr 2008 20:30:51 GMT",
<http://arxiv.example.net/timegate/http://a.example.org>; rel="timegate",
<http://arxiv.example.net/web/20000620180259/http://a.example.org>
  ; rel="first memento";datetime="Tue, 20 Jun 2000 18:02:59 GMT"
  ; license="http://creativecommons.org/publicdomain/zero/1.0/",
<http://arxiv.example.net/web/20091027204954/http://a.example.org>
  ; rel="memento last";datetime="Tue, 27 Oct 2009 20:49:54 GMT",
<http://arxiv.example.net/web/20091027204955/http://a.example.org>
  ; rel="memento";datetime="yesterday"`
	li := memento.ParseTimeMap(body, nil)
	if li.Original != "http://a.example.org" || li.TimeGate == "" || len(li.Mementos) != 2 || li.BadDatetimes != 1 || len(li.TimeMaps) != 0 {
		t.Errorf("ParseTimeMap = %+v", li)
	}
}

// TestClient_TooManyRequests: the archive answers 429 with Retry-After;
// the client waits (the whole host waits) and succeeds.
func TestClient_TooManyRequests(t *testing.T) {
	fa, c, cfg := fixture(t, archivetest.Options{TooManyRequests: 1, RetryAfter: "1"})
	start := time.Now()
	n, err := c.Negotiate(context.Background(), cfg, orig, day(2021, 5, 20, 0))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("retried after %v, before the 1s Retry-After", d)
	}
	reqs := fa.Requests()
	if len(reqs) != 2 || reqs[0].Status != 429 || reqs[1].Status != 302 || reqs[1].Time.Sub(reqs[0].Time) < 900*time.Millisecond {
		t.Errorf("requests = %+v", reqs)
	}
	if !n.Memento.Datetime.Equal(day(2021, 6, 1, 8)) {
		t.Errorf("memento = %+v", n.Memento)
	}
}

// TestClient_RetryAfterTooLong: a Retry-After beyond MaxRetryWait is not
// waited for inline: the lookup is rate-limited at once, and the host's
// budget is paused for the whole time the archive asked.
func TestClient_RetryAfterTooLong(t *testing.T) {
	fa, _, cfg := fixture(t, archivetest.Options{TooManyRequests: 1, RetryAfter: "3600"})
	c := newClient(t, cfg)
	_, err := c.Negotiate(context.Background(), cfg, orig, day(2021, 5, 20, 0))
	if !errors.Is(err, memento.ErrRateLimited) {
		t.Fatalf("err = %v, want ErrRateLimited", err)
	}
	// The pool is given up for the run (the scheduler does not wait an
	// hour): later lookups fail at once, and nothing more is sent.
	if st := c.PoolState(fa.URL + "/web/"); st.GivenUp == "" {
		t.Errorf("pool state = %+v, want given up", st)
	}
	before := len(fa.Requests())
	if _, err := c.Negotiate(context.Background(), cfg, orig, day(2021, 5, 20, 0)); !errors.Is(err, memento.ErrRateLimited) {
		t.Errorf("second lookup err = %v, want ErrRateLimited", err)
	}
	if n := len(fa.Requests()); n != before {
		t.Errorf("%d more requests to a rate-limited pool", n-before)
	}
}

// TestClient_Unavailable: an archive that does not answer is given up
// after FailAfter network failures; later lookups fail at once.
func TestClient_Unavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	cfg := memento.Archive{Name: "dead", TimeGate: url + "/web/", Rate: 60000}
	c := newClient(t, cfg)
	ctx := context.Background()
	var last error
	for i := range 3 {
		_, last = c.Negotiate(ctx, cfg, orig, day(2021, 1, 1, 0))
		if last == nil || errors.Is(last, memento.ErrUnavailable) {
			t.Fatalf("attempt %d: %v", i, last)
		}
	}
	start := time.Now()
	_, err := c.Negotiate(ctx, cfg, orig, day(2021, 1, 1, 0))
	var ae *memento.Error
	if !errors.Is(err, memento.ErrUnavailable) || !errors.As(err, &ae) || ae.Class != "unavailable" {
		t.Errorf("after 3 failures: %v", err)
	}
	if time.Since(start) > 100*time.Millisecond {
		t.Error("an unavailable archive was asked again")
	}
}

// TestClient_SSRF: the guarded transport refuses link-local addresses,
// whatever an archive redirects to.
func TestClient_SSRF(t *testing.T) {
	rt, done := httpx.NewTransport(httpx.Options{})
	defer done()
	c := memento.NewClient(memento.Options{Transport: rt, Timeout: 2 * time.Second})
	_, err := c.FetchMemento(context.Background(), "http://169.254.169.254/latest/meta-data/", -1)
	var ae *memento.Error
	if !errors.As(err, &ae) || ae.Class != "policy" {
		t.Errorf("err = %v, want a policy refusal", err)
	}
}

func TestSave(t *testing.T) {
	fa, c, cfg := fixture(t, archivetest.Options{SavePolls: 1})
	ctx := context.Background()
	o := memento.SaveOptions{PollInterval: 10 * time.Millisecond, MaxPolls: 4}
	rec := c.Save(ctx, cfg, "http://example.org/new-page", o)
	if rec.Status != "success" || rec.JobID == "" || !strings.HasPrefix(rec.Memento, fa.URL+"/web/") || !strings.HasSuffix(rec.Memento, "/http://example.org/new-page") {
		t.Errorf("Save = %+v", rec)
	}
	// The capture is now in the archive.
	if _, err := c.Negotiate(ctx, cfg, "http://example.org/new-page", time.Now()); err != nil {
		t.Errorf("saved page not found: %v", err)
	}
	rec = c.Save(ctx, cfg, "http://example.org/pending-forever", o)
	if rec.Status != "pending" || !strings.Contains(rec.Reason, "4 status requests") {
		t.Errorf("Save(pending-forever) = %+v", rec)
	}
	if k := fa.Count("/save/status/"); k > 2+4 {
		t.Errorf("%d status requests, want at most %d", k, 2+4)
	}
	none := c.Save(ctx, memento.Archive{Name: "x", TimeGate: fa.URL + "/web/"}, "http://e.org/", o)
	if none.Status != "error" {
		t.Errorf("Save without endpoint = %+v", none)
	}
}

// TestRateBudget_ConcurrentWorkers proves that the per-archive budget holds
// across goroutines: 16 workers look up mementos as fast as they can for
// 2 seconds, with the archive configured at 10 requests a second (one
// every 100ms). The bucket holds one token (no burst), so in any window of
// length W at most W·10/s + 1 requests start: 11 per second. The test
// checks it twice, with slack for a loaded machine (-race, 2 cores):
//
//   - client side, by the start times of the round trips (taken after the
//     budget let the request go): one request of slack, for a goroutine
//     scheduled late after its slot;
//   - server side, by arrival times at the fixture: two of slack, for
//     connection setup and scheduling between the client's clock and the
//     server's.
//
// The total (at most 2s·10/s + 1 = 21 starts) shows the budget is used,
// not starved: at least 10, which a budget working at half speed passes.
func TestRateBudget_ConcurrentWorkers(t *testing.T) {
	t.Parallel()
	fa := archivetest.New(t, archivetest.Options{})
	fa.Add(archivetest.Memento{Original: orig, Time: day(2020, 1, 1, 0), Body: "x"})
	cfg := fa.Config("budget", 10*60)
	rt, done := httpx.NewTransport(httpx.Options{AllowPrivate: true, ConnectTimeout: 2 * time.Second})
	t.Cleanup(done)
	starts := &startLog{rt: rt}
	c := memento.NewClient(memento.Options{Archives: []memento.Archive{cfg}, Transport: starts, Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for ctx.Err() == nil {
				c.Negotiate(ctx, cfg, orig, day(2020, 1, 1, 0))
			}
		})
	}
	wg.Wait()
	const window = time.Second
	maxIn := func(times []time.Time) (int, int) {
		most, at := 0, 0
		for i := range times {
			n := 0
			for j := i; j < len(times) && times[j].Sub(times[i]) < window; j++ {
				n++
			}
			if n > most {
				most, at = n, i
			}
		}
		return most, at
	}
	client := starts.times()
	if n, at := maxIn(client); n > 11+1 {
		t.Errorf("client: %d requests started within %v from request %d (limit 11 + 1 slack)", n, window, at)
	}
	if len(client) > 21 || len(client) < 10 {
		t.Errorf("client: %d requests started in 2s at 10/s (want 10 to 21)", len(client))
	}
	var server []time.Time
	for _, r := range fa.Requests() {
		server = append(server, r.Time)
	}
	if n, at := maxIn(server); n > 11+2 {
		t.Errorf("server: %d requests arrived within %v from request %d (limit 11 + 2 slack)", n, window, at)
	}
	if len(server) > len(client) {
		t.Errorf("server saw %d requests, the client started %d", len(server), len(client))
	}
}

// startLog is a RoundTripper that records when each request starts.
type startLog struct {
	rt http.RoundTripper
	mu sync.Mutex
	ts []time.Time
}

func (s *startLog) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.ts = append(s.ts, time.Now())
	s.mu.Unlock()
	return s.rt.RoundTrip(r)
}

func (s *startLog) times() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.ts)
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// TestClient_LongRetryAfterFailsFast: a 429 asking to wait longer than
// MaxRetryWait marks the host rate limited for the run: the next request
// fails at once (it does not sit in the budget's pause until the archive's
// time is up), and so does a request already queued for the budget when
// the 429 arrives.
func TestClient_LongRetryAfterFailsFast(t *testing.T) {
	t.Run("Next", func(t *testing.T) {
		fa := archivetest.New(t, archivetest.Options{TooManyRequests: 1, RetryAfter: "4"})
		fa.Add(archivetest.Memento{Original: orig, Time: day(2020, 1, 1, 0), Body: "x"})
		cfg := fa.Config("ia-like", 60000)
		rt, done := httpx.NewTransport(httpx.Options{AllowPrivate: true})
		t.Cleanup(done)
		c := memento.NewClient(memento.Options{Archives: []memento.Archive{cfg}, Transport: rt, MaxRetryWait: time.Second})
		ctx := context.Background()
		if _, err := c.Negotiate(ctx, cfg, orig, day(2020, 1, 1, 0)); !errors.Is(err, memento.ErrRateLimited) {
			t.Fatalf("first lookup: %v, want ErrRateLimited", err)
		}
		start := time.Now()
		_, err := c.Negotiate(ctx, cfg, orig, day(2020, 1, 1, 0))
		var ae *memento.Error
		if !errors.Is(err, memento.ErrRateLimited) || !errors.As(err, &ae) || ae.Class != "rate-limited" ||
			!strings.Contains(err.Error(), "rate limited by archive until ") {
			t.Errorf("second lookup: %v, want a rate-limited error", err)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("second lookup took %v: it waited for the archive's pause", d)
		}
		if n := len(fa.Requests()); n != 1 {
			t.Errorf("the archive got %d requests, want 1", n)
		}
	})
	t.Run("Queued", func(t *testing.T) {
		fa := archivetest.New(t, archivetest.Options{TooManyRequests: 1, RetryAfter: "4"})
		fa.Add(archivetest.Memento{Original: orig, Time: day(2020, 1, 1, 0), Body: "x"})
		cfg := fa.Config("ia-like", 30) // one request every 2s
		rt, done := httpx.NewTransport(httpx.Options{AllowPrivate: true})
		t.Cleanup(done)
		c := memento.NewClient(memento.Options{Archives: []memento.Archive{cfg}, Transport: rt, MaxRetryWait: time.Second})
		ctx := context.Background()
		start := time.Now()
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() { _, errs[i] = c.Negotiate(ctx, cfg, orig, day(2020, 1, 1, 0)) })
		}
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, memento.ErrRateLimited) {
				t.Errorf("lookup %d: %v, want ErrRateLimited", i, err)
			}
		}
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Errorf("lookups took %v: the queued one waited for its slot or the pause", d)
		}
	})
}
