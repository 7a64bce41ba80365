package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/report"
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

// failOnNew returns a findingsError when targets were confirmed broken
// since the previous run of the site: the exit code of --fail-on new. It
// counts what the "Since run N" line lists (the store's SinceLastRun), so
// that the two always agree, also when runs of other sites in the same
// database confirmed a target the site links to.
func failOnNew(ctx context.Context, store sinceReader, runID int64) error {
	d, err := store.SinceLastRun(ctx, runID)
	if err != nil {
		return err
	}
	if n := len(d.NewlyConfirmed); n > 0 {
		return &findingsError{n: n}
	}
	return nil
}

// hostSettings returns the [[host]] rules of a configuration file as
// run settings: header values stay in the rules (they are sent), with
// their names and a hash of the values (headerHash), which is what the
// run stores of them.
func hostSettings(hosts []hostConfig) []linkrot.HostSettings {
	var out []linkrot.HostSettings
	for _, h := range hosts {
		hs := linkrot.HostSettings{HostRule: h.HostRule, Exclude: h.Exclude}
		if len(h.Headers) > 0 {
			hs.HeaderNames = slices.Sorted(maps.Keys(h.Headers))
			hs.HeaderHash = headerHash(h.Headers)
		}
		out = append(out, hs)
	}
	return out
}

