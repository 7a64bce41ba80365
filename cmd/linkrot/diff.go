package main

import (
	"context"
	"errors"
	"flag"
	"slices"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/report"
)

// runDiff is linkrot diff: what changed between two runs.
func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "diff", "[--from RUN] [--to RUN] [--format text|json]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	from := fs.Int64("from", 0, "the older run (default: the run before --to of the same site)")
	to := fs.Int64("to", 0, "the newer run (default: the latest)")
	format := fs.String("format", "text", "text or json")
	pos, _, err := parseCommand(e, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("diff takes no arguments (use --from and --to)")
	}
	if !slices.Contains(report.DiffFormats, *format) {
		return usagef("--format must be text or json")
	}
	store, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	toRun, err := pickRun(ctx, store, *to)
	if err != nil {
		return err
	}
	fromID := *from
	if fromID == 0 {
		prev, err := store.PreviousRun(ctx, toRun.ID)
		switch {
		case err == nil:
			fromID = prev.ID
		case !errors.Is(err, audit.ErrNotFound):
			return err
		}
	} else if _, err := pickRun(ctx, store, fromID); err != nil {
		return err
	}
	if fromID >= toRun.ID {
		return usagef("--from (%d) must be an earlier run than --to (%d)", fromID, toRun.ID)
	}
	d, err := store.Diff(ctx, fromID, toRun.ID)
	if err != nil {
		return err
	}
	return report.WriteDiff(e.stdout, *format, d)
}
