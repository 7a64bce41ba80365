package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/scaleout"
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
	oo := linkrot.OpenOptions{Logger: log, SaveAuth: os.Getenv(spnAuthEnv), CheckTransport: testCheckTransport}
	var failOn map[audit.Verdict]bool
	validate := func() (err error) {
		if err := set.Validate(oo); err != nil {
			return err
		}
		failOn, err = linkrot.ParseFailOn(kf.failOn)
		return err
	}
	if !fromStored {
		if set.Input, err = cf.input(e, pos); err != nil {
			return err
		}
		if err := ci.check(ctx, set.Input); err != nil {
			return err
		}
		set.Hosts = hosts
		if err := validate(); err != nil {
			return err
		}
	}
	ctx, store, lk, err := openLocked(ctx, cf.db, "audit", jf.wait, log)
	if err != nil {
		return err
	}
	defer lk.release()
	if fromStored {
		if err := restoreSettings(ctx, store, audit.CommandAudit, fs, &set, hosts); err != nil {
			return err
		}
		if err := validate(); err != nil {
			return err
		}
	}

	var nq *scaleout.Queue
	if nf.addr != "" {
		nc, q, err := scaleOutAudit(ctx, &nf, set.Input, set.Crawl.MaxPages)
		if err != nil {
			return err
		}
		defer nc.Close()
		nq = q
	}
	job, err := linkrot.Start(ctx, store, set, jf.start(e, audit.CommandAudit, oo))
	if err != nil {
		return err
	}
	defer job.Close()
	run := job.Run
	lk.setRun(ctx, run.ID)
	if job.Resumed {
		linkrot.WriteResuming(e.stdout, run)
	}
	dir := *reportDir
	if dir == "" {
		dir = defaultReportDir(cf.db)
	}
	prog := newAuditProgress(e.stderr, log)
	af.stg, af.offline = job.Archives, set.Archives.Off
	acfg := &job.Config
	acfg.Confirm, acfg.MaxTime, acfg.StageHook = rule, *maxTime, stageHook
	if nq != nil {
		acfg.Work = coordinate(nq, store, run, set.Input.Seeds, set.PerHost, prog, log)
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
			return linkrot.WriteSince(ctx, e.stdout, store, sum.Run.ID)
		}
		nothing := ""
		if sum.Stats != nil {
			n, err := linkrot.WriteRunSummary(ctx, e.stdout, store, sum.Run, sum.Stats)
			if err != nil {
				return err
			}
			nothing = n
		}
		if traps, err := store.CrawlTraps(ctx, sum.Run.ID); err == nil {
			linkrot.WriteTrapSummary(e.stdout, traps)
		}
		if sum.Checks != nil {
			linkrot.WriteCheckSummary(e.stdout, *sum.Checks, sum.Top, nothing)
		}
		af.printSummary(e.stdout)
		if sum.Run.Status != audit.RunComplete {
			return nil
		}
		return linkrot.WriteSince(ctx, e.stdout, store, sum.Run.ID)
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
	sum, err := job.Audit(ctx, store, prog)
	if serr := summary(context.WithoutCancel(ctx), sum); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return withRun(err, run)
	}
	if err := ci.finish(ctx, e, store, cf.db, run, set.Input, failIntroduced); err != nil || failIntroduced {
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
