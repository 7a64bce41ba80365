package check

import (
	"context"

	"github.com/linkrot/linkrot/audit"
)

// Stream checks the targets that arrive on in as they arrive, with the
// same dispatcher as Run: every request within Options.Scheduler (or a
// private one), 429/503 pauses and deferred retries, and the targets of a
// host given up tried once more after in is closed and everything else is
// done, then recorded rate-limited. One DNS cache, probe cache and
// connection pool serve the whole stream. It returns when in is closed
// and every target received is done (nil), or when ctx is cancelled
// (ctx.Err()); results of checks cut short by the cancellation are not
// emitted. emit is called from worker goroutines as soon as a result is
// known: it must be safe for concurrent use.
//
// Unlike Run, Stream does not deduplicate: the caller sends each URL once
// (linkrot's pipeline deduplicates on first sight). A target that is
// never fetched (skipped scheme, Exclude match, robots.txt, unparsable
// URL) is emitted from the dispatching goroutine. At most a bounded
// number of targets are taken from in and not finished at once, so a
// producer faster than the checks waits. Every goroutine Stream starts has
// exited when it returns.
func (c *Checker) Stream(ctx context.Context, in <-chan Target, emit func(audit.Check)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rs, done := c.newRun(ctx)
	defer done()
	return rs.runWorkers(ctx, newQueues(), 0, in, c.o.Workers, emit)
}
