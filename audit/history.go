package audit

import "time"

// ConfirmRule decides when a failing target is confirmed broken: after
// After hard failures in consecutive runs, each at least Spacing after the
// previous one that counted. It is the rule link-maintenance bots use
// (InternetArchiveBot declares a link dead after three failed checks), so
// that one flaky night raises no alarm.
//
// The zero value confirms a target at its first hard failure; the command
// line's defaults are DefaultConfirmRule.
type ConfirmRule struct {
	// After is the number of hard failures, in consecutive runs, that
	// confirm a target (values below 1 mean 1).
	After int
	// Spacing is the least time between two hard failures that both
	// count: a failure closer to the previous counted one keeps the streak
	// going but does not count again (0: every failure counts).
	Spacing time.Duration
}

// DefaultConfirmRule is linkrot's default: two failed runs at least 12 hours
// apart.
var DefaultConfirmRule = ConfirmRule{After: 2, Spacing: 12 * time.Hour}

// Outcome is what one check means for a target's history.
type Outcome int

// Outcomes of a check, from Classify.
const (
	// OutcomeUnknown: linkrot could not tell (blocked, rate-limited,
	// skipped, refused). It neither extends nor ends a failure streak.
	OutcomeUnknown Outcome = iota
	// OutcomeOK: the target answered (ok, redirected, moved). It ends a
	// failure streak.
	OutcomeOK
	// OutcomeTransient: a failure that may go away on its own (timeout,
	// 5xx, connection errors; Verdict.Transient). It extends a streak but
	// never counts toward confirmation and never ends a streak.
	OutcomeTransient
	// OutcomeHard: any other broken verdict (404, 410, DNS, TLS, soft-404,
	// ...). It counts toward confirmation.
	OutcomeHard
)

// Classify returns the outcome of a verdict.
func Classify(v Verdict) Outcome {
	switch {
	case v.Broken() && v.Transient():
		return OutcomeTransient
	case v.Broken():
		return OutcomeHard
	}
	switch v {
	case VerdictOK, VerdictRedirected, VerdictMoved:
		return OutcomeOK
	}
	return OutcomeUnknown
}

// TargetHistory is what linkrot knows about one target across runs. The
// zero value is a target never checked. Times are in UTC; a zero time
// means "never".
type TargetHistory struct {
	TargetID int64 `json:"target_id"`
	// FirstSeen is when linkrot first saw a link to the target.
	FirstSeen time.Time `json:"first_seen"`
	// LastChecked and LastRun are the check and run last applied;
	// LastVerdict is that check's verdict.
	LastChecked time.Time `json:"last_checked"`
	LastRun     int64     `json:"last_run"`
	LastVerdict Verdict   `json:"last_verdict,omitempty"`
	// LastOK is the last check with an OK outcome.
	LastOK time.Time `json:"last_ok"`

	// FailingSince is the first failure (hard or transient) of the
	// current streak; FailingSinceRun its run. Both are zero when the
	// target is not failing.
	FailingSince    time.Time `json:"failing_since"`
	FailingSinceRun int64     `json:"failing_since_run,omitempty"`
	// FailedRuns is the number of consecutive runs in which the target
	// failed, hard or transient, in the current streak. Runs with an
	// unknown outcome are not counted and do not break the streak.
	FailedRuns int `json:"failed_runs"`
	// HardFailures is the number of hard failures of the streak that
	// count toward confirmation (spaced by ConfirmRule.Spacing), the last
	// of them at LastCounted.
	HardFailures int       `json:"hard_failures"`
	LastCounted  time.Time `json:"last_counted"`

	// Confirmed is true once the streak met the ConfirmRule; ConfirmedAt
	// and ConfirmedRun say when. A confirmed target stays confirmed until
	// an OK check ends the streak.
	Confirmed    bool      `json:"confirmed"`
	ConfirmedAt  time.Time `json:"confirmed_at"`
	ConfirmedRun int64     `json:"confirmed_run,omitempty"`

	// Recovered is true when the last conclusive check was OK after a
	// failure streak; RecoveredAt and RecoveredRun say when the streak
	// ended. A new failure clears Recovered.
	Recovered    bool      `json:"recovered"`
	RecoveredAt  time.Time `json:"recovered_at"`
	RecoveredRun int64     `json:"recovered_run,omitempty"`
}

// Failing reports whether the target is in a failure streak.
func (h TargetHistory) Failing() bool { return h.FailedRuns > 0 }

// Next returns the history after check c, under rule. It is a pure
// function of h, c and rule.
//
// A check of a run not newer than the last one applied (c.RunID <=
// h.LastRun, both non-zero) is ignored and h is returned unchanged, so
// applying a run twice, or an older run after a newer one, counts nothing
// twice. c.CheckedAt is the time of the observation; a reused check
// (c.Reused: the result of an earlier run, or a 304 Not Modified) extends
// a streak but never counts toward confirmation, since it is not new
// evidence of failure.
//
// The rules:
//   - OK ends the streak: FailedRuns, HardFailures and FailingSince are
//     cleared, Confirmed too, and if the target was failing it Recovered.
//   - A transient failure extends the streak (FailedRuns+1) but never
//     counts toward confirmation and never clears HardFailures.
//   - A hard failure extends the streak and counts when it is the first
//     one counted or at least rule.Spacing after LastCounted; the streak
//     is confirmed when HardFailures reaches rule.After.
//   - An unknown outcome (blocked, rate-limited, skipped, refused) changes
//     only LastChecked, LastRun and LastVerdict.
func (h TargetHistory) Next(c Check, rule ConfirmRule) TargetHistory {
	if c.RunID != 0 && h.LastRun != 0 && c.RunID <= h.LastRun {
		return h
	}
	at := c.CheckedAt.UTC()
	if c.CheckedAt.IsZero() {
		at = time.Time{}
	}
	if h.TargetID == 0 {
		h.TargetID = c.TargetID
	}
	if h.FirstSeen.IsZero() || (!at.IsZero() && at.Before(h.FirstSeen)) {
		h.FirstSeen = at
	}
	h.LastChecked, h.LastRun, h.LastVerdict = at, c.RunID, c.Verdict

	switch Classify(c.Verdict) {
	case OutcomeOK:
		h.LastOK = at
		if h.Failing() {
			h.Recovered, h.RecoveredAt, h.RecoveredRun = true, at, c.RunID
		}
		h.FailingSince, h.FailingSinceRun = time.Time{}, 0
		h.FailedRuns, h.HardFailures, h.LastCounted = 0, 0, time.Time{}
		h.Confirmed, h.ConfirmedAt, h.ConfirmedRun = false, time.Time{}, 0
	case OutcomeTransient:
		h.fail(at, c.RunID)
	case OutcomeHard:
		h.fail(at, c.RunID)
		if !c.Reused && (h.HardFailures == 0 || at.Sub(h.LastCounted) >= rule.Spacing) {
			h.HardFailures++
			h.LastCounted = at
		}
		if !h.Confirmed && h.HardFailures >= max(rule.After, 1) {
			h.Confirmed, h.ConfirmedAt, h.ConfirmedRun = true, at, c.RunID
		}
	}
	return h
}

// fail extends (or starts) the failure streak.
func (h *TargetHistory) fail(at time.Time, runID int64) {
	if !h.Failing() {
		h.FailingSince, h.FailingSinceRun = at, runID
	}
	h.FailedRuns++
	h.Recovered = false
}
