package storetest

import (
	"context"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// testSave_ConnectionHintsHaveNoTarget: a link rel=preconnect or
// dns-prefetch is stored as a link, with its element, attribute and URL,
// but makes no target (nothing checks it); a link of any other kind to the
// same origin does, and every link's attribute is read back.
func testSave_ConnectionHintsHaveNoTarget(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	runID := mustCreateRun(t, db)
	page := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/", Links: []audit.Link{
		{Element: "link", Attr: "href", Href: "https://dead.example/", RawHref: "https://dead.example", Rel: []string{"preconnect"}, Resource: true},
		{Element: "link", Attr: "href", Href: "https://dns.example/", RawHref: "//dns.example", Rel: []string{"dns-prefetch"}, Resource: true},
		{Element: "link", Attr: "href", Href: "https://cdn.example/", RawHref: "https://cdn.example/", Rel: []string{"preconnect"}, Resource: true},
		{Element: "img", Attr: "srcset", Href: "https://cdn.example/", RawHref: "https://cdn.example/", Resource: true},
		{Element: "video", Attr: "poster", Href: "https://example.org/p.jpg", RawHref: "p.jpg", Resource: true},
	}}, Status: 200}
	mustSave(t, db, runID, page)
	targets, err := db.Targets(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tr := range targets {
		have[tr.URL] = true
	}
	if have["https://dead.example/"] || have["https://dns.example/"] || !have["https://cdn.example/"] || !have["https://example.org/p.jpg"] {
		t.Errorf("targets %v: want cdn.example (an image) and p.jpg, no hint's origin", have)
	}
	refs, err := db.LinkRefs(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 5 {
		t.Fatalf("%d links, want 5", len(refs))
	}
	for i, r := range refs {
		l := page.Links[i]
		if r.Element != l.Element || r.Attr != l.Attr || r.Href != l.Href {
			t.Errorf("link %d: %s %s %s, want %s %s %s", i, r.Element, r.Attr, r.Href, l.Element, l.Attr, l.Href)
		}
		if hint := i < 3; hint != (r.TargetID == 0) {
			t.Errorf("link %d (%s): target %d", i, r.Href, r.TargetID)
		}
	}
	if refs[2].TargetID == refs[3].TargetID {
		t.Error("the hint to cdn.example shares the image's target")
	}
	pages := mustPages(t, db, runID)
	if got := pages[0].Links[0]; got.Rel[0] != "preconnect" || got.Href != "https://dead.example/" || got.Checked() {
		t.Errorf("hint read back as %+v", got)
	}
}
