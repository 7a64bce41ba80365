package crawler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/extract"
	"github.com/linkrot/linkrot/crawler/markdown"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/internal/cpuslot"
	"github.com/linkrot/linkrot/internal/pagefacts"
	"github.com/linkrot/linkrot/netguard"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
)

// DefaultUserAgent names the tool so site owners can find it and write
// robots.txt rules for it.
const DefaultUserAgent = "linkrot/0.1 (+https://github.com/linkrot/linkrot; link rot and content drift auditor)"

// Sink receives every recorded page. audit.Writer implements it.
type Sink interface {
	Add(p *audit.Page)
}

// Options configures a Crawler. The zero value is useful: same-host scope,
// unlimited depth and pages, robots.txt obeyed, 4 parallel requests per
// host, no extra delay, 30 s per request, 5 MiB per body, 10 redirect hops.
type Options struct {
	// AllowDomains adds hosts to the scope: "example.org" (any port),
	// "example.org:8080", or "*.example.org" (every subdomain).
	AllowDomains []string
	// Include, when not empty, limits crawling to URLs matching one of them;
	// Exclude removes URLs matching any of them.
	Include, Exclude []*regexp.Regexp
	// MaxDepth bounds how many links away from a seed pages are crawled
	// (seeds are depth 0); 0 means unlimited.
	MaxDepth int
	// MaxPages bounds how many pages are fetched; 0 means unlimited.
	MaxPages int
	// Crawl-trap guards (see trap.go for the defaults and their sources).
	// Zero means the default; a negative value turns the guard off.
	// MaxSegmentRepeats: most repetitions in a row of a path segment or
	// pair of segments (default 2). MaxPathSegments: most path segments
	// (default 20). MaxQueryVariants: most query strings of one path
	// (default 100). MaxURLLength: longest URL in bytes (default 2083).
	MaxSegmentRepeats, MaxPathSegments, MaxQueryVariants, MaxURLLength int
	// SessionParams are the query parameters treated as session ids:
	// dropped from the crawl's visited-set key, so links differing only
	// in them are crawled as one page (nil: DefaultSessionParams). The
	// links themselves are recorded as written.
	SessionParams []string
	// KeepSessionIDs turns the session-id guard off.
	KeepSessionIDs bool
	// IgnoreRobots skips robots.txt (for auditing your own site).
	IgnoreRobots bool
	// PerHost is the number of parallel requests per host.
	PerHost int
	// Delay is the least time between the starts of two requests to a
	// host. A robots.txt Crawl-delay of at least Delay wins (one request at
	// a time, that far apart), up to MaxCrawlDelay (default 30 s).
	Delay         time.Duration
	MaxCrawlDelay time.Duration
	// Scheduler is the per-host budget every request of the crawl runs
	// within (robots.txt and sitemaps included), shared with the checks of
	// the same run so that one host has one budget (see package
	// politeness); the seeds' Crawl-delay is set on it, and a recursive
	// crawl keeps the seeds' keys (Scheduler.Keep): the site's own pages
	// wait out any limit instead of being given up. nil: a private one
	// from PerHost, Delay and Hosts. A shared Scheduler brings its own
	// limits: PerHost, Delay and the Hosts rules' limits are then its
	// Options, not these.
	Scheduler *politeness.Scheduler
	UserAgent string
	// Timeout bounds each request: connect, headers and body.
	Timeout time.Duration
	// MaxBody caps the decoded bytes read per response.
	MaxBody int64
	// Observe computes, from a page's response, the evidence a check of
	// its URL needs (Page.Evidence), so that the checker judges the site's
	// own pages without fetching them again. The pipeline passes the
	// checker's (check.Observer, with the checker's body cap). It gets the
	// status, the header as the server sent it, the decoded body read,
	// whether that body is complete, and, when the page was read as HTML,
	// the body decoded to UTF-8 with what the extraction read of it (the
	// one pass's pagefacts.Facts, or the tree of a page that fell back to
	// html.Parse) to reuse; nil otherwise. It must be safe for concurrent
	// use. nil: pages carry no evidence.
	Observe func(status int, header http.Header, body []byte, complete bool, parsed *pagefacts.Parsed) *audit.PageEvidence
	// MaxRedirects caps the redirect hops followed per request.
	MaxRedirects int
	// Transport replaces the HTTP transport (tests); nil uses a tuned
	// transport with keep-alive and HTTP/2 on the SSRF guard of package
	// netguard (see guard.go: loopback and private addresses only for the
	// hosts of the scope, link-local and unspecified ones never).
	Transport http.RoundTripper
	// Resolver resolves host names for the default transport (nil: the
	// system resolver).
	Resolver netguard.Resolver
	// Extract bounds extraction.
	Extract extract.Options
	// OnPage is called after each page is recorded (progress display). It
	// must be safe for concurrent use.
	OnPage func(*audit.Page)
	// Frontier persists the crawl's frontier so that an interrupted crawl
	// can resume (see Frontier); nil keeps it in memory only, and a crawl
	// starts from its seeds.
	Frontier Frontier
	// Hosts overrides parallelism, delay and request headers for matching
	// hosts; the first matching rule wins (nil: none).
	Hosts []politeness.HostRule
	// Logger receives crawl events; nil discards them.
	Logger *slog.Logger
	// NoIgnore makes CrawlDir see hidden files and directories and what
	// .gitignore excludes (the .git directory stays out).
	NoIgnore bool
	// DirListing makes CrawlDir answer a folder without an index file
	// with a generated listing of its entries, whose links are crawled
	// (a web server's autoindex), instead of the folder rule of the
	// directory's kind (see CrawlDir).
	DirListing bool
	// Robots is the site's robots.txt gate shared with the check stage
	// (NewRobotsGate), so that both stages read robots.txt once and share
	// each host's Crawl-delay budget; nil: the crawl makes its own.
	// Ignored with IgnoreRobots.
	Robots *RobotsGate
}

