package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
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
	failOn, err := parseFailOn(f.failOn)
	if err != nil {
		return check.Options{}, nil, err
	}
	o, err := f.s.CheckOptions(log)
	if err != nil {
		return check.Options{}, nil, usagef("%v", err)
	}
	return o, failOn, nil
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
		PerHost: opts.PerHost, Delay: opts.HostDelay, Rules: opts.Hosts, MaxRetryWait: opts.MaxRetryWait, ResourceID: urls.NormalizeURL,
	})
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
		MaxAge:            set.Check.MaxAge,
		ExternalFragments: set.Check.ExternalFragments,
		Confirm:           rule,
		Logger:            log,
		Archives:          archives,
	}, store, nil)
	if sum != nil && sum.Checks != nil {
		nothing := ""
		if sum.Checks.Targets == 0 && sum.Stats != nil {
			pc, serr := sitePages(context.WithoutCancel(ctx), store, run, sum.Stats)
			if serr != nil && err == nil {
				err = serr
			}
			nothing = nothingToCheck(run.Mode, sum.Stats, pc)
		}
		printCheckSummary(e.stdout, *sum.Checks, sum.Top, nothing)
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

// printCheckSummary prints the check line of a run and its most linked
// broken targets; a run without targets gets the line nothing says
// instead (nothingToCheck; "": a plain one).
func printCheckSummary(w io.Writer, r audit.CheckCounts, top []audit.BrokenTarget, nothing string) {
	if r.Targets == 0 {
		if nothing == "" {
			nothing = "Nothing to check: the run has no link targets."
		}
		fmt.Fprintln(w, nothing)
		return
	}
	fmt.Fprintf(w, "Checked %s (%d fetched, %d from the crawl, %d reused from earlier runs): ", plural(r.Targets, "unique target"), r.Fetched, r.FromCrawl, r.Reused)
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
