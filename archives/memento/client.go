package memento

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
)

// Options configure a Client. The zero value is useful except for
// Transport, which should be the SSRF-guarded httpx.NewTransport (nil:
// http.DefaultTransport, for tests only).
type Options struct {
	// Archives are the configured archives; each host of their endpoints
	// gets the archive's request budget.
	Archives []Archive
	// Transport makes the requests. Redirects are followed by the Client
	// itself, hop by hop, each hop through Transport.
	Transport http.RoundTripper
	// Timeout bounds one request: connect, headers and body (default 30s).
	Timeout time.Duration
	// Retries is how often a 429, 5xx or timeout is retried (default 2;
	// negative: never).
	Retries int
	// MaxRetryWait is the longest Retry-After waited for before a retry
	// (default 60s). A 429 asking for longer pauses the host's budget for
	// its whole length (the archive asked for it) and marks the host rate
	// limited for the rest of the Client's life (the run): that request
	// and every later one to the host, those already queued for its budget
	// included, fail at once with ErrRateLimited instead of waiting (an
	// hour-long pause must not hang a scheduled run).
	MaxRetryWait time.Duration
	// MaxBody caps the decoded bytes read of one body (default 5 MiB).
	MaxBody int64
	// MaxRedirects is the most redirects followed (default 10).
	MaxRedirects int
	// UserAgent is sent with every request.
	UserAgent string
	// OtherHostRate is the request budget per minute of each host that is
	// no configured archive's but is reached through one (declared
	// snapshot URLs on other archives, redirects) (default 60).
	OtherHostRate float64
	// FailAfter is how many network failures in a row (DNS, refused,
	// timeout, TLS) mark a host unavailable for the Client's life: its
	// later requests fail at once with ErrUnavailable (default 3).
	FailAfter int
	// Logger receives debug records of retries and pauses (default: none).
	Logger *slog.Logger
	// Scheduler holds the request budgets (nil: the Client makes its own).
	// Each archive pool is a key named poolKey ("ia/api") with a token
	// bucket of its budget (burst 1) and the scheduler's rate controller
	// (429/503 with Retry-After pause the whole pool; a 429 cuts its rate,
	// which grows back slowly); other hosts are keyed by host
	// (politeness.Key) at OtherHostRate. A scheduler shared with the live
	// checker makes both respect one budget per host.
	Scheduler *politeness.Scheduler
}

// Defaults of Options.
const (
	defaultTimeout      = 30 * time.Second
	defaultRetries      = 2
	defaultMaxRetryWait = 60 * time.Second
	defaultMaxBody      = 5 << 20
	defaultMaxRedirects = 10
	defaultFailAfter    = 3
	defaultUserAgent    = "linkrot (+https://github.com/linkrot/linkrot)"
)

// Errors a Client returns (wrapped in *Error).
var (
	// ErrUnavailable: the host failed FailAfter times in a row and is no
	// longer asked.
	ErrUnavailable = errors.New("archive unavailable")
	// ErrRateLimited: the host answered 429 and asked to wait longer
	// than MaxRetryWait (or kept answering 429).
	ErrRateLimited = errors.New("rate limited")
	// ErrNoMemento: the archive has no memento of the resource.
	ErrNoMemento = errors.New("no memento")
)

// Error is a failed archive request: what was done, to which URL, the
// error class of a network failure ("timeout", "dns", "refused", "tls",
// "policy", "unavailable", "rate-limited", ...) and the cause.
type Error struct {
	Op    string
	URL   string
	Class string
	Err   error
}

func (e *Error) Error() string {
	err := e.Err
	// net/http's *url.Error repeats the method and URL.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Sprintf("%s %s: %v", e.Op, truncate(e.URL, 200), err)
}

func (e *Error) Unwrap() error { return e.Err }

// Response is one HTTP answer with its body read (capped).
type Response struct {
	URL       *url.URL
	Status    int
	Header    http.Header
	Body      []byte
	Truncated bool
}

