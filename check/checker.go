package check

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/internal/pagefacts"
	"github.com/linkrot/linkrot/netguard"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
)

// Target is one URL to check.
type Target struct {
	ID int64
	// URL is the normalized target, fragment stripped (urls.NormalizeURL
	// form).
	URL string
	// WantAnchors asks for the id and name values of an HTML target in
	// Check.Anchors, to evaluate #fragment links. It disables conditional
	// requests for the target: a 304 carries no body to read them from.
	WantAnchors bool
	// Previous is the earlier run's result for this URL, or nil. When it
	// has validators (ETag, Last-Modified) and a non-transient verdict, the
	// request is conditional and a 304 answer reuses it.
	Previous *audit.Check
	// Known is the response the crawl of the same run got for the URL (a
	// page of the audited site), or nil. When usable, the target is judged
	// from it without a request (but for its soft-404 probe): see Known.
	Known *Known

	plan *knownPlan // set by Run for a usable Known

	// Across the dispatches of one target (a 429 sends it back to the
	// dispatcher until its pause is over):
	attempts  int  // requests made so far
	deferrals int  // times it was sent back for a 429
	last      bool // the end-of-run try of a key given up: no more deferral
}

// Defaults of Options.
const (
	defaultWorkers          = 64
	defaultPerHost          = 4
	defaultRetries          = 2
	defaultRetryBase        = 500 * time.Millisecond
	defaultMaxRetryWait     = 60 * time.Second
	defaultTimeout          = 30 * time.Second
	defaultConnectTimeout   = 10 * time.Second
	defaultMaxRedirects     = 10
	defaultMaxBody          = httpx.DefaultMaxBody
	defaultSoft404Threshold = 0.9
	DefaultUserAgent        = "linkrot (+https://github.com/linkrot/linkrot)"

	// maxAnchors bounds Check.Anchors.
	maxAnchors = pagefacts.MaxAnchors
)

// Options configure a Checker. The zero value is useful: each field names
// its default.
type Options struct {
	// Workers is the number of workers, the most targets checked at
	// once (default 64).
	Workers int
	// PerHost is the most targets of one host (host and port) checked at
	// once, soft-404 probes included; it is also the Transport's
	// MaxConnsPerHost (default 4). Redirect hops to other hosts and probes
	// of a redirected target's final host are made within the slot of the
	// target's host.
	PerHost int
	// HostDelay is the least time between starting two targets of the same
	// host (default 0: none). Waiting for it holds no worker. A target
	// judged from its Known without a request (see Target.Known) does not
	// count.
	HostDelay time.Duration

	// Retries is how often a transient failure (timeout, connection
	// refused or reset, 429, 5xx) is retried (default 2; negative: never).
	Retries int
	// RetryBase is the first backoff step, doubled for each further retry,
	// with jitter (between half and all of the step) (default 500ms).
	RetryBase time.Duration
	// MaxRetryWait caps every wait before a retry. A Retry-After header
	// (429, 503) longer than it is not waited for: its target is
	// rate-limited with the time to retry, and the host is given up only
	// when the limit is seen to cover it (see package politeness, "Long
	// windows") (default 60s).
	MaxRetryWait time.Duration

	// Timeout bounds one attempt: connect, headers and body together
	// (default 30s).
	Timeout time.Duration
	// ConnectTimeout bounds DNS plus TCP connect, and the TLS handshake
	// (default 10s).
	ConnectTimeout time.Duration
	// MaxRedirects is the most redirects followed; one more gives
	// too-many-redirects (default 10).
	MaxRedirects int
	// MaxBody caps the decoded bytes read of an HTML body (default 2 MiB).
	// Non-HTML bodies are not read.
	MaxBody int64
	// UserAgent is sent with every request (default DefaultUserAgent).
	UserAgent string

	// AllowPrivate lets the default transport connect to loopback and
	// private addresses (RFC 1918, CGNAT, ULA). Link-local (cloud
	// metadata), unspecified, multicast and broadcast addresses are refused
	// regardless.
	AllowPrivate bool
	// AllowPrivateHosts names the only hosts that may be on loopback or
	// private addresses when AllowPrivate is off: the audited site's
	// origins (absolute URLs: exact host and port) and the --allow-domain
	// hosts ("host" on any port, "host:port"); see netguard.NewAllowlist.
	// Decided on the resolved address at dial time, on every hop.
	AllowPrivateHosts []string
	// Robots applies the audited site's robots.txt to the site's own
	// URLs: a disallowed target is skipped with the reason (never
	// requested, nor is a redirect hop into a disallowed URL followed),
	// and every request to a host with a Crawl-delay waits for its turn
	// (nil: robots.txt is not consulted, as with --ignore-robots).
	Robots RobotsGate
	// Exclude lists patterns of URLs never fetched: a match is skipped with
	// the reason "excluded by pattern ...".
	Exclude []*regexp.Regexp

	// DisableSoft404 turns off soft-404 detection: no probes, and no
	// redirect-to-root verdicts (default: on).
	DisableSoft404 bool
	// Soft404Threshold is the least similarity (Jaccard index of 3-word
	// shingle sets, see soft404Shingle) between a target's main text and a
	// probe's that makes the target a soft 404 (default 0.9).
	Soft404Threshold float64

	// Resolver resolves host names for the default transport (default
	// net.DefaultResolver). Answers are cached for a run.
	Resolver netguard.Resolver
	// Transport replaces the default SSRF-guarded transport. For tests
	// only: the SSRF policy, the DNS cache and the connect timeout are
	// properties of the default transport and do not apply to another one.
	Transport http.RoundTripper
	// Logger receives debug records of retries and probes (default: none).
	Logger *slog.Logger
	// Hosts overrides PerHost, HostDelay and request headers for matching
	// hosts (the first matching rule wins; nil: none). A rule's
	// PerHost above Options.PerHost is capped by the transport's
	// MaxConnsPerHost (PerHost). Headers go only to the matching host,
	// never to redirect hops elsewhere.
	Hosts []politeness.HostRule

	// Scheduler is the per-host budget the checks run within, shared with
	// the crawl of the same run (one host, one budget): concurrency, delay,
	// Crawl-delay, 429/503 pauses, the adaptive rate controller and giving
	// a host up (see package politeness). nil: each Run and CheckOne builds
	// a private one from PerHost, HostDelay, Hosts and MaxRetryWait. A
	// shared Scheduler brings its own limits: PerHost, HostDelay and the
	// Hosts rules' limits are then its Options, not these.
	Scheduler *politeness.Scheduler
}

