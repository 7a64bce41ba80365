package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/check"
	"github.com/linkrot/linkrot/audit/sqlite"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/politeness"
)

// checkFlags are the flags of the checking stage (check and audit).
type checkFlags struct {
	concurrency       int
	perHost           int
	hostDelay         time.Duration
	retries           int
	maxRetryWait      time.Duration
	timeout           time.Duration
	maxRedirects      int
	maxBody           sizeFlag
	userAgent         string
	allowPrivate      bool
	skip              listFlag
	noSoft404         bool
	externalFragments bool
	maxAge            time.Duration
	failOn            string
}

func (f *checkFlags) register(fs *flag.FlagSet, withShared bool) {
	if withShared {
		// audit registers these once for both stages.
		fs.IntVar(&f.concurrency, "workers", 64, "`N` checks in parallel in all (worker pool)")
		fs.IntVar(&f.concurrency, "concurrency", 64, "alias of --workers (the older name)")
		fs.IntVar(&f.perHost, "per-host", 4, "parallel requests per host")
		fs.StringVar(&f.userAgent, "user-agent", crawler.DefaultUserAgent, "User-Agent `string`")
		fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "per-request timeout (connect, headers and body)")
		fs.IntVar(&f.maxRedirects, "max-redirects", 10, "follow at most `N` redirect hops")
	}
	fs.DurationVar(&f.hostDelay, "host-delay", 0, "pause between requests to the same host while checking")
	fs.IntVar(&f.retries, "retries", 2, "retries of transient failures (timeouts, 5xx, resets, 429), with exponential backoff and jitter")
	fs.DurationVar(&f.maxRetryWait, "max-retry-wait", time.Minute, "longest Retry-After (or rate-limit reset) linkrot waits for; a longer one gives the host up")
	f.maxBody = 2 << 20
	fs.Var(&f.maxBody, "check-max-body", "read at most this many decoded `bytes` of a checked HTML target (soft-404 and fingerprints; at most 64MiB)")
	fs.BoolVar(&f.allowPrivate, "allow-private", false, "allow every loopback and private address (without it, only the audited site's own origin and --allow-domain hosts may be there); link-local addresses are never allowed")
	fs.Var(&f.skip, "skip", "do not check targets matching this `regexp` (repeatable; recorded as skipped)")
	fs.BoolVar(&f.noSoft404, "no-soft404", false, "turn off soft-404 and parked-domain detection (probes, page words, error URLs, parking fingerprints, redirect-to-root)")
	fs.BoolVar(&f.externalFragments, "check-external-fragments", false, "also check #fragments of links to other sites")
	fs.Var((*maxAgeFlag)(&f.maxAge), "max-age", "reuse a target's result from an earlier run if it is younger than this `age` (1d, 24h); transient failures are never reused")
	fs.StringVar(&f.failOn, "fail-on", "not-found,gone,dns-error,soft-404,parked", "exit 1 when a target gets one of these `verdicts` (comma-separated; 'broken' = every broken verdict; 'none'; 'new' = only targets this run newly confirmed broken, see --confirm-after; 'introduced' (audit) = only broken links the change introduced, see --baseline)")
}

// failSet parses --fail-on.
func parseFailOn(s string) (map[audit.Verdict]bool, error) {
	out := map[audit.Verdict]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		switch p {
		case "", "none":
			continue
		case "broken":
			for _, v := range audit.Verdicts {
				if v.Broken() {
					out[v] = true
				}
			}
			continue
		}
		if !slices.Contains(audit.Verdicts, audit.Verdict(p)) {
			return nil, usagef("--fail-on: unknown verdict %q", p)
		}
		out[audit.Verdict(p)] = true
	}
	return out, nil
}

func (f *checkFlags) options(log *slog.Logger) (check.Options, map[audit.Verdict]bool, error) {
	var skip []*regexp.Regexp
	for _, s := range f.skip {
		re, err := regexp.Compile(s)
		if err != nil {
			return check.Options{}, nil, usagef("--skip %q: %v", s, err)
		}
		skip = append(skip, re)
	}
	failOn, err := parseFailOn(f.failOn)
	if err != nil {
		return check.Options{}, nil, err
	}
	retries := f.retries
	if retries == 0 {
		retries = -1 // check.Options: 0 means "default", negative means none
	}
	if f.concurrency < 1 || f.perHost < 1 {
		return check.Options{}, nil, usagef("--workers and --per-host must be at least 1")
	}
	if f.maxBody > 64<<20 { // parsing HTML costs many times the body: 100 MiB took 1.5 GB
		return check.Options{}, nil, usagef("--check-max-body %d is above the 64MiB limit", int64(f.maxBody))
	}
	return check.Options{
		Workers:        f.concurrency,
		PerHost:        f.perHost,
		HostDelay:      f.hostDelay,
		Retries:        retries,
		MaxRetryWait:   f.maxRetryWait,
		Timeout:        f.timeout,
		MaxRedirects:   f.maxRedirects,
		MaxBody:        int64(f.maxBody),
		UserAgent:      f.userAgent,
		AllowPrivate:   f.allowPrivate,
		Exclude:        skip,
		DisableSoft404: f.noSoft404,
		Logger:         log,
	}, failOn, nil
}

