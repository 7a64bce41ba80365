package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/scaleout"
)

// runWorker is linkrot worker: it works on the crawl and check units of
// every run that linkrot audit --nats enqueues on the NATS server, with
// the run's settings read from the shared database, until SIGTERM or
// SIGINT (units in flight are then handed back to the other workers).
func runWorker(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "worker", "--nats URL --db DATABASE [--workers N]")
	var nf natsFlags
	nf.register(fs)
	db := fs.String("db", "linkrot.db", "the shared database of the runs (the coordinating linkrot audit's --db)")
	workers := fs.Int("workers", 8, "`number` of units (pages, checks) worked on at once by this process")
	logLevel := fs.String("log-level", "info", "log `level`: debug, info, warn or error")
	pos, cfg, err := parseCommand(e, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) > 0 {
		return usagef("worker takes no arguments (got %q)", pos[0])
	}
	if nf.addr == "" {
		return usagef("worker: --nats URL is required")
	}
	if err := nf.check(); err != nil {
		return err
	}
	if *workers < 1 {
		return usagef("--workers must be at least 1")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("--log-level must be debug, info, warn or error, not %q", *logLevel)
	}
	log, err := linkrot.NewLogger(e.stderr, "text", level)
	if err != nil {
		return err
	}
	nc, q, err := nf.open(ctx, "linkrot worker")
	if err != nil {
		return err
	}
	defer nc.Close()
	store, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	given := cfg.hostRules()
	log.Info("worker started", "nats", nf.addr, "workers", *workers, "partitions", nf.partitions)
	err = scaleout.Work(ctx, scaleout.WorkerConfig{
		Queue: q, Store: store, Concurrency: *workers, Logger: log,
		Setup: func(ctx context.Context, runID int64, pacer *scaleout.Pacer) (*scaleout.RunEnv, error) {
			run, err := store.Run(ctx, runID)
			if err != nil {
				return nil, err
			}
			job, err := linkrot.OpenStored(ctx, store, run, given, linkrot.OpenOptions{Logger: log, Worker: true})
			if err != nil {
				return nil, err
			}
			return scaleout.JobEnv(job, pacer), nil
		},
	})
	log.Info("worker stopped")
	return err
}
