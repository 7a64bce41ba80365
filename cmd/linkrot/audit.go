package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/scaleout"
	"github.com/linkrot/linkrot/urls"
)

// runAudit is the main job: crawl the site, then check every unique target
// of the crawl, look up archives, record history and write the report, in
// one run. It holds the database's run lock throughout; with --resume it
// continues the latest interrupted run of the same settings, skipping the
// stages that run finished (and only writes the report of a complete run
// killed while writing it).
func runAudit(ctx context.Context, e *env, args []string) error {
	var (
		set linkrot.Settings // the run's settings: the flags write into it
		cf  crawlFlags
		kf  checkFlags
		jf  jobFlags
		af  archiveFlags
	)
	fs := newFlagSet(e, "audit", "[flags] URL | DIR --base URL | --sitemap URL | --urls FILE | --config FILE | --resume")
	cf.register(fs, &set, false)
	kf.register(fs, &set, true)
	jf.register(fs, jobLock|jobResume|jobHistory|jobLog)
	af.register(fs, &set)
	var ci ciFlags
	ci.register(fs)
	var nf natsFlags // scale-out (scaleout.go)
	nf.register(fs)
	reportDir := fs.String("report", "", "write the HTML report into this `directory` (default: linkrot-report beside the database)")
	noReport := fs.Bool("no-report", false, "do not write the HTML report (--output still writes what it names)")
	var outputs listFlag
	fs.Var(&outputs, "output", "also write this machine `format` into the report directory: json, csv, junit, markdown or sarif (repeatable; report.json, report.csv, report.xml, report.md, report.sarif), or to a file whose extension names the format (--output out/links.csv)")
	maxTime := fs.Duration("max-time", 0, "stop the run after this `duration` (e.g. 30m) and write the report of what was done, marked incomplete (0: no limit)")
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
	formats, err := parseOutputs(outputs)
	if err != nil {
		return err
	}
	if err := checkReportFlags(*reportDir, *noReport); err != nil {
		return err
	}
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
		set.Hosts = hostSettings(hosts)
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
		copts.Observe = check.Observer(kopts.MaxBody)
		// One politeness scheduler for crawl and checks: one host, one
		// budget (Crawl-delay, pauses after 429s, the learned rate).
		sched := politeness.New(politeness.Options{
			PerHost: kopts.PerHost, Delay: max(copts.Delay, kopts.HostDelay),
			Rules: kopts.Hosts, MaxRetryWait: kopts.MaxRetryWait, ResourceID: urls.NormalizeURL,
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
	ctx, store, lk, err := openLocked(ctx, cf.db, "audit", jf.wait, log)
	if err != nil {
		return err
	}
	defer lk.release()
	if fromStored {
		if in, hosts, err = restoreSettings(ctx, store, audit.CommandAudit, fs, &set, hosts); err != nil {
			return err
		}
		cf.sitemaps = set.Input.Sitemaps
		if err := build(); err != nil {
			return err
		}
	}

	var nq *scaleout.Queue
	if nf.addr != "" {
		nc, q, err := scaleOutAudit(ctx, &nf, in, set.Crawl.MaxPages)
		if err != nil {
			return err
		}
		defer nc.Close()
		nq = q
	}
	run, resumed, err := startRun(ctx, e, store, audit.CommandAudit, in, cf.sitemaps, &set, &jf, log)
	if err != nil {
		return err
	}
	// One robots.txt gate for the crawl and the checks: read once, one
	// Crawl-delay budget per host across both stages.
	scope := runScope(ctx, store, run)
	if gate, closeGate := scope.robotsGate(kopts.UserAgent, kopts.Scheduler); gate != nil {
		defer closeGate()
		copts.Robots, kopts.Robots = gate, gate
		kopts.Hosts = crawlDelayRules(ctx, gate, scope.seeds, kopts.Hosts)
	}
	// Exact SSRF scope: the audited origins and --allow-domain hosts may
	// be private, nothing else (--allow-private opens the rest).
	kopts.AllowPrivateHosts = append(kopts.AllowPrivateHosts, scope.privateHosts()...)
	if testCheckTransport != nil {
		kopts.Transport = testCheckTransport
	}
	lk.setRun(ctx, run.ID)
	if resumed {
		printResuming(e.stdout, run)
	}
	dir := *reportDir
	if dir == "" {
		dir = defaultReportDir(cf.db)
	}
	prog := newAuditProgress(e.stderr, log)
	archives, closeArchives, err := af.stage(ctx, store, run, kopts, log)
	if err != nil {
		return err
	}
	defer closeArchives()
	acfg := linkrot.Config{
		Run:               run,
		Input:             set.Input,
		Crawl:             copts,
		Check:             kopts,
		MaxAge:            set.Check.MaxAge,
		ExternalFragments: set.Check.ExternalFragments,
		Confirm:           rule,
		MaxTime:           *maxTime,
		Logger:            log,
		StageHook:         stageHook,
		Archives:          archives,
	}
	if nq != nil {
		acfg.Work = coordinate(nq, store, run, in.seeds, set.PerHost, prog, log)
	}
	// summary prints what the run did, once, before the report.
	printed := false
	summary := func(ctx context.Context, sum *linkrot.Summary) error {
		if printed || sum == nil {
			return nil
		}
		printed = true
		prog.done()
		if sum.ReportOnly {
			return printSince(ctx, e.stdout, store, sum.Run.ID)
		}
		nothing := ""
		if sum.Stats != nil {
			n, err := runSummary(ctx, e.stdout, store, sum.Run, sum.Stats)
			if err != nil {
				return err
			}
			nothing = n
		}
		if traps, err := store.CrawlTraps(ctx, sum.Run.ID); err == nil {
			printTrapSummary(e.stdout, traps)
		}
		if sum.Checks != nil {
			printCheckSummary(e.stdout, *sum.Checks, sum.Top, nothing)
		}
		af.printSummary(e.stdout)
		if sum.Run.Status != audit.RunComplete {
			return nil
		}
		return printSince(ctx, e.stdout, store, sum.Run.ID)
	}
	if !*noReport || len(formats) > 0 {
		acfg.Report = func(ctx context.Context, sum *linkrot.Summary) error {
			if err := summary(ctx, sum); err != nil {
				return err
			}
			if sum.Incomplete {
				fmt.Fprintf(e.stdout, "Run %d was interrupted: the report shows what was done, marked incomplete.\n", sum.Run.ID)
			}
			return writeAuditReport(ctx, e, store, sum.Run.ID, dir, !*noReport, formats...)
		}
	}
	sum, err := linkrot.Audit(ctx, acfg, store, prog)
	if serr := summary(context.WithoutCancel(ctx), sum); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return withRun(err, run)
	}
	if err := ci.finish(ctx, e, store, cf.db, run, in, failIntroduced); err != nil || failIntroduced {
		return withRun(err, run)
	}
	if failNew {
		return failOnNew(ctx, store, run.ID)
	}
	if sum.Checks != nil {
		if n := sum.Checks.Failing(failOn); n > 0 {
			return &findingsError{n: n}
		}
	}
	return nil
}
