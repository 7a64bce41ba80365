package sqlite

import (
	"context"
	"reflect"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func TestStore_Positions(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	run := mustCreateRun(t, db)
	p := &audit.Page{Extraction: audit.Extraction{URL: "http://localhost/docs/a.md", Parsed: true, Links: []audit.Link{
		{Element: "a", Href: "https://example.org/x", Line: 3, Column: 7, LineHash: audit.LineHash([]byte("see [x](https://example.org/x)"))},
		{Element: "a", Href: "https://example.org/y"}, // no position
	}}, RequestURL: "http://localhost/docs/a.md", File: "docs/a.md"}
	web := &audit.Page{Extraction: audit.Extraction{URL: "https://site.example/"}, RequestURL: "https://site.example/"}
	mustSave(t, db, run, p, web)
	pos, files, err := db.Positions(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(pos) != 1 || !reflect.DeepEqual(files, map[string]string{"http://localhost/docs/a.md": "docs/a.md"}) {
		t.Fatalf("positions %+v files %+v", pos, files)
	}
	for _, v := range pos {
		if v.Line != 3 || v.Column != 7 || v.LineHash != p.Links[0].LineHash {
			t.Errorf("position %+v", v)
		}
	}
	occ, from, err := db.Occurrences(ctx, 0)
	if err != nil || from != run {
		t.Fatal(from, err)
	}
	want := map[Occurrence]bool{{Target: "https://example.org/x", LineHash: p.Links[0].LineHash}: true}
	if !reflect.DeepEqual(occ, want) {
		t.Errorf("occurrences %+v, want %+v", occ, want)
	}
	if _, _, err := MustOpen(t).Occurrences(ctx, 0); err == nil {
		t.Error("empty baseline database: no error")
	}
	if _, _, err := db.Occurrences(ctx, run); err == nil {
		t.Error("no run before the first: no error")
	}
}
