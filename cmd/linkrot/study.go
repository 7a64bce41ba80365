package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/scaleout"
	"github.com/linkrot/linkrot/study"
	"github.com/linkrot/linkrot/study/studyrun"
)

// runStudy is linkrot study REFS: reference rot of a reference list, for
// researchers (docs/study.md). It reads the list (malformed rows are
// reported and counted, the rest is read), prints what the archive
// budgets imply (--dry-run stops there), then runs the study as a run of
// the database: the distinct URLs are the run's links, checked once each
// by the run's check stage (politeness, Retry-After, soft-404 and parked
// verdicts as linkrot audit has them); the study's archives stage asks
// each archive's TimeMap of each URL once and measures drift against each
// citation's representative memento; the run's report stage writes
// references.csv, summary.csv, index.html and study.json. A killed study
// is resumed by running it again with the same list and database; a study
// run again after a complete one is its next wave.
func runStudy(ctx context.Context, e *env, args []string) error {
	var (
		set linkrot.Settings // the run's settings: the flags write into it
		kf  checkFlags
		jf  jobFlags
		af  archiveFlags
		nf  natsFlags
	)
	fs := newFlagSet(e, "study", "[flags] REFS (CSV, JSON Lines, BibTeX or CSL-JSON)")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL (a killed study resumes from it; a later study of the same list is its next wave)")
	out := fs.String("out", "linkrot-study", "write references.csv, summary.csv, index.html and study.json into this `directory`")
	window := ageFlag(study.DefaultWindow)
	fs.Var(&window, "window", "a memento this far (`age`: 7d, 36h) before or after the citation is representative")
	dryRun := fs.Bool("dry-run", false, "print what the archive budgets imply and stop: no request is made")
	htmlRows := fs.Int("html-rows", study.DefaultHTMLRows, "show at most this many `rows` in index.html's references table (references.csv has them all)")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	quiet := fs.Bool("quiet", false, "log warnings and errors only")
	verbose := fs.Bool("verbose", false, "log progress")
	kf.register(fs, &set, true)
	af.register(fs, &set)
	jf.register(fs, jobLock|jobLog)
	nf.register(fs)
	pos, cfg, err := parseCommand(e, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		var ue *usageError
		if errors.As(err, &ue) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 1 {
		return usagef("study takes one reference list (REFS)")
	}
	if time.Duration(window) <= 0 {
		return usagef("--window must be positive")
	}
	list, _, _, err := af.config()
	if err != nil {
		return err
	}
	th, err := af.thresholds()
	if err != nil {
		return err
	}
	if nf.addr != "" {
		if err := nf.check(); err != nil {
			return err
		}
	}
	in, err := study.ReadFile(pos[0])
	if err != nil {
		return usagef("%v", err)
	}
	for _, re := range in.Errors {
		fmt.Fprintf(e.stderr, "%s:%d: %s (skipped)\n", pos[0], re.Line, re.Reason)
	}
	distinct := study.DistinctURLs(in.References)
	fmt.Fprintf(e.stdout, "%s references (%s distinct URLs) in %s, %s malformed rows skipped.\n",
		study.Thousands(len(in.References)), study.Thousands(distinct), in.Name, study.Thousands(len(in.Errors)))
	var budgets []study.ArchiveBudget
	var names []string
	if !set.Archives.Off {
		for _, a := range list {
			budgets = append(budgets, study.ArchiveBudget{Name: archiveDisplayName(a.Name), PerMinute: timeMapPerMinute(a)})
			names = append(names, a.Name)
		}
		for i, w := range set.Archives.WARCs {
			name := "warc"
			if len(set.Archives.WARCs) > 1 {
				name = fmt.Sprintf("warc%d", i+1)
			}
			budgets = append(budgets, study.ArchiveBudget{Name: "the local collection " + filepath.Base(w)})
			names = append(names, name)
		}
	}
	fmt.Fprintln(e.stdout, study.EstimateBudget(distinct, budgets).Sentence)
	if *dryRun {
		return nil
	}
	if len(in.References) == 0 {
		return usagef("%s: no reference to study", pos[0])
	}

	if os.Getenv("GOMEMLIMIT") == "" {
		// A study's live heap stays well under this (docs/study.md,
		// Performance) while its requests allocate fast: a lower soft
		// limit than the command's default keeps the garbage, and so
		// the RSS, down. GOMEMLIMIT overrides it; the previous limit is
		// restored on return (tests run commands in one process).
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(studyMemoryLimit))
	}
	log, err := jf.logger(e.stderr, *logFormat, *verbose, *quiet)
	if err != nil {
		return err
	}
	set.Input = linkrot.ReferencesInput(in.Digest, time.Duration(window))
	set.Hosts = cfg.hostRules()
	oo := linkrot.OpenOptions{Logger: log, CheckOnly: true, CheckTransport: testCheckTransport}
	if err := set.Validate(oo); err != nil {
		return err
	}
	ctx, store, lk, err := openLocked(ctx, *db, "study", jf.wait, log)
	if err != nil {
		return err
	}
	defer lk.release()
	var nq *scaleout.Queue
	if nf.addr != "" {
		nc, q, err := nf.open(ctx, "linkrot study")
		if err != nil {
			return err
		}
		defer nc.Close()
		nq = q
	}
	job, err := linkrot.Start(ctx, store, set, linkrot.StartOptions{
		Command: audit.CommandStudy, Resume: true, Args: e.args, Version: Version, Open: oo,
		Abandoned: func(run *audit.Run, why string) {
			fmt.Fprintf(e.stdout, "Not resuming run %d: %s. It is abandoned.\n", run.ID, why)
		},
	})
	if err != nil {
		return err
	}
	defer job.Close()
	run := job.Run
	lk.setRun(ctx, run.ID)
	if job.Resumed {
		fmt.Fprintf(e.stdout, "Resuming study run %d (started %s).\n", run.ID, run.StartedAt.Format(time.RFC3339))
	}
	stages, err := store.Stages(ctx, run.ID)
	if err != nil {
		return err
	}
	if _, ok := stages[audit.StageCrawl]; !ok {
		if err := studyrun.SaveLinks(ctx, store, run, in); err != nil {
			return withRun(err, run)
		}
	}
	acfg := &job.Config
	acfg.StageHook = stageHook
	if nq != nil {
		// Scale-out: the URLs not checked yet are check units for the
		// linkrot worker processes (package scaleout); the archives
		// stage and the outputs stay in this process.
		acfg.Work = func(ctx context.Context) (map[string][]string, error) {
			var targets []string
			err := store.UncheckedTargets(ctx, run.ID, func(t audit.TargetRef) error {
				targets = append(targets, t.URL)
				return nil
			})
			if err != nil {
				return nil, err
			}
			return scaleout.Coordinate(ctx, scaleout.CoordinateConfig{Queue: nq, Run: run, Targets: targets, PerHost: set.PerHost, Logger: log})
		}
	}
	acfg.Archives = nil
	if job.Archives != nil && !set.Archives.Off {
		o := job.Archives.Options
		acfg.Archives = studyrun.NewArchiver(store, studyrun.Options{Client: o.Client, Archives: o.Archives, Refs: in,
			Window: time.Duration(window), Shingle: o.Shingle, Thresholds: o.Thresholds, MaxBody: o.MaxBody,
			Workers: max(o.Workers, 1) * max(len(o.Archives), 1), Log: log})
	}
	prog := newAuditProgress(e.stderr, log)
	acfg.Report = func(ctx context.Context, sum *linkrot.Summary) error {
		prog.done()
		if sum.Incomplete {
			fmt.Fprintf(e.stdout, "Study run %d was interrupted: run linkrot study again with the same list and database to resume it.\n", sum.Run.ID)
			return nil
		}
		earlier, err := studyrun.EarlierRuns(ctx, store, sum.Run, set.Input)
		if err != nil {
			return err
		}
		s := &study.Study{Input: in, Params: study.Params{Window: time.Duration(window), Archives: names,
			Thresholds: th, Version: Version, HTMLRows: *htmlRows}}
		for i, r := range append(earlier, sum.Run) {
			w, err := studyrun.Wave(ctx, store, r, i+1, in)
			if err != nil {
				return err
			}
			s.Waves = append(s.Waves, w)
		}
		if err := study.WriteDir(*out, s); err != nil {
			return err
		}
		last := s.Waves[len(s.Waves)-1]
		fmt.Fprintf(e.stdout, "Study run %d (wave %d): %s of %s distinct URLs checked; wrote references.csv, summary.csv, index.html and study.json to %s\n",
			sum.Run.ID, last.Number, study.Thousands(len(last.Results)), study.Thousands(distinct), *out)
		return nil
	}
	_, err = job.Audit(ctx, store, prog)
	if err != nil {
		return withRun(err, run)
	}
	return nil
}

// studyMemoryLimit is linkrot study's soft limit on the Go heap.
const studyMemoryLimit = 176 << 20

// timeMapPerMinute is how many TimeMaps a minute archive a's budget
// allows: the rate of the pool its TimeMap endpoint belongs to (the
// Internet Archive limits /web/timemap/ apart from its replay), 0 for a
// local collection (no limit).
func timeMapPerMinute(a memento.Archive) float64 {
	if a.Local {
		return 0
	}
	bare := func(s string) string {
		s = strings.ToLower(s)
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[i+3:]
		}
		return s
	}
	tm := bare(a.TimeMap)
	if tm == "" {
		tm = bare(a.TimeGate)
	}
	rate, longest := a.PerMinute(), -1
	for _, p := range a.Pools {
		for _, pre := range p.Prefixes {
			if pp := bare(pre); strings.HasPrefix(tm, pp) && len(pp) > longest {
				rate, longest = p.PerMinute(), len(pp)
			}
		}
	}
	return rate
}

// archiveDisplayName names an archive in the budget sentence.
func archiveDisplayName(name string) string {
	switch name {
	case "ia":
		return "the Internet Archive"
	case "arquivo":
		return "Arquivo.pt"
	}
	return name
}
