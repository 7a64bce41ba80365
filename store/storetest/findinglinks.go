package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// testFindingLinks_Keep checks which links FindingLinks reads whole: all
// those of a broken or moved target (with or without a fragment, keep
// never asked), the fragment links of an ok target whose (target,
// fragment) pair keep keeps (nil keeps all), every link of a kept pair
// however often a page repeats it, in target then link order; none of a
// target without a check or whose check cannot give anything (skipped);
// that keep is asked once per distinct pair, not per link; and that
// batches of kept links (more than one read of them) keep that order.
func testFindingLinks_Keep(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	runID := mustCreateRun(t, db)
	const (
		ok      = "https://example.org/ok"
		gone    = "https://example.org/gone"
		nocheck = "https://example.org/nocheck"
		moved   = "https://example.org/moved"
		skipped = "https://example.org/skipped"
	)
	link := func(href string) audit.Link {
		return audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href, Text: href}
	}
	p1 := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/p1", Links: []audit.Link{
		link(ok + "#a"), link(ok + "#b"), link(ok), link(gone + "#x"), link(gone), link(nocheck + "#z"),
		link(moved + "#q"), link(skipped + "#s"), link(ok + "#b"), link(skipped),
	}}, Status: 200}
	p2 := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/p2", Links: []audit.Link{
		link(ok + "#c"), link(gone), link(ok + "#b"), link(moved), link(ok + "#a"), link(skipped + "#s"),
	}}, Status: 200}
	// Many kept links: they are read whole in more than one batch.
	var many []audit.Link
	for i := range 700 {
		many = append(many, link(fmt.Sprintf("%s#m%d", ok, i)))
	}
	p3 := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/p3", Links: many}, Status: 200}
	mustSave(t, db, runID, p1, p2, p3)
	if missing, err := db.SaveChecksByURL(ctx, []audit.Check{
		{RunID: runID, URL: ok, Verdict: audit.VerdictOK, Status: 200},
		{RunID: runID, URL: gone, Verdict: audit.VerdictGone, Status: 410},
		{RunID: runID, URL: moved, Verdict: audit.VerdictMoved, Status: 200, Replacement: "https://example.org/new"},
		{RunID: runID, URL: skipped, Verdict: audit.VerdictSkipped},
	}); err != nil || len(missing) != 0 {
		t.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
	}

	type got struct{ page, href, verdict string }
	read := func(keep func(*audit.Check, string) bool) (out []got) {
		t.Helper()
		var lastTarget, lastLink int64
		err := db.FindingLinks(ctx, runID, keep, func(l audit.LinkRef, c *audit.Check) error {
			if l.TargetID != c.TargetID {
				t.Errorf("link %d of target %d came with the check of target %d", l.LinkID, l.TargetID, c.TargetID)
			}
			if l.TargetID < lastTarget || l.TargetID == lastTarget && l.LinkID <= lastLink {
				t.Errorf("link %d of target %d after link %d of target %d", l.LinkID, l.TargetID, lastLink, lastTarget)
			}
			lastTarget, lastLink = l.TargetID, l.LinkID
			out = append(out, got{l.PageURL, l.Href, string(c.Verdict)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// The targets in the order FindingLinks gives them: by ID.
	targets, err := db.Targets(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, tr := range targets {
		order = append(order, tr.URL)
	}
	byTarget := func(links map[string][]got) (out []got) {
		for _, u := range order {
			out = append(out, links[u]...)
		}
		return out
	}

	var asked []string
	kept := read(func(c *audit.Check, fragment string) bool {
		asked = append(asked, c.URL+"#"+fragment)
		return fragment == "b" || fragment == "c" || fragment == "m3" || fragment == "m699"
	})
	const (
		page1 = "https://example.org/p1"
		page2 = "https://example.org/p2"
		page3 = "https://example.org/p3"
	)
	want := byTarget(map[string][]got{
		ok: {
			{page1, ok + "#b", "ok"}, {page1, ok + "#b", "ok"},
			{page2, ok + "#c", "ok"}, {page2, ok + "#b", "ok"},
			{page3, ok + "#m3", "ok"}, {page3, ok + "#m699", "ok"},
		},
		gone:  {{page1, gone + "#x", "gone"}, {page1, gone, "gone"}, {page2, gone, "gone"}},
		moved: {{page1, moved + "#q", "moved"}, {page2, moved, "moved"}},
	})
	if !reflect.DeepEqual(kept, want) {
		t.Errorf("FindingLinks with keep =\n%v\nwant\n%v", kept, want)
	}
	if len(asked) != 3+700 {
		t.Errorf("keep asked %d times, want once per distinct fragment of the ok target (703): %v", len(asked), asked[:min(len(asked), 10)])
	}
	seen := map[string]bool{}
	for _, a := range asked {
		if a[:len(ok)] != ok {
			t.Errorf("keep asked about %s: only the ok target's fragments are asked", a)
		}
		if seen[a] {
			t.Errorf("keep asked about %s twice", a)
		}
		seen[a] = true
	}

	all := read(nil)
	okLinks := []got{{page1, ok + "#a", "ok"}, {page1, ok + "#b", "ok"}, {page1, ok + "#b", "ok"},
		{page2, ok + "#c", "ok"}, {page2, ok + "#b", "ok"}, {page2, ok + "#a", "ok"}}
	for i := range 700 {
		okLinks = append(okLinks, got{page3, fmt.Sprintf("%s#m%d", ok, i), "ok"})
	}
	wantAll := byTarget(map[string][]got{
		ok:    okLinks,
		gone:  {{page1, gone + "#x", "gone"}, {page1, gone, "gone"}, {page2, gone, "gone"}},
		moved: {{page1, moved + "#q", "moved"}, {page2, moved, "moved"}},
	})
	if len(all) != 6+700+3+2 {
		t.Fatalf("FindingLinks without keep gave %d links, want 711", len(all))
	}
	if !reflect.DeepEqual(all, wantAll) {
		for i := range all {
			if all[i] != wantAll[i] {
				t.Errorf("FindingLinks without keep: link %d is %v, want %v", i, all[i], wantAll[i])
				break
			}
		}
	}
}

// testFindingLinks_RepeatedFragments checks a fragment repeated on many
// pages and in several batches: keep is asked once per target and
// fragment, however many links carry it, in two runs alike (a pair of one
// run is not the other's); every link of a kept pair is read whole, in
// link order across the kept fragments of a target, and no link of a pair
// keep turned down.
func testFindingLinks_RepeatedFragments(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	const (
		a = "https://example.org/a"
		b = "https://example.org/b"
	)
	link := func(href string) audit.Link {
		return audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href, Text: href}
	}
	page := func(u string, hrefs ...string) *audit.Page {
		p := &audit.Page{Extraction: audit.Extraction{URL: u}, Status: 200}
		for _, h := range hrefs {
			p.Links = append(p.Links, link(h))
		}
		return p
	}
	type got struct{ page, href string }
	for run := range 2 {
		runID := mustCreateRun(t, db)
		// Three batches; #x and #y of a interleave differently on each
		// page, #same is everywhere.
		mustSave(t, db, runID,
			page("https://example.org/p1", a+"#x", a+"#same", a+"#y", b+"#same", a+"#x"),
			page("https://example.org/p2", a+"#y", a+"#same", a+"#x"))
		mustSave(t, db, runID, page("https://example.org/p3", a+"#same", b+"#same", a+"#y"))
		mustSave(t, db, runID, page("https://example.org/p4", a+"#x", a+"#same"))
		if missing, err := db.SaveChecksByURL(ctx, []audit.Check{
			{RunID: runID, URL: a, Verdict: audit.VerdictOK, Status: 200},
			{RunID: runID, URL: b, Verdict: audit.VerdictRedirected, Status: 200},
		}); err != nil || len(missing) != 0 {
			t.Fatalf("run %d: SaveChecksByURL: %v, %d missing", run, err, len(missing))
		}
		asked := map[string]int{}
		var out []got
		err := db.FindingLinks(ctx, runID, func(c *audit.Check, fragment string) bool {
			asked[c.URL+"#"+fragment]++
			return fragment == "x" || fragment == "y"
		}, func(l audit.LinkRef, c *audit.Check) error {
			if l.TargetID != c.TargetID {
				t.Errorf("run %d: link %d of target %d came with the check of target %d", run, l.LinkID, l.TargetID, c.TargetID)
			}
			out = append(out, got{l.PageURL, l.Href})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantAsked := map[string]int{a + "#x": 1, a + "#y": 1, a + "#same": 1, b + "#same": 1}
		if !reflect.DeepEqual(asked, wantAsked) {
			t.Errorf("run %d: keep asked %v, want each pair once: %v", run, asked, wantAsked)
		}
		want := []got{
			{"https://example.org/p1", a + "#x"},
			{"https://example.org/p1", a + "#y"},
			{"https://example.org/p1", a + "#x"},
			{"https://example.org/p2", a + "#y"},
			{"https://example.org/p2", a + "#x"},
			{"https://example.org/p3", a + "#y"},
			{"https://example.org/p4", a + "#x"},
		}
		if !reflect.DeepEqual(out, want) {
			t.Errorf("run %d: FindingLinks gave\n%v\nwant (link order, kept pairs only)\n%v", run, out, want)
		}
	}
}
