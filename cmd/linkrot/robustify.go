package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"os"
	"strings"

	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/httpx"
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
	list := memento.Defaults()
	if len(archives) > 0 {
		list = nil
		for _, s := range archives {
			a, err := memento.ParseArchive(s)
			if err != nil {
				return usagef("--archive: %v", err)
			}
			list = append(list, a)
		}
	}
	var private []string
	if len(archives) > 0 {
		for _, a := range list {
			private = append(private, a.TimeGate, a.TimeMap, a.Save)
		}
	}
	rt, closeRT := httpx.NewTransportAllowing(httpx.Options{AllowPrivate: *allowPrivate}, private)
	defer closeRT()
	client := memento.NewClient(memento.Options{Archives: list, Transport: rt})
	hosts := map[string]bool{}
	for _, h := range site {
		hosts[strings.ToLower(h)] = true
	}
	o := robustify.Options{
		Lookup:    robustify.ArchiveLookupWith(client, list, robustify.LookupOptions{TimeMaps: *timemap}),
		Date:      dateOf,
		Verify:    robustify.ArchiveVerify(client),
		Fix:       *fix,
		DryRun:    *dryRun,
		SiteHosts: hosts,
		Workers:   *workers,
	}
	if *save {
		o.Save = robustify.ArchiveSave(client, list, memento.SaveOptions{Auth: os.Getenv(spnAuthEnv)})
	}
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
	if *dryRun {
		for _, f := range res.Files {
			fmt.Fprint(e.stdout, f.Diff)
		}
	}
	for _, l := range res.Links {
		if l.Action == robustify.ActionSkipped || l.Action == robustify.ActionBroken {
			fmt.Fprintf(e.stderr, "%s:%d: %s %s: %s\n", l.File, l.Line, l.Action, l.Href, l.Reason)
		}
	}
	for _, f := range res.Files {
		if f.Skipped != "" {
			fmt.Fprintf(e.stderr, "%s: skipped: %s\n", f.Path, f.Skipped)
		}
	}
	changed := 0
	for _, f := range res.Files {
		if f.Changed {
			changed++
		}
	}
	verb := "changed"
	if *dryRun {
		verb = "would change"
	}
	fmt.Fprintf(e.stderr, "robustify: %d files, %d %s; links: %d added, %d saved, %d audited, %d broken, %d fixed, %d skipped\n",
		len(res.Files), changed, verb, res.Count(robustify.ActionAdded), res.Count(robustify.ActionSaved), res.Count(robustify.ActionAudited),
		res.Count(robustify.ActionBroken), res.Count(robustify.ActionFixed), res.Count(robustify.ActionSkipped))
	return nil
}
