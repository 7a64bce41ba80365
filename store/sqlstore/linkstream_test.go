package sqlstore

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// TestEachLink: the streamed links are those Pages gives, in the same
// order, with their Robust Links, mset data and diagnostics, tied to
// PageList's page IDs and to their targets; PageList's pages are Pages'
// without links and evidence.
func TestEachLink(t *testing.T) { forEachBackend(t, testEachLink) }

func testEachLink(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	other := mustCreateRun(t, db)
	mustSave(t, db, other, fullPage(url0)) // another run's rows must not leak in
	runID := mustCreateRun(t, db)
	want := []*audit.Page{fullPage(url0), internPage(url0 + "2"), failedPage("https://example.org/down"), fullPage(url0 + "3")}
	mustSave(t, db, runID, want...)
	full := mustPages(t, db, runID)

	pages, ids, err := db.PageList(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != len(full) || len(ids) != len(full) {
		t.Fatalf("PageList: %d pages, %d IDs; want %d", len(pages), len(ids), len(full))
	}
	byID := map[int64]int{}
	for i, p := range pages {
		byID[ids[i]] = i
		if p.Links != nil || p.URL != full[i].URL || !reflect.DeepEqual(p.Identifiers, full[i].Identifiers) ||
			!reflect.DeepEqual(p.Diagnostics, full[i].Diagnostics) {
			t.Errorf("PageList[%d] = %+v", i, p)
		}
	}

	targets := map[string]int64{}
	refs, err := db.Targets(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		targets[r.URL] = r.ID
	}
	var got []audit.Link
	var gotPage []int
	err = db.EachLink(ctx, runID, func(l *store.StoredLink) error {
		got = append(got, l.Link)
		gotPage = append(gotPage, byID[l.PageID])
		// An href the store's text rule changed (NUL, invalid UTF-8) no
		// longer normalizes to its target's URL.
		if norm, err := urls.NormalizeURL(l.Href); err == nil && targets[norm] != l.TargetID && l.TargetID != 0 &&
			!strings.ContainsRune(l.Href, utf8.RuneError) {
			t.Errorf("link %d: target %d, want %d", l.ID, l.TargetID, targets[norm])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var wantLinks []audit.Link
	var wantPage []int
	for i, p := range full {
		wantLinks = append(wantLinks, p.Links...)
		for range p.Links {
			wantPage = append(wantPage, i)
		}
	}
	if !reflect.DeepEqual(got, wantLinks) {
		t.Errorf("EachLink gave\n%+v\nwant\n%+v", got, wantLinks)
	}
	if !reflect.DeepEqual(gotPage, wantPage) {
		t.Errorf("EachLink pages %v, want %v", gotPage, wantPage)
	}

	stop := errors.New("stop")
	n := 0
	if err := db.EachLink(ctx, runID, func(*store.StoredLink) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("EachLink after fn's error: %v, %d calls", err, n)
	}
	if err := db.EachLink(ctx, 999, func(*store.StoredLink) error { return nil }); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("EachLink of an unknown run: %v", err)
	}
}
