package linkrot

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/internal/cpuslot"
	"github.com/linkrot/linkrot/politeness"
)

// crawlStore is what the crawl needs: the crawl's batches and the
// frontier of a run being resumed.
type crawlStore interface {
	SaveCrawl(ctx context.Context, runID int64, pages []*audit.Page, queued []audit.FrontierEntry) error
	SaveCrawlTraps(ctx context.Context, traps []audit.CrawlTrap) error
	Frontier(ctx context.Context, runID int64) (queued []audit.FrontierEntry, visited []string, err error)
}

// checkStore is what the checks need: saving results keyed by URL,
// earlier results, and for a resumed run what is left to check.
type checkStore interface {
	SaveChecksByURL(ctx context.Context, checks []audit.Check) ([]audit.Check, error)
	TargetIDs(ctx context.Context, urls []string) (map[string]int64, error)
	HasChecksBefore(ctx context.Context, runID int64) (bool, error)
	PreviousChecks(ctx context.Context, runID int64, targetIDs []int64, maxAge time.Duration, now time.Time) (map[int64]*audit.Check, error)
	TargetURLs(ctx context.Context, runID int64, fn func(url string) error) error
	UncheckedTargets(ctx context.Context, runID int64, fn func(audit.TargetRef) error) error
	PageResponse(ctx context.Context, runID int64, targetURL string) (*audit.Page, error)
	PageResponses(ctx context.Context, runID int64) ([]*audit.Page, error)
	PageContent(ctx context.Context, runID int64, pageURL string) (anchors []string, text string, err error)
}

