package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/check"
	"github.com/linkrot/linkrot/audit/sqlite"
	"github.com/linkrot/linkrot/crawler"
)

// This file holds what makes linkrot fit for cron: the run lock, resuming
// an interrupted run, the history stage and --fail-on new.

// stageHook is called when linkrot audit starts a stage ("crawl", "check",
// "archives", "history", "report"). Tests replace it to stop a child
// process at a chosen point; it does nothing otherwise.
var stageHook = func(stage string) {}

// jobFlags are the flags of scheduled runs.
type jobFlags struct {
	resume         bool
	wait           bool
	confirmAfter   int
	confirmSpacing time.Duration
	logLevel       string
}

// Which jobFlags a command has.
const (
	jobLock    = 1 << iota // --wait
	jobResume              // --resume
	jobHistory             // --confirm-after, --confirm-spacing
	jobLog                 // --log-level
)

func (j *jobFlags) register(fs *flag.FlagSet, which int) {
	if which&jobResume != 0 {
		fs.BoolVar(&j.resume, "resume", false, "continue the latest interrupted run of the same settings instead of starting a new one (without a URL: the latest interrupted run, with its settings)")
	}
	if which&jobLock != 0 {
		fs.BoolVar(&j.wait, "wait", false, "when another linkrot writes to the database, wait for it instead of exiting with code 4")
	}
	if which&jobHistory != 0 {
		fs.IntVar(&j.confirmAfter, "confirm-after", audit.DefaultConfirmRule.After, "a target is confirmed broken after failing in `N` consecutive runs (transient failures never confirm)")
		fs.DurationVar(&j.confirmSpacing, "confirm-spacing", audit.DefaultConfirmRule.Spacing, "failures count toward confirmation only when at least this far apart")
	}
	if which&jobLog != 0 {
		fs.StringVar(&j.logLevel, "log-level", "", "log `level`: debug, info, warn or error (default warn: quiet; info adds progress every 10s and stage summaries)")
	}
}

// rule returns the confirmation rule of the flags.
func (j *jobFlags) rule() (audit.ConfirmRule, error) {
	if j.confirmAfter < 1 || j.confirmSpacing < 0 {
		return audit.ConfirmRule{}, usagef("--confirm-after must be at least 1 and --confirm-spacing not negative")
	}
	return audit.ConfirmRule{After: j.confirmAfter, Spacing: j.confirmSpacing}, nil
}

// logger returns the run logger: --log-level when given, else newLogger's
// defaults.
func (j *jobFlags) logger(w io.Writer, format string, verbose, quiet bool) (*slog.Logger, error) {
	if j.logLevel == "" {
		return newLogger(w, format, verbose, quiet)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(j.logLevel)); err != nil {
		return nil, usagef("--log-level must be debug, info, warn or error, not %q", j.logLevel)
	}
	return newLevelLogger(w, format, level)
}

// takeFailOnNew reads --fail-on new: it returns true, and leaves no
// verdict to fail on, when the value is "new".
func takeFailOnNew(failOn *string) (bool, error) {
	parts := strings.Split(*failOn, ",")
	for _, p := range parts {
		if strings.TrimSpace(p) == "new" {
			if len(parts) != 1 {
				return false, usagef("--fail-on new cannot be combined with verdicts")
			}
			*failOn = "none"
			return true, nil
		}
	}
	return false, nil
}

// failOnNew returns a findingsError when the run confirmed broken targets
// that were not confirmed before: the exit code of --fail-on new.
func failOnNew(ctx context.Context, store *sqlite.DB, runID int64) error {
	n, err := store.NewlyConfirmed(ctx, runID)
	if err != nil {
		return err
	}
	if n > 0 {
		return &findingsError{n: n}
	}
	return nil
}

// lockedError is returned when another process holds the database.
type lockedError struct {
	db  string
	err error
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("%s: %v; run with --wait to wait for it", e.db, e.err)
}

func (e *lockedError) Unwrap() error { return e.err }

// lockPoll is how often a waiting process tries the lock again.
var lockPoll = 500 * time.Millisecond

// heldLock is the run lock of a writing command.
type heldLock struct {
	l      *sqlite.Lock
	cancel context.CancelCauseFunc
	log    *slog.Logger
}

// release frees the lock. It may be called more than once.
func (h *heldLock) release() {
	if err := h.l.Release(); err != nil {
		h.log.Warn("release lock", "err", err)
	}
	h.cancel(nil)
}

