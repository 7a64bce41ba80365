package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/archives/warc"
	"github.com/linkrot/linkrot/httpx"
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
	var list []memento.Archive
	switch {
	case *presets:
		list = memento.Presets()
	case len(archives) > 0:
		for _, s := range archives {
			a, err := memento.ParseArchive(s)
			if err != nil {
				return usagef("--archive: %v", err)
			}
			list = append(list, a)
		}
	default:
		if len(warcs) == 0 {
			list = memento.Defaults()
		}
	}
	var cols []*warc.Collection
	if len(warcs) > 0 {
		if cols, err = linkrot.OpenCollections(warcs, *db, slog.New(slog.DiscardHandler)); err != nil {
			return usagef("%v", err)
		}
		for _, c := range cols {
			list = append(list, c.Archive())
		}
	}
	if !*ping {
		printArchives(e, list, cols)
		return nil
	}
	var private []string
	for _, a := range list {
		if len(archives) > 0 {
			private = append(private, a.TimeGate, a.TimeMap)
		}
	}
	rt, closeRT := httpx.NewTransportAllowing(httpx.Options{AllowPrivate: *allowPrivate}, private)
	defer closeRT()
	client := memento.NewClient(memento.Options{Archives: list, Transport: warc.Transport(rt, cols...), Timeout: *timeout, Retries: -1})
	results := make([]memento.PingResult, len(list))
	var wg sync.WaitGroup
	for i, a := range list {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, *timeout)
			defer cancel()
			results[i] = client.Ping(pctx, a, *pingURL)
		})
	}
	wg.Wait()
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

// printArchives writes the archives, their budgets and raw-replay form.
func printArchives(e *env, list []memento.Archive, cols []*warc.Collection) {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ARCHIVE\tPOOL\tPUBLISHED\tMARGIN\tSENT AT MOST\tENDPOINTS")
	for _, a := range list {
		for i, p := range a.AllPools() {
			name := ""
			if i == 0 {
				name = a.Name
			}
			pub, margin, sent := fmt.Sprintf("%g/min", rateOr(p.Rate)), fmt.Sprintf("%g%%", marginOf(p.Margin)*100), fmt.Sprintf("%.4g/min", p.PerMinute())
			if a.Local {
				pub, margin, sent = "-", "-", "unlimited (local)"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", name, p.Name, pub, margin, sent, strings.Join(p.Prefixes, " "))
		}
	}
	w.Flush()
	fmt.Fprintln(e.stdout)
	for _, a := range list {
		fmt.Fprintf(e.stdout, "%s: raw replay %s\n", a.Name, a.Raw.Describe())
		if a.Save != "" {
			fmt.Fprintf(e.stdout, "  save: %s at %g/min\n", a.Save, rateOr(a.SaveRate))
		}
		if a.Source != "" {
			fmt.Fprintf(e.stdout, "  source: %s\n", a.Source)
		}
		if a.Shutdown != "" {
			fmt.Fprintf(e.stdout, "  SHUT DOWN: %s\n", a.Shutdown)
		}
	}
	for _, c := range cols {
		for _, ix := range c.Indexes() {
			fmt.Fprintf(e.stdout, "%s: index %s\n", c.Name, ix)
		}
		for _, d := range c.Diagnostics() {
			fmt.Fprintf(e.stdout, "%s: unreadable record: %s\n", c.Name, d)
		}
	}
}

func rateOr(r float64) float64 {
	if r <= 0 {
		return memento.DefaultRate
	}
	return r
}

func marginOf(m float64) float64 {
	switch {
	case m == 0:
		return memento.DefaultMargin
	case m < 0:
		return 0
	}
	return m
}
