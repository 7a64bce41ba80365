package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/baseline"
	"github.com/linkrot/linkrot/report"
)

// ciFlags are the CI settings of linkrot audit: annotations, the job
// summary and PR-scoped failures (--fail-on introduced).
type ciFlags struct {
	format     string
	baseline   string
	baselineDB string
	sarif      string
}

func (f *ciFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "format", "text", "output on stdout: text, or github (also GitHub Actions annotations of the broken links: ::error file=…,line=…,col=…)")
	fs.StringVar(&f.baseline, "baseline", "", "git `revision` the change is compared with (--fail-on introduced): a link is old when its target was on a line with the same text there, in any file")
	fs.StringVar(&f.sarif, "sarif", "", "also write the findings as SARIF 2.1.0 to this `file` (with the baseline's levels: old links are warnings)")
	fs.StringVar(&f.baselineDB, "baseline-db", "", "a previous run's database `file` the change is compared with (--fail-on introduced), instead of --baseline")
}

// takeFailOnIntroduced reads --fail-on introduced: it returns true, and
// leaves no verdict to fail on, when the value is "introduced", which
// needs a baseline.
func (f *ciFlags) takeFailOnIntroduced(failOn *string) (bool, error) {
	if f.format != "text" && f.format != "github" {
		return false, usagef("--format must be text or github")
	}
	if f.baseline != "" && f.baselineDB != "" {
		return false, usagef("--baseline and --baseline-db exclude each other")
	}
	parts := strings.Split(*failOn, ",")
	for _, p := range parts {
		if strings.TrimSpace(p) != "introduced" {
			continue
		}
		if len(parts) != 1 {
			return false, usagef("--fail-on introduced cannot be combined with verdicts")
		}
		if f.baseline == "" && f.baselineDB == "" {
			return false, usagef("--fail-on introduced needs --baseline REF or --baseline-db FILE")
		}
		*failOn = "none"
		return true, nil
	}
	return false, nil
}

// check validates the CI flags against the input before the run starts.
func (f *ciFlags) check(ctx context.Context, in linkrot.Input) error {
	if f.baseline == "" {
		return nil
	}
	if in.Kind != linkrot.Directory {
		return usagef("--baseline compares files of a local directory: audit a directory or file")
	}
	if err := baseline.Verify(ctx, in.Dir, f.baseline); err != nil {
		return usagef("--baseline: %v", err)
	}
	return nil
}

// finish writes the CI outputs of a finished audit run: the broken links
// with path:line:col for a local directory, GitHub annotations with
// --format github, the job summary to $GITHUB_STEP_SUMMARY when it is set.
// With failIntroduced it returns a findingsError when the change
// introduced broken links; old ones are warnings.
func (f *ciFlags) finish(ctx context.Context, e *env, store ciStore, dbPath string, run *audit.Run, in linkrot.Input, failIntroduced bool) error {
	summary := os.Getenv("GITHUB_STEP_SUMMARY")
	if f.format != "github" && summary == "" && f.sarif == "" && !failIntroduced && in.Kind != linkrot.Directory && f.baseline == "" && f.baselineDB == "" {
		return nil
	}
	if r, err := store.Run(ctx, run.ID); err == nil {
		run = r // with its end time and status
	}
	ds, err := loadDatasetFor(ctx, store, run, report.Markdown)
	if err != nil {
		return err
	}
	if ds.Baseline, err = f.loadBaseline(ctx, store, dbPath, run, in, ds); err != nil {
		return err
	}
	if err := report.WriteCI(e.stdout, ds, report.CIOutputs{Locations: in.Kind == linkrot.Directory || ds.Baseline != nil,
		GitHub: f.format == "github", StepSummary: summary, SARIF: f.sarif}); err != nil {
		return err
	}
	if !failIntroduced {
		return nil
	}
	if n := ds.Introduced(); n > 0 {
		return &findingsError{n: n}
	}
	return nil
}

// loadBaseline marks the old link occurrences of the run (nil without a
// baseline).
func (f *ciFlags) loadBaseline(ctx context.Context, store ciStore, dbPath string, run *audit.Run, in linkrot.Input, ds *report.Dataset) (*report.Baseline, error) {
	src := report.BaselineSource{GitRev: f.baseline}
	switch {
	case f.baseline != "":
		if in.Kind != linkrot.Directory {
			return nil, usagef("--baseline compares files of a local directory: audit a directory or file")
		}
		src.Dir, src.Base = in.Dir, in.Base()
	case f.baselineDB != "":
		src.Occurrences, src.Before, src.DBName = store, run.ID, filepath.Base(f.baselineDB)
		if f.baselineDB != dbPath && !sameFile(f.baselineDB, dbPath) {
			if _, err := os.Stat(f.baselineDB); err != nil && !isDatabaseURL(f.baselineDB) {
				return nil, usagef("--baseline-db: %v", err)
			}
			db, err := openStore(ctx, f.baselineDB)
			if err != nil {
				return nil, fmt.Errorf("baseline: %w", err)
			}
			defer db.Close()
			src.Occurrences, src.Before = db, 0
		}
	default:
		return nil, nil
	}
	return report.LoadBaseline(ctx, ds, src)
}

func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// maxAgeFlag is --max-age: an age as linkrot.ParseAge reads it (1d, 36h), or 0
// for "never reuse".
type maxAgeFlag time.Duration

func (a *maxAgeFlag) String() string { return time.Duration(*a).String() }

func (a *maxAgeFlag) Set(v string) error {
	if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil && d == 0 {
		*a = 0
		return nil
	}
	d, err := linkrot.ParseAge(v)
	if err != nil {
		return err
	}
	*a = maxAgeFlag(d)
	return nil
}

// ciStore is what the CI outputs read: the report's data and the link
// occurrences of a baseline run.
type ciStore interface {
	reportStore
	occurrences
}

// occurrences reads the link occurrences of a baseline run.
type occurrences interface {
	Occurrences(ctx context.Context, before int64) (map[audit.Occurrence]bool, int64, error)
}
