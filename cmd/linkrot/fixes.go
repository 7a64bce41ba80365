package main

import (
	"context"
	"errors"
	"flag"
	"slices"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/maintain"
)

// runFixes lists the link-maintenance records of a run: for every link to a
// moved resource, the page to edit, the old URL and its replacement.
func runFixes(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "fixes", "[--run N] [--format text|json|unlinkr]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	runID := fs.Int64("run", 0, "run (default: the latest)")
	format := fs.String("format", "text", "text, json, or unlinkr (the UNLINKR lines of the HTTP link-maintenance protocol)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("fixes takes no arguments")
	}
	if !slices.Contains(maintain.FixFormats, *format) {
		return usagef("--format must be text, json or unlinkr")
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
	all, err := store.Maintenance(ctx, run.ID)
	if err != nil {
		return err
	}
	recs, held, err := maintain.Proposals(ctx, store, run.ID, all)
	if err != nil {
		return err
	}
	if err := maintain.WriteFixes(e.stdout, e.stderr, *format, run.ID, recs, held); err != nil || *format != "text" {
		return err
	}
	claims, err := store.Claims(ctx, run.ID)
	if err != nil {
		return err
	}
	maintain.WriteOpenClaims(e.stdout, claims)
	return nil
}

// pickRun returns run id, or the latest run when id is 0.
func pickRun(ctx context.Context, store runPicker, id int64) (*audit.Run, error) {
	var run *audit.Run
	var err error
	if id > 0 {
		run, err = store.Run(ctx, id)
	} else {
		run, err = store.LatestRun(ctx)
	}
	if errors.Is(err, audit.ErrNotFound) {
		return nil, usagef("no such run in the database (crawl first: linkrot audit URL)")
	}
	return run, err
}

// runPicker finds a run by ID, or the latest.
type runPicker interface {
	Run(ctx context.Context, runID int64) (*audit.Run, error)
	LatestRun(ctx context.Context) (*audit.Run, error)
}
