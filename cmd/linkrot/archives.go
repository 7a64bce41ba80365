package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/archives"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/report"
)

// spnAuthEnv names the environment variable holding archive.org S3 keys
// ("accesskey:secret") for Save Page Now 2. It is read from the
// environment, never from a flag, so that the keys stay out of the run's
// stored arguments.
const spnAuthEnv = "LINKROT_SPN2_AUTH"

// archiveFlags are the flags of the archives stage (audit and check),
// writing into the settings' Archives.
type archiveFlags struct {
	*linkrot.ArchiveSettings

	stg     *archives.Stage // the run's (linkrot.Job.Archives), its summary printed by printSummary
	offline bool            // --no-archives: the summary has first-seen drift only
}

func (f *archiveFlags) register(fs *flag.FlagSet, s *linkrot.Settings) {
	f.ArchiveSettings = &s.Archives
	fs.Var((*listFlag)(&f.Archives), "archive", "ask this archive for mementos: `name=timegate-url[,timemap=url][,rate=N/min][,margin=F][,raw=R][,save=url]`, or a preset name (ia, arquivo, memgator, memgator-local, archive.today, perma, ukwa, loc, timetravel) with options; repeatable (default: ia and arquivo; see linkrot archives)")
	fs.Var((*listFlag)(&f.WARCs), "archive-warc", "also ask this local web archive: a WARC file (.warc, .warc.gz), a directory of them, or a WACZ `path`; indexed on first use (index kept next to the database); repeatable")
	fs.IntVar(&f.MaxSnapshots, "max-snapshots", archives.DefaultMaxSnapshots, "check at most this many declared snapshots per link, those nearest to its declared datetime (the rest are reported not checked); negative: all")
	fs.DurationVar(&f.MaxAge, "archive-max-age", 7*24*time.Hour, "reuse archive answers (memento found, or none) from earlier runs younger than this instead of asking again; failed lookups are always asked again; 0: always ask")
	fs.Var((*listFlag)(&f.PWIDs), "pwid-archive", "resolve pwids of this archive: `archive-id=template` with {timestamp}, {raw} and {item}; repeatable (archive.org and webarchiv.onb.ac.at are built in)")
	fs.BoolVar(&f.Off, "no-archives", false, "skip the archives stage (offline runs): no snapshot audit, mementos, memento drift, identifiers or suggestions; first-seen drift, which needs no network, is still measured")
	fs.BoolVar(&f.TimeMap, "timemap", false, "also fetch each archive's TimeMap: number of mementos, first and last")
	fs.DurationVar(&f.MaxDistance, "max-memento-distance", archives.DefaultMaxDistance, "a memento further than this from the wanted date is not representative")
	fs.BoolVar(&f.SaveMissing, "save-missing", false, "ask an archive (Save Page Now 2) to capture live targets that have no memento at all; keys from $"+spnAuthEnv)
	fs.DurationVar(&f.SavePoll, "save-poll-interval", 5*time.Second, "wait between Save Page Now status requests (at most 6 per capture)")
	fs.IntVar(&f.Workers, "archive-workers", 8, "concurrent lookups per archive, archives asked in parallel (each archive pool's budget holds whatever this is)")
	fs.StringVar(&f.FetchRate, "fetch-rate", "60/min", "request budget per host for live pages and identifiers refetched by the archives stage, and for snapshot hosts that are no configured archive")
	fs.IntVar(&f.Shingle, "drift-shingle", 1, "shingle size in words for the Jaccard and Sørensen–Dice drift measures")
	f.Thresholds = drift.DefaultThresholds()
	for _, d := range f.Thresholds.Fields() {
		if d.Int != nil {
			fs.IntVar(d.Int, d.Flag, *d.Int, d.Usage)
		} else {
			fs.Float64Var(d.Float, d.Flag, *d.Float, d.Usage)
		}
	}
}

// thresholds checks the drift threshold flags and returns them.
func (f *archiveFlags) thresholds() (drift.Thresholds, error) {
	th, err := f.DriftThresholds()
	if err != nil {
		return th, usagef("%v", err)
	}
	return th, nil
}

// config checks the flags and builds the stage's configuration, without
// any network access.
func (f *archiveFlags) config() ([]memento.Archive, memento.Registry, float64, error) {
	archives, reg, rate, err := f.Resolve()
	if err != nil {
		return nil, nil, 0, usagef("%v", err)
	}
	return archives, reg, rate, nil
}

// printSummary writes the archives stage's summary lines (nothing when the
// stage did not run).
func (f *archiveFlags) printSummary(w io.Writer) {
	if f.stg != nil {
		linkrot.WriteArchivesSummary(w, f.stg.Summary(), f.offline)
	}
}

// runSuggest lists the Robust Link suggestions of a run.
func runSuggest(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "suggest", "[--run N] [--format html|json|csv]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	runID := fs.Int64("run", 0, "run (default: the latest)")
	format := fs.String("format", "html", "html (paste-ready links, grouped by page), json or csv")
	reason := fs.String("reason", "", "only this reason: no-robustness-data, broken-with-memento or use-identifier")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("suggest takes no arguments")
	}
	if !slices.Contains(report.SuggestionFormats, *format) {
		return usagef("--format must be html, json or csv")
	}
	switch *reason {
	case "", archives.ReasonNoRobustData, archives.ReasonBrokenMemento, archives.ReasonUseIdentifier:
	default:
		return usagef("--reason must be no-robustness-data, broken-with-memento or use-identifier")
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
	all, err := store.Suggestions(ctx, run.ID)
	if err != nil {
		return err
	}
	sgs := []audit.Suggestion{}
	for _, s := range all {
		if *reason == "" || s.Reason == *reason {
			sgs = append(sgs, s)
		}
	}
	return report.WriteSuggestions(e.stdout, *format, run.ID, sgs)
}
