package audit

import (
	"context"
	"time"
)

// Store persists runs and everything they find. Implementations must be safe
// for concurrent use; writes of one run are expected to come from a single
// Writer goroutine, reads may come from anywhere.
type Store interface {
	// CreateRun inserts r, sets r.ID and r.Status (RunRunning) and returns.
	CreateRun(ctx context.Context, r *Run) error
	// FinishRun records the end of a run with its final status and, for a
	// failed run, the error message.
	FinishRun(ctx context.Context, runID int64, status RunStatus, finishedAt time.Time, errMsg string) error
	// SavePages stores pages of a run in one transaction: pages, redirects,
	// links (with deduplicated targets), snapshots, mset data, identifiers,
	// pwids and diagnostics. Either all pages of the batch land or none.
	SavePages(ctx context.Context, runID int64, pages []*Page) error
	// Run returns the run with the given ID, or ErrNotFound.
	Run(ctx context.Context, runID int64) (*Run, error)
	// LatestRun returns the most recently started run, or ErrNotFound when
	// the database holds none.
	LatestRun(ctx context.Context) (*Run, error)
	// RunStats counts what a run recorded. A run with nothing recorded yields
	// zero counts, not an error; an unknown run yields ErrNotFound.
	RunStats(ctx context.Context, runID int64) (*RunStats, error)
	// Close flushes and closes the store.
	Close() error
}