func (o Options) withDefaults() Options {
	if o.PerHost <= 0 {
		o.PerHost = 4
	}
	if o.MaxCrawlDelay <= 0 {
		o.MaxCrawlDelay = 30 * time.Second
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 5 << 20
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Frontier == nil {
		o.Frontier = noFrontier{}
	}
	return o
}

// Stats counts what a crawl did.
type Stats struct {
	Pages         int64 // pages recorded (fetched, failed or blocked)
	HTMLPages     int64 // pages parsed as HTML
	Links         int64 // links extracted
	OutOfScope    int64 // links not crawled because they leave the scope
	RobotsBlocked int64 // URLs robots.txt disallowed
	Errors        int64 // fetch failures (network, timeouts)
	BudgetHit     bool  // MaxPages stopped the crawl from growing
	// Traps are the crawl traps the guards cut, with their total Cut.
	Traps []audit.CrawlTrap
}

// TrapSink is implemented by a Sink that stores crawl traps. The crawler
// hands it what the guards cut since the last call, after the crawl (also
// an interrupted one) and whenever a new trap is found, so that Cut values
// add up (audit.CrawlTrap.RunID is left for the sink to set).
type TrapSink interface {
	AddTraps(traps []audit.CrawlTrap)
}

// Crawler crawls with Colly and sends pages to a Sink.
type Crawler struct {
	opts Options
	sink Sink
	// seedsOnly: links are extracted from the seeds only (CrawlFiles).
	seedsOnly bool
	// dirMode: a local directory is crawled; its embedded resources are
	// fetched too (from disk: free), so that every local target is judged
	// from the crawl and never looked up at the --base URL on the network.
	dirMode bool
	// unit: one page of a distributed crawl is fetched (FetchUnit).
	unit *unitSpec
}

// New returns a Crawler that records into sink.
func New(opts Options, sink Sink) *Crawler {
	o := opts.withDefaults()
	if o.Scheduler == nil {
		o.Scheduler = politeness.New(politeness.Options{PerHost: o.PerHost, Delay: o.Delay, Rules: o.Hosts, ResourceID: urls.NormalizeURL})
	}
	return &Crawler{opts: o, sink: sink}
}

// Crawl crawls recursively from seeds, staying on the seeds' hosts (and
// AllowDomains).
func (c *Crawler) Crawl(ctx context.Context, seeds []string) (Stats, error) {
	return c.run(ctx, seeds, true, nil)
}

// CrawlList fetches each URL and extracts its links, without following them.
func (c *Crawler) CrawlList(ctx context.Context, urls []string) (Stats, error) {
	return c.run(ctx, urls, false, nil)
}

// CrawlDir crawls a local directory (a static site build, or a
// repository of Markdown and HTML documents) as if it were served at base,
// so it can be audited before it is deployed. The directory is walked as a
// repository is (see WalkTree and Options.NoIgnore): every HTML and
// Markdown document of the tree is a seed, and relative links between
// files resolve on disk (a missing file answers 404). Links to other hosts
// are recorded; only the directory is crawled.
//
// A link to a folder is answered as the documents audited would have it
// answered: when none of them is Markdown (an HTML build directory),
// as a static web server does, with the folder's index file (index.html,
// else index.htm) or else 404; when one is Markdown (a repository, whose
// forge shows every folder), with the index file or else an empty 200.
// Options.DirListing answers a folder without an index file with a
// listing of its entries instead, in either kind.
func (c *Crawler) CrawlDir(ctx context.Context, dir, base string) (Stats, error) {
	return c.crawlDir(ctx, dir, base, nil)
}

// CrawlFiles is CrawlDir for some documents of dir only (slash-separated
// paths relative to dir): links are extracted from them; the files of
// the directory they link to are fetched for their status and anchors,
// but their own links are not extracted.
func (c *Crawler) CrawlFiles(ctx context.Context, dir, base string, files []string) (Stats, error) {
	if len(files) == 0 {
		return Stats{}, errors.New("crawl files: no files")
	}
	return c.crawlDir(ctx, dir, base, files)
}

func (c *Crawler) crawlDir(ctx context.Context, dir, base string, files []string) (Stats, error) {
	bu, err := url.Parse(base)
	if err != nil || !bu.IsAbs() || bu.Host == "" {
		return Stats{}, fmt.Errorf("crawl dir: base %q must be an absolute http(s) URL", base)
	}
	if !strings.HasSuffix(bu.Path, "/") {
		bu.Path += "/"
	}
	tree, err := WalkTree(ctx, dir, c.opts.NoIgnore)
	if err != nil {
		return Stats{}, fmt.Errorf("crawl dir: %w", err)
	}
	pages := tree.Pages
	if files != nil {
		pages = nil
		for _, f := range files {
			f = strings.TrimPrefix(path.Clean(filepath.ToSlash(f)), "./")
			if !tree.Has(f) {
				return Stats{}, fmt.Errorf("crawl files: %s is not a visible file of %s (hidden or ignored? see --no-ignore)", f, dir)
			}
			pages = append(pages, f)
		}
	}
	seeds := []string{bu.String()}
	folders := folderNotFound
	if len(pages) > 0 {
		seeds = seeds[:0]
		for _, p := range pages {
			if markdown.IsPath(p) {
				folders = folderEmpty
			}
			// A directory's index file is crawled as the directory, the
			// URL links use for it.
			if d := parentDir(p); tree.Index(d) == p {
				p = strings.TrimSuffix(p, path.Base(p))
			}
			seeds = append(seeds, bu.ResolveReference(&url.URL{Path: p}).String())
		}
	}
	if c.opts.DirListing {
		folders = folderListing
	}
	next, closeNext := c.transportFor(newScope([]*url.URL{bu}, c.opts.AllowDomains, nil, nil), nil)
	defer closeNext()
	// Page.File names files as the directory was named: "docs/guide.md"
	// for linkrot audit docs, "guide.md" for linkrot audit . (paths a
	// code-scanning upload resolves against the repository root).
	prefix := filepath.ToSlash(filepath.Clean(dir))
	if prefix == "." {
		prefix = ""
	}
	dt, root, err := newDirTransport(dir, prefix, bu, tree, folders, next)
	if err != nil {
		return Stats{}, fmt.Errorf("crawl dir: %w", err)
	}
	defer root.Close()
	return c.runDir(ctx, seeds, dt, bu.EscapedPath(), files != nil)
}

// CrawlSitemaps reads the sitemaps (index files and gzipped sitemaps too) and
// crawls recursively with their URLs as seeds, so pages no link reaches are
// audited as well. The scope is the sitemaps' hosts.
func (c *Crawler) CrawlSitemaps(ctx context.Context, sitemaps []string, extraSeeds []string) (Stats, error) {
	smRT, closeSM := c.transportFor(sitemapScope(sitemaps, c.opts.AllowDomains), nil)
	defer closeSM()
	// A sitemap may be large (4 timeouts for it), and like a page it is
	// timed from when it is sent, not while its host is paused.
	client := &http.Client{Transport: c.opts.Scheduler.Transport(&deadlineTransport{next: smRT, timeout: c.opts.Timeout * 4}, nil),
		CheckRedirect: sameHostRedirects(c.opts.MaxRedirects)}
	sm := &sitemapReader{client: client, ua: c.opts.UserAgent, log: c.opts.Logger}
	var seeds []string
	seeds = append(seeds, extraSeeds...)
	for _, s := range sitemaps {
		urls, err := sm.Read(ctx, s)
		if err != nil {
			c.opts.Logger.Warn("sitemap", "url", s, "err", err)
		}
		if len(urls) == 0 && err != nil && len(sitemaps) == 1 && len(extraSeeds) == 0 {
			return Stats{}, fmt.Errorf("read sitemap: %w", err)
		}
		su, _ := parseURL(s)
		for _, u := range urls {
			pu, perr := parseURL(u)
			if perr != nil || su == nil || hostPort(pu) != hostPort(su) {
				c.opts.Logger.Warn("sitemap URL on another host skipped", "sitemap", s, "url", u)
				continue
			}
			seeds = append(seeds, u)
		}
	}
	if len(seeds) == 0 {
		return Stats{}, errors.New("read sitemap: no URLs found")
	}
	return c.run(ctx, seeds, true, nil)
}

// crawl is the state of one run.
type crawl struct {
	*Crawler
	ctx    context.Context
	follow bool
	scope  *scope
	robots *robots
	traps  *traps
	q      *queue.Queue
	// frontier is Options.Frontier.
	frontier Frontier
	admitter Admitter // the Frontier, when it is one

	mu       sync.Mutex
	seen     map[string]bool // normalized URLs queued or fetched
	queued   int
	hops     map[string][]audit.Redirect // by first request URL
	budgetLg bool

	stats Stats
}

func (c *Crawler) run(ctx context.Context, seeds []string, follow bool, transport http.RoundTripper) (Stats, error) {
	return c.runScoped(ctx, seeds, follow, transport, "")
}

// runDir is runScoped for a local directory; with seedsOnly, links are
// extracted from the seeds only.
func (c *Crawler) runDir(ctx context.Context, seeds []string, transport http.RoundTripper, prefix string, seedsOnly bool) (Stats, error) {
	c2 := *c
	c2.seedsOnly, c2.dirMode = seedsOnly, true
	return c2.runScoped(ctx, seeds, true, transport, prefix)
}

// runScoped is run with the seeds' hosts limited to paths under prefix
// ("" or "/": no limit).
func (c *Crawler) runScoped(ctx context.Context, seeds []string, follow bool, transport http.RoundTripper, prefix string) (Stats, error) {
	o := c.opts
	var seedURLs []*url.URL
	for _, s := range seeds {
		u, err := parseURL(strings.TrimSpace(s))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Stats{}, fmt.Errorf("crawl: seed %q is not an absolute http(s) URL", s)
		}
		seedURLs = append(seedURLs, u)
	}
	if len(seedURLs) == 0 {
		return Stats{}, errors.New("crawl: no seed URLs")
	}
	if follow {
		// The audited site's pages are never given up wholesale: a limit
		// covering its host pauses it, and the crawl waits.
		for _, u := range seedURLs {
			o.Scheduler.Keep(politeness.Key(u))
		}
	}
	cr := &crawl{
		Crawler: c,
		ctx:     ctx,
		follow:  follow,
		scope:   newScope(seedURLs, o.AllowDomains, o.Include, o.Exclude),
		seen:    map[string]bool{},
		hops:    map[string][]audit.Redirect{},
		traps:   newTraps(o.trapLimits()),

		frontier: o.Frontier,
	}
	if a, ok := o.Frontier.(Admitter); ok {
		cr.admitter = a
	}
	if prefix != "/" {
		cr.scope.prefix = prefix
	}
	base, closeBase := c.transportFor(cr.scope, transport)
	defer closeBase()
	rt := &capTransport{next: base, maxBody: o.MaxBody}
	gate := o.Robots
	if gate == nil {
		// robots.txt itself is fetched unpaced: the pacing asks for it.
		robotsClient := &http.Client{Transport: rt, Timeout: o.Timeout, CheckRedirect: sameHostRedirects(maxRobotsRedirects)}
		gate = newRobotsGate(newRobots(robotsClient, o.UserAgent), cr.scope, o.MaxCrawlDelay)
		// The gate hands the site's Crawl-delay to the Scheduler, which
		// paces every stage that shares it.
		gate.sched = o.Scheduler
	}
	cr.robots = gate.robots
	// Every page request runs within the host's slot of the Scheduler:
	// concurrency, Delay, Crawl-delay, pauses after 429 and 503, the
	// adaptive rate (package politeness). Colly itself is not limited per
	// host (only by its threads).
	// The timeout covers the request on the network (connect, headers,
	// body), not the wait for the host's slot, a pause after a 429 or the
	// Crawl-delay: a page queued behind a paused host is sent when the
	// host may be asked again, not failed as a timeout it never had
	// (the run's context and the Scheduler's give-up bound that wait).
	sched := o.Scheduler.Transport(&deadlineTransport{next: base, timeout: o.Timeout}, nil)
	var pageRT http.RoundTripper = &capTransport{next: sched, maxBody: o.MaxBody}
	if !o.IgnoreRobots {
		// Crawl-delay bounds every request to the host, whichever stage
		// sends it (the gate is shared with the checks); the gate asks
		// for it before the Scheduler's slot.
		pageRT = &capTransport{next: gate.RoundTripper(sched), maxBody: o.MaxBody}
	}
	client := &http.Client{Transport: pageRT} // timeout: deadlineTransport

	col := colly.NewCollector(
		colly.StdlibContext(ctx),
		colly.UserAgent(o.UserAgent),
		colly.AllowURLRevisit(), // the crawl keeps its own frontier (cr.seen)
		colly.ParseHTTPErrorResponse(),
		colly.IgnoreRobotsTxt(), // checked by cr.robots, see robots.go
		colly.MaxBodySize(int(o.MaxBody)+1),
	)
	col.SetClient(client)
	col.SetRedirectHandler(cr.redirect)
	threads := o.PerHost * max(1, len(cr.scope.hostPorts))
	if !follow {
		threads = o.PerHost * 4
	}
	q, err := queue.New(min(threads, 256), &queue.InMemoryQueueStorage{MaxSize: 10_000_000})
	if err != nil {
		return Stats{}, fmt.Errorf("crawl: queue: %w", err)
	}
	cr.q = q
	col.OnRequest(func(r *colly.Request) {
		if ctx.Err() != nil {
			r.Abort() // drain the queue without fetching once interrupted
			return
		}
		r.Ctx.Put("key", r.URL.String())
		setHostHeaders(o.Hosts, r)
	})
	col.OnResponse(cr.onResponse)
	col.OnError(cr.onError)

	defer cr.flushTraps()
	pending, err := cr.restore(ctx)
	if err != nil {
		return Stats{}, err
	}
	for _, p := range pending {
		if u, err := parseURL(p.URL); err == nil {
			cr.schedule(u, p.Depth)
		}
	}
	if c.unit != nil {
		c.unit.start(cr)
	} else {
		for _, u := range seedURLs {
			cr.enqueue(u, 0, true, "")
		}
	}
	if err := q.Run(col); err != nil {
		return cr.snapshot(), fmt.Errorf("crawl: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return cr.snapshot(), fmt.Errorf("crawl interrupted: %w", err)
	}
	return cr.snapshot(), nil
}

func (cr *crawl) snapshot() Stats {
	cr.mu.Lock()
	st := cr.stats
	cr.mu.Unlock()
	st.Traps = cr.traps.list()
	return st
}

// flushTraps hands the traps cut since the last flush to a TrapSink.
func (cr *crawl) flushTraps() {
	ts, ok := cr.sink.(TrapSink)
	if !ok {
		return
	}
	if d := cr.traps.delta(); len(d) > 0 {
		ts.AddTraps(d)
	}
}

// key is the visited-set key of u: normalized, without fragment and
// session-id parameters. session names the session parameter dropped ("":
// none). ok is false for a URL that does not normalize.
func (cr *crawl) key(u *url.URL) (key, session string, ok bool) {
	su, session := cr.traps.stripSession(stripFragment(u))
	k, err := urls.NormalizeURL(su.String())
	return k, session, err == nil
}

// enqueue queues u for fetching unless it was seen, is out of scope, too deep,
// over budget or disallowed by robots.txt. Seeds skip the scope filters.
func (cr *crawl) enqueue(u *url.URL, depth int, seed bool, from string) {
	if u, ok := cr.admit(u, depth, seed, from); ok {
		cr.queue([]*url.URL{u}, depth)
		cr.schedule(u, depth)
	}
}

// admit decides whether u, linked from page from, enters the queue: not
// seen, in scope, not too deep, not in a crawl trap (see trap.go), within
// budget. It marks an admitted URL seen and returns it without fragment.
// Seeds skip the scope, depth and trap filters.
func (cr *crawl) admit(u *url.URL, depth int, seed bool, from string) (*url.URL, bool) {
	u, ok, _ := cr.admitOnce(u, depth, seed, from)
	return u, ok
}

// repeat is what admitting a URL again, linked from the same page at the
// same depth, would do, as admitOnce learns it deciding the first time.
type repeat uint8

const (
	// repeatDecide: the decision may differ or have effects (a trap
	// guard counts or records, the budget, a distributed crawl's claim):
	// decide again.
	repeatDecide repeat = iota
	// repeatNothing: refused again, with no effect (the URL does not
	// normalize, is too deep, or is seen: the first time admitted it or
	// found it seen, and seen URLs stay seen).
	repeatNothing
	// repeatOutOfScope: refused again as out of scope, which is counted
	// (scope.reason depends on the URL only).
	repeatOutOfScope
)

// admitOnce is admit, and what a repeat of the same decision would do
// (for a link that is not a seed).
func (cr *crawl) admitOnce(u *url.URL, depth int, seed bool, from string) (*url.URL, bool, repeat) {
	u = stripFragment(u)
	key, session, ok := cr.key(u)
	if !ok {
		return nil, false, repeatNothing
	}
	if !seed {
		if r := cr.scope.reason(u); r != "" {
			cr.mu.Lock()
			cr.stats.OutOfScope++
			cr.mu.Unlock()
			return nil, false, repeatOutOfScope
		}
		if cr.opts.MaxDepth > 0 && depth > cr.opts.MaxDepth {
			return nil, false, repeatNothing
		}
		if kind, pattern, start, limit := cr.traps.pathGuard(u); kind != "" {
			cr.trapCut(kind, pattern, start, from, u, limit)
			return nil, false, repeatDecide
		}
	}
	if cr.unit != nil && !seed {
		// A distributed crawl: the run's shared seen set decides.
		if !cr.unit.claimKey(key) {
			return nil, false, repeatDecide
		}
		if cr.admitter != nil {
			cr.admitter.Admitted(u.String())
		}
		return u, true, repeatDecide
	}
	// A seen URL is refused again with no effect unless its session
	// parameter makes the refusal a trap record.
	seenAgain := repeatDecide
	if session == "" {
		seenAgain = repeatNothing
	}
	cr.mu.Lock()
	if cr.seen[key] {
		cr.mu.Unlock()
		if session != "" && !seed {
			// Without the guard this link would be a new page.
			p := sessionPattern(u, session)
			cr.trapCut(audit.TrapSessionID, p, cr.traps.sessionStart(p), from, u, 0)
		}
		return nil, false, seenAgain
	}
	cr.mu.Unlock()
	if !seed {
		if pattern, start, ok := cr.traps.variant(u); !ok {
			cr.trapCut(audit.TrapQueryVariants, pattern, start, from, u, cr.traps.lim.variants)
			return nil, false, repeatDecide
		}
	}
	if session != "" {
		cr.traps.sessionSeen(u, session)
	}
	cr.mu.Lock()
	if cr.seen[key] { // admitted meanwhile by another page
		cr.mu.Unlock()
		return nil, false, seenAgain
	}
	if cr.opts.MaxPages > 0 && cr.queued >= cr.opts.MaxPages {
		cr.stats.BudgetHit = true
		logIt := !cr.budgetLg
		cr.budgetLg = true
		cr.mu.Unlock()
		if logIt {
			cr.opts.Logger.Warn("page budget reached; further pages are recorded as links only", "max_pages", cr.opts.MaxPages)
		}
		return nil, false, repeatDecide
	}
	if cr.admitter != nil {
		cr.admitter.Admitted(u.String()) // before another page can find it taken
	}
	cr.seen[key] = true
	cr.queued++
	cr.mu.Unlock()
	return u, true, seenAgain
}

// trapCut records a URL a trap guard cut, linked from page from; start is
// where the trap starts when the guard knows ("": from). It logs each new
// trap once.
func (cr *crawl) trapCut(kind audit.TrapKind, pattern, start, from string, u *url.URL, limit int) {
	if start == "" {
		start = from
	}
	if cr.traps.cut(kind, pattern, start, u, limit) {
		cr.opts.Logger.Warn("crawl trap: URLs cut", "trap", kind, "pattern", pattern, "starts_on", start, "cut_on", from)
		cr.flushTraps() // stored at once: an interrupted crawl keeps it
	}
}

// schedule hands an admitted URL to Colly's queue, or records it as a page
// disallowed by robots.txt.
func (cr *crawl) schedule(u *url.URL, depth int) {
	if !cr.opts.IgnoreRobots {
		ok, rerr := cr.robots.Allowed(cr.ctx, u)
		if !ok {
			msg := "disallowed by robots.txt"
			if rerr != nil {
				msg = "robots.txt unreachable, crawling disallowed (RFC 9309): " + rerr.Error()
			}
			cr.mu.Lock()
			cr.stats.RobotsBlocked++
			cr.mu.Unlock()
			cr.record(&audit.Page{
				Extraction: audit.Extraction{URL: u.String()},
				RequestURL: u.String(), Depth: depth, FetchError: msg, FetchedAt: time.Now().UTC(),
			})
			return
		}
	}
	ctx := colly.NewContext()
	ctx.Put("orig", u.String())
	ctx.Put("start", strconv.FormatInt(time.Now().UnixNano(), 10))
	req := &colly.Request{URL: u, Method: http.MethodGet, Depth: depth, Ctx: ctx}
	if u.Opaque != "" {
		// A URL net/url cannot carry (urls.URL.NetURL): Colly's queue
		// re-parses it with net/url, so it gets a stand-in, and
		// urlTransport requests the URL itself (headerTarget).
		req.URL = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawQuery: u.RawQuery, ForceQuery: u.ForceQuery}
		req.Headers = &http.Header{headerTarget: []string{u.String()}}
	}
	if err := cr.q.AddRequest(req); err != nil {
		cr.opts.Logger.Error("queue", "url", u.String(), "err", err)
	}
}

