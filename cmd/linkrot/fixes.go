package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"

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
	if *format != "text" && *format != "json" && *format != "unlinkr" {
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
	switch *format {
	case "json":
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		// Only proposals: a consumer applying the list never sees an
		// identifier; those are noted on stderr.
		for _, r := range held {
			fmt.Fprintf(e.stderr, "linkrot: not proposed: %s on %s (%s)\n", r.Target, r.Source, r.Evidence)
		}
		return enc.Encode(recs)
	case "unlinkr":
		for _, r := range held {
			fmt.Fprintf(e.stderr, "linkrot: not proposed: %s on %s (%s)\n", r.Target, r.Source, r.Evidence)
		}
		for _, r := range recs {
			fmt.Fprintf(e.stdout, "UNLINKR %s %s %s\n", r.Source, r.Target, r.Replacement)
		}
		return nil
	}
	if len(recs) == 0 {
		fmt.Fprintf(e.stdout, "Run %d: no links to moved resources.\n", run.ID)
	} else {
		fmt.Fprintf(e.stdout, "Run %d: %d links to update.\n", run.ID, len(recs))
	}
	last := ""
	for _, r := range recs {
		if r.Source != last {
			fmt.Fprintf(e.stdout, "\n%s\n", r.Source)
			last = r.Source
		}
		fmt.Fprintf(e.stdout, "  %s\n    → %s  (%d)\n    evidence: %s\n", r.Target, r.Replacement, r.Status, r.Evidence)
		if r.Claimant != "" {
			fmt.Fprintf(e.stdout, "    UNLINKR from %s: %s\n", maintain.Printable(r.Claimant), maintain.Printable(r.ClaimNote))
		}
	}
	if len(held) > 0 {
		fmt.Fprintf(e.stdout, "\n%d links to identifiers redirect elsewhere; an identifier is never replaced by a location (check them by hand):\n", len(held))
		for _, r := range held {
			fmt.Fprintf(e.stdout, "  %s on %s\n    redirects to %s  (%d)\n    why kept: %s\n", r.Target, r.Source, r.Replacement, r.Status, r.Evidence)
		}
	}
	return printClaims(ctx, e, store, run.ID)
}

// printClaims lists the UNLINKR claims linkrot serve received for links
// of the run that its checks did not bear out: never proposed as fixes.
// Every string came from a notification: printed escaped.
func printClaims(ctx context.Context, e *env, store interface {
	Claims(ctx context.Context, runID int64) ([]audit.Claim, error)
}, runID int64) error {
	claims, err := store.Claims(ctx, runID)
	if err != nil {
		return err
	}
	var open []audit.Claim
	for _, c := range claims {
		if !c.Confirmed {
			open = append(open, c)
		}
	}
	if len(open) == 0 {
		return nil
	}
	fmt.Fprintf(e.stdout, "\n%d UNLINKR claims received by linkrot serve that its checks did not bear out (not proposed):\n", len(open))
	for _, c := range open {
		fmt.Fprintf(e.stdout, "  %s on %s\n", maintain.Printable(c.Target), maintain.Printable(c.Source))
		if c.Replacement != "" {
			fmt.Fprintf(e.stdout, "    claimed replacement %s\n", maintain.Printable(c.Replacement))
		}
		fmt.Fprintf(e.stdout, "    from %s at %s: %s\n", maintain.Printable(c.Claimant), c.ClaimedAt.Format("2006-01-02 15:04"), maintain.Printable(c.Note))
	}
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
