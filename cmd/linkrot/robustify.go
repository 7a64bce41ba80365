package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	iofs "io/fs"
	"os"
	"strings"

	"github.com/linkrot/linkrot/robustify"
)

// runRobustify adds Robust Links attributes to the outbound links of a
// local build directory (package robustify).
func runRobustify(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "robustify", "[flags] DIR")
	var archives, site listFlag
	fs.Var(&archives, "archive", "ask this archive (`spec` or preset name, as for audit); repeatable (default: the default archives)")
	fs.Var(&site, "site-host", "a `host` whose links are the site's own, not outbound; repeatable")
	dryRun := fs.Bool("dry-run", false, "write nothing; print the unified diff of every change")
	fix := fs.Bool("fix", false, "replace data-versionurl and data-versiondate of links whose declared snapshot is broken")
	save := fs.Bool("save", false, "ask an archive (Save Page Now 2) to capture targets without any memento, within its save budget; keys from $"+spnAuthEnv)
	format := fs.String("format", "text", "text or json (every link with its action and reason)")
	allowPrivate := fs.Bool("allow-private", false, "allow archives on loopback or private addresses")
	workers := fs.Int("workers", 8, "concurrent lookups (archive budgets bound the rate)")
	dateFrom := fs.String("date-from", "mtime", "the linking date written as data-versiondate: mtime (each file's modification time) or page (the date the page states: article:modified_time, dcterms.modified, article:published_time, <time datetime> in a <header>, ...; else mtime)")
	timemap := fs.Bool("timemap", false, "also read each archive's TimeMap to find the memento nearest the linking date (for TimeGates that do not negotiate; one more request per link)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 1 {
		return usagef("robustify takes one directory")
	}
	if *format != "text" && *format != "json" {
		return usagef("--format must be text or json")
	}
	var dateOf func(string, iofs.FileInfo, []byte) robustify.LinkDate
	switch *dateFrom {
	case "mtime":
		dateOf = robustify.FileDate
	case "page":
		dateOf = robustify.PageOrFileDate
	default:
		return usagef("--date-from must be mtime or page")
	}
	if st, err := os.Stat(pos[0]); err != nil || !st.IsDir() {
		return usagef("robustify: %s is not a directory", pos[0])
	}
	hosts := map[string]bool{}
	for _, h := range site {
		hosts[strings.ToLower(h)] = true
	}
	o := robustify.Options{Date: dateOf, Fix: *fix, DryRun: *dryRun, SiteHosts: hosts, Workers: *workers}
	release, err := robustify.ArchiveConfig{Specs: archives, AllowPrivate: *allowPrivate, TimeMaps: *timemap,
		Save: *save, SaveAuth: os.Getenv(spnAuthEnv)}.Apply(&o)
	if err != nil {
		return usagef("%v", err)
	}
	defer release()
	res, err := robustify.Run(ctx, pos[0], o)
	if err != nil {
		return err
	}
	if *format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	}
	res.WriteText(e.stdout, e.stderr, *dryRun)
	return nil
}
