package storetest

import (
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

func testChecks_FromCrawl(t *testing.T, open Opener) {
	db := open(t)
	runID, ids := linkedRun(t, db, "https://example.org/a", "https://example.org/b")
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	a := audit.Check{RunID: runID, TargetID: ids["https://example.org/a"], URL: "https://example.org/a", Verdict: audit.VerdictOK, Status: 200, CheckedAt: at, FromCrawl: true}
	b := audit.Check{RunID: runID, TargetID: ids["https://example.org/b"], URL: "https://example.org/b", Verdict: audit.VerdictNotFound, Status: 404, CheckedAt: at, Attempts: 1}
	mustSaveChecks(t, db, a, b)
	got := mustChecks(t, db, runID)
	diffChecks(t, got, []audit.Check{a, b})

	// Saved again without the mark (a resumed run fetched it), the row
	// loses it; saved again with it, it has it again.
	a2 := a
	a2.FromCrawl, a2.Attempts = false, 1
	mustSaveChecks(t, db, a2)
	if got := mustChecks(t, db, runID); got[0].FromCrawl {
		t.Errorf("replaced check still from the crawl: %+v", got[0])
	}
	mustSaveChecks(t, db, a)
	if got := mustChecks(t, db, runID); !got[0].FromCrawl || got[1].FromCrawl {
		t.Errorf("checks = %+v", got)
	}
}

// testChecks_MarksReplacedInBatch: from_crawl and soft404_signals are
// those of the check saved last, also when it replaces one of the same
// batch, and a check of another run of the same target is a check of its
// own.
func testChecks_MarksReplacedInBatch(t *testing.T, open Opener) {
	db := open(t)
	const u = "https://example.org/a"
	run1, ids := linkedRun(t, db, u)
	run2, ids2 := linkedRun(t, db, u)
	if ids[u] != ids2[u] {
		t.Fatalf("target IDs %d and %d", ids[u], ids2[u])
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	first := audit.Check{RunID: run1, TargetID: ids[u], URL: u, Verdict: audit.VerdictSoft404, Status: 200, CheckedAt: at, FromCrawl: true,
		Soft404: &audit.Soft404Evidence{ProbeURL: u + "x", ProbeStatus: 200, Similarity: 0.9, Score: 1,
			Signals: []audit.Soft404Signal{{Name: "probe", Score: 1}}}}
	second := first
	second.Soft404 = &audit.Soft404Evidence{ProbeURL: u + "y", ProbeStatus: 200, Similarity: 0.95, Score: 1.5,
		Signals: []audit.Soft404Signal{{Name: "probe", Score: 1}, {Name: "words", Score: 0.5}}}
	other := first
	other.RunID, other.FromCrawl, other.Soft404, other.Verdict = run2, false, nil, audit.VerdictOK
	mustSaveChecks(t, db, first, second, other)
	diffChecks(t, mustChecks(t, db, run1), []audit.Check{second})
	diffChecks(t, mustChecks(t, db, run2), []audit.Check{other})

	// Saved again in a later batch, then again with the marks.
	third := second
	third.FromCrawl, third.Soft404, third.Verdict = false, nil, audit.VerdictOK
	mustSaveChecks(t, db, third)
	diffChecks(t, mustChecks(t, db, run1), []audit.Check{third})
	mustSaveChecks(t, db, third, second)
	diffChecks(t, mustChecks(t, db, run1), []audit.Check{second})
	diffChecks(t, mustChecks(t, db, run2), []audit.Check{other})
}
