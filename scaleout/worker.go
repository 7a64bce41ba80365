package scaleout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/urls"
)

// Store is what a worker writes and reads: the run's pages and checks,
// through the same idempotent store methods the single-process pipeline
// uses (a unit done twice after a redelivery writes the same rows).
// *sqlstore.DB implements it.
type Store interface {
	SaveCrawl(ctx context.Context, runID int64, pages []*audit.Page, queued []audit.FrontierEntry) error
	SaveCrawlTraps(ctx context.Context, traps []audit.CrawlTrap) error
	SaveChecksByURL(ctx context.Context, checks []audit.Check) ([]audit.Check, error)
	PageResponse(ctx context.Context, runID int64, targetURL string) (*audit.Page, error)
	PageContent(ctx context.Context, runID int64, pageURL string) (anchors []string, text string, err error)
}

// RunEnv is what a worker needs to work on one run, built from the run's
// settings by WorkerConfig.Setup: the pipeline's own crawler and checker.
type RunEnv struct {
	// Seeds are the run's seeds (the crawl's scope).
	Seeds []string
	// Crawler fetches crawl units (crawler.Crawler.FetchUnit); its
	// Options.Robots should be set.
	Crawler *crawler.Crawler
	// Checker checks targets and judges pages from their responses.
	Checker *check.Checker
	// ExternalFragments collects the anchors of other sites' targets too.
	ExternalFragments bool
	// Close releases the env (nil: nothing to release).
	Close func()

	site map[string]bool
}

func (e *RunEnv) wantAnchors(u string) bool {
	return e.ExternalFragments || e.site[linkrot.HostOf(u)]
}

// WorkerConfig configures Work.
type WorkerConfig struct {
	Queue *Queue
	Store Store
	// Concurrency is the number of units worked on at once (0: 8).
	Concurrency int
	// Setup builds the env of a run from its settings (called once per
	// run and worker; pacer is the Transport wrapper that shares the
	// hosts' spacing and pauses with the other workers).
	Setup func(ctx context.Context, run int64, pacer *Pacer) (*RunEnv, error)
	// DeadAfter is the delivery at which a unit is given up and
	// recorded as a dead letter (0: DefaultDeadAfter).
	DeadAfter int
	// Idle is the wait after a round of the partitions found no work
	// (0: 50 ms).
	Idle   time.Duration
	Logger *slog.Logger
}

// Worker works on the units of the queue.
type Worker struct {
	c   WorkerConfig
	log *slog.Logger

	mu   sync.Mutex
	envs map[int64]*envEntry
}

type envEntry struct {
	once sync.Once
	env  *RunEnv
	err  error
}

// Work fetches units from every partition and works on them until ctx is
// done; units in flight then are handed back (nak) for other workers.
func Work(ctx context.Context, c WorkerConfig) error {
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
	if c.DeadAfter <= 0 {
		c.DeadAfter = DefaultDeadAfter
	}
	if c.Idle <= 0 {
		c.Idle = 50 * time.Millisecond
	}
	w := &Worker{c: c, log: c.Logger, envs: map[int64]*envEntry{}}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	defer w.closeEnvs()
	cons, err := c.Queue.consumers(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	var wg sync.WaitGroup
	for i := range c.Concurrency {
		wg.Go(func() { w.loop(ctx, cons, i) })
	}
	wg.Wait()
	return nil
}

func (w *Worker) closeEnvs() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.envs {
		if e.env != nil && e.env.Close != nil {
			e.env.Close()
		}
	}
}

// loop is one worker goroutine: round-robin over the partitions, one unit
// at a time (a fetched unit counts against its partition's MaxAckPending
// until it is acked: nothing is prefetched).
func (w *Worker) loop(ctx context.Context, cons []jetstream.Consumer, start int) {
	n := len(cons)
	for i := start; ctx.Err() == nil; {
		got := false
		for range n {
			p := i % n
			i++
			batch, err := cons[p].FetchNoWait(1)
			if err != nil {
				continue
			}
			for msg := range batch.Messages() {
				got = true
				ackWait := w.c.Queue.o.AckWait
				if info := cons[p].CachedInfo(); info != nil && info.Config.AckWait > 0 {
					ackWait = info.Config.AckWait // the coordinator's
				}
				w.handle(ctx, msg, ackWait)
			}
			if got {
				break
			}
		}
		if !got {
			select {
			case <-ctx.Done():
			case <-time.After(w.c.Idle):
			}
		}
	}
}