// redirect follows and records redirect hops. It stops (returning the 3xx
// as the page's response) at the hop cap, on a loop, when the target leaves
// the scope, is disallowed by robots.txt, or was already crawled.
func (cr *crawl) redirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL.String()
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	cr.mu.Lock()
	cr.hops[first] = append(cr.hops[first], audit.Redirect{From: via[len(via)-1].URL.String(), To: req.URL.String(), Status: status})
	cr.mu.Unlock()
	if len(via) > cr.opts.MaxRedirects {
		return http.ErrUseLastResponse
	}
	for _, v := range via {
		if v.URL.String() == req.URL.String() {
			return http.ErrUseLastResponse
		}
	}
	// A recursive crawl follows redirects within its scope; a URL list
	// follows a listed URL's redirects wherever they lead (the list names
	// pages, and their content is at the end of the chain).
	if cr.follow && cr.scope.reason(req.URL) != "" || req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return http.ErrUseLastResponse
	}
	if !cr.opts.IgnoreRobots {
		if ok, _ := cr.robots.Allowed(cr.ctx, req.URL); !ok {
			return http.ErrUseLastResponse
		}
	}
	if kind, pattern, start, limit := cr.traps.pathGuard(req.URL); kind != "" && cr.follow {
		cr.trapCut(kind, pattern, start, first, req.URL, limit)
		return http.ErrUseLastResponse
	}
	key, _, ok := cr.key(req.URL)
	if !ok {
		return http.ErrUseLastResponse
	}
	if cr.unit != nil {
		if !cr.unit.claimKey(key) {
			return http.ErrUseLastResponse
		}
		return nil
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.seen[key] {
		return http.ErrUseLastResponse
	}
	cr.seen[key] = true
	return nil
}

