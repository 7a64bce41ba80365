package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
		fs.IntVar(&f.concurrency, "concurrency", 64, "parallel checks in all (worker pool)")
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
		return check.Options{}, nil, usagef("--concurrency and --per-host must be at least 1")
	}
	if f.maxBody > 64<<20 { // parsing HTML costs many times the body: 100 MiB took 1.5 GB
		return check.Options{}, nil, usagef("--check-max-body %d is above the 64MiB limit", int64(f.maxBody))
	}
	return check.Options{
		Concurrency:    f.concurrency,
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
	res, err := checkRun(ctx, e, store, run, opts, f, log)
	if err == nil {
		err = runArchives(ctx, e, store, run, &af, opts, log)
	}
	if err == nil {
		err = historyStage(ctx, store, run, rule, log)
	}
	status := audit.RunComplete
	msg := ""
	switch {
	case ctx.Err() != nil:
		status = audit.RunInterrupted
		err = fmt.Errorf("check stopped: %w", context.Canceled)
	case err != nil:
		status, msg = audit.RunFailed, err.Error()
	}
	if ferr := store.FinishRun(context.WithoutCancel(ctx), run.ID, status, time.Now().UTC(), msg); ferr != nil && err == nil {
		err = ferr
	}
	if res != nil {
		printCheckSummary(e.stdout, res)
	}
	af.printSummary(e.stdout)
	if err != nil {
		return withRun(err, run)
	}
	if failNew {
		return failOnNew(ctx, store, run.ID)
	}
	return res.failOn(failOn)
}

// checkResult is what the checking stage reports.
type checkResult struct {
	runID    int64
	targets  int
	checked  int
	reused   int
	counts   map[audit.Verdict]int
	top      []sqlite.BrokenTarget
	findings int
	fixes    int
	// fragments counts fragment-missing findings (links, not targets).
	fragments int
	// fromCrawl counts the targets judged from the run's crawl (pages of
	// the site, see check.Known), not among checked.
	fromCrawl int
}

func (r *checkResult) failOn(set map[audit.Verdict]bool) error {
	n := 0
	for v, c := range r.counts {
		if set[v] {
			n += c
		}
	}
	if n > 0 {
		return &findingsError{n: n}
	}
	return nil
}