// Client talks to archives with a shared, per-host request budget. It is
// safe for concurrent use; create one per run.
type Client struct {
	o   Options
	log *slog.Logger
	hc  *http.Client

	mu       sync.Mutex
	hosts    map[string]*hostState // pools, by key: "archive/pool" or "host:" + host
	prefixes []poolPrefix          // longest first
	hostPool map[string]string     // archive host -> its first archive's main pool
	archive  map[string]bool       // hosts of configured archives
	local    map[string]bool       // hosts of local collections
	saveLim  map[string]*limiter   // by archive name
}

type poolPrefix struct {
	prefix string // host (lower case) + path
	key    string
}

// poolKey names pool p of archive a: "ia/api".
func poolKey(a Archive, p Pool) string { return a.Name + "/" + p.Name }

// hostPath is u without scheme, host lower-cased.
func hostPath(u *url.URL) string {
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return strings.ToLower(u.Host) + p
}

func prefixOf(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	h, p, _ := strings.Cut(s, "/")
	return strings.ToLower(h) + "/" + p
}

type hostState struct {
	key   string
	mu    sync.Mutex
	fails int
	down  error
	// limitedUntil is set when the host asked (429) to wait longer than
	// MaxRetryWait: it is not asked again in this run. limited is
	// cancelled at that moment, to release the requests waiting for the
	// host's budget.
	limitedUntil time.Time
	limitedWhy   string
	limited      context.Context
	markLimited  context.CancelFunc
}

func newHostState(key string) *hostState {
	st := &hostState{key: key}
	st.limited, st.markLimited = context.WithCancel(context.Background())
	return st
}

// rateLimited returns the error of a request to a host marked rate
// limited, or nil.
func (st *hostState) rateLimited(r request) error {
	st.mu.Lock()
	until, why := st.limitedUntil, st.limitedWhy
	st.mu.Unlock()
	if until.IsZero() {
		return nil
	}
	return &Error{Op: r.op, URL: r.url, Class: "rate-limited",
		Err: fmt.Errorf("%w by archive until %s (%s); not asked again in this run", ErrRateLimited, until.UTC().Format(time.RFC3339), why)}
}

// setRateLimited marks the host rate limited until until (the first mark
// stands) and releases the requests waiting for its budget.
func (st *hostState) setRateLimited(until time.Time, why string) {
	st.mu.Lock()
	if st.limitedUntil.IsZero() {
		st.limitedUntil, st.limitedWhy = until, why
	}
	st.mu.Unlock()
	st.markLimited()
}

// wait waits for the pool's budget in sched; it returns early with an
// error when ctx is done or the pool is marked rate limited meanwhile.
func (st *hostState) wait(ctx context.Context, sched *politeness.Scheduler) (*politeness.Slot, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(st.limited, cancel)
	defer stop()
	return sched.Acquire(wctx, st.key)
}

