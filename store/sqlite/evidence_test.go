package sqlite

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// evidencePage is a crawled 2xx HTML page with evidence.
func evidencePage(u string) *audit.Page {
	p := fullPage(u)
	p.Evidence = &audit.PageEvidence{
		Headers:      map[string]string{"Content-Type": "text/html; charset=utf-8", "ETag": `"v1"`},
		ETag:         `"v1"`,
		LastModified: "Mon, 02 Jan 2006 15:04:05 GMT",
		HTML:         true,
		BodyCap:      2 << 20, BodyBytes: 4321, BodyTruncated: true,
		SHA256:     strings.Repeat("ab", 32),
		SimHash:    1<<63 | 5, // a bit pattern the driver cannot take as uint64
		Words:      12345,
		Anchors:    []string{"top", "s&1", "ünï"},
		Text:       strings.Repeat("word ", 2000) + "last",
		TextCapped: true,
		Signals: &audit.PageSignals{Title: `Page "not" found <b>`, H1: []string{"Fehler 404", "页面不存在"},
			Parking: []string{"infra:sedoparking.com", "link:dan.com/buy-domain"}},
	}
	return p
}

func TestEvidence_RoundTrip(t *testing.T) { forEachBackend(t, testEvidence_RoundTrip) }

func testEvidence_RoundTrip(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	withEv := evidencePage("https://example.org/")
	gone := notFoundPage("https://example.org/gone")
	gone.Evidence = &audit.PageEvidence{Headers: map[string]string{"Server": "x"}, Challenge: "cf-mitigated: challenge"}
	down := failedPage("https://example.org/down") // no evidence
	mustSave(t, db, runID, withEv, gone, down)

	// Pages reads everything back.
	diffPages(t, mustPages(t, db, runID), []*audit.Page{withEv, gone, down})

	// PageResponses: no links, no anchors or text.
	resp, err := db.PageResponses(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp) != 3 {
		t.Fatalf("%d page responses", len(resp))
	}
	r := resp[0]
	if r.URL != withEv.URL || r.RequestURL != withEv.RequestURL || r.Status != withEv.Status ||
		!r.FetchedAt.Equal(withEv.FetchedAt) || r.Duration != withEv.Duration.Truncate(time.Millisecond) ||
		!reflect.DeepEqual(r.Redirects, withEv.Redirects) || len(r.Links) != 0 {
		t.Errorf("page response = %+v", r)
	}
	want := *withEv.Evidence
	want.Anchors, want.Text = nil, ""
	if r.Evidence == nil || !reflect.DeepEqual(*r.Evidence, want) {
		t.Errorf("evidence without content = %+v, want %+v", r.Evidence, want)
	}
	if resp[1].Evidence == nil || resp[1].Evidence.Challenge != "cf-mitigated: challenge" || resp[2].Evidence != nil {
		t.Errorf("other evidence = %+v, %+v", resp[1].Evidence, resp[2].Evidence)
	}

	// PageContent: the anchors and text of one page.
	anchors, text, err := db.PageContent(ctx, runID, withEv.URL)
	if err != nil || !reflect.DeepEqual(anchors, withEv.Evidence.Anchors) || text != withEv.Evidence.Text {
		t.Errorf("content = %q, %d bytes of text, %v", anchors, len(text), err)
	}
	if _, _, err := db.PageContent(ctx, runID, down.URL); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("content of a page without evidence: %v, want ErrNotFound", err)
	}
	// The text is stored compressed.
	if n := count(t, db, `SELECT length(text) FROM page_evidence WHERE length(text) > 0`); n <= 0 || n >= len(withEv.Evidence.Text)/4 {
		t.Errorf("stored text is %d bytes for %d", n, len(withEv.Evidence.Text))
	}
	// Rows go with their run.
	mustCreateRun(t, db)
	if res, err := db.Prune(ctx, store.PruneOptions{Keep: 1}); err != nil || len(res.Runs) != 1 || res.Runs[0] != runID {
		t.Fatalf("prune = %+v, %v", res, err)
	}
	if n := count(t, db, `SELECT count(*) FROM page_evidence`); n != 0 {
		t.Errorf("%d evidence rows left after the run was deleted", n)
	}
}

func TestChecks_FromCrawl(t *testing.T) { forEachBackend(t, testChecks_FromCrawl) }

func testChecks_FromCrawl(t *testing.T) {
	db := MustOpen(t)
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

func TestChecks_MarksReplacedInBatch(t *testing.T) {
	forEachBackend(t, testChecks_MarksReplacedInBatch)
}

// testChecks_MarksReplacedInBatch: from_crawl and soft404_signals are
// those of the check saved last, also when it replaces one of the same
// batch, and a check of another run of the same target is a check of its
// own.
func testChecks_MarksReplacedInBatch(t *testing.T) {
	db := MustOpen(t)
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