// checkRun checks every target of run once: targets already checked in this
// run (an interrupted run being resumed) are skipped, recent results of
// earlier runs are reused under --max-age, the others are fetched. Results
// go through the single batched writer; findings (broken links, missing
// fragments) and link-maintenance records are derived at the end.
func checkRun(ctx context.Context, e *env, store *sqlite.DB, run *audit.Run, opts check.Options, f checkFlags, log *slog.Logger) (*checkResult, error) {
	refs, err := store.Targets(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("load targets: %w", err)
	}
	links, err := store.LinkRefs(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("load links: %w", err)
	}
	done, err := store.CheckedTargetIDs(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("load checked targets: %w", err)
	}
	siteHosts := runHosts(run)
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
		opts.Hosts = crawlDelayRules(ctx, opts.Robots, scope.seeds, opts.Hosts)
		// A shared scheduler (the audit command's) knows each origin's
		// Crawl-delay before the first check, even when the crawl was
		// done by an earlier process (resume).
		if opts.Scheduler != nil {
			for _, o := range scope.seeds {
				if u, err := url.Parse(o); err == nil {
					if d := opts.Robots.CrawlDelay(ctx, u); d > 0 {
						opts.Scheduler.SetCrawlDelay(politeness.Key(u), d)
					}
				}
			}
		}
	}
	// Which targets need their anchors collected (for #fragment links).
	wantAnchors := map[int64]bool{}
	for _, l := range links {
		if l.TargetID == 0 || l.Fragment == "" {
			continue
		}
		if f.externalFragments || siteHosts[hostOf(l.Href)] {
			wantAnchors[l.TargetID] = true
		}
	}
	var ids []int64
	for _, r := range refs {
		if !done[r.ID] {
			ids = append(ids, r.ID)
		}
	}
	prev, err := store.PreviousChecks(ctx, run.ID, ids, f.maxAge, time.Now().UTC())
	if err != nil {
		return nil, fmt.Errorf("load previous checks: %w", err)
	}
	known, err := crawlResponses(ctx, store, run.ID)
	if err != nil {
		return nil, err
	}

	w := audit.NewBatcher(context.WithoutCancel(ctx), store.SaveChecks, audit.WriterOptions{BatchSize: 500})
	var (
		mu      sync.Mutex
		anchors = map[int64][]string{}
	)
	var fromCrawl atomic.Int64
	res := &checkResult{runID: run.ID, targets: len(refs)}
	prog := newProgressN(e.stderr, log, "checking", len(ids))
	emit := func(c audit.Check) {
		c.RunID = run.ID
		if len(c.Anchors) > 0 && wantAnchors[c.TargetID] {
			mu.Lock()
			anchors[c.TargetID] = c.Anchors
			mu.Unlock()
		}
		c.Anchors = nil
		if c.FromCrawl {
			fromCrawl.Add(1)
		}
		w.Add(c)
		prog.add()
	}
	var targets []check.Target
	now := time.Now().UTC()
	for _, r := range refs {
		if done[r.ID] {
			continue
		}
		// A page of the site is judged from this run's crawl rather than
		// from an earlier run: as fresh, and as free.
		k := known.Lookup(r.URL)
		if k != nil && run.Mode == "dir" {
			k.Offline = true // read from the directory, not the site at --base
		}
		p := prev[r.ID]
		if k == nil && p != nil && f.maxAge > 0 && now.Sub(p.CheckedAt) <= f.maxAge && !wantAnchors[r.ID] {
			c := *p
			c.Reused, c.ReusedFrom, c.RunID = true, p.RunID, run.ID
			res.reused++
			emit(c)
			continue
		}
		targets = append(targets, check.Target{ID: r.ID, URL: r.URL, WantAnchors: wantAnchors[r.ID], Previous: p, Known: k})
	}
	log.Info("checking targets", "run", run.ID, "targets", len(refs), "already_checked", len(done), "reused", res.reused, "to_fetch", len(targets))
	runErr := check.New(opts).Run(ctx, targets, emit)
	prog.done()
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("save checks: %w", err)
	}
	res.fromCrawl = int(fromCrawl.Load())
	res.checked = len(targets) - res.fromCrawl
	if runErr != nil {
		return nil, runErr
	}
	if err := deriveFindings(ctx, store, run.ID, links, anchors, wantAnchors, res); err != nil {
		return nil, err
	}
	if res.counts, err = store.VerdictCounts(ctx, run.ID); err != nil {
		return nil, err
	}
	// fragment-missing is a verdict of links, not of targets: it lives in
	// the findings, and counts (summary, --fail-on) include it from there.
	if res.fragments > 0 {
		if res.counts == nil {
			res.counts = map[audit.Verdict]int{}
		}
		res.counts[audit.VerdictFragmentMissing] += res.fragments
	}
	if res.top, err = store.TopBroken(ctx, run.ID, 10); err != nil {
		return nil, err
	}
	return res, nil
}

