package storetest

import (
	"context"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// testOrder_NullsFirst: a row without a link (NULL link_id) comes before
// the rows with one, whatever the engine (PostgreSQL's default order puts
// NULLs last, SQLite's first; the store's order is SQLite's, on both).
func testOrder_NullsFirst(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	runID, links, target := archiveRun(t, db)
	withLink := audit.Drift{RunID: runID, LinkID: links[1], TargetID: target, Kind: "first-seen", ReferenceURL: "r1",
		LiveURL: "l1", SimHashDistance: 1, Band: audit.BandMinor}
	without := audit.Drift{RunID: runID, TargetID: target, Kind: "first-seen", ReferenceURL: "r2", LiveURL: "l2",
		SimHashDistance: 2, Band: audit.BandMinor}
	if err := db.SaveDrifts(ctx, []audit.Drift{withLink, without}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Drifts(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].LinkID != 0 || got[1].LinkID != links[1] {
		t.Errorf("Drifts = %+v, want the one without a link first", got)
	}

	fails := []audit.DriftFailure{
		{RunID: runID, LinkID: links[0], TargetID: target, Kind: "memento", Reason: "with link"},
		{RunID: runID, TargetID: target, Kind: "first-seen", Reason: "without link"},
	}
	if err := db.SaveDriftFailures(ctx, fails); err != nil {
		t.Fatal(err)
	}
	gotF, err := db.DriftFailures(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(gotF) != 2 || gotF[0].LinkID != 0 || gotF[1].LinkID != links[0] {
		t.Errorf("DriftFailures = %+v, want the one without a link first", gotF)
	}
}
