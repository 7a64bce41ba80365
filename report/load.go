package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// History bounds of a report: the trend shows the last trendRuns runs of
// the site, a target's detail its last historyChecks checks.
const (
	trendRuns     = 60
	historyChecks = 30
)

// sinceFormats are the formats that show what changed since the last run.
var sinceFormats = map[Format]bool{HTML: true, JSON: true, Markdown: true}

// LoadOptions are how Load stamps a report.
type LoadOptions struct {
	// Format is the format the report is written in: the changes since
	// the last run are loaded only for the formats that show them
	// (reading them costs a second pass over the run's checks).
	Format Format
	// Generator names the program (Dataset.Generator), Now the time the
	// report is generated at (Dataset.GeneratedAt).
	Generator string
	Now       time.Time
}

// Load reads everything a report shows about run from the store: the
// report's dataset, assembled once for every format.
func Load(ctx context.Context, store Store, run *audit.Run, o LoadOptions) (*Dataset, error) {
	f := o.Format
	ds := &Dataset{Run: *run, GeneratedAt: o.Now, Generator: o.Generator}
	wrap := func(what string, err error) error { return fmt.Errorf("load %s for the report: %w", what, err) }
	stats, err := store.RunStats(ctx, run.ID)
	if err != nil {
		return nil, wrap("run stats", err)
	}
	ds.Stats = *stats
	// Pages without their links: the links stream from the store each
	// time a writer walks them, so that a run of millions of links is
	// never held in memory.
	pages, pageIDs, err := store.PageList(ctx, run.ID)
	if err != nil {
		return nil, wrap("pages", err)
	}
	ds.Pages = pages
	ds.EachLink = linkStream(ctx, store, run.ID, pageIDs)
	files, err := store.PageFiles(ctx, run.ID)
	if err != nil {
		return nil, wrap("page files", err)
	}
	for _, p := range ds.Pages {
		p.File = files[p.URL]
	}
	targets, err := store.Targets(ctx, run.ID)
	if err != nil {
		return nil, wrap("targets", err)
	}
	ds.Targets = make([]Target, len(targets))
	for i, t := range targets {
		ds.Targets[i] = Target{ID: t.ID, URL: t.URL, Host: t.Host}
	}
	if ds.Checks, err = store.Checks(ctx, run.ID); err != nil {
		return nil, wrap("checks", err)
	}
	if ds.Findings, err = store.Findings(ctx, run.ID); err != nil {
		return nil, wrap("findings", err)
	}
	if ds.CrawlTraps, err = store.CrawlTraps(ctx, run.ID); err != nil {
		return nil, wrap("crawl traps", err)
	}
	if ds.Fixes, err = store.Maintenance(ctx, run.ID); err != nil {
		return nil, wrap("link-maintenance records", err)
	}
	if ds.SnapshotChecks, err = store.SnapshotChecks(ctx, run.ID); err != nil {
		return nil, wrap("snapshot checks", err)
	}
	if ds.Mementos, err = store.Mementos(ctx, run.ID); err != nil {
		return nil, wrap("mementos", err)
	}
	if ds.Drifts, err = store.Drifts(ctx, run.ID); err != nil {
		return nil, wrap("drift", err)
	}
	if ds.IdentifierChecks, err = store.IdentifierChecks(ctx, run.ID); err != nil {
		return nil, wrap("identifier checks", err)
	}
	if ds.Suggestions, err = store.Suggestions(ctx, run.ID); err != nil {
		return nil, wrap("suggestions", err)
	}
	trend, err := store.Trend(ctx, run.ID, trendRuns)
	if err != nil {
		return nil, wrap("trend", err)
	}
	for _, p := range trend {
		ds.Runs = append(ds.Runs, RunSummary{ID: p.ID, StartedAt: p.StartedAt, FinishedAt: p.FinishedAt,
			Status: p.Status, Pages: p.Pages, Links: p.Links, Checked: p.Checked, Broken: p.Broken, Drifted: p.Drifted})
	}
	statuses, err := store.TargetStatuses(ctx, run.ID, historyChecks)
	if err != nil {
		return nil, wrap("target history", err)
	}
	ds.History = make([]TargetHistory, len(statuses))
	for i, st := range statuses {
		h := TargetHistory{TargetID: st.TargetID, FirstSeen: st.FirstSeen, FirstSeenRun: st.FirstSeenRun,
			FirstBroken: st.FirstBroken, FirstBrokenRun: st.FirstBrokenRun, LastOK: st.LastOK, LastOKRun: st.LastOKRun,
			Checks: make([]HistoryEntry, len(st.Checks))}
		for j, c := range st.Checks {
			h.Checks[j] = HistoryEntry{RunID: c.RunID, CheckedAt: c.CheckedAt, Verdict: c.Verdict, Status: c.Status}
		}
		ds.History[i] = h
	}
	ids := make([]int64, len(ds.History))
	for i := range ds.History {
		ids[i] = ds.History[i].TargetID
	}
	tracked, err := store.TargetHistories(ctx, ids)
	if err != nil {
		return nil, wrap("target history", err)
	}
	for i := range ds.History {
		if th, ok := tracked[ds.History[i].TargetID]; ok {
			mergeTracked(&ds.History[i], th, run.ID)
		}
	}
	if sinceFormats[f] {
		if ds.Since, err = store.SinceLastRun(ctx, run.ID); err != nil {
			return nil, wrap("changes since the last run", err)
		}
	}
	return ds, nil
}