// setRun names the run being written in the lock, for the message another
// process shows. It is best effort.
func (h *heldLock) setRun(ctx context.Context, runID int64) {
	if err := h.l.SetRun(ctx, runID); err != nil {
		h.log.Warn("lock", "err", err)
	}
}

// lockDB takes the database's run lock for a writing command. Another
// live linkrot holding it makes it fail with a lockedError naming that
// process (exit code 4) or, with wait, wait for it. SQLITE_BUSY (another
// process's transaction outlasting busy_timeout) is treated the same way.
// The returned context is cancelled if the lock is ever taken over (the
// run then stops as interrupted).
func lockDB(ctx context.Context, store *sqlite.DB, command string, wait bool, log *slog.Logger) (context.Context, *heldLock, error) {
	lctx, cancel := context.WithCancelCause(ctx)
	opts := sqlite.LockOptions{Command: command, OnLost: func() {
		log.Error("the database lock was taken over by another process; stopping")
		cancel(errors.New("database lock lost"))
	}}
	told := false
	for {
		l, err := store.TryLock(ctx, opts)
		if err == nil {
			if l.TookOver != nil {
				log.Warn("took over the lock of a linkrot that is gone", "holder", l.TookOver.String())
			}
			return lctx, &heldLock{l: l, cancel: cancel, log: log}, nil
		}
		if !errors.Is(err, sqlite.ErrLocked) && !sqlite.IsBusy(err) {
			cancel(nil)
			return nil, nil, err
		}
		if !wait {
			cancel(nil)
			return nil, nil, &lockedError{db: store.Path(), err: err}
		}
		if !told {
			log.Warn("waiting for another linkrot to finish with the database", "reason", err.Error())
			told = true
		}
		select {
		case <-ctx.Done():
			cancel(nil)
			return nil, nil, fmt.Errorf("waiting for the database lock: %w", ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// runSettings are what identifies a run's configuration: its input and
// every flag that changes what it records. They are stored with the run,
// so "linkrot audit --resume" can continue it with the same settings.
type runSettings struct {
	Mode  string              `json:"mode"`
	Seeds []string            `json:"seeds"`
	Dir   string              `json:"dir,omitempty"`
	Flags map[string][]string `json:"flags"`
	Hosts []hostConfig        `json:"hosts,omitempty"`
}

// volatileFlags change how a run is shown or scheduled, not what it
// records: they are not part of its settings.
var volatileFlags = map[string]bool{
	"db": true, "config": true, "resume": true, "wait": true, "log-format": true, "log-level": true,
	"quiet": true, "verbose": true, "fail-on": true, "report": true, "no-report": true,
	"confirm-after": true, "confirm-spacing": true,
}

func newRunSettings(fs *flag.FlagSet, in crawlInput, hosts []hostConfig) runSettings {
	s := runSettings{Mode: in.mode, Seeds: in.seeds, Dir: in.dir, Flags: map[string][]string{}, Hosts: hosts}
	fs.VisitAll(func(f *flag.Flag) {
		if volatileFlags[f.Name] {
			return
		}
		if l, ok := f.Value.(*listFlag); ok {
			s.Flags[f.Name] = append([]string{}, (*l)...)
			return
		}
		s.Flags[f.Name] = []string{f.Value.String()}
	})
	return s
}

// fingerprint is a hash of the settings (JSON with sorted keys).
func (s runSettings) fingerprint() (string, []byte) {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("linkrot: marshal run settings: %v", err)) // plain strings only
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), b
}

// restoreSettings loads the settings of the latest interrupted run for
// "linkrot audit --resume" without a URL: every flag the command line did
// not set takes the run's value. It returns the run's input and host rules.
func restoreSettings(ctx context.Context, store *sqlite.DB, fs *flag.FlagSet) (crawlInput, []hostConfig, error) {
	run, err := store.UnfinishedRun(ctx, "")
	if errors.Is(err, audit.ErrNotFound) {
		return crawlInput{}, nil, usagef("--resume without a URL: no interrupted run to resume in %s", store.Path())
	}
	if err != nil {
		return crawlInput{}, nil, err
	}
	_, b, err := store.RunSettings(ctx, run.ID)
	if err != nil {
		return crawlInput{}, nil, err
	}
	var s runSettings
	if err := json.Unmarshal(b, &s); err != nil {
		return crawlInput{}, nil, fmt.Errorf("settings of run %d: %w", run.ID, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, vals := range s.Flags {
		f := fs.Lookup(name)
		if f == nil || set[name] {
			continue
		}
		if l, ok := f.Value.(*listFlag); ok {
			*l = nil
		}
		for _, v := range vals {
			if err := fs.Set(name, v); err != nil {
				return crawlInput{}, nil, fmt.Errorf("settings of run %d: --%s: %w", run.ID, name, err)
			}
		}
	}
	return crawlInput{mode: s.Mode, seeds: s.Seeds, dir: s.Dir}, s.Hosts, nil
}

// startRun returns the run to work on. With resume, that is the latest
// interrupted run with the same settings, marked running again; otherwise
// (or when there is none) a new run, with its settings stored.
func startRun(ctx context.Context, e *env, store *sqlite.DB, in crawlInput, sitemaps []string, s runSettings, resume bool, log *slog.Logger) (*audit.Run, bool, error) {
	fp, b := s.fingerprint()
	if resume {
		run, err := store.UnfinishedRun(ctx, fp)
		switch {
		case err == nil:
			if err := store.ReopenRun(ctx, run.ID); err != nil {
				return nil, false, err
			}
			run.Status, run.FinishedAt, run.Error = audit.RunRunning, time.Time{}, ""
			log.Info("resuming run", "run", run.ID, "started", run.StartedAt)
			return run, true, nil
		case !errors.Is(err, audit.ErrNotFound):
			return nil, false, err
		}
		log.Info("no interrupted run with these settings: starting a new one")
	}
	seeds := in.seeds
	if in.mode == "sitemap" {
		seeds = append(append([]string{}, sitemaps...), in.seeds...)
	}
	if in.mode == "dir" {
		seeds = []string{in.dir + " as " + in.seeds[0]}
	}
	run := &audit.Run{StartedAt: time.Now().UTC(), Mode: in.mode, Seeds: seeds, Args: e.args, Version: Version}
	// Written even when ctx is already cancelled, so the run is visible.
	wctx := context.WithoutCancel(ctx)
	if err := store.CreateRun(wctx, run); err != nil {
		return nil, false, fmt.Errorf("create run: %w", err)
	}
	if err := store.SaveRunSettings(wctx, run.ID, fp, b); err != nil {
		return nil, false, err
	}
	log.Info("run started", "run", run.ID, "mode", in.mode, "seeds", strings.Join(seeds, " "))
	return run, false, nil
}

// crawlItem is what the crawl's single writer stores: a page, or URLs
// queued (in the order the crawler produced them, see crawler.Frontier).
type crawlItem struct {
	page   *audit.Page
	queued []audit.FrontierEntry
}

// dbFrontier persists the crawl frontier through the crawl's writer.
type dbFrontier struct {
	store *sqlite.DB
	runID int64
	w     *audit.Batcher[crawlItem]
}

func (f *dbFrontier) Restore(ctx context.Context) ([]audit.FrontierEntry, []string, error) {
	return f.store.Frontier(ctx, f.runID)
}

func (f *dbFrontier) Queue(entries []audit.FrontierEntry) { f.w.Add(crawlItem{queued: entries}) }

// crawlSink sends pages to the crawl's writer.
type crawlSink struct{ w *audit.Batcher[crawlItem] }

func (s crawlSink) Add(p *audit.Page) { s.w.Add(crawlItem{page: p}) }

// crawlStage crawls into run through one batched writer that stores pages
// and the frontier together (sqlite.DB.SaveCrawl), restoring the frontier
// the run stored before when it is resumed. It returns the crawl's error
// (wrapping context.Canceled when interrupted) or the writer's.
func crawlStage(ctx context.Context, e *env, store *sqlite.DB, run *audit.Run, in crawlInput, sitemaps []string, opts crawler.Options, log *slog.Logger) (crawler.Stats, error) {
	w := audit.NewBatcher(context.WithoutCancel(ctx), func(ctx context.Context, items []crawlItem) error {
		var (
			pages  []*audit.Page
			queued []audit.FrontierEntry
		)
		for _, it := range items {
			if it.page != nil {
				pages = append(pages, it.page)
			}
			queued = append(queued, it.queued...)
		}
		return store.SaveCrawl(ctx, run.ID, pages, queued)
	}, audit.WriterOptions{})
	opts.Frontier = &dbFrontier{store: store, runID: run.ID, w: w}
	prog := newProgressN(e.stderr, log, "crawling", -1)
	opts.OnPage = func(p *audit.Page) { prog.addN(int64(len(p.Links))) }
	c := crawler.New(opts, crawlSink{w})
	var (
		st  crawler.Stats
		err error
	)
	switch in.mode {
	case "site":
		st, err = c.Crawl(ctx, in.seeds)
	case "urls":
		st, err = c.CrawlList(ctx, in.seeds)
	case "dir":
		st, err = c.CrawlDir(ctx, in.dir, in.seeds[0])
	case "sitemap":
		st, err = c.CrawlSitemaps(ctx, sitemaps, in.seeds)
	default:
		err = fmt.Errorf("unknown input mode %q", in.mode)
	}
	prog.done()
	werr := w.Close()
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("crawl stopped after %d pages: %w", st.Pages, context.Canceled)
	case werr != nil:
		err = werr
	}
	log.Info("crawl finished", "run", run.ID, "pages", st.Pages, "robots_blocked", st.RobotsBlocked, "out_of_scope_links", st.OutOfScope)
	if st.BudgetHit {
		log.Warn("--max-pages reached: the crawl is incomplete", "max_pages", opts.MaxPages)
	}
	return st, err
}

// applyHostRules adds the [[host]] rules of a config file to the crawler's
// and the checker's options: limits and headers as audit.HostRules, and
// excluded paths as patterns neither crawled nor checked.
func applyHostRules(hosts []hostConfig, copts *crawler.Options, kopts *check.Options) error {
	for _, h := range hosts {
		copts.Hosts = append(copts.Hosts, h.HostRule)
		kopts.Hosts = append(kopts.Hosts, h.HostRule)
		for _, ex := range h.Exclude {
			re, err := hostExcludeRegexp(h.Match, ex)
			if err != nil {
				return usagef("host %s: exclude %q: %v", h.Match, ex, err)
			}
			copts.Exclude = append(copts.Exclude, re)
			kopts.Exclude = append(kopts.Exclude, re)
		}
	}
	return nil
}

// hostExcludeRegexp turns a host rule's path regexp into one over whole
// URLs of the matching hosts: the path pattern applies to what follows the
// authority, its ^ anchoring at the path's start.
func hostExcludeRegexp(match, pathRE string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(pathRE); err != nil {
		return nil, err
	}
	m := strings.ToLower(strings.TrimSpace(match))
	var host string
	if d, ok := strings.CutPrefix(m, "*."); ok {
		host = `([^/@]+\.)?` + regexp.QuoteMeta(d) + `(:[0-9]+)?`
	} else if _, _, err := net.SplitHostPort(m); err == nil {
		host = regexp.QuoteMeta(m) // host and port
	} else {
		host = regexp.QuoteMeta(m) + `(:[0-9]+)?`
	}
	p := strings.TrimPrefix(pathRE, "^")
	anchored := p != pathRE
	pathPart := `(/[^?#]*)?` // any path before the pattern
	if anchored {
		pathPart = ``
	}
	return regexp.Compile(`(?i)^https?://` + host + pathPart + `(?-i:` + p + `)`)
}

// historyStage folds the run's checks into the targets' histories (once
// per run: a resumed run is not counted twice) and logs what it found.
func historyStage(ctx context.Context, store *sqlite.DB, run *audit.Run, rule audit.ConfirmRule, log *slog.Logger) error {
	res, err := store.ApplyHistory(ctx, run.ID, rule)
	if err != nil {
		return err
	}
	log.Info("history updated", "run", run.ID, "runs_applied", len(res.Runs), "targets", res.Targets,
		"newly_confirmed", res.Confirmed, "recovered", res.Recovered)
	return nil
}

// printSince prints what changed since the previous run of the site, in a
// few lines (nothing when there is no previous run).
func printSince(ctx context.Context, w io.Writer, store *sqlite.DB, runID int64) error {
	d, err := store.SinceLastRun(ctx, runID)
	if err != nil {
		return err
	}
	if d.From == 0 {
		return nil
	}
	drift := fmt.Sprintf("%d newly drifted", len(d.NewlyDrifted))
	if !d.DriftAvailable {
		drift = "drift not measured"
	}
	fmt.Fprintf(w, "Since run %d: %d newly broken, %d newly confirmed broken, %d recovered, %d newly moved, %s.\n",
		d.From, len(d.NewBroken), len(d.NewlyConfirmed), len(d.Recovered), len(d.NewlyMoved), drift)
	for _, c := range d.NewlyConfirmed {
		fmt.Fprintf(w, "  confirmed  %-18s %s\n", c.Verdict, c.URL)
	}
	return nil
}
