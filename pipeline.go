package linkrot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
)

// Config is the configuration of one audit run, as Open builds it from
// the run's Settings (Job.Config); a caller adds what only it decides
// (Confirm, MaxTime, Report, Work, StageHook). The zero value of each
// field is documented with it.
type Config struct {
	// Run is the run to fill: created (or reopened, to resume it) by the
	// caller, who stores its settings. Audit records its stages and its
	// end in it.
	Run *audit.Run
	// Input is what to crawl.
	Input Input
	// CheckOnly checks the run's stored pages without crawling (linkrot
	// check --run N): targets already checked in the run are kept, and the
	// stages after the checks all run again (false: a full audit, skipping
	// the stages a resumed run finished).
	CheckOnly bool
	// CrawlOnly crawls without checking (linkrot crawl): no checks,
	// findings, archives or history.
	CrawlOnly bool
	// Crawl configures the crawler. Its Frontier, Observe and
	// Scheduler fields are set by Audit (the scheduler shared with the
	// checker: Check.Scheduler, else Crawl.Scheduler). Open builds it and
	// Check from the run's Settings; a Config without a scheduler is
	// refused.
	Crawl crawler.Options
	// Check configures the checker (zero value: check.Options' defaults).
	Check check.Options
	// MaxAge reuses a target's result from an earlier run younger than
	// this (0: never).
	MaxAge time.Duration
	// ExternalFragments also checks #fragments of links to other sites
	// (false: only the audited site's).
	ExternalFragments bool
	// Confirm is the history rule (zero value: audit.DefaultConfirmRule).
	Confirm audit.ConfirmRule
	// MaxTime bounds the run (0: no limit). When it is over, the run stops
	// as interrupted, and the report of what was done is still written.
	MaxTime time.Duration
	// Archives is the archives stage (nil: none). It is streamed: begun
	// before the checks, handed each target whose live check is stored,
	// and finished after the checks (see Archiver).
	Archives Archiver
	// Report writes the run's report (nil: none), given the run's
	// summary. sum.Incomplete is true when the run was interrupted (signal
	// or MaxTime): the report shows what was done, and ctx is then not
	// cancelled by the interruption.
	Report func(ctx context.Context, sum *Summary) error
	// Logger receives the run's events (nil: discarded).
	Logger *slog.Logger
	// Work, when not nil, replaces the in-process crawl and checks: it
	// returns once the run's pages and checks are all stored (by other
	// processes: the scale-out mode of package scaleout), with the
	// anchors of the targets checked live that findings need (see
	// DeriveFindings). The stages after the checks run as usual.
	Work func(ctx context.Context) (anchors map[string][]string, err error)
	// StageHook, when not nil, is called as each stage starts ("crawl",
	// "check", "archives", "history", "report"): tests stop a process
	// at a chosen point with it.
	StageHook func(stage string)
}

// Archiver is the archives stage of a run (robust.Stage implements it).
// Audit calls Begin before the checks start, Checked from the run's
// writer with each check once it is stored (with the links to its
// target), Finish after the checks and findings (it finishes the targets
// not looked up yet and stores the stage's results; the run then records
// the stage "archives" as done), and Close in every case at the end. A
// resumed run whose archives stage is done calls none of them.
type Archiver interface {
	// Begin starts the stage for run; ctx bounds the lookups it starts
	// while the checks run.
	Begin(ctx context.Context, run *audit.Run) error
	// Checked hands over a target whose live verdict is in. It must not
	// block: the queue behind it is bounded, and what does not fit is
	// left to Finish.
	Checked(c *audit.Check)
	// Finish completes the stage after the checks.
	Finish(ctx context.Context) error
	// Close stops what the stage started without finishing it; it may be
	// called after Finish.
	Close()
}

// Progress is told how a run advances. Audit calls it from many
// goroutines: implementations must be safe for concurrent use. noProgress
// is the no-op default.
type Progress interface {
	// Page is called for each page the crawl records.
	Page(p *audit.Page)
	// Checked is called for each target whose check is in.
	Checked(c *audit.Check)
	// Stage is called when a stage starts.
	Stage(name string)
}

// noProgress is the Progress of a nil one: it does nothing.
type noProgress struct{}

// Page does nothing.
func (noProgress) Page(*audit.Page) {}

// Checked does nothing.
func (noProgress) Checked(*audit.Check) {}

// Stage does nothing.
func (noProgress) Stage(string) {}

