package audit

import (
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	want := map[Verdict]Outcome{
		VerdictOK: OutcomeOK, VerdictRedirected: OutcomeOK, VerdictMoved: OutcomeOK,
		VerdictNotFound: OutcomeHard, VerdictGone: OutcomeHard, VerdictClientError: OutcomeHard,
		VerdictDNSError: OutcomeHard, VerdictTLSError: OutcomeHard, VerdictTooManyRedirects: OutcomeHard,
		VerdictRedirectLoop: OutcomeHard, VerdictSoft404: OutcomeHard, VerdictRedirectToRoot: OutcomeHard, VerdictParked: OutcomeHard,
		VerdictFragmentMissing: OutcomeHard, VerdictInvalidURL: OutcomeHard,
		VerdictTimeout: OutcomeTransient, VerdictServerError: OutcomeTransient,
		VerdictConnectionError: OutcomeTransient,
		// Not broken: linkrot could not tell.
		VerdictRateLimited: OutcomeUnknown, VerdictBlocked: OutcomeUnknown,
		VerdictSkipped: OutcomeUnknown, VerdictRefused: OutcomeUnknown,
	}
	for _, v := range Verdicts {
		got, ok := want[v]
		if !ok {
			t.Errorf("verdict %s has no expected outcome in this test", v)
			continue
		}
		if Classify(v) != got {
			t.Errorf("Classify(%s) = %d, want %d", v, Classify(v), got)
		}
	}
}

func TestTargetHistory_Next(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 3, 0, 0, 0, time.UTC)
	hour := time.Hour
	// obs is one run's check of the target: hours after t0 and verdict.
	type obs struct {
		h      float64
		v      Verdict
		reused bool
	}
	type want struct {
		failedRuns, hard int
		confirmed        bool
		confirmedRun     int64
		recovered        bool
		failingSinceRun  int64
		lastOKRun        int64 // run of LastOK, 0: never
	}
	def := DefaultConfirmRule
	tests := []struct {
		name string
		rule ConfirmRule
		runs []obs
		want want
	}{
		{"NeverChecked", def, nil, want{}},
		{"OK", def, []obs{{0, VerdictOK, false}}, want{lastOKRun: 1}},
		{"OneFailureNotConfirmed", def, []obs{{0, VerdictNotFound, false}},
			want{failedRuns: 1, hard: 1, failingSinceRun: 1}},
		{"TwoFailuresSpaced", def, []obs{{0, VerdictNotFound, false}, {24, VerdictGone, false}},
			want{failedRuns: 2, hard: 2, confirmed: true, confirmedRun: 2, failingSinceRun: 1}},
		{"SpacingExactlyMet", def, []obs{{0, VerdictNotFound, false}, {12, VerdictNotFound, false}},
			want{failedRuns: 2, hard: 2, confirmed: true, confirmedRun: 2, failingSinceRun: 1}},
		// Two runs an hour apart are two failed runs but one counted failure.
		{"TwoFailuresTooClose", def, []obs{{0, VerdictNotFound, false}, {1, VerdictNotFound, false}},
			want{failedRuns: 2, hard: 1, failingSinceRun: 1}},
		// Spacing is measured from the last counted failure, not from the
		// last failure: 0 counts, 1 and 11 do not, 12 does.
		{"SpacingFromLastCounted", def, []obs{{0, VerdictNotFound, false}, {1, VerdictNotFound, false},
			{11, VerdictNotFound, false}, {12, VerdictNotFound, false}},
			want{failedRuns: 4, hard: 2, confirmed: true, confirmedRun: 4, failingSinceRun: 1}},
		{"ThreeLikeIABot", ConfirmRule{After: 3, Spacing: 24 * hour}, []obs{{0, VerdictNotFound, false},
			{24, VerdictNotFound, false}, {48, VerdictNotFound, false}},
			want{failedRuns: 3, hard: 3, confirmed: true, confirmedRun: 3, failingSinceRun: 1}},
		{"ZeroRuleConfirmsAtOnce", ConfirmRule{}, []obs{{0, VerdictDNSError, false}},
			want{failedRuns: 1, hard: 1, confirmed: true, confirmedRun: 1, failingSinceRun: 1}},
		// Transient failures never confirm by themselves.
		{"TransientNeverConfirms", def, []obs{{0, VerdictTimeout, false}, {24, VerdictServerError, false},
			{48, VerdictConnectionError, false}},
			want{failedRuns: 3, hard: 0, failingSinceRun: 1}},
		{"TransientNeverConfirmsZeroRule", ConfirmRule{}, []obs{{0, VerdictTimeout, false}},
			want{failedRuns: 1, failingSinceRun: 1}},
		// ... and never reset a streak of hard failures: 404, timeout, 404
		// confirms (the two 404s are 24h apart).
		{"TransientKeepsHardStreak", def, []obs{{0, VerdictNotFound, false}, {12, VerdictTimeout, false},
			{24, VerdictNotFound, false}},
			want{failedRuns: 3, hard: 2, confirmed: true, confirmedRun: 3, failingSinceRun: 1}},
		// A streak may start with a transient failure.
		{"StreakStartsTransient", def, []obs{{0, VerdictTimeout, false}, {24, VerdictNotFound, false},
			{48, VerdictNotFound, false}},
			want{failedRuns: 3, hard: 2, confirmed: true, confirmedRun: 3, failingSinceRun: 1}},
		// Unknown outcomes neither extend nor break a streak.
		{"BlockedIsNeutral", def, []obs{{0, VerdictNotFound, false}, {12, VerdictBlocked, false},
			{24, VerdictNotFound, false}},
			want{failedRuns: 2, hard: 2, confirmed: true, confirmedRun: 3, failingSinceRun: 1}},
		{"RateLimitedIsNeutral", def, []obs{{0, VerdictRateLimited, false}},
			want{}},
		// Recovery ends the streak and clears the confirmation.
		{"Recovery", def, []obs{{0, VerdictNotFound, false}, {24, VerdictNotFound, false}, {48, VerdictOK, false}},
			want{recovered: true, lastOKRun: 3}},
		{"RecoveryFromTransient", def, []obs{{0, VerdictTimeout, false}, {24, VerdictMoved, false}},
			want{recovered: true, lastOKRun: 2}},
		// A new failure after a recovery starts a new streak from zero.
		{"RelapseStartsOver", def, []obs{{0, VerdictNotFound, false}, {24, VerdictNotFound, false},
			{48, VerdictOK, false}, {72, VerdictNotFound, false}},
			want{failedRuns: 1, hard: 1, failingSinceRun: 4, lastOKRun: 3}},
		{"OKInsideStreakResetsCount", def, []obs{{0, VerdictNotFound, false}, {24, VerdictOK, false},
			{48, VerdictNotFound, false}},
			want{failedRuns: 1, hard: 1, failingSinceRun: 3, lastOKRun: 2}},
		// A reused result (--max-age, 304) is no new evidence.
		{"ReusedDoesNotCount", def, []obs{{0, VerdictNotFound, false}, {24, VerdictNotFound, true}},
			want{failedRuns: 2, hard: 1, failingSinceRun: 1}},
		// Once confirmed, further failures keep it confirmed at the
		// original run.
		{"StaysConfirmed", def, []obs{{0, VerdictGone, false}, {24, VerdictGone, false}, {48, VerdictTimeout, false},
			{72, VerdictGone, false}},
			want{failedRuns: 4, hard: 3, confirmed: true, confirmedRun: 2, failingSinceRun: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h TargetHistory
			okAt := map[int64]time.Time{}
			for i, o := range tt.runs {
				run := int64(i + 1)
				at := t0.Add(time.Duration(o.h * float64(hour)))
				okAt[run] = at
				h = h.Next(Check{RunID: run, TargetID: 7, Verdict: o.v, CheckedAt: at, Reused: o.reused}, tt.rule)
			}
			got := want{h.FailedRuns, h.HardFailures, h.Confirmed, h.ConfirmedRun, h.Recovered, h.FailingSinceRun, 0}
			for run, at := range okAt {
				if !h.LastOK.IsZero() && h.LastOK.Equal(at) {
					got.lastOKRun = run
				}
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v\nhistory %+v", got, tt.want, h)
			}
			if len(tt.runs) > 0 {
				if h.TargetID != 7 || !h.FirstSeen.Equal(t0) || h.LastRun != int64(len(tt.runs)) ||
					h.LastVerdict != tt.runs[len(tt.runs)-1].v {
					t.Errorf("bookkeeping wrong: %+v", h)
				}
			}
			if h.Failing() != (h.FailedRuns > 0) || (h.Failing() && h.FailingSince.IsZero()) {
				t.Errorf("FailingSince inconsistent: %+v", h)
			}
		})
	}
}

