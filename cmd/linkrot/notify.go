package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/maintain"
)

// runNotify is linkrot notify: as a sender of the link-maintenance draft,
// tell the registered sources of backlinks (from LINK and Webmention) that
// one of our pages moved (UNLINKR with the replacement) or changed
// (LINKMOD, where they asked for it), from the site run's verdicts.
func runNotify(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "notify", "[--db PATH] [--framing auto|draft|http] [--dry-run]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	framing := fs.String("framing", "auto", "auto (the draft framing only to receivers known to accept it), draft or http")
	hostDelay := fs.Duration("host-delay", time.Second, "least time between two notifications to one host")
	timeout := fs.Duration("timeout", 10*time.Second, "bound on one notification: connect, send, answer")
	attempts := fs.Int("max-attempts", 3, "tries of a notification without an answer, over successive runs")
	dryRun := fs.Bool("dry-run", false, "list what would be sent; send and record nothing")
	allowPrivate := fs.Bool("allow-private", false, "let notifications go to loopback and private addresses (intranets, tests)")
	format := fs.String("format", "text", "text or json")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("notify takes no arguments")
	}
	switch *framing {
	case maintain.FramingAuto, maintain.FramingDraft, maintain.FramingHTTP:
	default:
		return usagef("--framing must be auto, draft or http")
	}
	if *format != "text" && *format != "json" {
		return usagef("--format must be text or json")
	}
	store, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	n := maintain.NewNotifier(store, maintain.NotifierOptions{Framing: *framing, HostDelay: *hostDelay, Timeout: *timeout,
		MaxAttempts: *attempts, DryRun: *dryRun, AllowPrivate: *allowPrivate})
	res, err := n.Run(ctx)
	if errors.Is(err, audit.ErrNotFound) {
		return usagef("no run in the database (crawl first: linkrot audit URL)")
	}
	if *format == "json" {
		if res.Sent == nil {
			res.Sent = []audit.Notification{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(res); jerr != nil {
			return jerr
		}
		return err
	}
	res.WriteText(e.stdout, *dryRun, *attempts)
	return err
}