// Summary is what a run did, for the caller's summary lines and exit code.
type Summary struct {
	Run *audit.Run
	// Crawl is what the crawl did (zero when it was done before a resume).
	Crawl crawler.Stats
	// Stats counts what the run stored.
	Stats *audit.RunStats
	// Checks counts the checking stage (nil when it did not finish).
	Checks *audit.CheckCounts
	// Top are the most linked broken targets.
	Top []audit.BrokenTarget
	// Incomplete is true when the run was interrupted (signal, MaxTime).
	Incomplete bool
	// ReportOnly is true when the run was complete and only its report
	// was left to write.
	ReportOnly bool
}

// Store is what Audit needs of the run database: the stores of its stages.
// *sqlstore.DB implements it.
type Store interface {
	runStore
	crawlStore
	checkStore
	FindingsStore
	historyStore
}

// runStore records a run's stages and its end.
type runStore interface {
	Stages(ctx context.Context, runID int64) (map[string]time.Time, error)
	MarkStage(ctx context.Context, runID int64, stage string) error
	finisher
	RunStats(ctx context.Context, runID int64) (*audit.RunStats, error)
}

// ErrMaxTime is the cause of a run's cancellation when Config.MaxTime is
// over.
var ErrMaxTime = errors.New("--max-time reached")

// Audit runs cfg.Run end to end into store: the crawl and the checks at
// once (streamed, see the package doc), findings, archives, history, the
// run's end and the report. With a run being resumed it skips the stages
// the run finished. progress may be nil. cfg is a Job's (Open, Start): a
// Config without the run's politeness scheduler is refused.
//
// A dead link is data: Audit returns an error only when the run could not
// go on (store failure, cancellation: an error wrapping context.Canceled;
// MaxTime: one wrapping ErrMaxTime and context.Canceled). The summary is
// returned with the error whenever something was done.
func Audit(ctx context.Context, cfg Config, store Store, progress Progress) (*Summary, error) {
	if cfg.Run == nil {
		return nil, errors.New("audit: no run")
	}
	if cfg.Work == nil && cfg.Check.Scheduler == nil && cfg.Crawl.Scheduler == nil {
		return nil, errors.New("audit: the run has no politeness scheduler: build its Config with Open or Start")
	}
	if progress == nil {
		progress = noProgress{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Confirm.After == 0 && cfg.Confirm.Spacing == 0 {
		cfg.Confirm = audit.DefaultConfirmRule
	}
	hook := func(stage string) {
		progress.Stage(stage)
		if cfg.StageHook != nil {
			cfg.StageHook(stage)
		}
	}
	if cfg.MaxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, cfg.MaxTime, ErrMaxTime)
		defer cancel()
	}
	run := cfg.Run
	sum := &Summary{Run: run, ReportOnly: run.Status == audit.RunComplete && !cfg.CheckOnly}
	stages, err := store.Stages(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	err = nil
	if !sum.ReportOnly {
		err = runStages(ctx, cfg, store, progress, hook, stages, sum, log)
		err = finishRun(ctx, store, run, err)
		sum.Incomplete = run.Status == audit.RunInterrupted
	} else if ctx.Err() != nil {
		err = stopped(ctx)
	}
	if sum.Stats == nil { // runStages reads them once everything they count is stored
		if st, serr := store.RunStats(context.WithoutCancel(ctx), run.ID); serr == nil {
			sum.Stats = st
		} else if err == nil {
			err = fmt.Errorf("run stats: %w", serr)
		}
	}
	if err != nil && !sum.Incomplete {
		return sum, err
	}
	// The report stage is recorded once the report is written (or when
	// there is none to write): a run killed while writing it is complete,
	// and a resumed run writes the report. An interrupted run's report is
	// written too, marked incomplete, and not recorded: resuming the run
	// writes the complete one.
	if cfg.Report != nil {
		hook("report")
		rctx := ctx
		if sum.Incomplete {
			rctx = context.WithoutCancel(ctx)
		}
		if rerr := cfg.Report(rctx, sum); rerr != nil {
			return sum, rerr
		}
	}
	if sum.Incomplete || cfg.CrawlOnly {
		return sum, err
	}
	if err := store.MarkStage(ctx, run.ID, audit.StageReport); err != nil {
		return sum, err
	}
	return sum, nil
}

// stopped returns the error of a cancelled run: its cause wrapped with
// context.Canceled.
func stopped(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Errorf("stopped: %w (%w)", context.Canceled, cause)
	}
	if errors.Is(context.Cause(ctx), ErrMaxTime) {
		return fmt.Errorf("stopped: %w (%w)", context.Canceled, ErrMaxTime)
	}
	return fmt.Errorf("stopped: %w", context.Canceled)
}

