package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// testClearFirstSeenDrift removes only first-seen drift of the run.
func testClearFirstSeenDrift(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	runID, links, target := archiveRun(t, db)
	if err := db.SaveDrifts(ctx, []audit.Drift{
		{RunID: runID, LinkID: links[0], TargetID: target, Kind: "memento", Band: audit.BandMinor},
		{RunID: runID, TargetID: target, Kind: "first-seen", Band: audit.BandMajor},
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.ClearFirstSeenDrift(ctx, runID); err != nil {
		t.Fatal(err)
	}
	got, err := db.Drifts(ctx, runID)
	if err != nil || len(got) != 1 || got[0].Kind != "memento" {
		t.Errorf("Drifts after ClearFirstSeenDrift = %+v, %v", got, err)
	}
	if err := db.ClearFirstSeenDrift(ctx, 999); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
}
