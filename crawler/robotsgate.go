package crawler

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
)

// RobotsGate is the audited site's robots.txt as one gate for every stage
// (check.RobotsGate): the crawl and the checks of the site's own URLs ask
// it whether a URL may be fetched, and wait on it for the host's
// Crawl-delay, so that the host sees one budget: one request at a time,
// each starting at least the delay after the previous one ended, whichever
// stage sends it. It applies to the hosts of the site (the seeds' hosts
// and ports, with the default-port twin, and --allow-domain hosts); other
// hosts are allowed and not paced. robots.txt is fetched once per scheme,
// host and port with RFC 9309 semantics (see robots). It is safe for
// concurrent use.
//
// With RobotsGateOptions.Scheduler (a shared per-host scheduler such as
// politeness.Scheduler), the gate hands each host's Crawl-delay to it
// (SetCrawlDelay, before the host's first request) and Wait no longer
// paces: the scheduler does, for every stage that uses it. Without one,
// Wait is the gate's own pacing.
type RobotsGate struct {
	robots   *robots
	scope    *scope
	maxDelay time.Duration
	pace     *pacer
	sched    CrawlDelaySetter
	told     sync.Map // scheduler keys already given their delay
}

// CrawlDelaySetter is the part of a shared per-host scheduler the gate
// hands Crawl-delays to (politeness.Scheduler implements it). Keys are
// host[:port] as urls.NormalizeURL writes them (default ports omitted).
type CrawlDelaySetter interface {
	SetCrawlDelay(key string, d time.Duration)
}

// RobotsGateOptions configure NewRobotsGate. The zero value is useful:
// DefaultUserAgent, 30 s per robots.txt request, Crawl-delay capped at
// 30 s, netguard's transport allowing private addresses for the site only.
type RobotsGateOptions struct {
	// AllowDomains are --allow-domain entries (see Options.AllowDomains).
	AllowDomains []string
	UserAgent    string
	Timeout      time.Duration
	// MaxCrawlDelay caps a robots.txt Crawl-delay (default 30 s).
	MaxCrawlDelay time.Duration
	// Transport fetches robots.txt (nil: the guarded transport of the
	// site's scope).
	Transport http.RoundTripper
	// Scheduler, when set, receives each host's Crawl-delay and does the
	// pacing (see RobotsGate); nil: the gate paces itself.
	Scheduler CrawlDelaySetter
}

// NewRobotsGate returns the gate of the site at siteURLs. The returned
// function closes the gate's connections.
func NewRobotsGate(siteURLs []string, o RobotsGateOptions) (*RobotsGate, func()) {
	var seeds []*url.URL
	for _, s := range siteURLs {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			seeds = append(seeds, u)
		}
	}
	sc := newScope(seeds, o.AllowDomains, nil, nil)
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxCrawlDelay <= 0 {
		o.MaxCrawlDelay = 30 * time.Second
	}
	rt, done := o.Transport, func() {}
	if rt == nil {
		rt, done = guardedTransport(sc, nil)
	}
	client := &http.Client{Transport: &capTransport{next: rt, maxBody: 1 << 20}, Timeout: o.Timeout, CheckRedirect: sameHostRedirects(maxRobotsRedirects)}
	g := newRobotsGate(newRobots(client, o.UserAgent), sc, o.MaxCrawlDelay)
	g.sched = o.Scheduler
	return g, done
}

func newRobotsGate(r *robots, sc *scope, maxDelay time.Duration) *RobotsGate {
	return &RobotsGate{robots: r, scope: sc, maxDelay: maxDelay, pace: newPacer()}
}

// covers reports whether u is a URL of the site.
func (g *RobotsGate) covers(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && g.scope.hostAllowed(u)
}

// Disallowed returns why u may not be fetched, "" when it may or when u
// is not a URL of the site.
func (g *RobotsGate) Disallowed(ctx context.Context, u *url.URL) string {
	if !g.covers(u) {
		return ""
	}
	ok, err := g.robots.Allowed(ctx, u)
	switch {
	case ok:
		return ""
	case err != nil:
		return "robots.txt unreachable, fetching disallowed (RFC 9309): " + err.Error()
	}
	return "disallowed by robots.txt"
}

// CrawlDelay returns the robots.txt Crawl-delay of u's host (capped), 0
// when there is none or u is not a URL of the site.
func (g *RobotsGate) CrawlDelay(ctx context.Context, u *url.URL) time.Duration {
	if !g.covers(u) {
		return 0
	}
	return g.robots.CrawlDelay(ctx, u, g.maxDelay)
}

// Wait blocks until a request to u may start under its host's
// Crawl-delay and returns the function to call when the response is done
// (see check.RobotsGate).
func (g *RobotsGate) Wait(ctx context.Context, u *url.URL) (func(), error) {
	d := g.CrawlDelay(ctx, u)
	if g.sched != nil {
		if d > 0 {
			if key, err := urls.NormalizeURL(u.Scheme + "://" + u.Host + "/"); err == nil {
				if k, err := url.Parse(key); err == nil {
					if _, done := g.told.LoadOrStore(k.Host, true); !done {
						g.sched.SetCrawlDelay(k.Host, d)
					}
				}
			}
		}
		return func() {}, ctx.Err()
	}
	if d <= 0 {
		return func() {}, nil
	}
	return g.pace.wait(ctx, hostPort(u), d, g.robots.fetchedAt(ctx, u))
}

// RoundTripper returns next paced by the gate: every request to a host
// with a Crawl-delay waits for its turn, and holds it until its body is
// closed.
func (g *RobotsGate) RoundTripper(next http.RoundTripper) http.RoundTripper {
	return &pacedRT{next: next, gate: g}
}

type pacedRT struct {
	next http.RoundTripper
	gate *RobotsGate
}

func (t *pacedRT) RoundTrip(req *http.Request) (*http.Response, error) {
	done, err := t.gate.Wait(req.Context(), req.URL)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		done()
		return nil, err
	}
	resp.Body = politeness.OnDone(resp.Body, done)
	return resp, nil
}

// pacer gives each host one request at a time, each starting at least
// the delay after the previous one ended.
type pacer struct {
	mu    sync.Mutex
	hosts map[string]*paceHost
}

type paceHost struct {
	slot chan struct{} // capacity 1: held while a request runs
	last time.Time     // when the previous request ended
}

func newPacer() *pacer { return &pacer{hosts: map[string]*paceHost{}} }

// wait takes key's slot, then waits until delay after the previous
// request ended (or after since, for the first: the robots.txt request).
func (p *pacer) wait(ctx context.Context, key string, delay time.Duration, since time.Time) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	h := p.hosts[key]
	if h == nil {
		h = &paceHost{slot: make(chan struct{}, 1), last: since}
		p.hosts[key] = h
	}
	p.mu.Unlock()
	select {
	case h.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if wait := time.Until(h.last.Add(delay)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			<-h.slot
			return nil, ctx.Err()
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.last = time.Now() // written while holding the slot
			<-h.slot
		})
	}, nil
}