// deriveFindings turns the run's checks into per-link findings (broken
// targets, missing fragments) and link-maintenance records (UNLINKR
// triples) for moved targets.
func deriveFindings(ctx context.Context, store *sqlite.DB, runID int64, links []sqlite.LinkRef, anchors map[int64][]string, wantAnchors map[int64]bool, res *checkResult) error {
	checks, err := store.Checks(ctx, runID)
	if err != nil {
		return fmt.Errorf("load checks: %w", err)
	}
	byTarget := make(map[int64]*audit.Check, len(checks))
	for i := range checks {
		byTarget[checks[i].TargetID] = &checks[i]
	}
	anchorSets := map[int64]map[string]bool{}
	for id, as := range anchors {
		set := make(map[string]bool, len(as))
		for _, a := range as {
			set[a] = true
		}
		anchorSets[id] = set
	}
	var findings []audit.Finding
	var fixes []audit.Maintenance
	for _, l := range links {
		c := byTarget[l.TargetID]
		if c == nil {
			continue
		}
		switch {
		case c.Verdict.Broken():
			findings = append(findings, audit.Finding{RunID: runID, PageURL: l.PageURL, LinkID: l.LinkID, Target: c.URL, Verdict: c.Verdict,
				Message: verdictMessage(c)})
		case c.Verdict == audit.VerdictMoved && c.Replacement != "":
			fixes = append(fixes, audit.Maintenance{RunID: runID, Source: l.PageURL, Target: c.URL, Replacement: c.Replacement, Status: firstStatus(c)})
		}
		fetched := c.Verdict == audit.VerdictOK || c.Verdict == audit.VerdictRedirected || c.Verdict == audit.VerdictMoved
		if l.Fragment != "" && wantAnchors[l.TargetID] && fetched {
			set, ok := anchorSets[l.TargetID]
			frag, _ := url.PathUnescape(l.Fragment)
			// "top" scrolls to the top of any HTML page (HTML standard).
			if ok && !set[l.Fragment] && !set[frag] && !strings.EqualFold(l.Fragment, "top") {
				findings = append(findings, audit.Finding{RunID: runID, PageURL: l.PageURL, LinkID: l.LinkID, Target: c.URL,
					Verdict: audit.VerdictFragmentMissing, Fragment: l.Fragment,
					Message: fmt.Sprintf("no element with id or name %q in the target page", l.Fragment)})
			}
		}
	}
	if err := store.ReplaceFindings(ctx, runID, findings); err != nil {
		return fmt.Errorf("save findings: %w", err)
	}
	if err := store.SaveMaintenance(ctx, fixes); err != nil {
		return fmt.Errorf("save maintenance records: %w", err)
	}
	res.findings, res.fixes = len(findings), len(fixes)
	res.fragments = 0
	for _, f := range findings {
		if f.Verdict == audit.VerdictFragmentMissing {
			res.fragments++
		}
	}
	return nil
}

func firstStatus(c *audit.Check) int {
	if len(c.Redirects) > 0 {
		return c.Redirects[0].Status
	}
	return c.Status
}

func verdictMessage(c *audit.Check) string {
	if c.Reason != "" {
		return c.Reason
	}
	if c.Status > 0 {
		return fmt.Sprintf("%s (HTTP %d)", c.Verdict, c.Status)
	}
	return string(c.Verdict)
}

// runHosts returns the hosts (host[:port] as audit.NormalizeURL writes them)
// of a run's seeds: the audited site.
func runHosts(run *audit.Run) map[string]bool {
	out := map[string]bool{}
	for _, s := range run.Seeds {
		if _, after, ok := strings.Cut(s, " as "); ok { // directory crawls: "DIR as BASE"
			s = after
		}
		if h := hostOf(s); h != "" {
			out[h] = true
		}
	}
	return out
}

func hostOf(raw string) string {
	n, err := audit.NormalizeURL(raw)
	if err != nil {
		return ""
	}
	u, err := url.Parse(n)
	if err != nil {
		return ""
	}
	return u.Host
}

// hostsArePrivate reports whether any audited host resolves to a loopback
// or private address, by the checker's own policy (check.IsPrivateAddr:
// RFC 1918, CGNAT, benchmarking, ULA, site-local too): then linkrot may
// connect to such addresses.
func hostsArePrivate(ctx context.Context, hosts map[string]bool) bool {
	for h := range hosts {
		name := h
		if hh, _, err := net.SplitHostPort(h); err == nil {
			name = hh
		}
		name = strings.Trim(name, "[]")
		if ip, err := netip.ParseAddr(name); err == nil {
			if check.IsPrivateAddr(ip) {
				return true
			}
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		addrs, err := net.DefaultResolver.LookupNetIP(lctx, "ip", name)
		cancel()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if check.IsPrivateAddr(a) {
				return true
			}
		}
	}
	return false
}

func printCheckSummary(w io.Writer, r *checkResult) {
	fmt.Fprintf(w, "Checked %d unique targets (%d fetched, %d from the crawl, %d reused from earlier runs): ", r.targets, r.checked, r.fromCrawl, r.reused)
	var parts []string
	for _, v := range audit.Verdicts {
		if n := r.counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	fmt.Fprintf(w, "%s. %d findings, %d link-maintenance records (linkrot fixes).\n", strings.Join(parts, ", "), r.findings, r.fixes)
	if len(r.top) > 0 {
		fmt.Fprintln(w, "Top broken targets:")
		sort.SliceStable(r.top, func(i, j int) bool { return r.top[i].Pages > r.top[j].Pages })
		for _, b := range r.top {
			fmt.Fprintf(w, "  %-18s %4d pages  %s\n", b.Verdict, b.Pages, b.URL)
		}
	}
}