// NewClient returns a Client for opts, defaults filled in.
func NewClient(opts Options) *Client {
	o := opts
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	switch {
	case o.Retries == 0:
		o.Retries = defaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = defaultMaxRetryWait
	}
	if o.MaxBody <= 0 {
		o.MaxBody = defaultMaxBody
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = defaultMaxRedirects
	}
	if o.UserAgent == "" {
		o.UserAgent = defaultUserAgent
	}
	if o.OtherHostRate <= 0 {
		o.OtherHostRate = DefaultRate
	}
	if o.FailAfter <= 0 {
		o.FailAfter = defaultFailAfter
	}
	rt := o.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Scheduler == nil {
		o.Scheduler = politeness.New(politeness.Options{MaxRetryWait: o.MaxRetryWait, ResourceID: urls.NormalizeURL})
	}
	c := &Client{
		o:   o,
		log: log,
		hc: &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		hosts:    map[string]*hostState{},
		hostPool: map[string]string{},
		archive:  map[string]bool{},
		local:    map[string]bool{},
		saveLim:  map[string]*limiter{},
	}
	for _, a := range o.Archives {
		for _, h := range a.hosts() {
			c.archive[h] = true
			if a.Local {
				c.local[h] = true
			}
			if _, ok := c.hostPool[h]; !ok {
				c.hostPool[h] = poolKey(a, a.MainPool())
			}
		}
		for i, p := range a.AllPools() {
			key := poolKey(a, p)
			rate := p.PerMinute()
			if i == 0 {
				rate = a.PerMinute()
			}
			c.hosts[key] = newHostState(key)
			if !a.Local {
				// rate already has the margin taken off.
				o.Scheduler.SetBudget(key, politeness.Budget{PerMinute: rate, Burst: 1, Margin: -1})
			}
			for _, pre := range p.Prefixes {
				c.prefixes = append(c.prefixes, poolPrefix{prefixOf(pre), key})
			}
		}
		if a.Save != "" {
			c.saveLim[a.Name] = newLimiter(a.saveRate())
		}
	}
	sort.SliceStable(c.prefixes, func(i, j int) bool { return len(c.prefixes[i].prefix) > len(c.prefixes[j].prefix) })
	return c
}

// poolOf returns the key of the pool a request to u belongs to: the
// configured pool with the longest matching prefix, else the main pool of
// the first archive on u's host, else the host's own pool.
func (c *Client) poolOf(u *url.URL) string {
	hp := hostPath(u)
	for _, p := range c.prefixes {
		if strings.HasPrefix(hp, p.prefix) {
			return p.key
		}
	}
	h := strings.ToLower(u.Host)
	if k, ok := c.hostPool[h]; ok {
		return k
	}
	return politeness.Key(u)
}

// PoolOf returns the key of the pool a request to rawURL belongs to
// ("ia/api", "ia/main", or the host as politeness.Key writes it).
func (c *Client) PoolOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return c.poolOf(u)
}

// IsLocal reports whether host serves a local collection.
func (c *Client) IsLocal(host string) bool { return c.local[strings.ToLower(host)] }

// IsArchiveHost reports whether host (host[:port], any case) serves a
// configured archive.
func (c *Client) IsArchiveHost(host string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.archive[strings.ToLower(host)]
}

// Archives returns the configured archives.
func (c *Client) Archives() []Archive { return c.o.Archives }

func (c *Client) pool(key string) *hostState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.hosts[key]
	if st == nil {
		st = newHostState(key)
		c.hosts[key] = st
		c.o.Scheduler.SetBudget(key, politeness.Budget{PerMinute: c.o.OtherHostRate, Burst: 1, Margin: -1})
	}
	return st
}

// PoolState returns the scheduler's state of the pool serving rawURL (a
// URL, or a bare host[:port]).
func (c *Client) PoolState(rawURL string) politeness.State {
	if !strings.Contains(rawURL, "/") {
		rawURL = "http://" + rawURL + "/"
	}
	return c.o.Scheduler.State(c.pool(c.PoolOf(rawURL)).key)
}

// Scheduler returns the scheduler holding the Client's budgets.
func (c *Client) Scheduler() *politeness.Scheduler { return c.o.Scheduler }

// request describes one GET or POST.
type request struct {
	op      string
	method  string
	url     string
	header  http.Header
	form    url.Values // POST body (application/x-www-form-urlencoded)
	maxBody int64      // 0: Options.MaxBody; <0: do not read
	budget  bool       // wait for the host's budget; count failures
}

