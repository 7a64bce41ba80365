package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/check"
	"github.com/linkrot/linkrot/audit/sqlite"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/politeness"
)

// runAudit is the main job: crawl the site, then check every unique target
// of the crawl, look up archives, record history and write the report, in
// one run. It holds the database's run lock throughout; with --resume it
// continues the latest interrupted run of the same settings, skipping the
// stages that run finished (and only writes the report of a complete run
// killed while writing it).
func runAudit(ctx context.Context, e *env, args []string) error {
	var cf crawlFlags
	var kf checkFlags
	var jf jobFlags
	fs := newFlagSet(e, "audit", "[flags] URL | DIR --base URL | --sitemap URL | --urls FILE | --config FILE | --resume")
	cf.register(fs, false)
	kf.register(fs, true)
	jf.register(fs, jobLock|jobResume|jobHistory|jobLog)
	var af archiveFlags
	af.register(fs)
	var ci ciFlags
	ci.register(fs)
	reportDir := fs.String("report", "", "write the HTML report into this `directory` (default: linkrot-report beside the database)")
	noReport := fs.Bool("no-report", false, "do not write the HTML report")
	pos, cfg, err := parseCommand(e, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		var ue *usageError
		if errors.As(err, &ue) {
			return err
		}
		return usagef("%v", err)
	}
	pos = cfg.withURL(pos)
	if _, _, _, err := af.config(); err != nil { // before a long crawl
		return err
	}
	failNew, err := takeFailOnNew(&kf.failOn)
	if err != nil {
		return err
	}
	failIntroduced, err := ci.takeFailOnIntroduced(&kf.failOn)
	if err != nil {
		return err
	}
	rule, err := jf.rule()
	if err != nil {
		return err
	}
	log, err := jf.logger(e.stderr, cf.logFormat, cf.verbose, cf.quiet)
	if err != nil {
		return err
	}
	// --resume without a URL takes the input and settings of the latest
	// interrupted run, read after the database is open.
	fromStored := jf.resume && len(pos) == 0 && cf.urls == "" && len(cf.sitemaps) == 0
	hosts := cfg.hostRules()
	var (
		in     crawlInput
		copts  crawler.Options
		kopts  check.Options
		failOn map[audit.Verdict]bool
	)
	build := func() error {
		// Both stages share the politeness settings.
		cf.concurrency, cf.userAgent, cf.timeout, cf.maxRedirects = kf.perHost, kf.userAgent, kf.timeout, kf.maxRedirects
		var err error
		if copts, err = cf.options(log); err != nil {
			return err
		}
		if kopts, failOn, err = kf.options(log); err != nil {
			return err
		}
		// The crawl records each page's evidence as the checker would read
		// it, so that the check judges the site's pages without fetching
		// them again (check.Known).
		copts.CheckMaxBody = kopts.MaxBody
		if err := applyHostRules(hosts, &copts, &kopts); err != nil {
			return err
		}
		// One politeness scheduler for crawl and checks: one host, one
		// budget (Crawl-delay, pauses after 429s, the learned rate).
		sched := politeness.New(politeness.Options{
			PerHost: kopts.PerHost, Delay: max(copts.Delay, kopts.HostDelay),
			Rules: kopts.Hosts, MaxRetryWait: kopts.MaxRetryWait,
		})
		copts.Scheduler, kopts.Scheduler = sched, sched
		return nil
	}
	if !fromStored {
		if in, err = cf.input(e, pos); err != nil {
			return err
		}
		if err := ci.check(ctx, in); err != nil {
			return err
		}
		if err := build(); err != nil {
			return err
		}
	}
	store, err := sqlite.Open(ctx, cf.db)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	ctx, lk, err := lockDB(ctx, store, "audit", jf.wait, log)
	if err != nil {
		return err
	}
	defer lk.release()
	if fromStored {
		if in, hosts, err = restoreSettings(ctx, store, sqlite.CommandAudit, fs, hosts); err != nil {
			return err
		}
		if err := build(); err != nil {
			return err
		}
	}

	run, resumed, err := startRun(ctx, e, store, sqlite.CommandAudit, in, cf.sitemaps, newRunSettings(fs, in, hosts), &jf, log)
	if err != nil {
		return err
	}
	// One robots.txt gate for the crawl and the checks: read once, one
	// Crawl-delay budget per host across both stages.
	if gate, closeGate := runScope(ctx, store, run).robotsGate(kopts.UserAgent, kopts.Scheduler); gate != nil {
		defer closeGate()
		copts.Robots, kopts.Robots = gate, gate
	}
	lk.setRun(ctx, run.ID)
	if resumed {
		printResuming(e.stdout, run)
	}
	// A complete run resumed had only its report left to write: its
	// stages are all done, and its status and end time stay.
	reportOnly := run.Status == audit.RunComplete
	stages, err := store.Stages(ctx, run.ID)
	if err != nil {
		return withRun(err, run)
	}
	// finish records how the run ended, whatever stage it is in.
	finish := func(err error) error {
		if reportOnly {
			if ctx.Err() != nil && !errors.Is(err, context.Canceled) {
				err = fmt.Errorf("stopped: %w", context.Canceled)
			}
			return err
		}
		status, msg := audit.RunComplete, ""
		switch {
		case ctx.Err() != nil:
			status = audit.RunInterrupted
			if !errors.Is(err, context.Canceled) {
				err = fmt.Errorf("stopped: %w", context.Canceled)
			}
		case err != nil:
			status, msg = audit.RunFailed, err.Error()
		}
		if ferr := store.FinishRun(context.WithoutCancel(ctx), run.ID, status, time.Now().UTC(), msg); ferr != nil && err == nil {
			err = fmt.Errorf("finish run: %w", ferr)
		}
		run.Status = status
		return err
	}

	if _, done := stages[sqlite.StageCrawl]; !done {
		stageHook("crawl")
		if _, err := crawlStage(ctx, e, store, run, in, cf.sitemaps, copts, log); err != nil {
			err = finish(err)
			if stats, serr := store.RunStats(context.WithoutCancel(ctx), run.ID); serr == nil {
				printCrawlSummary(e.stdout, stats)
			}
			return withRun(err, run)
		}
		if err := store.MarkStage(ctx, run.ID, sqlite.StageCrawl); err != nil {
			return withRun(finish(err), run)
		}
	}
	stats, err := store.RunStats(ctx, run.ID)
	if err != nil {
		return withRun(finish(err), run)
	}
	printCrawlSummary(e.stdout, stats)
	if traps, err := store.CrawlTraps(ctx, run.ID); err == nil {
		printTrapSummary(e.stdout, traps)
	}

	stageHook("check")
	res, err := checkRun(ctx, e, store, run, kopts, kf, log)
	if err == nil {
		err = store.MarkStage(ctx, run.ID, sqlite.StageCheck)
	}
	if _, done := stages[sqlite.StageArchives]; done && err == nil {
		// Finished before the interruption: not one archive request again.
		log.Info("archives stage finished before: skipped", "run", run.ID)
	} else if err == nil {
		stageHook("archives")
		err = runArchives(ctx, e, store, run, &af, kopts, log)
		if err == nil {
			err = store.MarkStage(ctx, run.ID, sqlite.StageArchives)
		}
	}
	if err == nil {
		stageHook("history")
		err = historyStage(ctx, store, run, rule, log)
	}
	err = finish(err)
	if res != nil {
		printCheckSummary(e.stdout, res)
	}
	af.printSummary(e.stdout)
	if err != nil {
		return withRun(err, run)
	}
	if err := printSince(ctx, e.stdout, store, run.ID); err != nil {
		return withRun(err, run)
	}
	// The report stage is recorded once the report is written (or when
	// there is none to write): a run killed while writing it is complete,
	// and linkrot audit --resume writes the report.
	if !*noReport {
		stageHook("report")
		dir := *reportDir
		if dir == "" {
			dir = defaultReportDir(cf.db)
		}
		if err := writeAuditReport(ctx, e, store, run.ID, dir); err != nil {
			return withRun(err, run)
		}
	}
	if err := store.MarkStage(ctx, run.ID, sqlite.StageReport); err != nil {
		return withRun(err, run)
	}
	if err := ci.finish(ctx, e, store, cf.db, run, in, failIntroduced); err != nil || failIntroduced {
		return withRun(err, run)
	}
	if failNew {
		return failOnNew(ctx, store, run.ID)
	}
	return res.failOn(failOn)
}
