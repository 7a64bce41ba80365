package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// testTargetIDs_Many: TargetIDs finds the targets of more URLs than one
// query asks (500), leaves out the URLs without one, and works when a
// URL is not valid UTF-8 (which the JSON list of SQLite cannot carry).
func testTargetIDs_Many(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	runID := mustCreateRun(t, db)
	p := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/", Parsed: true}, RequestURL: "https://example.org/", Status: 200}
	var urls []string
	for i := range 1203 {
		u := fmt.Sprintf("https://t.example/%d", i)
		if i%2 == 0 {
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: u, RawHref: u})
		}
		urls = append(urls, u)
	}
	mustSave(t, db, runID, p)
	for _, bad := range []bool{false, true} {
		list := urls
		if bad {
			list = append(list[:len(list):len(list)], "https://t.example/\xff")
		}
		ids, err := db.TargetIDs(ctx, list)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 602 {
			t.Errorf("%d targets found, want 602", len(ids))
		}
		for i, u := range urls {
			if id, ok := ids[u]; ok != (i%2 == 0) || (ok && id <= 0) {
				t.Errorf("%s: id %d, found %v", u, id, ok)
			}
		}
	}
}