// do makes one request (no redirects followed) with the host's budget,
// retrying 429, 5xx and timeouts. A non-2xx answer is no error; an error
// means no usable answer arrived.
func (c *Client) do(ctx context.Context, r request) (*Response, error) {
	u, err := url.Parse(r.url)
	if err != nil {
		return nil, &Error{Op: r.op, URL: r.url, Class: "invalid-url", Err: err}
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, &Error{Op: r.op, URL: r.url, Class: "invalid-url", Err: errors.New("not an absolute http(s) URL")}
	}
	st := c.pool(c.poolOf(u))
	for attempt := 0; ; attempt++ {
		if r.budget {
			st.mu.Lock()
			down := st.down
			st.mu.Unlock()
			if down != nil {
				return nil, &Error{Op: r.op, URL: r.url, Class: "unavailable", Err: fmt.Errorf("%w: %v", ErrUnavailable, down)}
			}
			if err := st.rateLimited(r); err != nil {
				return nil, err
			}
		}
		var slot *politeness.Slot
		if r.budget {
			var err error
			if slot, err = st.wait(ctx, c.o.Scheduler); err != nil {
				if ctx.Err() == nil {
					if rerr := st.rateLimited(r); rerr != nil {
						return nil, rerr
					}
				}
				if errors.Is(err, politeness.ErrGivenUp) {
					return nil, &Error{Op: r.op, URL: r.url, Class: "rate-limited", Err: fmt.Errorf("%w: %v", ErrRateLimited, err)}
				}
				return nil, &Error{Op: r.op, URL: r.url, Class: "canceled", Err: err}
			}
		}
		resp, err := c.roundTrip(ctx, u, r)
		if slot != nil {
			if err != nil {
				slot.Release(politeness.Outcome{Err: err})
			} else {
				slot.Release(politeness.Outcome{Status: resp.Status, Header: resp.Header})
			}
		}
		if err != nil {
			class := httpx.ErrorClass(err, false)
			if ctx.Err() != nil {
				return nil, &Error{Op: r.op, URL: r.url, Class: "canceled", Err: err}
			}
			if r.budget {
				st.mu.Lock()
				st.fails++
				if st.fails >= c.o.FailAfter && st.down == nil {
					st.down = err
					c.log.Warn("archive host unavailable for the rest of the run", "host", u.Host, "err", err)
				}
				st.mu.Unlock()
			}
			if class == "timeout" && attempt < c.o.Retries {
				c.wait(ctx, backoff(attempt))
				continue
			}
			return nil, &Error{Op: r.op, URL: r.url, Class: class, Err: err}
		}
		if r.budget {
			st.mu.Lock()
			st.fails = 0
			st.mu.Unlock()
		}
		if resp.Status != http.StatusTooManyRequests && resp.Status < 500 {
			return resp, nil
		}
		wait := backoff(attempt)
		if resp.Status == http.StatusTooManyRequests || resp.Status == http.StatusServiceUnavailable {
			if ra, ok := politeness.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				wait = ra
			}
			if resp.Status == http.StatusTooManyRequests {
				// The whole host waits, not only this request: an archive
				// that is ignored after a 429 blocks the client.
				// The scheduler paused the whole pool (Retry-After) and cut
				// its rate when the slot was released.
				until := time.Now().Add(wait)
				c.log.Debug("archive asked to slow down", "host", u.Host, "retry_after", wait)
				if wait > c.o.MaxRetryWait {
					why := fmt.Sprintf("Retry-After %s exceeds the %s cap", wait.Round(time.Second), c.o.MaxRetryWait)
					if r.budget {
						st.setRateLimited(until, why)
						c.log.Warn("archive host rate limited for the rest of the run", "host", u.Host, "until", until.UTC())
					}
					return resp, &Error{Op: r.op, URL: r.url, Class: "rate-limited",
						Err: fmt.Errorf("%w by archive until %s: %s", ErrRateLimited, until.UTC().Format(time.RFC3339), why)}
				}
			}
		}
		if attempt >= c.o.Retries {
			if resp.Status == http.StatusTooManyRequests {
				return resp, &Error{Op: r.op, URL: r.url, Class: "rate-limited",
					Err: fmt.Errorf("%w: status 429 after %d attempts", ErrRateLimited, attempt+1)}
			}
			return resp, nil
		}
		if wait > c.o.MaxRetryWait {
			return resp, nil
		}
		if !r.budget || resp.Status != http.StatusTooManyRequests {
			// A 429 waits in the budget's pause; the rest here.
			if !c.wait(ctx, wait) {
				return nil, &Error{Op: r.op, URL: r.url, Class: "canceled", Err: ctx.Err()}
			}
		}
	}
}

