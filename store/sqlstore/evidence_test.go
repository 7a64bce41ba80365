package sqlstore

import (
	"context"
	"errors"
	"math/rand/v2"
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

// TestDeflateText_RoundTrip: the main text comes back as written through
// the compressor and compress/flate's reader, whatever it holds (empty,
// short, repetitive, random bytes, the largest stored), and a blob that
// inflates past the largest stored text is refused.
func TestDeflateText_RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 100_000)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	for _, text := range []string{"", "a", "words words words", strings.Repeat("the same paragraph again. ", 4000),
		string(random), strings.Repeat("x", maxStoredText)} {
		blob, err := deflateText(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := inflateText(blob)
		if err != nil || got != text {
			t.Errorf("text of %d bytes came back as %d bytes (%v)", len(text), len(got), err)
		}
	}
	blob, err := deflateText(strings.Repeat("y", maxStoredText+1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inflateText(blob); err == nil {
		t.Errorf("a blob inflating past %d bytes was read", maxStoredText)
	}
}
