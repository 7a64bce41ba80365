package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

func testCheckedTargetIDs(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	const a, b, c = "https://example.com/a", "https://example.com/b", "https://example.com/c"
	runID, ids := linkedRun(t, db, a, b, c)
	other, _ := linkedRun(t, db, a, b, c)
	mustSaveChecks(t, db,
		audit.Check{RunID: runID, TargetID: ids[a], Verdict: audit.VerdictOK},
		audit.Check{RunID: runID, TargetID: ids[c], Verdict: audit.VerdictTimeout},
		audit.Check{RunID: other, TargetID: ids[b], Verdict: audit.VerdictOK},
	)
	got, err := db.CheckedTargetIDs(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int64]bool{ids[a]: true, ids[c]: true}; !maps.Equal(got, want) {
		t.Errorf("CheckedTargetIDs = %v, want %v", got, want)
	}
}

func testChecks_UnknownRun(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	for name, call := range map[string]func() error{
		"Checks":           func() error { _, err := db.Checks(ctx, 42); return err },
		"CheckedTargetIDs": func() error { _, err := db.CheckedTargetIDs(ctx, 42); return err },
		"PreviousChecks":   func() error { _, err := db.PreviousChecks(ctx, 42, []int64{1}, 0, time.Now()); return err },
		"LinkRefs":         func() error { _, err := db.LinkRefs(ctx, 42); return err },
		"Findings":         func() error { _, err := db.Findings(ctx, 42); return err },
		"Maintenance":      func() error { _, err := db.Maintenance(ctx, 42); return err },
		"VerdictCounts":    func() error { _, err := db.VerdictCounts(ctx, 42); return err },
		"TopBroken":        func() error { _, err := db.TopBroken(ctx, 42, 10); return err },
		"SaveFindings": func() error {
			return db.SaveFindings(ctx, []audit.Finding{{RunID: 42, Verdict: audit.VerdictOK}})
		},
		"SaveMaintenance": func() error {
			return db.SaveMaintenance(ctx, []audit.Maintenance{{RunID: 42}})
		},
	} {
		if err := call(); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("%s(run 42): %v, want ErrNotFound", name, err)
		}
	}

	// An existing run with nothing recorded yields nothing, without error.
	runID := mustCreateRun(t, db)
	if c, err := db.Checks(ctx, runID); err != nil || c != nil {
		t.Errorf("Checks of an empty run = %v, %v", c, err)
	}
	if ids, err := db.CheckedTargetIDs(ctx, runID); err != nil || ids == nil || len(ids) != 0 {
		t.Errorf("CheckedTargetIDs of an empty run = %v, %v", ids, err)
	}
	if m, err := db.PreviousChecks(ctx, runID, nil, 0, time.Now()); err != nil || m == nil || len(m) != 0 {
		t.Errorf("PreviousChecks without IDs = %v, %v", m, err)
	}
	if counts, err := db.VerdictCounts(ctx, runID); err != nil || counts == nil || len(counts) != 0 {
		t.Errorf("VerdictCounts of an empty run = %v, %v", counts, err)
	}
	if top, err := db.TopBroken(ctx, runID, 0); err != nil || top != nil {
		t.Errorf("TopBroken of an empty run = %v, %v", top, err)
	}
}

// testPreviousChecks_Many looks up more IDs than any chunk or variable
// limit, with history for every other target.
func testPreviousChecks_Many(t *testing.T, open Opener) {
	const n = 1200
	ctx := context.Background()
	db := open(t)
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://example.com/many/%04d", i)
	}
	r1, ids := linkedRun(t, db, urls...)
	cur := mustCreateRun(t, db)
	var checks []audit.Check
	targetIDs := make([]int64, n)
	for i, u := range urls {
		targetIDs[i] = ids[u]
		if i%2 == 0 {
			checks = append(checks, audit.Check{RunID: r1, TargetID: ids[u], URL: u, Verdict: audit.VerdictOK, Words: i})
		}
	}
	mustSaveChecks(t, db, checks...)
	got, err := db.PreviousChecks(ctx, cur, targetIDs, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n/2 {
		t.Errorf("got %d previous checks, want %d", len(got), n/2)
	}
	for i, u := range urls {
		c, ok := got[ids[u]]
		if ok != (i%2 == 0) {
			t.Errorf("%s: found = %v", u, ok)
			continue
		}
		if ok && (c.URL != u || c.Words != i || c.TargetID != ids[u]) {
			t.Errorf("%s: got check of %s, words %d", u, c.URL, c.Words)
		}
	}
}

func testReplaceFindings(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	r := &audit.Run{StartedAt: time.Now(), Mode: "site", Version: "test"}
	if err := db.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	f := audit.Finding{RunID: r.ID, PageURL: "https://ex.org/", Target: "https://ex.org/x", Verdict: audit.VerdictNotFound, Message: "gone"}
	for i := 0; i < 2; i++ { // re-deriving must not duplicate
		if err := db.ReplaceFindings(ctx, r.ID, []audit.Finding{f, f}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.Findings(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("%d findings after replacing twice, want 2", len(got))
	}
	other := f
	other.RunID = r.ID + 1
	if err := db.ReplaceFindings(ctx, r.ID, []audit.Finding{other}); err == nil {
		t.Error("a finding of another run was accepted")
	}
	if got, _ := db.Findings(ctx, r.ID); len(got) != 2 {
		t.Errorf("failed replace changed the findings: %d", len(got))
	}
}
