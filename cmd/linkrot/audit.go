package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/sqlite"
)

// runAudit is the main job: crawl the site, then check every unique target
// of the crawl, in one run.
func runAudit(ctx context.Context, e *env, args []string) error {
	var cf crawlFlags
	var kf checkFlags
	fs := newFlagSet(e, "audit", "[flags] URL | DIR --base URL | --sitemap URL | --urls FILE")
	cf.register(fs, false)
	kf.register(fs, true)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	// Both stages share the politeness settings.
	cf.concurrency, cf.userAgent, cf.timeout, cf.maxRedirects = kf.perHost, kf.userAgent, kf.timeout, kf.maxRedirects
	in, err := cf.input(e, pos)
	if err != nil {
		return err
	}
	log, err := newLogger(e.stderr, cf.logFormat, cf.verbose, cf.quiet)
	if err != nil {
		return err
	}
	copts, err := cf.options(log)
	if err != nil {
		return err
	}
	kopts, failOn, err := kf.options(log)
	if err != nil {
		return err
	}
	store, err := sqlite.Open(ctx, cf.db)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()

	run, stats, err := crawlRun(ctx, e, store, in, cf.sitemaps, copts, log)
	if stats != nil {
		printCrawlSummary(e.stdout, stats)
	}
	if err != nil {
		return err
	}
	res, err := checkRun(ctx, e, store, run, kopts, kf, log)
	status, msg := audit.RunComplete, ""
	switch {
	case ctx.Err() != nil:
		status = audit.RunInterrupted
		err = fmt.Errorf("check stopped: %w", context.Canceled)
	case err != nil:
		status, msg = audit.RunFailed, err.Error()
	}
	if ferr := store.FinishRun(context.WithoutCancel(ctx), run.ID, status, time.Now().UTC(), msg); ferr != nil && err == nil {
		err = ferr
	}
	if res != nil {
		printCheckSummary(e.stdout, res)
	}
	if err != nil {
		return withRun(err, run)
	}
	return res.failOn(failOn)
}