func (cr *crawl) takeHops(r *colly.Request) []audit.Redirect {
	key := r.Ctx.Get("key")
	cr.mu.Lock()
	defer cr.mu.Unlock()
	h := cr.hops[key]
	delete(cr.hops, key)
	return h
}

func (cr *crawl) basePage(r *colly.Request) *audit.Page {
	p := &audit.Page{
		Extraction: audit.Extraction{URL: r.URL.String()},
		RequestURL: r.Ctx.Get("orig"),
		Depth:      r.Depth,
		FetchedAt:  time.Now().UTC(),
		Redirects:  cr.takeHops(r),
	}
	if p.RequestURL == "" {
		p.RequestURL = p.URL
	}
	if start, err := strconv.ParseInt(r.Ctx.Get("start"), 10, 64); err == nil {
		p.Duration = time.Since(time.Unix(0, start))
	}
	return p
}

func (cr *crawl) onResponse(r *colly.Response) {
	p := cr.basePage(r.Request)
	p.Status = r.StatusCode
	h := http.Header{}
	if r.Headers != nil {
		h = *r.Headers
	}
	p.ContentType = h.Get(headerOrigContentType)
	p.Truncated = h.Get(headerTruncated) != ""
	p.Size = int64(len(r.Body))
	if p.Status >= 300 && p.Status < 400 {
		if loc := h.Get("Location"); loc != "" && len(p.Redirects) == 0 {
			// A redirect linkrot chose not to follow still names its target.
			if to, err := r.Request.URL.Parse(loc); err == nil {
				p.Redirects = []audit.Redirect{{From: p.URL, To: to.String(), Status: p.Status}}
			}
		}
	}
	// Parsing, extraction and the evidence are the crawl's CPU work: done
	// holding a CPU slot (internal/cpuslot), so that a wave of responses
	// does not starve the run's writer of the processors.
	var keys urls.TargetKeys // each href of the page parsed once
	cpuslot.Do(func() { cr.parse(p, r, h, &keys) })
	// The links to follow are admitted and handed to the Frontier before
	// the page is recorded (see Frontier.Queue), then scheduled.
	var next []*url.URL
	if cr.follow && p.Parsed {
		next = cr.follows(p, r.Request.Depth+1, &keys)
	}
	cr.queue(next, r.Request.Depth+1)
	cr.record(p)
	if cr.unit != nil {
		return // a distributed crawl publishes them (FetchUnit)
	}
	for _, u := range next {
		cr.schedule(u, r.Request.Depth+1)
	}
}

