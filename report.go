package linkrot

import (
	"context"
	"fmt"

	"github.com/linkrot/linkrot/audit"
)

// summaryReads is what the summary of a run reads of it once its checks
// are stored (readSummary).
type summaryReads struct {
	verdicts map[audit.Verdict]int
	top      []audit.BrokenTarget
	stats    *audit.RunStats
	err      error
}

// readSummary reads the run's verdict counts, its most linked broken
// targets and what it stored (RunStats).
func readSummary(ctx context.Context, store Store, runID int64) summaryReads {
	var r summaryReads
	if r.verdicts, r.err = store.VerdictCounts(ctx, runID); r.err != nil {
		return r
	}
	if r.top, r.err = store.TopBroken(ctx, runID, 10); r.err != nil {
		return r
	}
	if r.stats, r.err = store.RunStats(ctx, runID); r.err != nil {
		r.err = fmt.Errorf("run stats: %w", r.err)
	}
	return r
}
