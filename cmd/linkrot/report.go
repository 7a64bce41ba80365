package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/report"
)

// reportNow is the time stamped into reports (tests fix it).
var reportNow = func() time.Time { return time.Now().UTC() }

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
	dir := *out
	if f == report.HTML && dir == "" {
		dir = defaultReportDir(*db)
	}
	path, err := report.Emit(e.stdout, ds, f, dir, report.HTMLOptions{DetailLinks: *detail, LinksPerPage: *perPage})
	if err == nil && f == report.HTML {
		fmt.Fprintf(e.stdout, "Report of run %d: %s\n", run.ID, path)
	}
	return err
}

// writeAuditReport writes the HTML report of an audit run into dir
// (unless html is false: --no-report), and its machine outputs (into dir
// as report.json, report.csv, report.xml, report.md, report.sarif, or to
// the file an output names), and says where they are. An interrupted
// run's report is the same, for what was done: its run status says
// interrupted.
func writeAuditReport(ctx context.Context, e *env, store reportStore, runID int64, dir string, html bool, outputs ...report.Output) error {
	run, err := store.Run(ctx, runID)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	r := report.RunReport{
		HTML: html, Dir: dir,
		Load:   report.LoadOptions{Generator: "linkrot " + Version, Now: reportNow()},
		Moving: func() { stageHook("report-written") },
		Written: func(f report.Format, path string) {
			if f == report.HTML {
				fmt.Fprintf(e.stdout, "Report: %s\n", path)
				return
			}
			fmt.Fprintf(e.stdout, "Report (%s): %s\n", f, path)
		},
	}
	for _, o := range outputs {
		r.Outputs = append(r.Outputs, o.In(dir))
	}
	return report.WriteRun(ctx, store, run, r)
}

// loadDatasetFor reads everything a report in format f shows about run
// (report.Load), stamped with this linkrot and reportNow.
func loadDatasetFor(ctx context.Context, store report.Store, run *audit.Run, f report.Format) (*report.Dataset, error) {
	return report.Load(ctx, store, run, report.LoadOptions{Format: f, Generator: "linkrot " + Version, Now: reportNow()})
}

// reportStore is what the report of an audit reads: the run and its
// report's data.
type reportStore interface {
	report.Store
	Run(ctx context.Context, runID int64) (*audit.Run, error)
}