// follows admits the pages page p links to (at depth) and returns them;
// keys parses each href (it parsed the page's hrefs for their targets).
func (cr *crawl) follows(p *audit.Page, depth int, keys *urls.TargetKeys) []*url.URL {
	var next []*url.URL
	// A page links to the same URL again and again (python's docs: 7
	// times on average, with other fragments): a repeat whose decision
	// is known (repeats) is not parsed and decided again.
	var repeats map[string]repeat
	for _, l := range p.Links {
		// Pages are followed (links, iframes, refreshes, cites); in a
		// directory every checked target is a file to read.
		if r := l.Rule(); !r.Page && !(cr.dirMode && r.Checked()) {
			continue
		}
		// Known by its href without fragment where that cannot change
		// how it parses (urls.CutFragment).
		rk, memo := urls.CutFragment(l.Href), cr.unit == nil
		if memo {
			if rep, ok := repeats[rk]; ok {
				if rep == repeatOutOfScope {
					cr.mu.Lock()
					cr.stats.OutOfScope++
					cr.mu.Unlock()
				}
				continue
			}
		}
		u, err := keys.NetURL(l.Href) // parseURL's
		if err != nil {
			continue
		}
		u, ok, rep := cr.admitOnce(u, depth, false, p.URL)
		if ok {
			next = append(next, u)
		}
		if memo && rep != repeatDecide {
			if repeats == nil {
				repeats = make(map[string]repeat)
			}
			repeats[rk] = rep
		}
	}
	return next
}

