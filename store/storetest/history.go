package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func testHistory_Errors(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	if _, err := db.ApplyHistory(ctx, 99, audit.DefaultConfirmRule); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("ApplyHistory(unknown) = %v", err)
	}
	if _, err := db.Diff(ctx, 0, 99); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("Diff(unknown) = %v", err)
	}
	run := mustCreateRun(t, db)
	if _, err := db.PreviousRun(ctx, run); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("PreviousRun of the first run = %v", err)
	}
	d, err := db.SinceLastRun(ctx, run)
	if err != nil || d.From != 0 || !d.Empty() {
		t.Errorf("SinceLastRun of an empty first run = %+v, %v", d, err)
	}
	if h, err := db.TargetHistories(ctx, nil); err != nil || len(h) != 0 {
		t.Errorf("TargetHistories(nil) = %v, %v", h, err)
	}
}
