package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// testEarlierFingerprints: only references from earlier runs.
func testEarlierFingerprints(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	run1, _, target := archiveRun(t, db)
	mustSaveChecks(t, db, audit.Check{RunID: run1, TargetID: target, Verdict: audit.VerdictOK, SHA256: "aa", Words: 3, CheckedAt: utc(2024, 1, 1, 0, 0, 0, 0)})
	if got, err := db.EarlierFingerprints(ctx, run1); err != nil || len(got) != 0 {
		t.Errorf("EarlierFingerprints(first run) = %+v, %v, want none", got, err)
	}
	run2, _, _ := archiveRun(t, db)
	mustSaveChecks(t, db, audit.Check{RunID: run2, TargetID: target, Verdict: audit.VerdictOK, SHA256: "bb", Words: 3, CheckedAt: utc(2024, 6, 1, 0, 0, 0, 0)})
	if got, err := db.EarlierFingerprints(ctx, run2); err != nil || got[target] == nil || got[target].RunID != run1 {
		t.Errorf("EarlierFingerprints(second run) = %+v, %v, want run %d's", got, err, run1)
	}
	// The first run again: run 2's check is later, not a reference.
	if got, err := db.EarlierFingerprints(ctx, run1); err != nil || len(got) != 0 {
		t.Errorf("EarlierFingerprints(first run, after a second) = %+v, %v, want none", got, err)
	}
	if _, err := db.EarlierFingerprints(ctx, 9999); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("EarlierFingerprints(unknown run) = %v, want ErrNotFound", err)
	}
}

// testEarlierFingerprintsNoFingerprintBefore: an earlier run whose checks
// have no fingerprint (a failed fetch) gives no reference, and the run's
// own earliest fingerprints are not references either.
func testEarlierFingerprintsNoFingerprintBefore(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	run1, _, target := archiveRun(t, db)
	mustSaveChecks(t, db, audit.Check{RunID: run1, TargetID: target, Verdict: audit.VerdictNotFound, Status: 404, CheckedAt: utc(2024, 1, 1, 0, 0, 0, 0)})
	run2, _, _ := archiveRun(t, db)
	mustSaveChecks(t, db, audit.Check{RunID: run2, TargetID: target, Verdict: audit.VerdictOK, SHA256: "bb", Words: 3, CheckedAt: utc(2024, 6, 1, 0, 0, 0, 0)})
	if got, err := db.EarlierFingerprints(ctx, run2); err != nil || len(got) != 0 {
		t.Errorf("EarlierFingerprints = %+v, %v, want none (run 1 fingerprinted nothing)", got, err)
	}
	if got, err := db.FirstFingerprints(ctx, run2); err != nil || got[target] == nil || got[target].RunID != run2 {
		t.Errorf("FirstFingerprints = %+v, %v, want run %d's own", got, err, run2)
	}
	run3, _, _ := archiveRun(t, db)
	mustSaveChecks(t, db, audit.Check{RunID: run3, TargetID: target, Verdict: audit.VerdictOK, SHA256: "cc", Words: 3, CheckedAt: utc(2024, 9, 1, 0, 0, 0, 0)})
	if got, err := db.EarlierFingerprints(ctx, run3); err != nil || got[target] == nil || got[target].RunID != run2 {
		t.Errorf("EarlierFingerprints(third run) = %+v, %v, want run %d's", got, err, run2)
	}
}

// testFirstFingerprints: the reference of first-seen drift is the earliest
// fingerprinted check of each target of the run, from any run up to it.
func testFirstFingerprints(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	run1, _, target := archiveRun(t, db)
	run2, _, target2 := archiveRun(t, db)
	if target != target2 {
		t.Fatalf("targets differ across runs: %d, %d", target, target2)
	}
	mustSaveChecks(t, db,
		audit.Check{RunID: run1, TargetID: target, Verdict: audit.VerdictTimeout, CheckedAt: utc(2024, 1, 1, 0, 0, 0, 0)},
		audit.Check{RunID: run2, TargetID: target, Verdict: audit.VerdictOK, SHA256: "bb", SimHash: 1 << 63, Words: 9, CheckedAt: utc(2024, 6, 1, 0, 0, 0, 0)},
	)
	got, err := db.FirstFingerprints(ctx, run2)
	// run1's check has no fingerprint: run2's own is the first.
	if err != nil || got[target] == nil || got[target].RunID != run2 || got[target].SimHash != 1<<63 {
		t.Fatalf("FirstFingerprints = %+v, %v", got, err)
	}
	run3, _, _ := archiveRun(t, db)
	mustSaveChecks(t, db, audit.Check{RunID: run3, TargetID: target, Verdict: audit.VerdictOK, SHA256: "cc", Words: 3, CheckedAt: utc(2025, 1, 1, 0, 0, 0, 0)})
	got, err = db.FirstFingerprints(ctx, run3)
	if err != nil || got[target] == nil || got[target].RunID != run2 || got[target].SHA256 != "bb" {
		t.Errorf("FirstFingerprints(run3) = %+v, %v", got[target], err)
	}
	seen, err := db.TargetsFirstSeen(ctx, run3)
	if err != nil || seen[target].IsZero() {
		t.Errorf("TargetsFirstSeen = %v, %v", seen, err)
	}
}
