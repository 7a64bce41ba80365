package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/sqlite"
)

// runFixes lists the link-maintenance records of a run: for every link to a
// moved resource, the page to edit, the old URL and its replacement.
func runFixes(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "fixes", "[--run N] [--format text|json|unlinkr]")
	db := fs.String("db", "linkrot.db", "SQLite database `path`")
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
	if *format != "text" && *format != "json" && *format != "unlinkr" {
		return usagef("--format must be text, json or unlinkr")
	}
	store, err := sqlite.Open(ctx, *db)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	run, err := pickRun(ctx, store, *runID)
	if err != nil {
		return err
	}
	recs, err := store.Maintenance(ctx, run.ID)
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		if recs == nil {
			recs = []audit.Maintenance{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(recs)
	case "unlinkr":
		for _, r := range recs {
			fmt.Fprintf(e.stdout, "UNLINKR %s %s %s\n", r.Source, r.Target, r.Replacement)
		}
		return nil
	}
	if len(recs) == 0 {
		fmt.Fprintf(e.stdout, "Run %d: no links to moved resources.\n", run.ID)
		return nil
	}
	fmt.Fprintf(e.stdout, "Run %d: %d links to update.\n", run.ID, len(recs))
	last := ""
	for _, r := range recs {
		if r.Source != last {
			fmt.Fprintf(e.stdout, "\n%s\n", r.Source)
			last = r.Source
		}
		fmt.Fprintf(e.stdout, "  %s\n    → %s  (%d)\n", r.Target, r.Replacement, r.Status)
	}
	return nil
}

// pickRun returns run id, or the latest run when id is 0.
func pickRun(ctx context.Context, store *sqlite.DB, id int64) (*audit.Run, error) {
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