// parse fills p from the body of r (h: its header): the links and
// robustness data of an HTML or Markdown page, and the evidence the
// checker judges the page by. It is CPU work only (see onResponse). The
// links' targets are recorded through keys (setTargets), which then
// holds the page's hrefs parsed for the links the crawl follows.
func (cr *crawl) parse(p *audit.Page, r *colly.Response, h http.Header, keys *urls.TargetKeys) {
	var doc *extract.Document // the parsed page, for the evidence
	p.File = h.Get(headerFile)
	body := r.Body
	extractLinks := !cr.seedsOnly || r.Request.Depth == 0
	if p.File != "" && markdown.IsPath(p.File) && p.Status >= 200 && p.Status < 300 {
		// A Markdown document: its links with their positions, and for
		// the evidence its rendering with GitHub's heading anchors.
		md := markdown.Parse(r.Body, r.Request.URL, cr.opts.Extract)
		if extractLinks {
			p.Extraction = md.Extraction
		}
		p.Charset = "utf-8"
		body = md.HTML
		h = h.Clone()
		h.Set(headerOrigContentType, "text/html; charset=utf-8")
		if f := extract.Facts(md.HTML); f != nil {
			doc = &extract.Document{Decoded: md.HTML, Facts: f}
		} else if root, err := html.Parse(bytes.NewReader(md.HTML)); err == nil {
			doc = &extract.Document{Decoded: md.HTML, Root: root}
		}
	} else if p.Status >= 200 && p.Status < 300 && httpx.IsHTML(p.ContentType, r.Body) && !extractLinks {
		_, _, doc, _ = extract.ParseDocument(r.Body, p.ContentType, r.Request.URL, h, cr.opts.Extract)
	} else if p.Status >= 200 && p.Status < 300 && httpx.IsHTML(p.ContentType, r.Body) {
		pu := r.Request.URL
		ex, cs, d, err := extract.ParseDocument(r.Body, p.ContentType, pu, h, cr.opts.Extract)
		doc = d
		if err != nil {
			p.FetchError = err.Error()
		}
		p.Extraction = ex
		p.Charset = cs
		if p.Truncated {
			p.Diagnostics = append(p.Diagnostics, audit.Diagnostic{Field: "body", Code: "truncated",
				Message: fmt.Sprintf("body exceeded --max-body %d bytes; links after the cap are missing", cr.opts.MaxBody)})
		}
	}
	setTargets(p.Links, keys)
	p.Evidence = cr.evidence(p, h, body, doc)
}

