// Package storetest is the contract suite of the run database: the
// behaviours every adapter of the store port (store/sqlite,
// store/postgres) must show, written against store.Store only. An
// adapter's test calls Run with a function that opens a fresh, empty
// store; every behaviour is a subtest of its own.
package storetest

import (
	"testing"

	"github.com/linkrot/linkrot/store"
)

// Opener opens a fresh, empty, migrated store for tb, closed when tb ends.
type Opener func(tb testing.TB) store.Store

// cases returns the behaviours of the contract, by subtest name.
func cases() []testCase {
	return []testCase{
		{"CheckedTargetIDs", testCheckedTargetIDs},
		{"Checks_FromCrawl", testChecks_FromCrawl},
		{"Checks_MarksReplacedInBatch", testChecks_MarksReplacedInBatch},
		{"Checks_UnknownRun", testChecks_UnknownRun},
		{"ClearFirstSeenDrift", testClearFirstSeenDrift},
		{"DashboardWire_Reads", testDashboardWire_Reads},
		{"EarlierFingerprints", testEarlierFingerprints},
		{"EarlierFingerprints_NoFingerprintBefore", testEarlierFingerprintsNoFingerprintBefore},
		{"FindingLinks_Keep", testFindingLinks_Keep},
		{"FindingLinks_RepeatedFragments", testFindingLinks_RepeatedFragments},
		{"FirstFingerprints", testFirstFingerprints},
		{"History_Errors", testHistory_Errors},
		{"PreviousChecks_Many", testPreviousChecks_Many},
		{"ReplaceFindings", testReplaceFindings},
		{"Save_ConnectionHintsHaveNoTarget", testSave_ConnectionHintsHaveNoTarget},
		{"Store_DuplicatePage", testStore_DuplicatePage},
		{"Store_LinksWithoutTarget", testStore_LinksWithoutTarget},
		{"Store_Positions", testStore_Positions},
		{"Store_ResumeCandidates", testStore_ResumeCandidates},
		{"Store_RunState", testStore_RunState},
		{"Store_Runs", testStore_Runs},
		{"Store_SaveCrawlFrontier", testStore_SaveCrawlFrontier},
		{"TargetIDs_Many", testTargetIDs_Many},
		{"Trend_TargetStatuses", testTrend_TargetStatuses},
		{"Order_NullsFirst", testOrder_NullsFirst},
	}
}

type testCase struct {
	name string
	fn   func(t *testing.T, open Opener)
}

// Run runs every behaviour of the contract as a subtest of t, each on a
// store of its own from open.
func Run(t *testing.T, open Opener) {
	t.Helper()
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open) })
	}
}
