package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/scaleout"
	"github.com/linkrot/linkrot/urls"
)

// runWorker is linkrot worker: it works on the crawl and check units of
// every run that linkrot audit --nats enqueues on the NATS server, with
// the run's settings read from the shared database, until SIGTERM or
// SIGINT (units in flight are then handed back to the other workers).
func runWorker(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "worker", "--nats URL --db DATABASE [--workers N]")
	var nf natsFlags
	nf.register(fs)
	db := fs.String("db", "linkrot.db", "the shared database of the runs (the coordinating linkrot audit's --db)")
	workers := fs.Int("workers", 8, "`number` of units (pages, checks) worked on at once by this process")
	logLevel := fs.String("log-level", "info", "log `level`: debug, info, warn or error")
	pos, cfg, err := parseCommand(e, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) > 0 {
		return usagef("worker takes no arguments (got %q)", pos[0])
	}
	if nf.addr == "" {
		return usagef("worker: --nats URL is required")
	}
	if err := nf.check(); err != nil {
		return err
	}
	if *workers < 1 {
		return usagef("--workers must be at least 1")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("--log-level must be debug, info, warn or error, not %q", *logLevel)
	}
	log, err := newLevelLogger(e.stderr, "text", level)
	if err != nil {
		return err
	}
	nc, q, err := nf.open(ctx, "linkrot worker")
	if err != nil {
		return err
	}
	defer nc.Close()
	store, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	given := cfg.hostRules()
	log.Info("worker started", "nats", nf.addr, "workers", *workers, "partitions", nf.partitions)
	err = scaleout.Work(ctx, scaleout.WorkerConfig{
		Queue: q, Store: store, Concurrency: *workers, Logger: log,
		Setup: func(ctx context.Context, runID int64, pacer *scaleout.Pacer) (*scaleout.RunEnv, error) {
			return workerEnv(ctx, store, runID, pacer, given, log)
		},
	})
	log.Info("worker stopped")
	return err
}

// workerEnv builds a worker's crawler and checker for a run from the
// run's stored settings, exactly as linkrot audit builds them (the same
// flags, the same host rules: header values from this worker's --config,
// never from the database), with every request behind the shared pacer.
func workerEnv(ctx context.Context, store *database, runID int64, pacer *scaleout.Pacer, given []hostConfig, log *slog.Logger) (*scaleout.RunEnv, error) {
	run, err := store.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	_, b, err := store.RunSettings(ctx, runID)
	if err != nil {
		return nil, err
	}
	set, err := linkrot.ParseSettings(b)
	if err != nil {
		return nil, fmt.Errorf("run %d: %w", runID, err)
	}
	hosts, err := storedHostRules(runID, set.Hosts, given)
	if err != nil {
		return nil, err
	}
	set.Hosts = hostSettings(hosts) // with this worker's header values
	copts, err := set.CrawlOptions(log)
	if err != nil {
		return nil, err
	}
	kopts, err := set.CheckOptions(log)
	if err != nil {
		return nil, err
	}
	copts.Observe = check.Observer(kopts.MaxBody)
	sched := politeness.New(politeness.Options{
		PerHost: kopts.PerHost, Delay: max(copts.Delay, kopts.HostDelay),
		Rules: kopts.Hosts, MaxRetryWait: kopts.MaxRetryWait, ResourceID: urls.NormalizeURL,
	})
	copts.Scheduler, kopts.Scheduler = sched, sched
	scope := runScope(ctx, store, run)
	gate, closeGate := scope.robotsGate(kopts.UserAgent, sched)
	if gate != nil {
		// No robots.txt is read here (linkrot audit reads the seeds'
		// for its checker's Crawl-delay rules): this runs inside a unit
		// of any host, and a request to a seed's host would not count
		// against that host's partition. The gate reads a host's
		// robots.txt in a unit of that host, and the pacer spaces by its
		// Crawl-delay.
		copts.Robots, kopts.Robots = gate, gate
	}
	kopts.AllowPrivateHosts = append(kopts.AllowPrivateHosts, scope.privateHosts()...)
	base, closeBase := httpx.NewTransportAllowing(kopts.HTTP(), kopts.AllowPrivateHosts)
	delay := max(copts.Delay, kopts.HostDelay)
	pacer.MaxPause = kopts.MaxRetryWait
	pacer.Delay = func(ctx context.Context, u *url.URL) time.Duration {
		d := delay
		if gate != nil { // 0 for hosts outside the audited sites
			d = max(d, gate.CrawlDelay(ctx, u))
		}
		return d
	}
	paced := pacer.Transport(base)
	copts.Transport, kopts.Transport = paced, paced
	return &scaleout.RunEnv{
		Seeds:             run.Seeds,
		Crawler:           crawler.New(copts, nil),
		Checker:           check.New(kopts),
		ExternalFragments: set.Check.ExternalFragments,
		Close: func() {
			closeGate()
			closeBase()
		},
	}, nil
}
