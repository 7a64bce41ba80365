package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/linkrot/linkrot/report"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlite"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// This file wires the linkrot command to its database (packages
// store/engines and store/sqlstore: the SQLite and PostgreSQL engines
// behind the one SQL store): it is the only file of the command that
// imports them. The
// commands and their helpers take the store through the small interfaces
// they declare where they use it; the few calls whose arguments are
// SQLite's own types are given plain ones here.

// database is the run database of the commands.
type database struct{ *sqlstore.DB }

// openDB opens (creating and migrating when needed) the database at path.
func openStore(ctx context.Context, path string) (*database, error) {
	db, err := engines.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return &database{db}, nil
}

// openReadOnlyDB opens the database at path for reading only.
func openReadOnlyStore(ctx context.Context, path string) (*database, error) {
	db, err := engines.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return &database{db}, nil
}

// Prune removes old runs (see store.PruneOptions) and returns the IDs of
// the runs removed (or that would be, with dryRun).
func (d *database) Prune(ctx context.Context, keep int, olderThan time.Duration, dryRun bool) ([]int64, error) {
	res, err := d.DB.Prune(ctx, store.PruneOptions{Keep: keep, OlderThan: olderThan, DryRun: dryRun})
	return res.Runs, err
}

// EachReportLink calls fn with each link of a run as the report shows it,
// whose pages have the store IDs pageIDs (in the order of
// report.Dataset.Pages).
func (d *database) EachReportLink(ctx context.Context, runID int64, pageIDs []int64, fn func(*report.Link) error) error {
	pageIdx := make(map[int64]int, len(pageIDs))
	for i, id := range pageIDs {
		pageIdx[id] = i
	}
	var rl report.Link
	return d.DB.EachLink(ctx, runID, func(l *store.StoredLink) error {
		pi, ok := pageIdx[l.PageID]
		if !ok {
			return fmt.Errorf("link %d refers to page %d, not in the run", l.ID, l.PageID)
		}
		rl = report.Link{ID: l.ID, Page: pi, TargetID: l.TargetID, Link: l.Link}
		return fn(&rl)
	})
}

// openLocked opens the database at path for a writing command and takes
// its run lock (lockDB). The returned context is cancelled if the lock is
// lost; the lock's release also closes the database.
func openLocked(ctx context.Context, path, command string, wait bool, log *slog.Logger) (context.Context, *database, *heldLock, error) {
	db, err := openStore(ctx, path)
	if err != nil {
		return nil, nil, nil, err
	}
	lctx, lk, err := lockDB(ctx, db, command, wait, log)
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	lk.closeDB = db.Close
	return lctx, db, lk, nil
}

// lockedError is returned when another process holds the database.
type lockedError struct {
	db  string
	err error
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("%s: %v; run with --wait to wait for it", e.db, e.err)
}

func (e *lockedError) Unwrap() error { return e.err }

// lockPoll is how often a waiting process tries the lock again.
var lockPoll = 500 * time.Millisecond

// heldLock is the run lock of a writing command.
type heldLock struct {
	l      *sqlstore.Lock
	cancel context.CancelCauseFunc
	log    *slog.Logger
	// closeDB, when set, closes the database after the release.
	closeDB func() error
}

// release frees the lock. It may be called more than once.
func (h *heldLock) release() {
	if err := h.l.Release(); err != nil {
		h.log.Warn("release lock", "err", err)
	}
	h.cancel(nil)
	if h.closeDB != nil {
		h.closeDB()
		h.closeDB = nil
	}
}

// setRun names the run being written in the lock, for the message another
// process shows. It is best effort.
func (h *heldLock) setRun(ctx context.Context, runID int64) {
	if err := h.l.SetRun(ctx, runID); err != nil {
		h.log.Warn("lock", "err", err)
	}
}

// lockDB takes the database's run lock for a writing command. Another
// live linkrot holding it makes it fail with a lockedError naming that
// process (exit code 4) or, with wait, wait for it. SQLITE_BUSY (another
// process's transaction outlasting busy_timeout) is treated the same way.
// The returned context is cancelled if the lock is ever taken over (the
// run then stops as interrupted).
func lockDB(ctx context.Context, db *database, command string, wait bool, log *slog.Logger) (context.Context, *heldLock, error) {
	lctx, cancel := context.WithCancelCause(ctx)
	opts := store.LockOptions{Command: command, OnLost: func() {
		log.Error("the database lock was taken over by another process; stopping")
		cancel(errors.New("database lock lost"))
	}}
	told := false
	for {
		l, err := db.TryLock(ctx, opts)
		if err == nil {
			if l.TookOver != nil {
				log.Warn("took over the lock of a linkrot that is gone", "holder", l.TookOver.String())
			}
			return lctx, &heldLock{l: l, cancel: cancel, log: log}, nil
		}
		if !errors.Is(err, store.ErrLocked) && !sqlite.IsBusy(err) {
			cancel(nil)
			return nil, nil, err
		}
		if !wait {
			cancel(nil)
			return nil, nil, &lockedError{db: db.Path(), err: err}
		}
		if !told {
			log.Warn("waiting for another linkrot to finish with the database", "reason", err.Error())
			told = true
		}
		select {
		case <-ctx.Done():
			cancel(nil)
			return nil, nil, fmt.Errorf("waiting for the database lock: %w", ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// isDatabaseURL reports whether a --db value names a database server
// (postgres://, postgresql://) rather than a SQLite file.
func isDatabaseURL(db string) bool { return store.IsPostgresURL(db) }
