package audit

import (
	"reflect"
	"testing"
)

func TestDiffChecks(t *testing.T) {
	from := []Check{
		{TargetID: 1, URL: "https://a/ok-then-404", Verdict: VerdictOK},
		{TargetID: 2, URL: "https://a/404-then-ok", Verdict: VerdictNotFound},
		{TargetID: 3, URL: "https://a/404-both", Verdict: VerdictNotFound},
		{TargetID: 4, URL: "https://a/timeout-then-moved", Verdict: VerdictTimeout},
		{TargetID: 5, URL: "https://a/moved-both", Verdict: VerdictMoved},
		{TargetID: 6, URL: "https://a/404-then-blocked", Verdict: VerdictNotFound},
		{TargetID: 7, URL: "https://a/gone-from-site", Verdict: VerdictGone},
	}
	to := []Check{
		{TargetID: 1, URL: "https://a/ok-then-404", Verdict: VerdictNotFound, Status: 404},
		{TargetID: 2, URL: "https://a/404-then-ok", Verdict: VerdictOK, Status: 200},
		{TargetID: 3, URL: "https://a/404-both", Verdict: VerdictGone, Status: 410},
		{TargetID: 4, URL: "https://a/timeout-then-moved", Verdict: VerdictMoved, Replacement: "https://a/new"},
		{TargetID: 5, URL: "https://a/moved-both", Verdict: VerdictMoved},
		{TargetID: 6, URL: "https://a/404-then-blocked", Verdict: VerdictBlocked},
		{TargetID: 8, URL: "https://a/new-link-dead", Verdict: VerdictDNSError},
	}
	d := DiffChecks(from, to, map[int64]int{1: 3})
	ids := func(cs []Change) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.TargetID)
		}
		return out
	}
	// Ordered by URL: /new-link-dead < /ok-then-404.
	if got, want := ids(d.NewBroken), []int64{8, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("NewBroken = %v, want %v", got, want)
	}
	if got, want := ids(d.Recovered), []int64{2, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("Recovered = %v, want %v", got, want)
	}
	if got, want := ids(d.NewlyMoved), []int64{4}; !reflect.DeepEqual(got, want) {
		t.Errorf("NewlyMoved = %v, want %v", got, want)
	}
	nb := d.NewBroken[1]
	if nb.Previous != VerdictOK || nb.Status != 404 || nb.Pages != 3 {
		t.Errorf("change = %+v", nb)
	}
	if d.NewBroken[0].Previous != "" {
		t.Errorf("a target not checked before has Previous %q", d.NewBroken[0].Previous)
	}
	if d.Empty() {
		t.Error("Empty() on a diff with changes")
	}

	// Without an earlier run everything broken is new.
	d = DiffChecks(nil, to, nil)
	if got, want := ids(d.NewBroken), []int64{3, 8, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("NewBroken without a previous run = %v, want %v", got, want)
	}
	if len(d.Recovered) != 0 {
		t.Errorf("Recovered without a previous run = %v", d.Recovered)
	}
	if e := DiffChecks(to, to, nil); !e.Empty() {
		t.Errorf("a run compared with itself: %+v", e)
	}
}

func TestDriftRank(t *testing.T) {
	bands := []string{"", BandUnchanged, BandMinor, BandMajor, BandOffTopic}
	for i, b := range bands {
		if DriftRank(b) != i {
			t.Errorf("DriftRank(%q) = %d, want %d", b, DriftRank(b), i)
		}
	}
	if DriftRank("weird") != 0 {
		t.Error("unknown band ranks above none")
	}
}
