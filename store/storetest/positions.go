package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

func testStore_Positions(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	run := mustCreateRun(t, db)
	p := &audit.Page{Extraction: audit.Extraction{URL: "http://localhost/docs/a.md", Parsed: true, Links: []audit.Link{
		{Element: "a", Href: "https://example.org/x", Line: 3, Column: 7, LineHash: audit.LineHash([]byte("see [x](https://example.org/x)"))},
		{Element: "a", Href: "https://example.org/y"}, // no position
		// No target: its URL does not parse.
		{Element: "a", Href: "http://[::1", RawHref: "http://[::1", Line: 4, Column: 1, LineHash: audit.LineHash([]byte("[v6](http://[::1)"))},
	}}, RequestURL: "http://localhost/docs/a.md", File: "docs/a.md"}
	web := &audit.Page{Extraction: audit.Extraction{URL: "https://site.example/"}, RequestURL: "https://site.example/"}
	mustSave(t, db, run, p, web)
	files, err := db.PageFiles(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(files, map[string]string{"http://localhost/docs/a.md": "docs/a.md"}) {
		t.Fatalf("files %+v", files)
	}
	var got []audit.Link
	if err := db.EachLink(ctx, run, func(l *store.StoredLink) error { got = append(got, l.Link); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Line != 3 || got[0].Column != 7 || got[0].LineHash != p.Links[0].LineHash || got[1].Line != 0 {
		t.Errorf("streamed links: %+v", got)
	}
	occ, from, err := db.Occurrences(ctx, 0)
	if err != nil || from != run {
		t.Fatal(from, err)
	}
	want := map[audit.Occurrence]bool{
		{Target: "https://example.org/x", LineHash: p.Links[0].LineHash}:                   true,
		{Target: audit.InvalidURLOccurrence("http://[::1"), LineHash: p.Links[2].LineHash}: true,
	}
	if !reflect.DeepEqual(occ, want) {
		t.Errorf("occurrences %+v, want %+v", occ, want)
	}
	if _, _, err := open(t).Occurrences(ctx, 0); err == nil {
		t.Error("empty baseline database: no error")
	}
	if _, _, err := db.Occurrences(ctx, run); err == nil {
		t.Error("no run before the first: no error")
	}
}
