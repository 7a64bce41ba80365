package audit

import (
	"slices"
	"strings"
)

// Change is one target in a RunDiff: what it is in the newer run and what
// it was in the older one.
type Change struct {
	TargetID int64  `json:"target_id"`
	URL      string `json:"url"`
	// Verdict and Status are the target's check in the newer run;
	// Previous is its verdict in the older run ("" when it was not
	// checked there).
	Verdict  Verdict `json:"verdict"`
	Status   int     `json:"status,omitempty"`
	Previous Verdict `json:"previous,omitempty"`
	// Replacement is the new URL of a moved target.
	Replacement string `json:"replacement,omitempty"`
	// Band and PreviousBand are drift bands (BandMinor, ...) for drift
	// changes.
	Band         string `json:"band,omitempty"`
	PreviousBand string `json:"previous_band,omitempty"`
	// Pages is the number of pages of the newer run linking to the target.
	Pages int `json:"pages"`
}

// RunDiff is what changed between two runs of a site: the answer to "what
// is new since last time". Each list is ordered by URL.
type RunDiff struct {
	// From is the older run (0 when there is none: everything is new),
	// To the newer one.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// NewBroken are targets broken (Verdict.Broken) in To that were not
	// broken, or not checked, in From.
	NewBroken []Change `json:"new_broken"`
	// NewlyConfirmed are targets broken in To whose failure was confirmed
	// (ConfirmRule) by a run after From, up to To.
	NewlyConfirmed []Change `json:"newly_confirmed"`
	// Recovered are targets broken in From that answer again in To
	// (Outcome OK).
	Recovered []Change `json:"recovered"`
	// NewlyMoved are targets permanently redirected in To that were not
	// in From.
	NewlyMoved []Change `json:"newly_moved"`
	// NewlyDrifted are targets whose drift band in To is major or
	// off-topic and was lower (or not measured) in From. DriftAvailable is
	// false when To holds no drift measurements (the archives stage was
	// off, is missing from the database, or found nothing to measure): then
	// NewlyDrifted is empty for want of data, not because nothing drifted.
	NewlyDrifted   []Change `json:"newly_drifted"`
	DriftAvailable bool     `json:"drift_available"`
}

// Empty reports whether nothing changed for the worse or the better.
func (d *RunDiff) Empty() bool {
	return len(d.NewBroken) == 0 && len(d.NewlyConfirmed) == 0 && len(d.Recovered) == 0 &&
		len(d.NewlyMoved) == 0 && len(d.NewlyDrifted) == 0
}

// DiffChecks compares the checks of two runs and fills NewBroken,
// Recovered and NewlyMoved of a RunDiff (the parts that follow from the
// checks alone). from may be empty (no earlier run). pages gives the
// number of pages of the newer run linking to a target ID (nil: 0). Checks
// are matched by TargetID.
func DiffChecks(from, to []Check, pages map[int64]int) RunDiff {
	before := make(map[int64]*Check, len(from))
	for i := range from {
		before[from[i].TargetID] = &from[i]
	}
	var d RunDiff
	for i := range to {
		c := &to[i]
		p := before[c.TargetID]
		ch := Change{TargetID: c.TargetID, URL: c.URL, Verdict: c.Verdict, Status: c.Status,
			Replacement: c.Replacement, Pages: pages[c.TargetID]}
		if p != nil {
			ch.Previous = p.Verdict
		}
		switch {
		case c.Verdict.Broken() && (p == nil || !p.Verdict.Broken()):
			d.NewBroken = append(d.NewBroken, ch)
		case p != nil && p.Verdict.Broken() && Classify(c.Verdict) == OutcomeOK:
			d.Recovered = append(d.Recovered, ch)
		}
		if c.Verdict == VerdictMoved && (p == nil || p.Verdict != VerdictMoved) {
			d.NewlyMoved = append(d.NewlyMoved, ch)
		}
	}
	for _, l := range [][]Change{d.NewBroken, d.Recovered, d.NewlyMoved} {
		SortChanges(l)
	}
	return d
}

// SortChanges orders changes by URL, then target ID.
func SortChanges(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int {
		if c := strings.Compare(a.URL, b.URL); c != 0 {
			return c
		}
		return int(a.TargetID - b.TargetID)
	})
}

// DriftRank orders drift bands from none (0) to off-topic (4); an unknown
// band ranks 0.
func DriftRank(band string) int {
	switch band {
	case BandUnchanged:
		return 1
	case BandMinor:
		return 2
	case BandMajor:
		return 3
	case BandOffTopic:
		return 4
	}
	return 0
}
