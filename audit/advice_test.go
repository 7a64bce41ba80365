package audit

import (
	"strings"
	"testing"
)

// TestFixAdvice: a parked target's findings carry the fix of a parked
// domain after the reason; other verdicts' messages are their reasons.
func TestFixAdvice(t *testing.T) {
	for _, v := range Verdicts {
		a := FixAdvice(v)
		if (a != "") != (v == VerdictParked) {
			t.Errorf("FixAdvice(%s) = %q", v, a)
		}
	}
	parked := &Check{URL: "https://old-trails.example/a", Verdict: VerdictParked, Status: 200,
		Reason: "parked domain (score 2.40 ≥ 1; parking service): parked (html): parking code from sedoparking.com +0.80"}
	fs, _ := LinkFindings(1, LinkUse{LinkID: 3, PageURL: "https://site.example/"}, parked, nil)
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	msg := fs[0].Message
	if !strings.HasPrefix(msg, parked.Reason+". Fix: ") || !strings.Contains(msg, "will not come back") || !strings.Contains(msg, "archived copy") {
		t.Errorf("message %q", msg)
	}
	soft := &Check{URL: "https://site.example/gone", Verdict: VerdictSoft404, Status: 200, Reason: "soft 404 (score 1.10 ≥ 1): words"}
	if got := VerdictMessage(soft); got != soft.Reason {
		t.Errorf("soft-404 message %q", got)
	}
	if got := VerdictMessage(&Check{Verdict: VerdictParked, Status: 200}); !strings.HasPrefix(got, "parked (HTTP 200). Fix: the domain is parked") {
		t.Errorf("parked message without a reason %q", got)
	}
}