// headerHash is a hash of a host rule's header names and values.
func headerHash(h map[string]string) string {
	names := slices.Sorted(maps.Keys(h))
	sum := sha256.New()
	io.WriteString(sum, "linkrot host headers\x00")
	for _, n := range names {
		fmt.Fprintf(sum, "%d:%s%d:%s", len(n), n, len(h[n]), h[n])
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// storedHostRules returns the host rules of stored settings with their
// header values taken from given (the configuration file of this
// invocation): a rule that sent headers needs a given rule for the same
// hosts with the same header names, and, when the settings hold a hash of
// the values, the same values. Anything else is a usage error naming what
// is missing.
func storedHostRules(runID int64, stored []linkrot.HostSettings, given []hostConfig) ([]hostConfig, error) {
	out := make([]hostConfig, 0, len(stored))
	for _, sh := range stored {
		h := hostConfig{HostRule: sh.HostRule, Exclude: sh.Exclude}
		h.Headers = nil
		if len(sh.HeaderNames) > 0 {
			var found *hostConfig
			for i := range given {
				g := &given[i]
				if strings.EqualFold(strings.TrimSpace(g.Match), strings.TrimSpace(h.Match)) &&
					slices.Equal(slices.Sorted(maps.Keys(g.Headers)), sh.HeaderNames) {
					found = g
					break
				}
			}
			if found == nil {
				return nil, usagef("run %d sent the headers %s to host %s; their values are not stored in the database: "+
					"resume it with the configuration file that has them (--config FILE)", runID, strings.Join(sh.HeaderNames, ", "), h.Match)
			}
			if sh.HeaderHash != "" && headerHash(found.Headers) != sh.HeaderHash {
				return nil, usagef("run %d sent other values of the headers %s to host %s than the configuration file has: "+
					"resume it with the file it was started with, or start a new run", runID, strings.Join(sh.HeaderNames, ", "), h.Match)
			}
			h.Headers = maps.Clone(found.Headers)
		}
		out = append(out, h)
	}
	return out, nil
}

// settingsStore reads the settings of the run --resume continues.
type settingsStore interface {
	settingsReader
	UnfinishedRun(ctx context.Context, command, fingerprint string) (*audit.Run, error)
	Path() string
}

// restoreSettings loads the settings of the latest interrupted run of
// command for "linkrot audit --resume" (or crawl) without a URL into s,
// the typed settings the command's flags write into (linkrot.Settings,
// stored with the run): every setting takes the run's value, then the
// flags the command line and the configuration file set (fs) keep their
// values, so they win. It returns the run's input
// and host rules, whose header values come from given (the configuration
// file's rules, see storedHostRules).
func restoreSettings(ctx context.Context, store settingsStore, command string, fs *flag.FlagSet, s *linkrot.Settings, given []hostConfig) (crawlInput, []hostConfig, error) {
	run, err := store.UnfinishedRun(ctx, command, "")
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
	stored, err := linkrot.ParseSettings(b)
	if errors.Is(err, linkrot.ErrOldSettings) {
		return crawlInput{}, nil, usagef("run %d was started by an older linkrot, whose settings this one cannot read: start a new run", run.ID)
	}
	if err != nil {
		return crawlInput{}, nil, fmt.Errorf("run %d: %w", run.ID, err)
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
			return crawlInput{}, nil, usagef("--%s: %v", g.name, err)
		}
	}
	hosts, err := storedHostRules(run.ID, stored.Hosts, given)
	if err != nil {
		return crawlInput{}, nil, err
	}
	in := stored.Input
	return crawlInput{mode: in.Mode, seeds: in.Seeds, dir: in.Dir, files: in.Files}, hosts, nil
}

// resumableRun returns the run of command with fingerprint fp that --resume
// continues: the latest unfinished one (for audit, also a complete one whose
// report was not written), unless it is stale: a newer run of the same
// settings completed since, or it started longer ago than maxAge (0: no
// limit). A stale run is abandoned (the store's AbandonRun: linkrot runs shows
// it so, its data stays) and the next candidate considered. It returns an
// error wrapping audit.ErrNotFound when there is nothing to resume.
func resumableRun(ctx context.Context, e *env, store runStarter, command, fp string, maxAge time.Duration, log *slog.Logger) (*audit.Run, error) {
	for {
		run, err := store.UnfinishedRun(ctx, command, fp)
		if err != nil {
			return nil, err
		}
		var why string
		newer, err := store.NewerCompleteRun(ctx, run.ID)
		switch {
		case err == nil:
			why = fmt.Sprintf("run %d of the same settings completed since", newer.ID)
		case !errors.Is(err, audit.ErrNotFound):
			return nil, err
		case maxAge > 0 && time.Since(run.StartedAt) > maxAge:
			why = fmt.Sprintf("it started more than %s ago (--resume-max-age)", roundDur(maxAge))
		default:
			return run, nil
		}
		if run.Status == audit.RunComplete {
			// Only its report was left to write: nothing to abandon, the
			// newer run's report supersedes it.
			if err := store.MarkStage(ctx, run.ID, audit.StageReport); err != nil {
				return nil, err
			}
			continue
		}
		if err := store.AbandonRun(context.WithoutCancel(ctx), run.ID); err != nil {
			return nil, err
		}
		fmt.Fprintf(e.stdout, "Not resuming run %d: %s. It is abandoned.\n", run.ID, why)
		log.Info("interrupted run abandoned", "run", run.ID, "reason", why)
	}
}

// startRun returns the run to work on. With resume, that is the run
// resumableRun finds, marked running again (a complete run whose report
// is missing stays complete); otherwise (or when there is none) a new
// run, with its settings stored.
func startRun(ctx context.Context, e *env, store runStarter, command string, in crawlInput, sitemaps []string, s *linkrot.Settings, jf *jobFlags, log *slog.Logger) (*audit.Run, bool, error) {
	s.Input = linkrot.Input{Mode: in.mode, Seeds: in.seeds, Dir: in.dir, Sitemaps: sitemaps, Files: in.files}
	fp, b := s.Stored()
	if jf.resume {
		run, err := resumableRun(ctx, e, store, command, fp, time.Duration(jf.resumeMaxAge), log)
		switch {
		case err == nil:
			if run.Status == audit.RunComplete {
				log.Info("writing the missing report of a complete run", "run", run.ID)
				return run, true, nil
			}
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
	if err := store.SaveRunSettings(wctx, run.ID, command, fp, b); err != nil {
		return nil, false, err
	}
	log.Info("run started", "run", run.ID, "mode", in.mode, "seeds", strings.Join(seeds, " "))
	return run, false, nil
}

// printResuming tells on stdout which run a --resume continues.
func printResuming(w io.Writer, run *audit.Run) {
	if run.Status == audit.RunComplete {
		fmt.Fprintf(w, "Run %d is complete but its report was not written: writing it.\n", run.ID)
		return
	}
	fmt.Fprintf(w, "Resuming run %d, started %s.\n", run.ID, run.StartedAt.Local().Format("2006-01-02 15:04:05"))
}

// writeReportDir writes the HTML report of ds like report.WriteDir, but
// into a fresh hidden directory inside dir first, whose files are then
// moved into dir: a process killed while writing leaves the previous
// report (or none), never part of one, and the next write removes what it
// left.
func writeReportDir(dir string, ds *report.Dataset) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create report directory: %w", err)
	}
	const partial = ".linkrot-partial-"
	if old, err := filepath.Glob(filepath.Join(dir, partial+"*")); err == nil {
		for _, o := range old {
			os.RemoveAll(o)
		}
	}
	tmp, err := os.MkdirTemp(dir, partial)
	if err != nil {
		return "", fmt.Errorf("create report directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	path, err := report.WriteDir(tmp, ds)
	if err != nil {
		return "", err
	}
	stageHook("report-written")
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	for _, en := range entries {
		dst := filepath.Join(dir, en.Name())
		if en.IsDir() {
			if err := os.RemoveAll(dst); err != nil {
				return "", fmt.Errorf("write report: %w", err)
			}
		}
		if err := os.Rename(filepath.Join(tmp, en.Name()), dst); err != nil {
			return "", fmt.Errorf("write report: %w", err)
		}
	}
	rel, err := filepath.Rel(tmp, path)
	if err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	return filepath.Join(dir, rel), nil
}

// applyHostRules adds the [[host]] rules of a config file to the crawler's
// and the checker's options: limits and headers as politeness.HostRules, and
// excluded paths as patterns neither crawled nor checked (the commands
// that store no settings; linkrot.Settings does the same for a run).
func applyHostRules(hosts []hostConfig, copts *crawler.Options, kopts *check.Options) error {
	for _, h := range hostSettings(hosts) {
		copts.Hosts = append(copts.Hosts, h.HostRule)
		kopts.Hosts = append(kopts.Hosts, h.HostRule)
		res, err := h.Excludes()
		if err != nil {
			return usagef("%v", err)
		}
		copts.Exclude = append(copts.Exclude, res...)
		kopts.Exclude = append(kopts.Exclude, res...)
	}
	return nil
}

// printSince prints what changed since the previous run of the site, in a
// few lines (nothing when there is no previous run).
func printSince(ctx context.Context, w io.Writer, store sinceReader, runID int64) error {
	// Nothing to print for a site's first run: no diff is read (it holds
	// every check of the run).
	if _, err := store.PreviousRun(ctx, runID); errors.Is(err, audit.ErrNotFound) {
		return nil
	}
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

// sinceReader reads what changed since a run's previous run of the site.
type sinceReader interface {
	PreviousRun(ctx context.Context, runID int64) (*audit.Run, error)
	SinceLastRun(ctx context.Context, runID int64) (*audit.RunDiff, error)
}

// runStarter starts a run, or finds the interrupted one --resume
// continues.
type runStarter interface {
	UnfinishedRun(ctx context.Context, command, fingerprint string) (*audit.Run, error)
	NewerCompleteRun(ctx context.Context, runID int64) (*audit.Run, error)
	AbandonRun(ctx context.Context, runID int64) error
	ReopenRun(ctx context.Context, runID int64) error
	MarkStage(ctx context.Context, runID int64, stage string) error
	CreateRun(ctx context.Context, r *audit.Run) error
	SaveRunSettings(ctx context.Context, runID int64, command, fingerprint string, settings []byte) error
}