func (c *Client) roundTrip(ctx context.Context, u *url.URL, r request) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	var body io.Reader
	if r.form != nil {
		body = strings.NewReader(r.form.Encode())
	}
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.o.UserAgent)
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := &Response{URL: u, Status: resp.StatusCode, Header: resp.Header}
	max := r.maxBody
	if max == 0 {
		max = c.o.MaxBody
	}
	if max > 0 {
		out.Body, out.Truncated, err = httpx.ReadBody(resp, max)
		if err != nil {
			return nil, fmt.Errorf("reading body: %w", err)
		}
	}
	return out, nil
}

// wait sleeps d or until ctx is done; it reports whether d ran out.
func (c *Client) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// backoff is 500ms·2^attempt, jittered to between half and all of it.
func backoff(attempt int) time.Duration {
	d := 500 * time.Millisecond << min(attempt, 6)
	return d/2 + rand.N(d/2+1)
}

// follow requests start and follows redirects while stay accepts the next
// URL, up to MaxRedirects, recording each hop. It returns the last answer;
// stop says why a redirect was not followed ("" when the chain ended on a
// non-redirect).
func (c *Client) follow(ctx context.Context, r request, stay func(*url.URL) bool) (resp *Response, hops []audit.Redirect, stop string, err error) {
	seen := map[string]bool{r.url: true}
	for {
		resp, err = c.do(ctx, r)
		if err != nil {
			return resp, hops, "", err
		}
		if !isRedirect(resp.Status) {
			return resp, hops, "", nil
		}
		loc := resp.Header.Get("Location")
		if loc == "" {
			return resp, hops, "redirect without Location", nil
		}
		next, perr := resp.URL.Parse(loc)
		if perr != nil {
			return resp, hops, "invalid Location: " + truncate(perr.Error(), 200), nil
		}
		next.Fragment, next.RawFragment = "", ""
		nextStr := next.String()
		hops = append(hops, audit.Redirect{From: r.url, To: nextStr, Status: resp.Status})
		switch {
		case next.Scheme != "http" && next.Scheme != "https":
			return resp, hops, "redirect to a non-http(s) URL " + truncate(nextStr, 200), nil
		case stay != nil && !stay(next):
			return resp, hops, "redirect leaves the archive to " + truncate(nextStr, 200), nil
		case len(hops) > c.o.MaxRedirects:
			return resp, hops, fmt.Sprintf("more than %d redirects", c.o.MaxRedirects), nil
		case seen[nextStr]:
			return resp, hops, "redirect loop at " + truncate(nextStr, 200), nil
		}
		seen[nextStr] = true
		r.url = nextStr
		r.method, r.form = http.MethodGet, nil
	}
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// Fetch GETs a URL that is not an archive's (a live page, an identifier),
// following redirects (each hop through the guarded transport). Each host
// gets its own budget (OtherHostRate unless it is an archive's), so a
// stage that refetches live pages stays polite too. maxBody < 0 reads no
// body, 0 reads up to Options.MaxBody.
func (c *Client) Fetch(ctx context.Context, rawURL string, maxBody int64) (*Response, []audit.Redirect, string, error) {
	return c.follow(ctx, request{op: "fetch", url: rawURL, maxBody: maxBody, budget: true,
		header: http.Header{"Accept": {"text/html,application/xhtml+xml,*/*;q=0.8"}}}, nil)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