// handle works on one message: acked once its results are stored and
// what it produced is published, handed back (nak) when the worker is
// stopping or failed, given up (dead letter) after DeadAfter deliveries.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg, ackWait time.Duration) {
	var u Unit
	if err := json.Unmarshal(msg.Data(), &u); err != nil || u.Run == 0 || u.Key == "" || u.URL == "" {
		w.log.Error("malformed unit dropped", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return
	}
	delivered := 1
	if md, err := msg.Metadata(); err == nil {
		delivered = int(md.NumDelivered)
	}
	// Tell the server the unit is being worked on while it is.
	stop := make(chan struct{})
	var tick sync.WaitGroup
	tick.Go(func() {
		t := time.NewTicker(ackWait / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	})
	if delivered > 1 {
		w.log.Info("unit delivered again", "kind", u.Kind, "url", u.URL, "delivery", delivered)
	}
	var err error
	if delivered > w.c.DeadAfter {
		err = w.deadLetter(ctx, u, delivered)
	} else {
		err = w.work(ctx, u)
	}
	close(stop)
	tick.Wait()
	switch {
	case ctx.Err() != nil:
		_ = msg.Nak() // stopping: another worker takes it now
	case err != nil:
		w.log.Warn("unit failed: it is delivered again", "kind", u.Kind, "url", u.URL, "delivery", delivered, "err", err)
		_ = msg.NakWithDelay(time.Duration(delivered) * time.Second)
	default:
		if aerr := msg.DoubleAck(context.WithoutCancel(ctx)); aerr != nil {
			w.log.Warn("ack lost: the unit may be delivered again (its writes are idempotent)", "url", u.URL, "err", aerr)
		}
	}
}

// env returns the run's env, set up on first use.
func (w *Worker) env(ctx context.Context, run int64) (*RunEnv, error) {
	w.mu.Lock()
	e, ok := w.envs[run]
	if !ok {
		e = &envEntry{}
		w.envs[run] = e
	}
	w.mu.Unlock()
	e.once.Do(func() {
		e.env, e.err = w.c.Setup(ctx, run, w.c.Queue.NewPacer(nil))
		if e.env != nil {
			e.env.site = linkrot.SiteHosts(&audit.Run{Seeds: e.env.Seeds})
		}
	})
	if e.err != nil {
		// Set up again next time (a store that was down).
		w.mu.Lock()
		if w.envs[run] == e {
			delete(w.envs, run)
		}
		w.mu.Unlock()
		return nil, fmt.Errorf("run %d: %w", run, e.err)
	}
	return e.env, nil
}

func (w *Worker) work(ctx context.Context, u Unit) error {
	env, err := w.env(ctx, u.Run)
	if err != nil {
		return err
	}
	switch u.Kind {
	case KindCrawl:
		return w.crawl(ctx, env, u)
	case KindCheck:
		return w.check(ctx, env, u)
	}
	return fmt.Errorf("unknown unit kind %q", u.Kind)
}

// owner names the unit as the claimer of what it claims.
func owner(u Unit) string { return string(u.Kind) + ":" + u.URL }

// crawl fetches a page, stores it, judges its own URLs when they are
// targets waiting for it, publishes the pages it adds to the crawl and
// routes its links' targets on first sight.
func (w *Worker) crawl(ctx context.Context, env *RunEnv, u Unit) error {
	q := w.c.Queue
	me := owner(u)
	claimFn := func(ctx context.Context, key string) (bool, error) {
		won, _, err := q.Claim(ctx, u.Key, 'c', key, me, "")
		return won, err
	}
	res, err := env.Crawler.FetchUnit(ctx, env.Seeds, u.URL, u.Depth, claimFn)
	if err != nil {
		return err
	}
	p := res.Page
	ix := check.NewKnownIndex([]*audit.Page{p}, nil)
	own := ownURLs(p)
	known := make(map[string]*check.Known, len(own))
	for _, n := range own {
		if k := ix.Lookup(n); k != nil {
			e := *k
			known[n] = &e
		}
	}
	targets := linkTargets(p)
	if err := w.c.Store.SaveCrawl(ctx, u.Run, []*audit.Page{p}, res.Next); err != nil {
		return err
	}
	if len(res.Traps) > 0 {
		for i := range res.Traps {
			res.Traps[i].RunID = u.Run
		}
		if err := w.c.Store.SaveCrawlTraps(ctx, res.Traps); err != nil {
			return err
		}
	}
	w.progress(u.Key, "p "+strconv.Itoa(len(p.Links)))
	// The page's own URLs: targets routed to it are judged from its
	// response (whoever comes second of this page and the target's
	// router does it; both doing it writes the same row).
	for _, n := range own {
		if err := q.markDone(ctx, u.Key, n); err != nil {
			return err
		}
	}
	for _, n := range own {
		v, ok, err := q.Seen(ctx, u.Key, 't', n)
		if err != nil {
			return err
		}
		if ok && v == "crawl" {
			if err := w.judge(ctx, env, u, n, known[n]); err != nil {
				return err
			}
		}
	}
	for _, e := range res.Next {
		if err := q.Publish(ctx, Unit{Run: u.Run, Key: u.Key, Kind: KindCrawl, URL: e.URL, Depth: e.Depth}); err != nil {
			return err
		}
	}
	for _, t := range targets {
		if err := w.route(ctx, env, u, t); err != nil {
			return err
		}
	}
	return nil
}

// route routes target t on first sight in the run: to the crawl's
// response when the crawl admitted it, else to a check unit.
func (w *Worker) route(ctx context.Context, env *RunEnv, u Unit, t string) error {
	q := w.c.Queue
	value := "live"
	if _, crawled, err := q.Seen(ctx, u.Key, 'c', t); err != nil {
		return err
	} else if crawled {
		value = "crawl"
	}
	won, v, err := q.Claim(ctx, u.Key, 't', t, owner(u), value)
	if err != nil || !won {
		return err
	}
	if v == "live" {
		return q.Publish(ctx, Unit{Run: u.Run, Key: u.Key, Kind: KindCheck, URL: t})
	}
	// Judged from its page: by the page's unit when it is still to
	// come, by this one when the page is stored already.
	if _, done, err := q.Seen(ctx, u.Key, 'd', t); err != nil || !done {
		return err
	}
	return w.judgeStored(ctx, env, u, t)
}

// judgeStored judges a target from the stored response of its page, or
// checks it live when the store has none for its URL (a page reached
// through a redirect).
func (w *Worker) judgeStored(ctx context.Context, env *RunEnv, u Unit, t string) error {
	run := u.Run
	p, err := w.c.Store.PageResponse(ctx, run, t)
	if errors.Is(err, audit.ErrNotFound) {
		return w.c.Queue.Publish(ctx, Unit{Run: run, Key: u.Key, Kind: KindCheck, URL: t})
	}
	if err != nil {
		return err
	}
	var k *check.Known
	if p.Evidence != nil {
		pageURL := p.URL
		k = check.NewKnownIndex([]*audit.Page{p}, func(ctx context.Context, _ *audit.Page) ([]string, string, error) {
			return w.c.Store.PageContent(ctx, run, pageURL)
		}).Lookup(t)
	}
	return w.judge(ctx, env, u, t, k)
}

// judge stores the check of target t judged from the crawl's response k,
// or publishes a check unit when there is none.
func (w *Worker) judge(ctx context.Context, env *RunEnv, u Unit, t string, k *check.Known) error {
	if k == nil {
		return w.c.Queue.Publish(ctx, Unit{Run: u.Run, Key: u.Key, Kind: KindCheck, URL: t})
	}
	c := env.Checker.CheckOne(ctx, check.Target{URL: t, Known: k, WantAnchors: env.wantAnchors(t)})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return w.save(ctx, env, u, c)
}

// check checks a target live.
func (w *Worker) check(ctx context.Context, env *RunEnv, u Unit) error {
	c := env.Checker.CheckOne(ctx, check.Target{URL: u.URL, WantAnchors: env.wantAnchors(u.URL)})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return w.save(ctx, env, u, c)
}

// save stores a check (and the anchors findings need).
func (w *Worker) save(ctx context.Context, env *RunEnv, u Unit, c audit.Check) error {
	c.RunID = u.Run
	if c.Anchors != nil && !c.FromCrawl && env.wantAnchors(c.URL) {
		if err := w.c.Queue.SaveAnchors(ctx, u.Key, c.URL, c.Anchors); err != nil {
			return err
		}
	}
	c.Anchors = nil
	lost, err := w.c.Store.SaveChecksByURL(ctx, []audit.Check{c})
	if err != nil {
		return err
	}
	if len(lost) > 0 {
		w.log.Warn("check of a target the run does not link to: not stored", "url", c.URL)
	}
	w.progress(u.Key, "c")
	return nil
}

// deadLetter records a unit given up after delivered deliveries, as the
// run's data: a crawl unit as a page that could not be fetched, a check
// unit as a skipped check with the reason.
func (w *Worker) deadLetter(ctx context.Context, u Unit, delivered int) error {
	reason := fmt.Sprintf("dead letter: not done after %d deliveries (a worker failed or died on it each time)", delivered-1)
	w.log.Error("unit given up", "kind", u.Kind, "url", u.URL, "deliveries", delivered-1)
	switch u.Kind {
	case KindCrawl:
		p := &audit.Page{Extraction: audit.Extraction{URL: u.URL, Identifiers: []audit.Identifier{}}, RequestURL: u.URL, Depth: u.Depth,
			FetchError: reason, FetchedAt: time.Now().UTC()}
		if err := w.c.Store.SaveCrawl(ctx, u.Run, []*audit.Page{p}, nil); err != nil {
			return err
		}
		if err := w.c.Queue.markDone(ctx, u.Key, u.URL); err != nil {
			return err
		}
		if v, ok, err := w.c.Queue.Seen(ctx, u.Key, 't', u.URL); err != nil || !ok || v != "crawl" {
			return err
		}
	case KindCheck:
	default:
		return nil
	}
	c := audit.Check{RunID: u.Run, URL: u.URL, Verdict: audit.VerdictSkipped, Reason: reason, CheckedAt: time.Now().UTC()}
	_, err := w.c.Store.SaveChecksByURL(ctx, []audit.Check{c})
	return err
}

// progress tells a following coordinator (display only: core NATS, may
// be lost).
func (w *Worker) progress(key string, what string) {
	_ = w.c.Queue.nc.Publish(ProgressPrefix+"."+key, []byte(what))
}

// ownURLs returns the normalized URLs a page answers for: its request
// URL, its redirect chain and its final URL.
func ownURLs(p *audit.Page) []string {
	raw := []string{p.RequestURL}
	for _, h := range p.Redirects {
		raw = append(raw, h.From)
	}
	raw = append(raw, p.URL)
	var out []string
	seen := map[string]bool{}
	for _, r := range raw {
		n, err := urls.NormalizeURL(r)
		if err != nil || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

// linkTargets returns the unique targets of a page's links, as the store
// makes them.
func linkTargets(p *audit.Page) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range p.Links {
		if !l.Checked() { // a connection hint has no target
			continue
		}
		n, err := urls.NormalizeURL(l.Href)
		if err != nil || seen[n] {
			continue
		}
		pu, err := url.Parse(n)
		if err != nil || pu.Scheme == "" {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}
