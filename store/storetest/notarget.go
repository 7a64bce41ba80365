package storetest

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// testStore_LinksWithoutTarget: a run whose links include URLs that do
// not parse (stored without a target, one with a #fragment) is read by
// every stage's query without error: the findings stage's FindingLinks
// leaves them out and InvalidURLLinks gives exactly them with their
// diagnostic; an invalid-url finding is stored and read back; the
// archives stage's chunk reads take them as the target-less chunk and the
// last chunk may end at the largest int64; the dashboard's reads take
// them.
func testStore_LinksWithoutTarget(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	runID := mustCreateRun(t, db)
	const (
		ok   = "https://example.org/ok"
		gone = "https://example.org/gone"
	)
	invalid := func(href, reason string) audit.Link {
		return audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href, Text: href, Diagnostics: []audit.Diagnostic{
			{Field: "data-versiondate", Code: "versiondate-invalid", Message: "not a date"},
			{Field: "href", Code: audit.CodeInvalidURL, Message: `href="` + href + `" is not a valid URL: ` + reason},
		}}
	}
	link := func(href string) audit.Link {
		return audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href, Text: href}
	}
	// Not a URL either, but no invalid-url diagnostic on its own
	// attribute: no finding (the diagnostic names another field).
	other := audit.Link{Element: "a", Attr: "href", Href: "http://[::1/other", RawHref: "http://[::1/other", Diagnostics: []audit.Diagnostic{
		{Field: "data-originalurl", Code: audit.CodeInvalidURL, Message: "x"},
	}}
	page := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/", Links: []audit.Link{
		invalid("http://[::1#sec", "An IPv6 address is missing the closing U+005D (])"),
		link(ok + "#a"),
		invalid("http://example.com:99999/", "The input's port is outside the range [0-65535]"),
		link(gone),
		other,
		link(ok),
	}}, Status: 200}
	mustSave(t, db, runID, page)
	if missing, err := db.SaveChecksByURL(ctx, []audit.Check{
		{RunID: runID, URL: ok, Verdict: audit.VerdictOK, Status: 200},
		{RunID: runID, URL: gone, Verdict: audit.VerdictGone, Status: 410},
	}); err != nil || len(missing) != 0 {
		t.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
	}
	refs, err := db.LinkRefs(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	var noTarget []int64
	for _, l := range refs {
		if l.TargetID == 0 {
			noTarget = append(noTarget, l.LinkID)
		}
	}
	if len(noTarget) != 3 {
		t.Fatalf("%d links without a target, want 3: %+v", len(noTarget), refs)
	}

	// The findings stage.
	var hrefs []string
	err = db.FindingLinks(ctx, runID, nil, func(l audit.LinkRef, c *audit.Check) error {
		if l.TargetID == 0 || c == nil {
			t.Errorf("FindingLinks gave link %d without a target or check", l.LinkID)
		}
		hrefs = append(hrefs, l.Href)
		return nil
	})
	if err != nil {
		t.Fatalf("FindingLinks: %v", err)
	}
	if !slices.Equal(hrefs, []string{ok + "#a", gone}) && !slices.Equal(hrefs, []string{gone, ok + "#a"}) {
		t.Errorf("FindingLinks gave %q", hrefs)
	}
	var findings []audit.Finding
	err = db.InvalidURLLinks(ctx, runID, func(l audit.LinkRef, d audit.Diagnostic) error {
		if d.Code != audit.CodeInvalidURL || d.Field != "href" {
			t.Errorf("link %d came with diagnostic %+v", l.LinkID, d)
		}
		findings = append(findings, audit.InvalidURLFinding(runID, l, d))
		return nil
	})
	if err != nil {
		t.Fatalf("InvalidURLLinks: %v", err)
	}
	want := []audit.Finding{
		{RunID: runID, PageURL: "https://example.org/", LinkID: noTarget[0], Target: "http://[::1#sec", Verdict: audit.VerdictInvalidURL,
			Message: "invalid URL: An IPv6 address is missing the closing U+005D (])"},
		{RunID: runID, PageURL: "https://example.org/", LinkID: noTarget[1], Target: "http://example.com:99999/", Verdict: audit.VerdictInvalidURL,
			Message: "invalid URL: The input's port is outside the range [0-65535]"},
	}
	if !slices.Equal(findings, want) {
		t.Errorf("invalid-url findings\n got %+v\nwant %+v", findings, want)
	}
	if err := db.ReplaceFindings(ctx, runID, findings); err != nil {
		t.Fatalf("ReplaceFindings: %v", err)
	}
	stored, err := db.Findings(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(stored, func(a, b audit.Finding) int { return int(a.LinkID - b.LinkID) })
	if !slices.Equal(stored, want) {
		t.Errorf("stored findings\n got %+v\nwant %+v", stored, want)
	}
	frefs, err := db.RunFindingRefs(ctx, runID)
	if err != nil || len(frefs) != 2 || frefs[0].TargetID != 0 || frefs[0].Verdict != audit.VerdictInvalidURL {
		t.Errorf("RunFindingRefs: %+v, %v", frefs, err)
	}
	if f, err := db.FindingByID(ctx, frefs[0].ID); err != nil || f.Target != "http://[::1#sec" {
		t.Errorf("FindingByID: %+v, %v", f, err)
	}

	// The archives stage's chunks: the links without a target, then one
	// chunk of every target up to the largest ID.
	var chunk0, chunkAll []int64
	if err := db.EachTargetLink(ctx, runID, 0, 0, func(id int64, _, targetURL string, targetID int64, _ *audit.Link, _ []audit.PWID) error {
		if targetURL != "" || targetID != 0 {
			t.Errorf("link %d of the target-less chunk has target %d %q", id, targetID, targetURL)
		}
		chunk0 = append(chunk0, id)
		return nil
	}); err != nil {
		t.Fatalf("EachTargetLink(0, 0): %v", err)
	}
	if !slices.Equal(chunk0, noTarget) {
		t.Errorf("target-less chunk %v, want %v", chunk0, noTarget)
	}
	if err := db.EachTargetLink(ctx, runID, 1, math.MaxInt64, func(id int64, _, _ string, targetID int64, _ *audit.Link, _ []audit.PWID) error {
		if targetID == 0 {
			t.Errorf("link %d without a target in a target range", id)
		}
		chunkAll = append(chunkAll, id)
		return nil
	}); err != nil {
		t.Fatalf("EachTargetLink(1, MaxInt64): %v", err)
	}
	if len(chunkAll) != len(refs)-len(noTarget) {
		t.Errorf("chunk of every target has %d links, want %d", len(chunkAll), len(refs)-len(noTarget))
	}
	if _, err := db.ChecksOf(ctx, runID, 1, math.MaxInt64); err != nil {
		t.Errorf("ChecksOf(1, MaxInt64): %v", err)
	}
	if _, err := db.FirstFingerprintsOf(ctx, runID, 1, math.MaxInt64); err != nil {
		t.Errorf("FirstFingerprintsOf(1, MaxInt64): %v", err)
	}
	for _, to := range []int64{0, math.MaxInt64} {
		if _, err := db.TargetsFirstSeenOf(ctx, runID, 1, to); err != nil {
			t.Errorf("TargetsFirstSeenOf(1, %d): %v", to, err)
		}
		if _, err := db.LinksFirstSeenOf(ctx, runID, 1, to); err != nil {
			t.Errorf("LinksFirstSeenOf(1, %d): %v", to, err)
		}
	}
}