// setTargets records the key of each link's target (audit.Link.SetTarget)
// through keys, which parses each of the page's hrefs once: the router
// and the store's writer read it instead of parsing every href again, and
// the links followed are parsed by keys too.
func setTargets(links []audit.Link, keys *urls.TargetKeys) {
	for i := range links {
		l := &links[i]
		l.SetTarget(keys.Key(l.Href))
	}
}

func (cr *crawl) onError(r *colly.Response, err error) {
	if cr.ctx.Err() != nil {
		// Interrupted: the page was not really fetched; a resumed run
		// fetches it again.
		return
	}
	p := cr.basePage(r.Request)
	p.Status = r.StatusCode
	p.FetchError = classify(err)
	cr.mu.Lock()
	cr.stats.Errors++
	cr.mu.Unlock()
	cr.record(p)
}

func (cr *crawl) record(p *audit.Page) {
	if p.Identifiers == nil {
		p.Identifiers = []audit.Identifier{}
	}
	cr.mu.Lock()
	cr.stats.Pages++
	if p.Parsed {
		cr.stats.HTMLPages++
	}
	cr.stats.Links += int64(len(p.Links))
	cr.mu.Unlock()
	cr.sink.Add(p)
	if cr.opts.OnPage != nil {
		cr.opts.OnPage(p)
	}
}

// classify turns a fetch error into a short, stable description.
func classify(err error) string {
	var ne net.Error
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case isRefused(err):
		return "refused: " + err.Error()
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout: " + err.Error()
	case errors.As(err, &dnsErr):
		return "dns: " + err.Error()
	case errors.As(err, &opErr):
		return "connection: " + err.Error()
	default:
		return err.Error()
	}
}

// parseURL parses s by the one URL parser (urls.ParseURL, WHATWG) and
// returns it without its fragment as net/url carries it (urls.URL.NetURL):
// a link whose fragment or path net/url would reject ("#%_sec",
// "/a%zz") is crawled as browsers follow it.
func parseURL(s string) (*url.URL, error) {
	u, err := urls.ParseURL(s)
	if err != nil {
		return nil, err
	}
	return u.NetURL(), nil
}

func stripFragment(u *url.URL) *url.URL {
	if u.Fragment == "" && u.RawFragment == "" {
		return u
	}
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return &c
}
