package linkrot

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/internal/cpuslot"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// item is what the run's single writer stores: a page, URLs the crawl
// queued, or a check.
type item struct {
	page   *audit.Page
	queued []audit.FrontierEntry
	check  *audit.Check
	traps  []audit.CrawlTrap
	mark   string // a stage to record once everything before it is stored
	// flushed, when not nil, is closed once everything before it is
	// stored (a barrier).
	flushed chan struct{}
}

// hop is a redirect the crawl observed.
type hop struct {
	status int
	to     string
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// observation is what a recorded page tells the router about URLs,
// computed from the page alone (observePage) before the router's state
// takes it in (register).
type observation struct {
	hops []normHop
	// final is the page's normalized final URL and full its Known
	// (anchors and text in memory, evidence deep-copied); "" and nil when
	// the page has no usable final response.
	final string
	full  *check.Known
}

// normHop is a redirect hop with both URLs normalized.
type normHop struct {
	from, to string
	status   int
}

// observePage reads what page p tells about URLs: its redirect hops and
// its final response. It touches no router state, so the crawl thread
// that recorded p runs it without the router's lock.
func observePage(p *audit.Page) observation {
	var o observation
	if p == nil || p.FetchError != "" || p.Status == 0 {
		return o
	}
	finalIsHop := false
	for i, h := range p.Redirects {
		if !isRedirect(h.Status) {
			continue
		}
		from, err1 := urls.NormalizeURL(h.From)
		to, err2 := urls.NormalizeURL(h.To)
		if err1 != nil || err2 != nil {
			break
		}
		o.hops = append(o.hops, normHop{from: from, to: to, status: h.Status})
		if i == len(p.Redirects)-1 && h.Status == p.Status && from == mustNorm(p.URL) {
			finalIsHop = true
		}
	}
	if finalIsHop || isRedirect(p.Status) || p.Evidence == nil {
		return o
	}
	n, err := urls.NormalizeURL(p.URL)
	if err != nil {
		return o
	}
	full := check.NewKnownIndex([]*audit.Page{p}, nil).Lookup(n)
	if full == nil {
		return o
	}
	full.Evidence = cloneEvidence(full.Evidence)
	o.final, o.full = n, full
	return o
}

// register records an observation: the redirect hops not known yet, and
// the final response unless the URL is known already as another page's
// final URL or as a hop. It returns the final URL and Known the page
// brings, or "" and nil. r.mu is held.
func (r *router) register(o observation) (string, *check.Known) {
	for _, h := range o.hops {
		if _, dup := r.hops[h.from]; !dup {
			if _, fin := r.finals[r.key(h.from)]; !fin {
				r.hops[h.from] = hop{status: h.status, to: h.to}
			}
		}
	}
	if o.full == nil {
		return "", nil
	}
	if _, dup := r.finals[r.key(o.final)]; dup {
		return "", nil
	}
	if _, dup := r.hops[o.final]; dup {
		return "", nil
	}
	r.finals[r.key(o.final)] = struct{}{}
	return o.final, o.full
}

func mustNorm(u string) string {
	n, _ := urls.NormalizeURL(u)
	return n
}

// lookup returns the crawl's response for a target URL, following the
// redirects the crawl observed: the page just recorded (fresh, with its
// anchors and text, when its URL freshURL is reached), or the final URL
// of an earlier page (lazy: its response is read back from the store by
// the feeder) with the redirect chain to it. Both are zero when the crawl
// did not observe the URL's outcome. r.mu is held.
func (r *router) lookup(u, freshURL string, fresh *check.Known) (k *check.Known, lazy string, chain []audit.Redirect) {
	cur := u
	seen := map[string]bool{cur: true}
	for {
		if cur == freshURL && fresh != nil {
			c := *fresh
			c.FinalURL, c.Redirects = cur, chain
			return &c, "", nil
		}
		if _, ok := r.finals[r.key(cur)]; ok {
			return nil, cur, chain
		}
		h, ok := r.hops[cur]
		if !ok || seen[h.to] || len(chain) >= 100 {
			return nil, "", nil
		}
		chain = append(chain, audit.Redirect{From: cur, To: h.to, Status: h.status})
		seen[h.to] = true
		cur = h.to
	}
}

// resolve submits target u (id: its target ID, 0 when not known yet)
// with the crawl's response for it, when the crawl observed one, and
// reports whether it did. r.mu is held.
func (r *router) resolve(u string, id int64, freshURL string, fresh *check.Known) bool {
	k, lazy, chain := r.lookup(u, freshURL, fresh)
	switch {
	case k != nil:
		r.submit(pending{t: check.Target{ID: id, URL: u, Known: k}})
	case lazy != "":
		r.submit(pending{t: check.Target{ID: id, URL: u}, final: lazy, chain: chain})
	default:
		return false
	}
	return true
}

// pending is a target on its way to the checker: with final set, its
// Known is the response of the page at final (reached through chain),
// read from the store by the feeder.
type pending struct {
	t     check.Target
	final string
	chain []audit.Redirect
}

// known reads back the crawl's response for a target whose page was
// recorded earlier (pending.final), or returns nil (the target is then
// fetched). A page still on its way to the database is waited for.
func (r *router) known(ctx context.Context, final string, chain []audit.Redirect) *check.Known {
	p, err := r.store.PageResponse(ctx, r.run.ID, final)
	if errors.Is(err, audit.ErrNotFound) {
		r.barrier(ctx)
		p, err = r.store.PageResponse(ctx, r.run.ID, final)
	}
	if err != nil || p.Evidence == nil {
		if err != nil && !errors.Is(err, audit.ErrNotFound) {
			r.log.Warn("crawl response not read: the target is fetched", "url", final, "err", err)
		}
		return nil
	}
	pageURL := p.URL
	k := check.NewKnownIndex([]*audit.Page{p}, func(ctx context.Context, _ *audit.Page) ([]string, string, error) {
		return r.store.PageContent(ctx, r.run.ID, pageURL)
	}).Lookup(final)
	if k == nil {
		return nil
	}
	k.FinalURL, k.Redirects = final, chain
	k.Offline = r.offline
	return k
}

// barrier waits until the writer stored everything handed to it so far.
func (r *router) barrier(ctx context.Context) {
	done := make(chan struct{})
	r.w.Add(item{flushed: done})
	r.w.Flush()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// urlKey is a 128-bit digest of a target URL: the router keeps one per
// unique target instead of the URL.
type urlKey [2]uint64

// router routes the targets of a crawl to the checker as they are
// discovered: each unique target once, a page of the crawl judged from
// the crawl's response (waiting for it when the crawl has queued the URL),
// anything else checked live at once.
type router struct {
	cfg   *Config
	store interface {
		crawlStore
		checkStore
	}
	run      *audit.Run
	log      *slog.Logger
	progress Progress
	w        *audit.Batcher[item]
	site     map[string]bool // hosts of the audited site
	offline  bool            // a directory crawl: pages are not the live site
	hasPrev  bool
	seeds    [2]maphash.Seed

	mu      sync.Mutex
	seen    map[urlKey]struct{} // targets routed (first sight)
	waiting map[string]bool     // URLs the crawl queued and has not recorded; true: a target waits
	// What the crawl observed, to judge later targets from: the redirect
	// hops it followed (few) and the final response of each page, without
	// its anchors and text (read back from the store when needed).
	hops   map[string]hop
	finals map[urlKey]struct{} // pages with a final response, read back from the store
	via    map[string][]string // queued URL -> targets redirecting to it

	// The queue to the checker. It holds at most maxQueued targets: when
	// the checks fall behind, the crawl waits for them (back-pressure), so
	// that memory does not grow with the site.
	qmu     sync.Mutex
	qcond   *sync.Cond // signalled when the queue gets a target or closes
	qspace  *sync.Cond // signalled when the feeder took the queue
	queue   []pending
	closed  bool
	stopped bool // the feeder is gone (cancelled): nothing waits for space

	cmu     sync.Mutex
	counts  audit.CheckCounts
	anchors map[string][]string // anchors of targets checked live with WantAnchors
}

func (r *router) key(u string) urlKey {
	return urlKey{maphash.String(r.seeds[0], u), maphash.String(r.seeds[1], u)}
}

// targetURL is the key of the target l's href makes, or ""
// (store.LinkTargetKey, the store's rule too).
func targetURL(l *audit.Link) string {
	key, _ := store.LinkTargetKey(l)
	return key
}

// wantAnchors says whether a target's anchors are collected for
// #fragment links: always for the audited site's pages, for other sites
// with Config.ExternalFragments.
func (r *router) wantAnchors(u string) bool {
	return r.cfg.ExternalFragments || r.site[HostOf(u)]
}

// submit queues a target for the checker. It never blocks.
func (r *router) submit(p pending) {
	if r.cfg.CrawlOnly {
		return
	}
	p.t.WantAnchors = r.wantAnchors(p.t.URL)
	if p.t.Known != nil && r.offline {
		p.t.Known.Offline = true
	}
	r.qmu.Lock()
	for len(r.queue) >= maxQueued && !r.stopped {
		r.qspace.Wait()
	}
	r.queue = append(r.queue, p)
	r.qmu.Unlock()
	r.qcond.Signal()
}

// maxQueued bounds the targets waiting for the checker (see router.queue).
const maxQueued = 4096

// closeQueue ends the stream of targets.
func (r *router) closeQueue() {
	r.qmu.Lock()
	r.closed = true
	r.qmu.Unlock()
	r.qcond.Broadcast()
}

// feed moves queued targets to the checker, looking up earlier results
// on the way (conditional requests, --max-age). It returns when the queue
// is closed and empty, or ctx is done.
func (r *router) feed(ctx context.Context, out chan<- check.Target) {
	defer close(out)
	defer func() {
		r.qmu.Lock()
		r.stopped = true
		r.qmu.Unlock()
		r.qspace.Broadcast()
	}()
	stop := context.AfterFunc(ctx, func() { r.qcond.Broadcast() })
	defer stop()
	for {
		r.qmu.Lock()
		for len(r.queue) == 0 && !r.closed && ctx.Err() == nil {
			r.qcond.Wait()
		}
		if ctx.Err() != nil || (len(r.queue) == 0 && r.closed) {
			r.qmu.Unlock()
			return
		}
		queued := r.queue
		r.queue = nil
		r.qmu.Unlock()
		r.qspace.Broadcast()
		batch := make([]check.Target, len(queued))
		for i, p := range queued {
			batch[i] = p.t
			if p.final != "" {
				// A page recorded before the link to it turned up.
				batch[i].Known = r.known(ctx, p.final, p.chain)
			}
		}
		clear(queued)
		if r.hasPrev {
			r.previous(ctx, batch)
		}
		for _, t := range batch {
			if t.Previous != nil && t.Known == nil && r.cfg.MaxAge > 0 && !t.WantAnchors &&
				time.Since(t.Previous.CheckedAt) <= r.cfg.MaxAge {
				c := *t.Previous
				c.Reused, c.ReusedFrom, c.RunID = true, t.Previous.RunID, r.run.ID
				c.TargetID = t.ID
				r.emit(c)
				continue
			}
			select {
			case out <- t:
			case <-ctx.Done():
				return
			}
		}
	}
}

// previous sets the earlier results of a batch of targets. Targets that
// earlier runs linked to exist already, so their IDs are known even while
// this run's pages are still being written.
func (r *router) previous(ctx context.Context, batch []check.Target) {
	var urls []string
	for _, t := range batch {
		if t.ID == 0 {
			urls = append(urls, t.URL)
		}
	}
	ids, err := r.store.TargetIDs(ctx, urls)
	if err != nil {
		r.log.Warn("earlier results not read", "err", err)
		return
	}
	var list []int64
	for i := range batch {
		if batch[i].ID == 0 {
			batch[i].ID = ids[batch[i].URL]
		}
		if batch[i].ID != 0 {
			list = append(list, batch[i].ID)
		}
	}
	prev, err := r.store.PreviousChecks(ctx, r.run.ID, list, r.cfg.MaxAge, time.Now().UTC())
	if err != nil {
		r.log.Warn("earlier results not read", "err", err)
		return
	}
	for i := range batch {
		batch[i].Previous = prev[batch[i].ID]
	}
}

// emit hands a check to the writer.
func (r *router) emit(c audit.Check) {
	c.RunID = r.run.ID
	r.cmu.Lock()
	if c.Anchors != nil && !c.FromCrawl && r.wantAnchors(c.URL) {
		r.anchors[c.URL] = c.Anchors
	}
	r.counts.Tally(&c)
	r.cmu.Unlock()
	c.Anchors = nil
	r.progress.Checked(&c)
	r.w.Add(item{check: &c})
}

// Queue is crawler.Frontier.Queue: the crawl will fetch these URLs.
func (r *router) Queue(entries []audit.FrontierEntry) {
	r.mu.Lock()
	for _, e := range entries {
		if n, err := urls.NormalizeURL(e.URL); err == nil {
			if _, ok := r.waiting[n]; !ok {
				r.waiting[n] = false
			}
		}
	}
	r.mu.Unlock()
	r.w.Add(item{queued: entries}) // after reading them: the writer may rewrite them
}

// Admitted is crawler.Admitter: the crawl admitted u and will queue it.
// A link to u routed from now on waits for u's page: without this, a
// page recorded between u's admission by another page and that page's
// Queue call had u checked live, and u was then fetched twice.
func (r *router) Admitted(u string) {
	n, err := urls.NormalizeURL(u)
	if err != nil {
		return
	}
	r.mu.Lock()
	if _, ok := r.waiting[n]; !ok {
		r.waiting[n] = false
	}
	r.mu.Unlock()
}

// AddTraps is crawler.TrapSink: crawl traps go through the same writer.
func (r *router) AddTraps(ts []audit.CrawlTrap) {
	for i := range ts {
		ts[i].RunID = r.run.ID
	}
	r.w.Add(item{traps: ts})
}

// Restore is crawler.Frontier.Restore.
func (r *router) Restore(ctx context.Context) ([]audit.FrontierEntry, []string, error) {
	return r.store.Frontier(ctx, r.run.ID)
}

// Add is crawler.Sink.Add: a page the crawl recorded. The page goes to
// the writer first, so that its links' targets exist before their checks
// are stored; then the targets waiting for the page are judged from it,
// and the page's links are routed.
func (r *router) Add(p *audit.Page) {
	r.progress.Page(p)
	// Everything the router needs of the page is read (and the Known
	// deep-copied) before the page goes to the writer, which may rewrite
	// it (redaction of URL credentials) while the checks read the Known.
	// It is read outside the router's lock: normalizing every URL of the
	// page is the work of this crawl thread, not of all threads in turn.
	obs := observePage(p)
	// Every URL of the page's redirect chain and its final URL.
	raws := make([]string, 0, len(p.Redirects)+2)
	raws = append(raws, p.RequestURL)
	for _, h := range p.Redirects {
		raws = append(raws, h.From)
	}
	chain := make([]string, 0, len(raws))
	for _, raw := range append(raws, p.URL) {
		if n, err := urls.NormalizeURL(raw); err == nil {
			chain = append(chain, n)
		}
	}
	links := make([]string, len(p.Links))
	for i := range p.Links {
		if p.Links[i].Checked() { // a connection hint is not checked
			links[i] = targetURL(&p.Links[i])
		}
	}
	// The page goes to the writer before any check of its targets can,
	// and before its final URL is registered: a lazy lookup of a
	// registered page reads the page back from the store (see lookup).
	// Outside the lock: when the writer is behind, only this thread waits
	// for it here. What the store can do of the page's writing ahead is
	// done here too, by this thread, in parallel with the others
	// (store.PagePreparer): the writer is what every thread waits for.
	if pp, ok := r.store.(store.PagePreparer); ok {
		cpuslot.Do(func() { pp.PreparePage(p) })
	}
	r.w.Add(item{page: p})
	r.mu.Lock()
	defer r.mu.Unlock()
	freshURL, fresh := r.register(obs)
	for _, n := range chain {
		linked, queued := r.waiting[n]
		if queued {
			delete(r.waiting, n)
		}
		if queued && linked {
			r.judge(n, freshURL, fresh)
		}
		// Targets whose redirects lead here were waiting for this page.
		if via, ok := r.via[n]; ok {
			delete(r.via, n)
			for _, u := range via {
				r.judge(u, freshURL, fresh)
			}
		}
	}
	for _, u := range links {
		r.route(u, freshURL, fresh)
	}
}

// cloneEvidence copies e so that it shares no map or slice with the page
// it came from.
func cloneEvidence(e audit.PageEvidence) audit.PageEvidence {
	e.Headers = maps.Clone(e.Headers)
	e.Anchors = slices.Clone(e.Anchors)
	if e.Signals != nil {
		sig := *e.Signals
		sig.H1 = slices.Clone(sig.H1)
		sig.Parking = slices.Clone(sig.Parking)
		e.Signals = &sig
	}
	return e
}

// judge submits target u, with the crawl's response when the crawl
// observed its outcome. When u redirects to a URL the crawl has queued
// but not fetched yet, u waits for that page instead. r.mu is held.
func (r *router) judge(u, freshURL string, fresh *check.Known) {
	if r.resolve(u, 0, freshURL, fresh) {
		return
	}
	if end := r.chainEnd(u); end != u {
		if _, queued := r.waiting[end]; queued {
			r.via[end] = append(r.via[end], u)
			return
		}
	}
	r.submit(pending{t: check.Target{URL: u}}) // fetched
}

// chainEnd follows the redirects the crawl observed from u.
func (r *router) chainEnd(u string) string {
	for range 100 {
		h, ok := r.hops[u]
		if !ok {
			return u
		}
		u = h.to
	}
	return u
}

// route routes one target on first sight. r.mu is held.
func (r *router) route(u, freshURL string, fresh *check.Known) {
	if u == "" || r.cfg.CrawlOnly {
		return
	}
	key := r.key(u)
	if _, ok := r.seen[key]; ok {
		return
	}
	r.seen[key] = struct{}{}
	if _, ok := r.waiting[u]; ok {
		r.waiting[u] = true // judged when its page is recorded
		return
	}
	r.judge(u, freshURL, fresh)
}

// resume prepares the router for a run being resumed: the targets the run
// already linked to are seen; those without a check are judged from the
// stored pages, wait for a page the crawl still has queued, or are
// checked live.
func (r *router) resume(ctx context.Context, crawl bool) error {
	var unchecked []audit.TargetRef
	err := r.store.UncheckedTargets(ctx, r.run.ID, func(t audit.TargetRef) error {
		unchecked = append(unchecked, t)
		return nil
	})
	if err != nil {
		return err
	}
	err = r.store.TargetURLs(ctx, r.run.ID, func(u string) error {
		r.seen[r.key(u)] = struct{}{}
		return nil
	})
	if err != nil {
		return err
	}
	if len(r.seen) == 0 {
		return nil // a new run
	}
	if crawl {
		queued, _, err := r.store.Frontier(ctx, r.run.ID)
		if err != nil {
			return err
		}
		for _, e := range queued {
			if n, err := urls.NormalizeURL(e.URL); err == nil {
				r.waiting[n] = false
			}
		}
	}
	if len(unchecked) == 0 {
		return nil
	}
	pages, err := r.store.PageResponses(ctx, r.run.ID)
	if err != nil {
		return fmt.Errorf("load crawl responses: %w", err)
	}
	for _, p := range pages {
		r.register(observePage(p))
	}
	for _, t := range unchecked {
		if r.resolve(t.URL, t.ID, "", nil) {
			continue
		}
		if _, ok := r.waiting[t.URL]; ok {
			r.waiting[t.URL] = true
			continue
		}
		r.submit(pending{t: check.Target{ID: t.ID, URL: t.URL}})
	}
	return nil
}