// finishRun records how the run ended, whatever stage it was in: the one
// run-ending rule of every command that writes a run. It sets run.Status
// and returns err, or the cancellation (wrapping context.Canceled) when
// ctx is done, or the store's error.
func finishRun(ctx context.Context, store finisher, run *audit.Run, err error) error {
	status, msg := audit.RunComplete, ""
	switch {
	case ctx.Err() != nil:
		status = audit.RunInterrupted
		if !errors.Is(err, context.Canceled) {
			err = stopped(ctx)
		}
		if we, ok := errors.AsType[*WaitingError](err); ok {
			msg = we.Reason() // why the run could not finish
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

// finisher records the end of a run.
type finisher interface {
	FinishRun(ctx context.Context, runID int64, status audit.RunStatus, finishedAt time.Time, errMsg string) error
}

// runStages runs the stages the run has not finished, in order.
func runStages(ctx context.Context, cfg Config, store Store, progress Progress, hook func(string), stages map[string]time.Time, sum *Summary, log *slog.Logger) error {
	run := cfg.Run
	_, crawled := stages[audit.StageCrawl]
	if cfg.CheckOnly {
		crawled = true
		delete(stages, audit.StageArchives)
	} else {
		hook("crawl")
	}
	// The archives stage streams: begun now, fed by the checks (in the
	// scale-out mode, Work, it looks every target up in Finish).
	var archiver Archiver
	if _, done := stages[audit.StageArchives]; done {
		log.Info("archives stage finished before: skipped", "run", run.ID)
	} else if cfg.Archives != nil && !cfg.CrawlOnly {
		archiver = cfg.Archives
		defer archiver.Close()
		if err := archiver.Begin(ctx, run); err != nil {
			return fmt.Errorf("archives: %w", err)
		}
	}
	var (
		counts  audit.CheckCounts
		anchors map[string][]string
		st      crawler.Stats
		err     error
	)
	if cfg.Work != nil {
		anchors, err = cfg.Work(ctx)
		if err == nil && ctx.Err() == nil {
			hook("check")
			err = store.MarkStage(ctx, run.ID, audit.StageCrawl)
		}
		if ctx.Err() != nil {
			err = stopped(ctx)
		}
	} else {
		counts, anchors, st, err = crawlAndCheck(ctx, cfg, store, progress, archiver, !crawled, hook, log)
	}
	sum.Crawl = st
	if err != nil || cfg.CrawlOnly {
		return err
	}
	// Every check of the run is stored: the history stage reads only
	// them, so it runs beside the findings (their reads overlap its
	// writes; it is idempotent per run, so a kill at any point is safe).
	history := make(chan error, 1)
	go func() { history <- historyStage(ctx, store, run, cfg.Confirm, log) }()
	waitHistory := sync.OnceValue(func() error { return <-history })
	defer waitHistory() // never leave it running against a closed store
	// What the summary reads of the stored run is read beside both: the
	// checks, pages and links it counts are all stored, and the findings
	// change none of them. Reads wait for no writer.
	reads := make(chan summaryReads, 1)
	go func() { reads <- readSummary(ctx, store, run.ID) }()
	waitReads := sync.OnceValue(func() summaryReads { return <-reads })
	defer waitReads()
	if err := deriveFindings(ctx, cfg, store, &counts, anchors); err != nil {
		return err
	}
	sr := waitReads()
	if sr.err != nil {
		return sr.err
	}
	vc := sr.verdicts
	counts.Targets = 0
	for v, n := range vc {
		if v != audit.VerdictFragmentMissing {
			counts.Targets += n
		}
	}
	c := counts.WithVerdicts(vc)
	sum.Checks = &c
	sum.Top, sum.Stats = sr.top, sr.stats
	if err := store.MarkStage(ctx, run.ID, audit.StageCheck); err != nil {
		return err
	}
	if archiver != nil {
		hook("archives")
		if err := archiver.Finish(ctx); err != nil {
			return err
		}
		if err := store.MarkStage(ctx, run.ID, audit.StageArchives); err != nil {
			return err
		}
	}
	hook("history")
	return waitHistory()
}