// mergeTracked completes a target's status, rebuilt from the checks the
// report shows, with its history across every run (kept when old runs are
// pruned): confirmation, the current failure streak, and first broken and
// last OK beyond the checks shown. The history describes the latest run
// applied to it, so it is used only when that is the reported run.
func mergeTracked(h *TargetHistory, th audit.TargetHistory, runID int64) {
	if th.LastRun != runID {
		return
	}
	h.Tracked = true
	h.Confirmed, h.ConfirmedAt, h.ConfirmedRun = th.Confirmed, th.ConfirmedAt, th.ConfirmedRun
	h.FailingSince, h.FailingSinceRun, h.FailedRuns = th.FailingSince, th.FailingSinceRun, th.FailedRuns
	if h.FirstSeen.IsZero() || (!th.FirstSeen.IsZero() && th.FirstSeen.Before(h.FirstSeen)) {
		h.FirstSeen = th.FirstSeen
	}
	// The streak's first failure is a broken check: first broken is no
	// later, even when its run was pruned or is older than the checks
	// shown.
	if !th.FailingSince.IsZero() && (h.FirstBroken.IsZero() || th.FailingSince.Before(h.FirstBroken)) {
		h.FirstBroken, h.FirstBrokenRun = th.FailingSince, th.FailingSinceRun
	}
	if th.LastOK.After(h.LastOK) {
		h.LastOK, h.LastOKRun = th.LastOK, 0
	}
}

// linkStream returns the Dataset.EachLink of a run whose pages have the
// store IDs pageIDs (in the order of Dataset.Pages).
func linkStream(ctx context.Context, store reportLinks, runID int64, pageIDs []int64) func(func(*Link) error) error {
	return func(fn func(*Link) error) error {
		return store.EachReportLink(ctx, runID, pageIDs, fn)
	}
}

// reportLinks streams a run's links for the
type reportLinks interface {
	EachReportLink(ctx context.Context, runID int64, pageIDs []int64, fn func(*Link) error) error
}

// Store is what a report reads of a run.
type Store interface {
	reportLinks
	// PageFiles maps the URLs of a directory run's pages to their source
	// files.
	PageFiles(ctx context.Context, runID int64) (map[string]string, error)
	RunStats(ctx context.Context, runID int64) (*audit.RunStats, error)
	PageList(ctx context.Context, runID int64) ([]*audit.Page, []int64, error)
	Targets(ctx context.Context, runID int64) ([]audit.TargetRef, error)
	Checks(ctx context.Context, runID int64) ([]audit.Check, error)
	Findings(ctx context.Context, runID int64) ([]audit.Finding, error)
	Maintenance(ctx context.Context, runID int64) ([]audit.Maintenance, error)
	CrawlTraps(ctx context.Context, runID int64) ([]audit.CrawlTrap, error)
	Drifts(ctx context.Context, runID int64) ([]audit.Drift, error)
	Mementos(ctx context.Context, runID int64) ([]audit.Memento, error)
	SnapshotChecks(ctx context.Context, runID int64) ([]audit.SnapshotCheck, error)
	IdentifierChecks(ctx context.Context, runID int64) ([]audit.IdentifierCheck, error)
	Suggestions(ctx context.Context, runID int64) ([]audit.Suggestion, error)
	SinceLastRun(ctx context.Context, runID int64) (*audit.RunDiff, error)
	TargetHistories(ctx context.Context, targetIDs []int64) (map[int64]audit.TargetHistory, error)
	TargetStatuses(ctx context.Context, runID int64, perTarget int) ([]audit.TargetStatus, error)
	Trend(ctx context.Context, runID int64, limit int) ([]audit.TrendPoint, error)
}

// Output is a machine format of a run's report and the file it goes to.
type Output struct {
	Format Format
	File   string
}

// RunReport is what WriteRun writes of a run.
type RunReport struct {
	// HTML writes the HTML report into Dir (ReplaceDir: never part of
	// one).
	HTML bool
	Dir  string
	// Outputs are the machine formats, each to its file (directories
	// created).
	Outputs []Output
	// Load stamps the reports (its Format is set for each).
	Load LoadOptions
	// Moving, when not nil, is called once the HTML report is written and
	// not yet moved into Dir (ReplaceDir).
	Moving func()
	// Written, when not nil, is told of each report written: its format
	// and path (the HTML report's index page).
	Written func(f Format, path string)
}

// WriteRun writes the reports r asks of run, each from a dataset loaded
// for its format. An interrupted run's reports are the same, for what
// was done: its run status says interrupted.
func WriteRun(ctx context.Context, store Store, run *audit.Run, r RunReport) error {
	written := func(f Format, path string) {
		if r.Written != nil {
			r.Written(f, path)
		}
	}
	if r.HTML {
		lo := r.Load
		lo.Format = HTML
		ds, err := Load(ctx, store, run, lo)
		if err != nil {
			return err
		}
		path, err := ReplaceDir(r.Dir, ds, r.Moving)
		if err != nil {
			return err
		}
		written(HTML, path)
	}
	for _, o := range r.Outputs {
		lo := r.Load
		lo.Format = o.Format
		ds, err := Load(ctx, store, run, lo)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(o.File), 0o755); err != nil {
			return fmt.Errorf("create report directory: %w", err)
		}
		if err := WriteFile(o.File, o.Format, ds); err != nil {
			return err
		}
		written(o.Format, o.File)
	}
	return nil
}
