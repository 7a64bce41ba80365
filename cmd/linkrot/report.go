package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/report"
)

// reportNow is the time stamped into reports (tests fix it).
var reportNow = func() time.Time { return time.Now().UTC() }

// History bounds of a report: the trend shows the last trendRuns runs of
// the site, a target's detail its last historyChecks checks.
const (
	trendRuns     = 60
	historyChecks = 30
)

// defaultReportDir is where the HTML report goes: linkrot-report beside the
// database; for a PostgreSQL database, in the current directory.
func defaultReportDir(db string) string {
	if isDatabaseURL(db) {
		return "linkrot-report"
	}
	return filepath.Join(filepath.Dir(db), "linkrot-report")
}

func runReport(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "report", "[--db PATH] [--run N] [--out DIR|FILE] [--format html|json|csv|junit|markdown|sarif|github]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	runID := fs.Int64("run", 0, "run to report (default: the latest)")
	out := fs.String("out", "", "html: the report `directory` (default linkrot-report beside the database); other formats: a file (default: standard output)")
	format := fs.String("format", "html", "html, json, csv, junit, markdown, sarif or github (GitHub Actions annotations)")
	detail := fs.Int("detail-links", 0, "html: a run with more links than `N` (default 50000) gets its links listed in link pages (links/1.html, ...) and the report details those with something to show")
	perPage := fs.Int("links-per-page", report.DefaultLinksPerPage, "html: links on one link page")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("report takes no arguments (use --run N)")
	}
	f, err := report.ParseFormat(*format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	if *detail < 0 || *perPage < 1 {
		return usagef("--detail-links must be 0 or more, --links-per-page 1 or more")
	}
	store, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	run, err := pickRun(ctx, store, *runID)
	if err != nil {
		return err
	}
	ds, err := loadDatasetFor(ctx, store, run, f)
	if err != nil {
		return err
	}
	switch {
	case f == report.HTML:
		dir := *out
		if dir == "" {
			dir = defaultReportDir(*db)
		}
		path, err := report.WriteDirOptions(dir, ds, report.HTMLOptions{DetailLinks: *detail, LinksPerPage: *perPage})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Report of run %d: %s\n", run.ID, path)
		return nil
	case *out != "":
		return report.WriteFile(*out, f, ds)
	default:
		w := bufio.NewWriterSize(e.stdout, 1<<16)
		if err := report.Write(w, f, ds); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		return nil
	}
}

// writeAuditReport writes the HTML report of an audit run into dir
// (unless html is false: --no-report), and its machine outputs (into dir
// as report.json, report.csv, report.xml, report.md, report.sarif, or to
// the file an output names), and says where they are. An interrupted
// run's report is the same, for what was done: its run status says
// interrupted.
func writeAuditReport(ctx context.Context, e *env, store reportStore, runID int64, dir string, html bool, outputs ...reportOutput) error {
	run, err := store.Run(ctx, runID)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if html {
		ds, err := loadDataset(ctx, store, run)
		if err != nil {
			return err
		}
		path, err := writeReportDir(dir, ds) // never a partial report (job.go)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Report: %s\n", path)
	}
	for _, o := range outputs {
		ds, err := loadDatasetFor(ctx, store, run, o.format)
		if err != nil {
			return err
		}
		out := o.file(dir)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return fmt.Errorf("create report directory: %w", err)
		}
		if err := report.WriteFile(out, o.format, ds); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Report (%s): %s\n", o.format, out)
	}
	return nil
}

// outputName is the file name of a machine output in the report directory.
func outputName(f report.Format) string {
	switch f {
	case report.JUnit:
		return "report.xml"
	case report.Markdown:
		return "report.md"
	}
	return "report." + string(f)
}

// loadDataset reads everything the HTML report shows about run from the
// store.
func loadDataset(ctx context.Context, store reportStore, run *audit.Run) (*report.Dataset, error) {
	return loadDatasetFor(ctx, store, run, report.HTML)
}

// sinceFormats are the formats that show what changed since the last run.
var sinceFormats = map[report.Format]bool{report.HTML: true, report.JSON: true, report.Markdown: true}

// loadDatasetFor reads everything a report in format f shows about run
// from the store. The changes since the last run are loaded only for the
// formats that show them (reading them costs a second pass over the
// run's checks).
func loadDatasetFor(ctx context.Context, store reportStore, run *audit.Run, f report.Format) (*report.Dataset, error) {
	ds := &report.Dataset{Run: *run, GeneratedAt: reportNow(), Generator: "linkrot " + Version}
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
	if err := addPageFiles(ctx, store, run.ID, ds); err != nil {
		return nil, err
	}
	targets, err := store.Targets(ctx, run.ID)
	if err != nil {
		return nil, wrap("targets", err)
	}
	ds.Targets = make([]report.Target, len(targets))
	for i, t := range targets {
		ds.Targets[i] = report.Target{ID: t.ID, URL: t.URL, Host: t.Host}
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
		ds.Runs = append(ds.Runs, report.RunSummary{ID: p.ID, StartedAt: p.StartedAt, FinishedAt: p.FinishedAt,
			Status: p.Status, Pages: p.Pages, Links: p.Links, Checked: p.Checked, Broken: p.Broken, Drifted: p.Drifted})
	}
	statuses, err := store.TargetStatuses(ctx, run.ID, historyChecks)
	if err != nil {
		return nil, wrap("target history", err)
	}
	ds.History = make([]report.TargetHistory, len(statuses))
	for i, st := range statuses {
		h := report.TargetHistory{TargetID: st.TargetID, FirstSeen: st.FirstSeen, FirstSeenRun: st.FirstSeenRun,
			FirstBroken: st.FirstBroken, FirstBrokenRun: st.FirstBrokenRun, LastOK: st.LastOK, LastOKRun: st.LastOKRun,
			Checks: make([]report.HistoryEntry, len(st.Checks))}
		for j, c := range st.Checks {
			h.Checks[j] = report.HistoryEntry{RunID: c.RunID, CheckedAt: c.CheckedAt, Verdict: c.Verdict, Status: c.Status}
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
func mergeTracked(h *report.TargetHistory, th audit.TargetHistory, runID int64) {
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
func linkStream(ctx context.Context, store reportLinks, runID int64, pageIDs []int64) func(func(*report.Link) error) error {
	return func(fn func(*report.Link) error) error {
		return store.EachReportLink(ctx, runID, pageIDs, fn)
	}
}

// reportLinks streams a run's links for the report.
type reportLinks interface {
	EachReportLink(ctx context.Context, runID int64, pageIDs []int64, fn func(*report.Link) error) error
}

// reportStore is what the reports read of a run.
type reportStore interface {
	reportLinks
	pageFiles
	Run(ctx context.Context, runID int64) (*audit.Run, error)
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
