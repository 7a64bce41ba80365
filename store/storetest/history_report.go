package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

func testTrend_TargetStatuses(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	const a, b = "https://example.org/a", "https://example.org/b"
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var runs []int64
	verdicts := [][2]audit.Verdict{
		{audit.VerdictOK, audit.VerdictOK},
		{audit.VerdictNotFound, audit.VerdictOK},
		{audit.VerdictGone, audit.VerdictTimeout},
	}
	for i, vs := range verdicts {
		run, ids := linkedRun(t, db, a, b)
		runs = append(runs, run)
		at := t0.Add(time.Duration(i) * 24 * time.Hour)
		mustSaveChecks(t, db,
			audit.Check{RunID: run, TargetID: ids[a], Verdict: vs[0], CheckedAt: at},
			audit.Check{RunID: run, TargetID: ids[b], Verdict: vs[1], CheckedAt: at})
	}

	trend, err := db.Trend(ctx, runs[2], 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(trend) != 3 {
		t.Fatalf("trend has %d runs, want 3", len(trend))
	}
	for i, want := range []int{0, 1, 2} {
		if trend[i].ID != runs[i] || trend[i].Broken != want || trend[i].Checked != 2 || trend[i].Links != 2 {
			t.Errorf("trend[%d] = %+v, want run %d with %d broken of 2", i, trend[i], runs[i], want)
		}
	}
	if trend, _ := db.Trend(ctx, runs[1], 1); len(trend) != 1 || trend[0].ID != runs[1] {
		t.Errorf("Trend(run 2, limit 1) = %+v", trend)
	}

	sts, err := db.TargetStatuses(ctx, runs[2], 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 2 {
		t.Fatalf("%d statuses, want 2", len(sts))
	}
	sa := sts[0]
	// The latest 2 runs: a was OK only in run 1, outside them.
	if sa.FirstSeenRun != runs[0] || sa.FirstBrokenRun != runs[1] || !sa.FirstBroken.Equal(t0.Add(24*time.Hour)) ||
		sa.LastOKRun != 0 || !sa.LastOK.IsZero() {
		t.Errorf("status of a in the latest 2 runs = %+v", sa)
	}
	if len(sa.Checks) != 2 || sa.Checks[0].RunID != runs[1] || sa.Checks[1].Verdict != audit.VerdictGone {
		t.Errorf("latest 2 checks of a = %+v", sa.Checks)
	}
	if sb := sts[1]; sb.FirstBrokenRun != runs[2] || sb.LastOKRun != runs[1] {
		t.Errorf("status of b = %+v (a timeout is broken; last OK in run 2)", sb)
	}
	sts, err = db.TargetStatuses(ctx, runs[2], 0)
	if err != nil {
		t.Fatal(err)
	}
	if sa := sts[0]; len(sa.Checks) != 3 || sa.LastOKRun != runs[0] || !sa.LastOK.Equal(t0) || sa.FirstBrokenRun != runs[1] {
		t.Errorf("status of a in every run = %+v", sa)
	}
	// A run of another site checking the same target is not part of
	// this site's history.
	other := &audit.Run{Mode: "site", Seeds: []string{"https://other.example/"}, Version: "test"}
	if err := db.CreateRun(ctx, other); err != nil {
		t.Fatal(err)
	}
	ids := linkTargets(t, db, other.ID, "https://other.example/", a)
	mustSaveChecks(t, db, audit.Check{RunID: other.ID, TargetID: ids[a], Verdict: audit.VerdictOK, CheckedAt: t0})
	if sts, err := db.TargetStatuses(ctx, other.ID, 0); err != nil || len(sts) != 1 || len(sts[0].Checks) != 1 {
		t.Errorf("statuses of the other site's run = %+v, %v; want its one check", sts, err)
	}
	// Earlier runs only: run 2's view knows nothing of run 3.
	sts, err = db.TargetStatuses(ctx, runs[1], 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts[0].Checks) != 2 || sts[1].FirstBrokenRun != 0 {
		t.Errorf("statuses as of run 2 = %+v", sts)
	}

	if _, err := db.Trend(ctx, 999, 0); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("Trend of an unknown run: %v", err)
	}
	if _, err := db.TargetStatuses(ctx, 999, 0); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("TargetStatuses of an unknown run: %v", err)
	}
}