// Checker checks targets. It is safe for concurrent use; each Run (and
// each CheckOne) has its own DNS cache, probe cache and, with the default
// transport, connection pool, and its own host state unless
// Options.Scheduler shares one.
type Checker struct {
	o   Options
	log *slog.Logger
}

// New returns a Checker with opts, defaults filled in.
func New(opts Options) *Checker {
	o := opts
	if o.Workers <= 0 {
		o.Workers = defaultWorkers
	}
	if o.PerHost <= 0 {
		o.PerHost = defaultPerHost
	}
	switch {
	case o.Retries == 0:
		o.Retries = defaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.RetryBase <= 0 {
		o.RetryBase = defaultRetryBase
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = defaultMaxRetryWait
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = defaultConnectTimeout
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = defaultMaxRedirects
	}
	if o.MaxBody <= 0 {
		o.MaxBody = defaultMaxBody
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Soft404Threshold <= 0 {
		o.Soft404Threshold = defaultSoft404Threshold
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Checker{o: o, log: log}
}

// runState is what one Run (or CheckOne) shares between its checks.
type runState struct {
	c      *Checker
	o      *Options
	rt     http.RoundTripper
	guard  *netguard.Dialer // nil with Options.Transport
	sched  *politeness.Scheduler
	probes *probeCache
}

// newRun prepares a run. The returned function cancels whatever the run
// left (dials in flight) and closes its idle connections.
func (c *Checker) newRun(ctx context.Context) (*runState, func()) {
	runCtx, cancel := context.WithCancel(ctx)
	rs := &runState{c: c, o: &c.o, sched: c.o.Scheduler, probes: newProbeCache()}
	if rs.sched == nil {
		rs.sched = politeness.New(politeness.Options{
			PerHost: c.o.PerHost, Delay: c.o.HostDelay, Rules: c.o.Hosts, MaxRetryWait: c.o.MaxRetryWait, ResourceID: urls.NormalizeURL,
		})
	}
	if c.o.Transport != nil {
		rs.rt = c.o.Transport
	} else {
		rs.guard = newGuard(runCtx, &c.o)
		rs.rt = httpx.NewPool(rs.guard.DialContext, c.o.HTTP())
	}
	rs.rt = withRobotsPacing(rs.rt, c.o.Robots)
	return rs, func() {
		cancel()
		if ci, ok := rs.rt.(interface{ CloseIdleConnections() }); ok {
			ci.CloseIdleConnections()
		}
	}
}

// CheckOne checks one target: Run for a single target, with its own
// caches and connections. A result obtained after ctx was cancelled
// reports the cancellation (verdict timeout, error class "canceled") and
// should not be stored.
func (c *Checker) CheckOne(ctx context.Context, t Target) audit.Check {
	res, _ := c.checkOne(ctx, t)
	return res
}

// checkOne is CheckOne that also returns the run's state (tests inspect
// dials and probes).
func (c *Checker) checkOne(ctx context.Context, t Target) (audit.Check, *runState) {
	rs, done := c.newRun(ctx)
	defer done()
	u, reason := c.precheck(t.URL)
	if reason != "" {
		return skipped(t, reason), rs
	}
	key := politeness.Key(u)
	t.plan = rs.planKnown(t, u)
	for {
		var slot *politeness.Slot
		if !rs.free(t) {
			sl, err := rs.sched.Acquire(ctx, key)
			switch {
			case errors.Is(err, politeness.ErrGivenUp) && !t.last && rs.sched.Reprieve(key):
				t.last = true
				continue
			case errors.Is(err, politeness.ErrGivenUp):
				return notChecked(t, err.Error()), rs
			case err != nil:
				return canceled(t, err), rs
			}
			slot = sl
		}
		c, d := rs.check(ctx, &t, slot)
		switch {
		case d == nil:
			return c, rs
		case d.givenUp != "" && (t.last || !rs.sched.Reprieve(key)):
			return notChecked(t, d.givenUp), rs
		case d.givenUp != "":
			t.last = true
		case !sleep(ctx, time.Until(d.at)):
			return canceled(t, ctx.Err()), rs
		}
	}
}

// notChecked is the result of a target whose host was given up.
func notChecked(t Target, why string) audit.Check {
	return audit.Check{TargetID: t.ID, URL: t.URL, Verdict: audit.VerdictRateLimited,
		Reason: "not checked: " + why, Attempts: t.attempts, CheckedAt: time.Now().UTC()}
}

// canceled is the result of a check cut short by its context.
func canceled(t Target, err error) audit.Check {
	return audit.Check{TargetID: t.ID, URL: t.URL, Verdict: audit.VerdictTimeout, ErrorClass: "canceled",
		Reason: truncate(err.Error(), 300), Attempts: t.attempts, CheckedAt: time.Now().UTC()}
}

// Run checks every target once and calls emit for each result as soon as
// it is known. emit is called from worker goroutines: it must be safe for
// concurrent use and should not block long. Targets are expected to be
// unique; a URL given again is ignored (checked and emitted once). Targets
// that are never fetched (skipped schemes, Exclude matches, unparsable
// URLs) are emitted first, from the calling goroutine.
//
// Run returns nil when every target is done, or ctx.Err() when ctx is
// cancelled first; results of checks cut short by the cancellation are not
// emitted. Every goroutine Run starts has exited when it returns.
func (c *Checker) Run(ctx context.Context, targets []Target, emit func(audit.Check)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rs, done := c.newRun(ctx)
	defer done()

	seen := make(map[string]struct{}, len(targets))
	qs := newQueues()
	n, dups := 0, 0
	for _, t := range targets {
		if _, ok := seen[t.URL]; ok {
			dups++
			continue
		}
		seen[t.URL] = struct{}{}
		t, key, skip := rs.admit(ctx, t)
		if skip != nil {
			if err := ctx.Err(); err != nil {
				return err
			}
			emit(*skip)
			continue
		}
		qs.add(key, t)
		n++
	}
	if dups > 0 {
		c.log.Warn("duplicate targets ignored", "count", dups)
	}
	if n == 0 {
		return nil
	}
	return rs.runWorkers(ctx, qs, n, nil, min(c.o.Workers, n), emit)
}

// precheck parses a target URL and returns it, or the reason it is not
// fetched.
func (c *Checker) precheck(raw string) (*url.URL, string) {
	// The one URL parser (WHATWG) judges the target; its fragment, if
	// any, is no part of what is fetched.
	p, err := urls.ParseURL(raw)
	if err != nil {
		if ru, rerr := url.Parse(raw); rerr == nil && ru.Scheme == "" {
			return nil, "relative URL"
		}
		return nil, "invalid URL: " + truncate(err.Error(), 200)
	}
	u := p.NetURL()
	switch scheme := p.Scheme(); scheme {
	case "http", "https":
	case "":
		return nil, "relative URL"
	case "mailto", "tel", "javascript", "data", "sms", "callto", "about", "blob":
		return nil, fmt.Sprintf("%s: URL, not fetched", scheme)
	default:
		return nil, fmt.Sprintf("unsupported scheme %q", truncate(scheme, 40))
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, "URL without host"
	}
	for _, re := range c.o.Exclude {
		if re.MatchString(raw) {
			return nil, "excluded by pattern " + re.String()
		}
	}
	return u, ""
}

func skipped(t Target, reason string) audit.Check {
	return audit.Check{
		TargetID:  t.ID,
		URL:       t.URL,
		Verdict:   audit.VerdictSkipped,
		Reason:    reason,
		CheckedAt: time.Now().UTC(),
	}
}

// hostKey is the scheduling key of a URL: lower-cased host and explicit
// port, so two services on one machine are two hosts.
func hostKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		} else {
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
