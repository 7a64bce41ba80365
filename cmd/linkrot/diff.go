package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/linkrot/linkrot/audit"
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
	if *format != "text" && *format != "json" {
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
	if *format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(nonNilDiff(d))
	}
	printDiff(e.stdout, d)
	return nil
}

// nonNilDiff returns d with empty lists instead of nil ones, so the JSON
// schema always has arrays.
func nonNilDiff(d *audit.RunDiff) *audit.RunDiff {
	c := *d
	for _, l := range []*[]audit.Change{&c.NewBroken, &c.NewlyConfirmed, &c.Recovered, &c.NewlyMoved, &c.NewlyDrifted} {
		if *l == nil {
			*l = []audit.Change{}
		}
	}
	return &c
}

func printDiff(w io.Writer, d *audit.RunDiff) {
	if d.From == 0 {
		fmt.Fprintf(w, "Run %d (no earlier run of this site to compare with)\n", d.To)
	} else {
		fmt.Fprintf(w, "Run %d compared with run %d\n", d.To, d.From)
	}
	section := func(title string, cs []audit.Change, line func(audit.Change) string) {
		fmt.Fprintf(w, "\n%s: %d\n", title, len(cs))
		for _, c := range cs {
			fmt.Fprintf(w, "  %s\n", line(c))
		}
	}
	verdict := func(c audit.Change) string {
		s := string(c.Verdict)
		if c.Status > 0 {
			s += fmt.Sprintf(" %d", c.Status)
		}
		was := "new link"
		if c.Previous != "" {
			was = "was " + string(c.Previous)
		}
		return fmt.Sprintf("%-22s %s  (%s; %d pages)", s, c.URL, was, c.Pages)
	}
	section("Newly confirmed broken", d.NewlyConfirmed, verdict)
	section("New broken", d.NewBroken, verdict)
	section("Recovered", d.Recovered, func(c audit.Change) string {
		return fmt.Sprintf("%-22s %s  (was %s)", c.Verdict, c.URL, c.Previous)
	})
	section("Newly moved", d.NewlyMoved, func(c audit.Change) string {
		return fmt.Sprintf("%s → %s", c.URL, c.Replacement)
	})
	if !d.DriftAvailable {
		fmt.Fprintf(w, "\nNewly drifted: not measured (no drift measurements in run %d: archives stage off or nothing to measure)\n", d.To)
		return
	}
	section("Newly drifted", d.NewlyDrifted, func(c audit.Change) string {
		was := c.PreviousBand
		if was == "" {
			was = "not measured"
		}
		return fmt.Sprintf("%-10s %s  (was %s)", c.Band, c.URL, was)
	})
}
