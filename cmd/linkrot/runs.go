package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// runRuns is linkrot runs: the runs in the database, newest first, with
// their counts and, for a run being written, the process writing it.
func runRuns(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "runs", "[--limit N] [--format text|json]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	limit := fs.Int("limit", 20, "show the latest `N` runs (0: all)")
	format := fs.String("format", "text", "text or json")
	pos, _, err := parseCommand(e, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("runs takes no arguments")
	}
	if *format != "text" && *format != "json" {
		return usagef("--format must be text or json")
	}
	store, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	runs, err := store.RunSummaries(ctx, *limit)
	if err != nil {
		return err
	}
	owner, err := store.LockOwner(ctx)
	if err != nil && !errors.Is(err, audit.ErrNotFound) {
		return err
	}
	if *format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if runs == nil {
			return enc.Encode([]struct{}{}) // [], not null
		}
		return enc.Encode(runs)
	}
	if len(runs) == 0 {
		fmt.Fprintln(e.stdout, "No runs yet (linkrot audit URL).")
		return nil
	}
	fmt.Fprintf(e.stdout, "%5s  %-16s %9s  %-11s %6s %7s %7s %7s %6s %9s  %s\n",
		"RUN", "STARTED", "DURATION", "STATUS", "PAGES", "LINKS", "TARGETS", "BROKEN", "FINDS", "CONFIRMED", "SITE")
	for _, r := range runs {
		dur := "-"
		if !r.FinishedAt.IsZero() {
			dur = roundDur(r.FinishedAt.Sub(r.StartedAt)).String()
		}
		status := string(r.Status)
		switch {
		case r.Abandoned:
			status = "abandoned" // never resumed: a newer run completed, or it grew too old
		case r.Status == audit.RunRunning && (owner == nil || owner.RunID != r.ID || !owner.Alive(2*time.Minute)):
			status = "dead" // killed: resume it with linkrot audit --resume (crawl --resume)
		}
		fmt.Fprintf(e.stdout, "%5d  %-16s %9s  %-11s %6d %7d %7d %7d %6d %9d  %s\n",
			r.ID, r.StartedAt.Local().Format("2006-01-02 15:04"), dur, status, r.Pages, r.Links, r.Targets,
			r.Broken, r.Findings, r.Confirmed, strings.Join(r.Seeds, " "))
	}
	if owner != nil && owner.Alive(2*time.Minute) {
		fmt.Fprintf(e.stdout, "\nThe database is in use by linkrot %s.\n", owner)
	}
	return nil
}
