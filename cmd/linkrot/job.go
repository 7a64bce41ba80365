package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
)

// This file holds what makes linkrot fit for cron: the run lock, resuming
// an interrupted run, the history stage and --fail-on new.

// stageHook is called when linkrot audit starts a stage ("crawl", "check",
// "archives", "history", "report"), and at one point inside the report
// stage: "report-written", when the report is written but not yet moved
// into place. Tests replace it to stop a child process at a chosen point;
// it does nothing otherwise.
var stageHook = func(stage string) {}

// testCheckTransport, when set, replaces the checker's transport of
// linkrot audit (check.Options.Transport): tests answer external hosts
// from it, so that a real documentation tree is audited without the
// internet. It is nil otherwise.
var testCheckTransport http.RoundTripper

// jobFlags are the flags of scheduled runs.
type jobFlags struct {
	resume         bool
	resumeMaxAge   ageFlag
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
		j.resumeMaxAge = ageFlag(defaultResumeMaxAge)
		fs.Var(&j.resumeMaxAge, "resume-max-age", "with --resume, an interrupted run started longer ago than this `age` (7d, 36h) is abandoned, not resumed")
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

// defaultResumeMaxAge is the default of --resume-max-age.
const defaultResumeMaxAge = 7 * 24 * time.Hour

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
	return linkrot.NewLogger(w, format, level)
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

// failOnNew returns a findingsError when targets were confirmed broken
// since the previous run of the site: the exit code of --fail-on new. It
// counts what the "Since run N" line lists (the store's SinceLastRun), so
// that the two always agree, also when runs of other sites in the same
// database confirmed a target the site links to.
func failOnNew(ctx context.Context, store linkrot.SinceReader, runID int64) error {
	d, err := store.SinceLastRun(ctx, runID)
	if err != nil {
		return err
	}
	if n := len(d.NewlyConfirmed); n > 0 {
		return &findingsError{n: n}
	}
	return nil
}

// start returns the options of linkrot.Start for command, with these
// flags: a stale run --resume gives up is said on stdout.
func (j *jobFlags) start(e *env, command string, o linkrot.OpenOptions) linkrot.StartOptions {
	return linkrot.StartOptions{
		Command: command, Resume: j.resume, ResumeMaxAge: time.Duration(j.resumeMaxAge),
		Args: e.args, Version: Version, Open: o,
		Abandoned: func(run *audit.Run, why string) {
			fmt.Fprintf(e.stdout, "Not resuming run %d: %s. It is abandoned.\n", run.ID, why)
		},
	}
}

// restoreSettings loads the settings of the latest interrupted run of
// command for "linkrot audit --resume" (or crawl) without a URL into s,
// the typed settings the command's flags write into: every setting takes
// the run's value, then the flags the command line and the configuration
// file set (fs) keep their values, so they win. The host rules' header
// values come from given (the configuration file's rules, see
// linkrot.RestoreHosts).
func restoreSettings(ctx context.Context, store *database, command string, fs *flag.FlagSet, s *linkrot.Settings, given []linkrot.HostSettings) error {
	run, stored, err := linkrot.LatestUnfinished(ctx, store, command)
	if err != nil {
		return err
	}
	// The flags the command line and the configuration file set win over
	// the stored settings: their values are taken before the stored
	// settings replace s, and put back.
	type givenFlag struct {
		name string
		list listFlag // a list flag's values
		val  string   // another flag's
	}
	var gf []givenFlag
	fs.Visit(func(f *flag.Flag) {
		if l, ok := f.Value.(*listFlag); ok {
			gf = append(gf, givenFlag{name: f.Name, list: slices.Clone(*l)})
			return
		}
		gf = append(gf, givenFlag{name: f.Name, val: f.Value.String()})
	})
	*s = stored
	for _, g := range gf {
		if l, ok := fs.Lookup(g.name).Value.(*listFlag); ok {
			*l = g.list
			continue
		}
		if err := fs.Set(g.name, g.val); err != nil {
			return usagef("--%s: %v", g.name, err)
		}
	}
	s.Hosts, err = linkrot.RestoreHosts(run.ID, stored.Hosts, given)
	return err
}
