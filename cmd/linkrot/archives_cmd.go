package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/archives/memento"
)

// runArchivesCmd lists the configured archives (default: the archives a
// run asks), their request budgets and raw-replay form; with --ping it
// asks each once whether it answers Memento.
func runArchivesCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "archives", "[--archive SPEC]... [--archive-warc PATH]... [--presets] [--ping [--ping-url URL]]")
	var archives, warcs listFlag
	fs.Var(&archives, "archive", "an archive as for audit (`spec` or preset name); repeatable (default: the default archives)")
	fs.Var(&warcs, "archive-warc", "a local web archive as for audit (`path`); repeatable")
	presets := fs.Bool("presets", false, "list every preset --archive NAME knows, shut-down ones included")
	ping := fs.Bool("ping", false, "ask each archive once (TimeGate, then TimeMap) and print one line per archive")
	pingURL := fs.String("ping-url", memento.DefaultPingURL, "the resource --ping asks about")
	timeout := fs.Duration("timeout", 20*time.Second, "--ping: time allowed per archive")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL (its index directory, beside a file, holds --archive-warc indexes)")
	allowPrivate := fs.Bool("allow-private", false, "--ping: allow archives on loopback or private addresses")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("archives takes no arguments")
	}
	list, err := linkrot.ListArchives(archives, warcs, *presets, *db)
	if err != nil {
		return usagef("%v", err)
	}
	if !*ping {
		list.Write(e.stdout)
		return nil
	}
	results := list.Ping(ctx, *pingURL, *timeout, *allowPrivate)
	failed := 0
	for _, r := range results {
		fmt.Fprintln(e.stdout, r.Line())
		if !r.OK {
			failed++
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if failed > 0 {
		fmt.Fprintf(e.stderr, "linkrot: %d of %d archives do not answer Memento\n", failed, len(results))
		return &findingsError{n: failed}
	}
	return nil
}