// TestTargetHistory_NextIdempotent checks that a run applied twice, or an
// older run applied after a newer one, changes nothing: what makes history
// safe to apply again after a resumed run.
func TestTargetHistory_NextIdempotent(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 3, 0, 0, 0, time.UTC)
	rule := DefaultConfirmRule
	var h TargetHistory
	h = h.Next(Check{RunID: 1, TargetID: 1, Verdict: VerdictNotFound, CheckedAt: t0}, rule)
	once := h
	for _, c := range []Check{
		{RunID: 1, TargetID: 1, Verdict: VerdictNotFound, CheckedAt: t0.Add(13 * time.Hour)},
		{RunID: 1, TargetID: 1, Verdict: VerdictOK, CheckedAt: t0.Add(14 * time.Hour)},
	} {
		if got := h.Next(c, rule); got != once {
			t.Errorf("re-applying run 1 changed the history:\n got %+v\nwant %+v", got, once)
		}
	}
	h = h.Next(Check{RunID: 3, TargetID: 1, Verdict: VerdictNotFound, CheckedAt: t0.Add(24 * time.Hour)}, rule)
	if !h.Confirmed {
		t.Fatalf("not confirmed after run 3: %+v", h)
	}
	if got := h.Next(Check{RunID: 2, TargetID: 1, Verdict: VerdictOK, CheckedAt: t0.Add(12 * time.Hour)}, rule); got != h {
		t.Errorf("an older run changed the history: %+v", got)
	}
}

func TestTargetHistory_FirstSeen(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 3, 0, 0, 0, time.UTC)
	h := TargetHistory{FirstSeen: t0.Add(-48 * time.Hour)}
	h = h.Next(Check{RunID: 1, Verdict: VerdictOK, CheckedAt: t0}, DefaultConfirmRule)
	if !h.FirstSeen.Equal(t0.Add(-48 * time.Hour)) {
		t.Errorf("FirstSeen moved forward: %v", h.FirstSeen)
	}
	if !h.LastOK.Equal(t0) || !h.LastChecked.Equal(t0) || h.Recovered {
		t.Errorf("after one OK: %+v", h)
	}
}
