package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// carriedHrefs are link hrefs whose targets the writer finds by their
// key: sharing targets through fragments, with credentials, an IDN,
// other schemes, invalid and blank.
var carriedHrefs = []string{
	"https://example.org/a.html",
	"https://example.org/a.html#one",
	"https://example.org/a.html#two",
	"https://example.org/a.html?q=1#one",
	"https://example.org/b%20#x",
	"http://user:***@example.org/p#f",
	"https://xn--bcher-kva.example/stra%C3%9Fe#k",
	"https://bücher.example/straße",
	"mailto:someone@example.org",
	"http://[::1/broken",
	"page.html",
	"",
}

// carriedPage is a page linking to carriedHrefs; with keys, its links
// carry their targets' keys as the crawler records them.
func carriedPage(u string, keys bool) *audit.Page {
	p := &audit.Page{Extraction: audit.Extraction{URL: u, Parsed: true}, RequestURL: u, Status: 200}
	var tk urls.TargetKeys
	for _, h := range carriedHrefs {
		l := audit.Link{Element: "a", Attr: "href", Href: h, RawHref: h, Rel: []string{}}
		if keys {
			l.SetTarget(tk.Key(h))
		}
		p.Links = append(p.Links, l)
	}
	return p
}

// linkTargetRows returns "ord target" for each link of the page u, the
// target's URL or "-" for none.
func linkTargetRows(t *testing.T, db *DB, u string) []string {
	t.Helper()
	return rowStrings(t, db, `SELECT l.ord, t.url FROM links l JOIN pages p ON p.id = l.page_id
		LEFT JOIN targets t ON t.id = l.target_id WHERE p.url = $1 ORDER BY l.ord`, u)
}

// TestSave_CarriedTargetKeys: the writer stores a link that carries its
// target's key (audit.Link.Target) under the target urls.TargetKey gives
// its href, as it stores one that carries none, in batches (SQLite) and
// row by row (SQLite, PostgreSQL); a link whose href changed since its
// key was recorded is stored under its href's target; a recorded key
// that is not its href's is an error when it would create a target.
func TestSave_CarriedTargetKeys(t *testing.T) {
	want := func(h string) string {
		if k, _, ok := urls.TargetKey(h); ok {
			return k
		}
		return "-"
	}
	run := func(t *testing.T, open func(t *testing.T) *DB) {
		ctx := context.Background()
		db := open(t)
		runID := mustCreateRun(t, db)
		carried, plain := carriedPage("https://example.org/carried", true), carriedPage("https://example.org/plain", false)
		changed := carriedPage("https://example.org/changed", true)
		changed.Links[0].Href = "https://example.org/changed-after"
		mustSave(t, db, runID, carried, plain, changed)
		var wantRows []string
		for i, h := range carriedHrefs {
			wantRows = append(wantRows, fmt.Sprintf("%d %s", i, want(h)))
		}
		for _, u := range []string{"https://example.org/carried", "https://example.org/plain"} {
			if got := linkTargetRows(t, db, u); strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
				t.Errorf("%s: link targets\n got %q\nwant %q", u, got, wantRows)
			}
		}
		if got := linkTargetRows(t, db, "https://example.org/changed"); len(got) == 0 || got[0] != "0 https://example.org/changed-after" {
			t.Errorf("a link whose href changed: targets %q; want its first under https://example.org/changed-after", got)
		}

		wrong := carriedPage("https://example.org/wrong", false)
		wrong.Links = wrong.Links[:1]
		wrong.Links[0].Href = "https://example.org/right"
		wrong.Links[0].SetTarget("https://example.org/not-its-key", true)
		err := db.SaveCrawl(ctx, runID, []*audit.Page{wrong}, nil)
		if err == nil || !strings.Contains(err.Error(), "recorded key") {
			t.Errorf("a link recording another href's key: SaveCrawl error %v; want the recorded key's", err)
		}
	}
	forEachBackend(t, func(t *testing.T) { run(t, func(t *testing.T) *DB { return MustOpen(t) }) })
	t.Run("sqlite-row-by-row", func(t *testing.T) {
		run(t, func(t *testing.T) *DB {
			db := MustOpen(t)
			db.rowByRow = true
			return db
		})
	})
}