func runCheck(ctx context.Context, e *env, args []string) error {
	var f checkFlags
	fs := newFlagSet(e, "check", "[--run N] [flags]")
	db := fs.String("db", "linkrot.db", "SQLite database `path`")
	runID := fs.Int64("run", 0, "run whose targets to check (default: the latest)")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	quiet := fs.Bool("quiet", false, "log warnings and errors only")
	f.register(fs, true)
	var af archiveFlags
	af.register(fs)
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
	opts, failOn, err := f.options(log)
	if err != nil {
		return err
	}
	if err := applyHostRules(cfg.hostRules(), &crawler.Options{}, &opts); err != nil {
		return err
	}
	// The run's politeness scheduler, handed to the robots.txt gate too:
	// one budget per host (as the audit command's).
	opts.Scheduler = politeness.New(politeness.Options{
		PerHost: opts.PerHost, Delay: opts.HostDelay, Rules: opts.Hosts, MaxRetryWait: opts.MaxRetryWait,
	})
	store, err := sqlite.Open(ctx, *db)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	ctx, lk, err := lockDB(ctx, store, "check", jf.wait, log)
	if err != nil {
		return err
	}
	defer lk.release()
	run, err := pickRun(ctx, store, *runID)
	if err != nil {
		return err
	}
	lk.setRun(ctx, run.ID)
	// Exact SSRF scope: the audited origins and --allow-domain hosts may
	// be private, nothing else (--allow-private opens the rest). robots.txt
	// binds the site's own URLs here as in the crawl.
	scope := runScope(ctx, store, run)
	opts.AllowPrivateHosts = append(opts.AllowPrivateHosts, scope.privateHosts()...)
	if opts.Robots == nil {
		var sched crawler.CrawlDelaySetter
		if opts.Scheduler != nil {
			sched = opts.Scheduler
		}
		gate, closeGate := scope.robotsGate(opts.UserAgent, sched)
		defer closeGate()
		if gate != nil {
			opts.Robots = gate
		}
	}
	if opts.Robots != nil {
		// linkrot.Audit also sets each origin's Crawl-delay on the run's
		// scheduler before the first check.
		opts.Hosts = crawlDelayRules(ctx, opts.Robots, scope.seeds, opts.Hosts)
	}
	archives, closeArchives, err := af.stage(ctx, store, run, opts, log)
	if err != nil {
		return err
	}
	defer closeArchives()
	sum, err := linkrot.Audit(ctx, linkrot.Config{
		Run:               run,
		CheckOnly:         true,
		Check:             opts,
		MaxAge:            f.maxAge,
		ExternalFragments: f.externalFragments,
		Confirm:           rule,
		Logger:            log,
		Archives:          archives,
	}, store, nil)
	if sum != nil && sum.Checks != nil {
		printCheckSummary(e.stdout, *sum.Checks, sum.Top)
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

func printCheckSummary(w io.Writer, r audit.CheckCounts, top []audit.BrokenTarget) {
	fmt.Fprintf(w, "Checked %d unique targets (%d fetched, %d from the crawl, %d reused from earlier runs): ", r.Targets, r.Fetched, r.FromCrawl, r.Reused)
	var parts []string
	for _, v := range audit.Verdicts {
		if n := r.Verdicts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	fmt.Fprintf(w, "%s. %d findings, %d link-maintenance records (linkrot fixes).\n", strings.Join(parts, ", "), r.Findings, r.Fixes)
	if len(top) > 0 {
		fmt.Fprintln(w, "Top broken targets:")
		sort.SliceStable(top, func(i, j int) bool { return top[i].Pages > top[j].Pages })
		for _, b := range top {
			fmt.Fprintf(w, "  %-18s %4d pages  %s\n", b.Verdict, b.Pages, b.URL)
		}
	}
}
