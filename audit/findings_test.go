package audit

import (
	"reflect"
	"testing"
)

func TestLinkFindings(t *testing.T) {
	ok := &Check{URL: "https://a.example/p", Verdict: VerdictOK, Status: 200}
	moved := &Check{URL: "https://a.example/old", Verdict: VerdictMoved, Replacement: "https://a.example/new",
		Redirects: []Redirect{{From: "https://a.example/old", To: "https://a.example/new", Status: 301}}, Status: 200}
	gone := &Check{URL: "https://a.example/g", Verdict: VerdictGone, Status: 410}
	dns := &Check{URL: "https://nx.example/", Verdict: VerdictDNSError, Reason: "no such host"}
	anchors := AnchorSet([]string{"intro", "Résumé"})
	link := LinkUse{LinkID: 7, PageURL: "https://a.example/"}
	tests := []struct {
		name    string
		l       LinkUse
		c       *Check
		anchors map[string]bool
		want    []Finding
		fix     *Maintenance
	}{
		{name: "NoCheck", l: link, c: nil},
		{name: "OK", l: link, c: ok, anchors: anchors},
		{name: "Gone", l: link, c: gone, want: []Finding{{RunID: 1, PageURL: "https://a.example/", LinkID: 7,
			Target: gone.URL, Verdict: VerdictGone, Message: "gone (HTTP 410)"}}},
		{name: "ReasonIsMessage", l: link, c: dns, want: []Finding{{RunID: 1, PageURL: "https://a.example/", LinkID: 7,
			Target: dns.URL, Verdict: VerdictDNSError, Message: "no such host"}}},
		{name: "Moved", l: link, c: moved, fix: &Maintenance{RunID: 1, Source: "https://a.example/", Target: moved.URL,
			Replacement: "https://a.example/new", Status: 301}},
		{name: "FragmentFound", l: LinkUse{LinkID: 7, PageURL: "https://a.example/", Fragment: "intro", WantFragment: true}, c: ok, anchors: anchors},
		// Percent-encoded fragments match their decoded id.
		{name: "FragmentEncoded", l: LinkUse{LinkID: 7, PageURL: "https://a.example/", Fragment: "R%C3%A9sum%C3%A9", WantFragment: true}, c: ok, anchors: anchors},
		// "top" scrolls to the top of any page (HTML standard).
		{name: "FragmentTop", l: LinkUse{LinkID: 7, PageURL: "https://a.example/", Fragment: "Top", WantFragment: true}, c: ok, anchors: anchors},
		{name: "FragmentMissing", l: LinkUse{LinkID: 7, PageURL: "https://a.example/", Fragment: "nope", WantFragment: true}, c: ok, anchors: anchors,
			want: []Finding{{RunID: 1, PageURL: "https://a.example/", LinkID: 7, Target: ok.URL, Verdict: VerdictFragmentMissing,
				Fragment: "nope", Message: `no element with id or name "nope" in the target page`}}},
		// Not wanted (another site without --check-external-fragments).
		{name: "FragmentNotWanted", l: LinkUse{LinkID: 7, PageURL: "https://a.example/", Fragment: "nope"}, c: ok, anchors: anchors},
		// Anchors unknown: no verdict on the fragment.
		{name: "AnchorsUnknown", l: LinkUse{LinkID: 7, PageURL: "https://a.example/", Fragment: "nope", WantFragment: true}, c: ok},
		// A broken target's fragment is not judged: the target finding says it all.
		{name: "FragmentOfBroken", l: LinkUse{LinkID: 7, PageURL: "https://a.example/", Fragment: "nope", WantFragment: true}, c: gone, anchors: anchors,
			want: []Finding{{RunID: 1, PageURL: "https://a.example/", LinkID: 7, Target: gone.URL, Verdict: VerdictGone, Message: "gone (HTTP 410)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fix := LinkFindings(1, tt.l, tt.c, tt.anchors)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings = %+v, want %+v", got, tt.want)
			}
			if !reflect.DeepEqual(fix, tt.fix) {
				t.Errorf("maintenance = %+v, want %+v", fix, tt.fix)
			}
		})
	}
}

func TestCheckCounts(t *testing.T) {
	var s CheckCounts
	for _, c := range []Check{{Verdict: VerdictOK}, {Verdict: VerdictOK, FromCrawl: true}, {Verdict: VerdictGone, Reused: true}, {Verdict: VerdictNotFound}} {
		s.Tally(&c)
	}
	s.Fragments = 2
	byTarget := map[Verdict]int{VerdictOK: 2, VerdictGone: 1, VerdictNotFound: 1}
	got := s.WithVerdicts(byTarget)
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"Targets", got.Targets, 4},
		{"Fetched", got.Fetched, 2},
		{"FromCrawl", got.FromCrawl, 1},
		{"Reused", got.Reused, 1},
		{"FragmentVerdict", got.Verdicts[VerdictFragmentMissing], 2},
		{"InputUnchanged", len(byTarget), 3},
		{"FailingNotFound", got.Failing(map[Verdict]bool{VerdictNotFound: true}), 1},
		{"FailingWithFragments", got.Failing(map[Verdict]bool{VerdictNotFound: true, VerdictFragmentMissing: true}), 3},
		{"FailingNone", got.Failing(nil), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %d, want %d", tt.got, tt.want)
			}
		})
	}
}