// crawlAndCheck runs the crawl (when crawl is true) and the checks of the
// run's targets at once, all through one writer. For a resumed run it
// first routes the targets the run stored but did not check.
func crawlAndCheck(ctx context.Context, cfg Config, store Store, progress Progress, archiver Archiver, crawl bool, hook func(string), log *slog.Logger) (audit.CheckCounts, map[string][]string, crawler.Stats, error) {
	run := cfg.Run
	r := &router{
		cfg: &cfg, store: store, run: run, log: log, progress: progress,
		site: SiteHosts(run), offline: run.Mode == "dir",
		seeds:   [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		seen:    map[urlKey]struct{}{},
		waiting: map[string]bool{},
		hops:    map[string]hop{},
		finals:  map[urlKey]struct{}{},
		via:     map[string][]string{},
		anchors: map[string][]string{},
	}
	r.qcond = sync.NewCond(&r.qmu)
	r.qspace = sync.NewCond(&r.qmu)
	var err error
	if r.hasPrev, err = store.HasChecksBefore(ctx, run.ID); err != nil {
		return audit.CheckCounts{}, nil, crawler.Stats{}, err
	}
	kopts := cfg.Check
	var missing int
	r.w = audit.NewBatcher(context.WithoutCancel(ctx), func(ctx context.Context, items []item) error {
		var (
			pages  []*audit.Page
			queued []audit.FrontierEntry
			checks []audit.Check
			traps  []audit.CrawlTrap
		)
		for _, it := range items {
			switch {
			case it.page != nil:
				pages = append(pages, it.page)
			case it.check != nil:
				checks = append(checks, *it.check)
			}
			queued = append(queued, it.queued...)
			traps = append(traps, it.traps...)
		}
		// The writer's CPU work holds a CPU slot before any parser
		// (internal/cpuslot): everything waits for it.
		var err error
		cpuslot.DoFirst(func() { err = store.SaveCrawl(ctx, run.ID, pages, queued) })
		if err != nil {
			return err
		}
		if len(traps) > 0 {
			if err := store.SaveCrawlTraps(ctx, traps); err != nil {
				return err
			}
		}
		if len(checks) > 0 {
			var lost []audit.Check
			cpuslot.DoFirst(func() { lost, err = store.SaveChecksByURL(ctx, checks) })
			missing += len(lost)
			for _, c := range lost {
				log.Warn("check of a target the run does not link to: not stored", "url", c.URL)
			}
			if err != nil {
				return err
			}
			if archiver != nil {
				// Stored, with the links to their targets: the archive
				// lookups of broken targets start now.
				for i := range checks {
					archiver.Checked(&checks[i])
				}
			}
		}
		for _, it := range items {
			if it.mark != "" {
				if err := store.MarkStage(ctx, run.ID, it.mark); err != nil {
					return err
				}
			}
			if it.flushed != nil {
				close(it.flushed)
			}
		}
		return nil
	}, audit.WriterOptions{
		// At most BatchSize+QueueSize items wait for the database, and
		// the writer is what the crawl waits for: a larger queue only
		// holds more pages (hundreds of links each on a documentation
		// tree) in memory.
		BatchSize: 200, QueueSize: 128,
	})

	// The run's one politeness scheduler (Open makes it): the crawl and
	// the checks share a host's budget.
	sched := cmp.Or(kopts.Scheduler, cfg.Crawl.Scheduler)
	kopts.Scheduler = sched
	// The scheduler knows each audited origin's robots.txt Crawl-delay
	// before the first check, also when the crawl was done by an earlier
	// process (resume) or there is none (check --run).
	if kopts.Robots != nil && !cfg.CrawlOnly {
		setCrawlDelays(ctx, kopts.Robots, run, sched)
	}

	in := make(chan check.Target, 256)
	fctx, cancelFeed := context.WithCancel(ctx)
	defer cancelFeed()
	var wg sync.WaitGroup
	wg.Go(func() { r.feed(fctx, in) })
	var checkErr error
	wg.Go(func() {
		checkErr = check.New(kopts).Stream(ctx, in, r.emit)
		if checkErr != nil {
			cancelFeed()
		}
	})

	// A resumed run first routes what it stored but did not check (the
	// checker runs already: the queue is bounded).
	if !cfg.CrawlOnly {
		if err := r.resume(ctx, crawl); err != nil {
			r.closeQueue()
			cancelFeed()
			wg.Wait()
			r.w.Close()
			return audit.CheckCounts{}, nil, crawler.Stats{}, err
		}
	}

	var st crawler.Stats
	var crawlErr error
	if crawl {
		copts := cfg.Crawl
		copts.Frontier = r
		copts.Scheduler = sched
		copts.Observe = check.Observer(kopts.MaxBody)
		c := crawler.New(copts, r)
		in := cfg.Input
		switch in.Kind {
		case Site:
			st, crawlErr = c.Crawl(ctx, in.Seeds)
		case URLList:
			st, crawlErr = c.CrawlList(ctx, in.Seeds)
		case Directory:
			if len(in.Files) > 0 {
				st, crawlErr = c.CrawlFiles(ctx, in.Dir, in.Base(), in.Files)
			} else {
				st, crawlErr = c.CrawlDir(ctx, in.Dir, in.Base())
			}
		case Sitemap:
			st, crawlErr = c.CrawlSitemaps(ctx, in.Sitemaps, in.Seeds)
		default:
			crawlErr = fmt.Errorf("unknown input mode %q", in.Kind)
		}
		log.Info("crawl finished", "run", run.ID, "pages", st.Pages, "robots_blocked", st.RobotsBlocked, "out_of_scope_links", st.OutOfScope)
		if st.BudgetHit {
			log.Warn("--max-pages reached: the crawl is incomplete", "max_pages", copts.MaxPages)
		}
		if crawlErr == nil && ctx.Err() == nil {
			// Recorded by the writer once every page before it is stored.
			r.w.Add(item{mark: audit.StageCrawl})
		}
	}
	if crawlErr == nil && ctx.Err() == nil {
		hook("check")
	}
	// The crawl is over: targets still waiting for a page it queued but
	// never recorded are checked live.
	if ctx.Err() == nil && crawlErr == nil {
		r.mu.Lock()
		for u, linked := range r.waiting {
			if linked {
				r.submit(pending{t: check.Target{URL: u}})
			}
		}
		clear(r.waiting)
		for _, via := range r.via {
			for _, u := range via {
				r.judge(u, "", nil)
			}
		}
		clear(r.via)
		r.mu.Unlock()
	}
	r.closeQueue()
	wg.Wait()
	werr := r.w.Close()
	r.cmu.Lock()
	counts := r.counts
	r.cmu.Unlock()
	switch {
	case ctx.Err() != nil:
		return counts, nil, st, waiting(stopped(ctx), sched)
	case crawlErr != nil:
		return counts, nil, st, crawlErr
	case werr != nil:
		return counts, nil, st, fmt.Errorf("save: %w", werr)
	case checkErr != nil:
		return counts, nil, st, checkErr
	}
	if missing > 0 {
		log.Warn("checks not stored: their targets were not found", "count", missing)
	}
	return counts, r.anchors, st, nil
}

// setCrawlDelays sets the robots.txt Crawl-delay of each audited origin
// (http and https of every seed's host) on sched.
func setCrawlDelays(ctx context.Context, gate check.RobotsGate, run *audit.Run, sched *politeness.Scheduler) {
	for _, s := range run.SeedURLs() {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			continue
		}
		for _, scheme := range []string{"http", "https"} {
			o := &url.URL{Scheme: scheme, Host: u.Host, Path: "/"}
			if scheme != strings.ToLower(u.Scheme) && u.Port() != "" {
				continue // an explicit port belongs to its own scheme
			}
			if d := gate.CrawlDelay(ctx, o); d > 0 {
				sched.SetCrawlDelay(politeness.Key(o), d)
			}
		}
	}
}
