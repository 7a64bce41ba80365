package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/linkrot/linkrot"
)

// runPrune is linkrot prune: remove old runs, keeping every target's
// history summary.
func runPrune(ctx context.Context, e *env, args []string) error {
	var jf jobFlags
	fs := newFlagSet(e, "prune", "--keep N | --older-than AGE [--vacuum] [--dry-run]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	keep := fs.Int("keep", 0, "keep the newest `N` runs")
	var older ageFlag
	fs.Var(&older, "older-than", "remove runs started longer ago than this `age` (90d, 12w, 36h); with --keep, a run goes only when both allow it")
	vacuum := fs.Bool("vacuum", false, "VACUUM the database afterwards, returning the space to the file system")
	dryRun := fs.Bool("dry-run", false, "list the runs that would be removed, remove nothing")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	jf.register(fs, jobLock|jobLog)
	pos, _, err := parseCommand(e, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("prune takes no arguments")
	}
	if *keep < 0 || (*keep == 0 && older == 0) {
		return usagef("prune needs --keep N (N >= 1) or --older-than AGE")
	}
	log, err := jf.logger(e.stderr, *logFormat, false, false)
	if err != nil {
		return err
	}
	ctx, store, lk, err := openLocked(ctx, *db, "prune", jf.wait, log)
	if err != nil {
		return err
	}
	defer lk.release()
	pruned, err := store.Prune(ctx, *keep, time.Duration(older), *dryRun)
	if err != nil {
		return err
	}
	log.Info("prune", "runs", pruned, "dry_run", *dryRun)
	linkrot.WritePruned(e.stdout, pruned, *dryRun)
	if *vacuum && !*dryRun {
		if err := store.Vacuum(ctx); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, "Vacuumed.")
	}
	return nil
}

// ageFlag is a duration that also accepts days (d) and weeks (w).
type ageFlag time.Duration

func (a *ageFlag) String() string { return time.Duration(*a).String() }

func (a *ageFlag) Set(v string) error {
	d, err := linkrot.ParseAge(v)
	if err != nil {
		return err
	}
	*a = ageFlag(d)
	return nil
}
