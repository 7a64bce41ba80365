package storetest

import (
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// The helpers below are the suite's own, shared with an engine's internal
// tests so that both build their fixtures the same way.

// MustCreateRun creates a run and returns its ID.
func MustCreateRun(tb testing.TB, db store.Store) int64 {
	tb.Helper()
	return mustCreateRun(tb, db)
}

// MustSave saves pages in runID.
func MustSave(tb testing.TB, db store.Store, runID int64, pages ...*audit.Page) {
	tb.Helper()
	mustSave(tb, db, runID, pages...)
}

// LinkedRun creates a run whose one page links to each of urls and returns
// the run and the target IDs by URL.
func LinkedRun(tb testing.TB, db store.Store, urls ...string) (int64, map[string]int64) {
	tb.Helper()
	return linkedRun(tb, db, urls...)
}

// LinkTargets saves, in runID, a page at pageURL linking to each of urls
// and returns the target IDs of all the run's targets by URL.
func LinkTargets(tb testing.TB, db store.Store, runID int64, pageURL string, urls ...string) map[string]int64 {
	tb.Helper()
	return linkTargets(tb, db, runID, pageURL, urls...)
}

// MustSaveChecks saves checks.
func MustSaveChecks(tb testing.TB, db store.Store, checks ...audit.Check) {
	tb.Helper()
	mustSaveChecks(tb, db, checks...)
}

// MustChecks returns the checks of runID.
func MustChecks(tb testing.TB, db store.Store, runID int64) []audit.Check {
	tb.Helper()
	return mustChecks(tb, db, runID)
}

// Stored returns c as Checks returns it: UTC time, no anchors.
func Stored(c audit.Check) audit.Check { return stored(c) }

// DiffChecks fails t for each difference between got and want.
func DiffChecks(t *testing.T, got, want []audit.Check) {
	t.Helper()
	diffChecks(t, got, want)
}
