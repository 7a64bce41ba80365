package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"time"

	"github.com/linkrot/linkrot"
)

// checkFlags are the flags of the checking stage (check and audit),
// writing into s (linkrot.Settings) but --fail-on.
type checkFlags struct {
	s      *linkrot.Settings
	failOn string
}

func (f *checkFlags) register(fs *flag.FlagSet, s *linkrot.Settings, withShared bool) {
	f.s = s
	c := &s.Check
	if withShared {
		// audit registers these once for both stages.
		fs.IntVar(&c.Workers, "workers", 64, "`N` checks in parallel in all (worker pool)")
		fs.IntVar(&c.Workers, "concurrency", 64, "alias of --workers (the older name)")
		registerShared(fs, s, "parallel requests per host")
	}
	fs.DurationVar(&c.HostDelay, "host-delay", 0, "pause between requests to the same host while checking")
	fs.IntVar(&c.Retries, "retries", 2, "retries of transient failures (timeouts, 5xx, resets, 429), with exponential backoff and jitter")
	fs.DurationVar(&c.MaxRetryWait, "max-retry-wait", time.Minute, "longest Retry-After (or rate-limit reset) linkrot waits for; a longer one makes its URL rate-limited with the time to retry, and gives the host up when it covers the host (docs/politeness.md)")
	c.MaxBody = 2 << 20
	fs.Var((*sizeFlag)(&c.MaxBody), "check-max-body", "read at most this many decoded `bytes` of a checked HTML target (soft-404 and fingerprints; at most 64MiB)")
	fs.BoolVar(&c.AllowPrivate, "allow-private", false, "allow every loopback and private address (without it, only the audited site's own origin and --allow-domain hosts may be there); link-local addresses are never allowed")
	fs.Var((*listFlag)(&c.Skip), "skip", "do not check targets matching this `regexp` (repeatable; recorded as skipped)")
	fs.BoolVar(&c.NoSoft404, "no-soft404", false, "turn off soft-404 and parked-domain detection (probes, page words, error URLs, parking fingerprints, redirect-to-root)")
	fs.BoolVar(&c.ExternalFragments, "check-external-fragments", false, "also check #fragments of links to other sites")
	fs.Var((*maxAgeFlag)(&c.MaxAge), "max-age", "reuse a target's result from an earlier run if it is younger than this `age` (1d, 24h); transient failures are never reused")
	fs.StringVar(&f.failOn, "fail-on", "not-found,gone,dns-error,soft-404,parked", "exit 1 when a target gets one of these `verdicts` (comma-separated; 'broken' = every broken verdict; 'none'; 'new' = only targets this run newly confirmed broken, see --confirm-after; 'introduced' (audit) = only broken links the change introduced, see --baseline)")
}

func runCheck(ctx context.Context, e *env, args []string) error {
	var (
		set linkrot.Settings // the flags write into it; check stores no settings
		f   checkFlags
	)
	fs := newFlagSet(e, "check", "[--run N] [flags]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	runID := fs.Int64("run", 0, "run whose targets to check (default: the latest)")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	quiet := fs.Bool("quiet", false, "log warnings and errors only")
	f.register(fs, &set, true)
	var af archiveFlags
	af.register(fs, &set)
	var jf jobFlags
	jf.register(fs, jobLock|jobHistory|jobLog)
	pos, cfg, err := parseCommand(e, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("check takes no arguments (use --run N)")
	}
	if _, _, _, err := af.config(); err != nil { // before a long check
		return err
	}
	failNew, err := takeFailOnNew(&f.failOn)
	if err != nil {
		return err
	}
	rule, err := jf.rule()
	if err != nil {
		return err
	}
	log, err := jf.logger(e.stderr, *logFormat, false, *quiet)
	if err != nil {
		return err
	}
	failOn, err := linkrot.ParseFailOn(f.failOn)
	if err != nil {
		return err
	}
	set.Hosts = cfg.hostRules()
	oo := linkrot.OpenOptions{Logger: log, CheckOnly: true, SaveAuth: os.Getenv(spnAuthEnv)}
	if err := set.Validate(oo); err != nil {
		return err
	}
	ctx, store, lk, err := openLocked(ctx, *db, "check", jf.wait, log)
	if err != nil {
		return err
	}
	defer lk.release()
	run, err := pickRun(ctx, store, *runID)
	if err != nil {
		return err
	}
	lk.setRun(ctx, run.ID)
	// The run's scope (robots.txt, the origins that may be private) is
	// the crawled run's, from its stored settings.
	job, err := linkrot.Open(ctx, store, run, set, oo)
	if err != nil {
		return err
	}
	defer job.Close()
	af.stg, af.offline = job.Archives, set.Archives.Off
	job.Config.Confirm = rule
	sum, err := job.Audit(ctx, store, nil)
	if sum != nil && sum.Checks != nil {
		nothing := ""
		if sum.Checks.Targets == 0 && sum.Stats != nil {
			pc, serr := linkrot.SitePages(context.WithoutCancel(ctx), store, run, sum.Stats)
			if serr != nil && err == nil {
				err = serr
			}
			nothing = linkrot.NothingToCheck(run.Mode, sum.Stats, pc)
		}
		linkrot.WriteCheckSummary(e.stdout, *sum.Checks, sum.Top, nothing)
	}
	af.printSummary(e.stdout)
	if err != nil {
		return withRun(err, run)
	}
	if failNew {
		return failOnNew(ctx, store, run.ID)
	}
	if n := sum.Checks.Failing(failOn); n > 0 {
		return &findingsError{n: n}
	}
	return nil
}
