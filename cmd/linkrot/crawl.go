package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
)

// crawlFlags are the flags of the crawl (crawl and audit). The flags
// that make the run's settings write into s (linkrot.Settings, stored
// with the run); the others are how the command runs.
type crawlFlags struct {
	s         *linkrot.Settings
	db        string
	sitemaps  listFlag
	urls      string
	base      string
	traps     trapFlags
	logFormat string
	quiet     bool
	verbose   bool
}

// register adds the crawl flags to fs, writing into s. For audit
// (shared=false) the flags both stages have (--per-host, --user-agent,
// --timeout, --max-redirects) are registered by checkFlags instead.
func (f *crawlFlags) register(fs *flag.FlagSet, s *linkrot.Settings, shared bool) {
	f.s = s
	c := &s.Crawl
	fs.StringVar(&f.db, "db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	fs.Var(&f.sitemaps, "sitemap", "crawl from a sitemap `URL` (index and .gz too; repeatable); its URLs are seeds")
	fs.StringVar(&f.urls, "urls", "", "extract the pages listed in `FILE` (one URL per line, - for stdin), no recursion")
	fs.StringVar(&f.base, "base", "", "`URL` under which a local build directory is served (crawl DIR)")
	fs.Var((*listFlag)(&c.AllowDomains), "allow-domain", "also crawl this `host` (example.org, example.org:8080, *.example.org; repeatable)")
	fs.Var((*listFlag)(&c.Include), "include", "only crawl URLs matching this `regexp` (repeatable)")
	fs.Var((*listFlag)(&c.Exclude), "exclude", "do not crawl URLs matching this `regexp` (repeatable)")
	fs.IntVar(&c.MaxDepth, "max-depth", 0, "crawl at most `N` links away from the seeds (0: unlimited)")
	fs.IntVar(&c.MaxPages, "max-pages", 0, "fetch at most `N` pages (0: unlimited)")
	fs.BoolVar(&c.NoIgnore, "no-ignore", false, "DIR: also read hidden files and directories and what .gitignore excludes (.git/ stays out)")
	fs.BoolVar(&c.DirListing, "dir-listing", false, "DIR: answer a link to a folder without index.html or index.htm with a listing of its files, crawled like a web server's autoindex (default: 404 in an HTML build, as a server without listings; ok in a Markdown repository)")
	fs.BoolVar(&c.IgnoreRobots, "ignore-robots", false, "ignore robots.txt (only for your own site)")
	f.traps.register(fs, c)
	if shared {
		fs.IntVar(&s.PerHost, "concurrency", 4, "alias of --per-host (the older name)")
		registerShared(fs, s, "`N` parallel requests per host")
	}
	fs.DurationVar(&c.Delay, "delay", 0, "pause after each request to a host (robots.txt Crawl-delay wins when larger)")
	c.MaxBody = 5 << 20
	fs.Var((*sizeFlag)(&c.MaxBody), "max-body", "read at most this many decoded body `bytes` per page (e.g. 5MiB)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&f.quiet, "quiet", false, "log warnings and errors only")
	fs.BoolVar(&f.verbose, "verbose", false, "log debug detail")
}

// registerShared adds the flags of the settings the crawl and the checks
// share (--per-host with usage perHost, --user-agent, --timeout,
// --max-redirects) to fs, writing into s.
func registerShared(fs *flag.FlagSet, s *linkrot.Settings, perHost string) {
	fs.IntVar(&s.PerHost, "per-host", 4, perHost)
	fs.StringVar(&s.UserAgent, "user-agent", crawler.DefaultUserAgent, "User-Agent `string`")
	fs.DurationVar(&s.Timeout, "timeout", 30*time.Second, "per-request timeout (connect, headers and body)")
	fs.IntVar(&s.MaxRedirects, "max-redirects", 10, "follow at most `N` redirect hops")
}

// input returns what to crawl, decided from the arguments
// (linkrot.ParseInput).
func (f *crawlFlags) input(e *env, pos []string) (linkrot.Input, error) {
	return linkrot.ParseInput(linkrot.InputArgs{Args: pos, URLsFile: f.urls, Stdin: e.stdin, Sitemaps: f.sitemaps, Base: f.base})
}

// runCrawl is linkrot crawl: the crawl stage of linkrot audit alone, into
// a run of its own. The frontier is stored as the crawl goes, so with
// --resume a killed crawl continues where it stopped (crawlStage).
func runCrawl(ctx context.Context, e *env, args []string) error {
	var (
		set linkrot.Settings // the run's settings: the flags write into it
		f   crawlFlags
	)
	fs := newFlagSet(e, "crawl", "[flags] URL | DIR --base URL | --sitemap URL | --urls FILE | --resume")
	f.register(fs, &set, true)
	var jf jobFlags
	jf.register(fs, jobLock|jobResume|jobLog)
	pos, cfg, err := parseCommand(e, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	pos = cfg.withURL(pos)
	// --resume without a URL takes the input and settings of the latest
	// interrupted crawl, read after the database is open.
	fromStored := jf.resume && len(pos) == 0 && f.urls == "" && len(f.sitemaps) == 0
	hosts := cfg.hostRules()
	if !fromStored {
		if set.Input, err = f.input(e, pos); err != nil {
			return err
		}
	}
	log, err := jf.logger(e.stderr, f.logFormat, f.verbose, f.quiet)
	if err != nil {
		return err
	}
	oo := linkrot.OpenOptions{Logger: log, CrawlOnly: true}
	if !fromStored {
		set.Hosts = hosts
		if err := set.Validate(oo); err != nil {
			return err
		}
	}
	ctx, store, lk, err := openLocked(ctx, f.db, "crawl", jf.wait, log)
	if err != nil {
		return err
	}
	defer lk.release()
	if fromStored {
		if err := restoreSettings(ctx, store, audit.CommandCrawl, fs, &set, hosts); err != nil {
			return err
		}
	}
	job, err := linkrot.Start(ctx, store, set, jf.start(e, audit.CommandCrawl, oo))
	if err != nil {
		return err
	}
	defer job.Close()
	run := job.Run
	lk.setRun(ctx, run.ID)
	if job.Resumed {
		linkrot.WriteResuming(e.stdout, run)
	}
	prog := newAuditProgress(e.stderr, log)
	sum, err := job.Audit(ctx, store, prog)
	prog.done()
	log.Info("run finished", "run", run.ID, "status", run.Status)
	if sum != nil && sum.Stats != nil {
		if _, serr := linkrot.WriteRunSummary(context.WithoutCancel(ctx), e.stdout, store, run, sum.Stats); serr != nil && err == nil {
			err = serr
		}
		if traps, err := store.CrawlTraps(context.WithoutCancel(ctx), run.ID); err == nil {
			linkrot.WriteTrapSummary(e.stdout, traps)
		}
	}
	return withRun(err, run)
}

func withRun(err error, run *audit.Run) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("run %d: %w", run.ID, err)
}
