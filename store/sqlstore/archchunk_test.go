package sqlstore

import (
	"context"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// chunkLink is what EachTargetLink gives of one link.
type chunkLink struct {
	page, targetURL string
	target          int64
	link            audit.Link
	pwids           []audit.PWID
}

// TestStore_ArchiveChunks: read chunk by chunk (target ID ranges of two
// targets, the links without a target apart), a run gives the links,
// checks, first sights and reference fingerprints the whole-run methods
// give, nothing of other runs; PageIdentifiers, EachOriginalLink and
// RunTargetIDs agree with Pages and Targets; SharedCheckURLs gives the
// URLs where the checks of two targets ended.
func TestStore_ArchiveChunks(t *testing.T) { forEachBackend(t, testStore_ArchiveChunks) }

func testStore_ArchiveChunks(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	earlier := mustCreateRun(t, db)
	first := fullPage(url0)
	first.FetchedAt = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	mustSave(t, db, earlier, first)
	runID := mustCreateRun(t, db)
	mustSave(t, db, runID, fullPage(url0), internPage(url0+"2"), failedPage("https://example.org/down"), fullPage(url0+"3"))
	later := mustCreateRun(t, db)
	mustSave(t, db, later, fullPage(url0+"4"), internPage(url0+"5")) // another run's rows must not leak in

	targets, err := db.Targets(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) < 5 {
		t.Fatalf("%d targets: too few to chunk", len(targets))
	}
	// Checks: fingerprinted in the earlier run for some targets, in this
	// run for all; the later run's must not show.
	for i, tr := range targets {
		c := audit.Check{RunID: runID, TargetID: tr.ID, Verdict: audit.VerdictOK, Status: 200,
			CheckedAt: time.Date(2024, 3, 1, 0, 0, i, 0, time.UTC)}
		switch i {
		case 1: // ends where target 0 is
			c.Verdict, c.FinalURL = audit.VerdictRedirected, targets[0].URL
		case 2, 3: // end at one URL
			c.Verdict, c.FinalURL = audit.VerdictRedirected, "https://final.example/"
		}
		if i%2 == 0 {
			c.SHA256, c.Words = "run", 3
			mustSaveChecks(t, db, audit.Check{RunID: earlier, TargetID: tr.ID, Verdict: audit.VerdictOK, Status: 200,
				SHA256: "earlier", Words: 2, CheckedAt: time.Date(2023, 1, 1, 0, 0, i, 0, time.UTC)})
		}
		mustSaveChecks(t, db, c)
		mustSaveChecks(t, db, audit.Check{RunID: later, TargetID: tr.ID, Verdict: audit.VerdictNotFound, Status: 404,
			CheckedAt: time.Date(2025, 1, 1, 0, 0, i, 0, time.UTC)})
	}

	// What the whole-run methods give.
	pages := mustPages(t, db, runID)
	refs, err := db.LinkRefs(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	targetURL := map[int64]string{}
	for _, tr := range targets {
		targetURL[tr.ID] = tr.URL
	}
	want := map[int64]*chunkLink{}
	var wantOriginal []int64
	k := 0
	for _, p := range pages {
		var ids []int64
		for _, l := range p.Links {
			r := refs[k]
			k++
			l.Diagnostics = nil
			want[r.LinkID] = &chunkLink{page: p.URL, targetURL: targetURL[r.TargetID], target: r.TargetID, link: l}
			ids = append(ids, r.LinkID)
			if l.Robust != nil && l.Robust.OriginalURL != "" {
				wantOriginal = append(wantOriginal, r.LinkID)
			}
		}
		for _, w := range p.PWIDs {
			if w.Link >= 0 {
				cl := want[ids[w.Link]]
				cl.pwids = append(cl.pwids, w)
			}
		}
	}
	wantChecks := mustChecks(t, db, runID)
	wantTargetSeen, err := db.TargetsFirstSeen(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	wantLinkSeen, err := db.LinksFirstSeen(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	wantRef, err := db.FirstFingerprints(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}

	// Chunk by chunk.
	got := map[int64]*chunkLink{}
	var gotChecks []audit.Check
	gotTargetSeen, gotLinkSeen, gotRef := map[int64]time.Time{}, map[int64]time.Time{}, map[int64]*audit.Check{}
	var gotTargets []audit.TargetRef
	read := func(from, to int64) {
		t.Helper()
		err := db.EachTargetLink(ctx, runID, from, to, func(id int64, page, tURL string, target int64, l *audit.Link, pwids []audit.PWID) error {
			if got[id] != nil {
				t.Errorf("link %d twice", id)
			}
			if (to == 0) != (target == 0) || to != 0 && (target < from || target > to) {
				t.Errorf("link %d to target %d in chunk %d-%d", id, target, from, to)
			}
			got[id] = &chunkLink{page: page, targetURL: tURL, target: target, link: *l, pwids: pwids}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := db.ChecksOf(ctx, runID, from, to)
		if err != nil {
			t.Fatal(err)
		}
		gotChecks = append(gotChecks, cs...)
		for _, m := range []struct {
			f   func(context.Context, int64, int64, int64) (map[int64]time.Time, error)
			out map[int64]time.Time
		}{{db.TargetsFirstSeenOf, gotTargetSeen}, {db.LinksFirstSeenOf, gotLinkSeen}} {
			seen, err := m.f(ctx, runID, from, to)
			if err != nil {
				t.Fatal(err)
			}
			for id, at := range seen {
				m.out[id] = at
			}
		}
		ref, err := db.FirstFingerprintsOf(ctx, runID, from, to)
		if err != nil {
			t.Fatal(err)
		}
		for id, c := range ref {
			gotRef[id] = c
		}
	}
	read(0, 0)
	var after int64
	chunks := 0
	for {
		trs, err := db.TargetsAfter(ctx, runID, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(trs) == 0 {
			break
		}
		gotTargets = append(gotTargets, trs...)
		to := trs[len(trs)-1].ID
		if len(trs) < 2 {
			to = math.MaxInt64
		}
		read(after+1, to)
		chunks++
		after = trs[len(trs)-1].ID
	}
	if chunks < 3 {
		t.Fatalf("%d chunks", chunks)
	}
	if !reflect.DeepEqual(gotTargets, targets) {
		t.Errorf("TargetsAfter gave\n%+v\nwant\n%+v", gotTargets, targets)
	}
	if len(got) != len(want) {
		t.Errorf("%d links read, want %d", len(got), len(want))
	}
	for id, w := range want {
		if g := got[id]; g == nil || !reflect.DeepEqual(g, w) {
			t.Errorf("link %d:\n got %+v\nwant %+v", id, g, w)
		}
	}
	byTarget := func(a, b audit.Check) int { return int(a.TargetID - b.TargetID) }
	slices.SortFunc(wantChecks, byTarget)
	slices.SortFunc(gotChecks, byTarget)
	if !reflect.DeepEqual(gotChecks, wantChecks) {
		t.Errorf("ChecksOf gave\n%+v\nwant\n%+v", gotChecks, wantChecks)
	}
	if !reflect.DeepEqual(gotTargetSeen, wantTargetSeen) {
		t.Errorf("TargetsFirstSeenOf gave %v, want %v", gotTargetSeen, wantTargetSeen)
	}
	if !reflect.DeepEqual(gotLinkSeen, wantLinkSeen) || len(wantLinkSeen) == 0 {
		t.Errorf("LinksFirstSeenOf gave %v, want %v", gotLinkSeen, wantLinkSeen)
	}
	if !reflect.DeepEqual(gotRef, wantRef) || len(wantRef) == 0 {
		t.Errorf("FirstFingerprintsOf gave %v, want %v", gotRef, wantRef)
	}

	// The pages declaring identifiers.
	var wantIDs []*audit.Page
	for _, p := range pages {
		if len(p.Identifiers) > 0 {
			wantIDs = append(wantIDs, &audit.Page{Extraction: audit.Extraction{URL: p.URL, Identifiers: p.Identifiers}})
		}
	}
	gotIDs, err := db.PageIdentifiers(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(wantIDs) < 2 || !reflect.DeepEqual(gotIDs, wantIDs) {
		t.Errorf("PageIdentifiers gave %+v, want %+v", gotIDs, wantIDs)
	}

	// The links with a data-originalurl.
	var gotOriginal []int64
	err = db.EachOriginalLink(ctx, runID, func(id int64, tURL string, l *audit.Link) error {
		gotOriginal = append(gotOriginal, id)
		w := want[id]
		if w == nil || tURL != w.targetURL || l.Robust == nil || w.link.Robust == nil ||
			l.Robust.OriginalURL != w.link.Robust.OriginalURL || !l.Robust.VersionDate.Equal(w.link.Robust.VersionDate.Time) {
			t.Errorf("EachOriginalLink: link %d %q %+v, want %+v", id, tURL, l.Robust, w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(wantOriginal)
	if len(wantOriginal) == 0 || !reflect.DeepEqual(gotOriginal, wantOriginal) {
		t.Errorf("EachOriginalLink gave links %v, want %v", gotOriginal, wantOriginal)
	}

	// The URLs where two checks of the run ended (the later run's
	// checks end at their targets).
	shared, err := db.SharedCheckURLs(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if wantShared := []string{targets[0].URL, "https://final.example/"}; !reflect.DeepEqual(shared, wantShared) {
		t.Errorf("SharedCheckURLs gave %q, want %q", shared, wantShared)
	}

	// Targets by URL: the run's, not another run's only, not unknown ones.
	var urls []string
	wantByURL := map[string]int64{}
	for _, tr := range targets {
		urls = append(urls, tr.URL)
		wantByURL[tr.URL] = tr.ID
	}
	urls = append(urls, "https://example.org/docs/4", "https://nowhere.example/")
	gotByURL, err := db.RunTargetIDs(ctx, runID, urls)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotByURL, wantByURL) {
		t.Errorf("RunTargetIDs gave %v, want %v", gotByURL, wantByURL)
	}
}

// TestStore_EachLinkTarget: the lean reader of a study's links gives, in
// link ID order, exactly the links with a target EachTargetLink gives,
// with the same target IDs and URLs, and nothing of other runs.
func TestStore_EachLinkTarget(t *testing.T) { forEachBackend(t, testStore_EachLinkTarget) }

func testStore_EachLinkTarget(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	mustSave(t, db, runID, fullPage(url0), internPage(url0+"2"), failedPage("https://example.org/down"))
	other := mustCreateRun(t, db)
	mustSave(t, db, other, fullPage(url0+"4"))
	type row struct {
		link, target int64
		url          string
	}
	var want, got []row
	err := db.EachTargetLink(ctx, runID, 1, math.MaxInt64, func(linkID int64, _, targetURL string, targetID int64, _ *audit.Link, _ []audit.PWID) error {
		want = append(want, row{linkID, targetID, targetURL})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EachLinkTarget(ctx, runID, func(linkID, targetID int64, targetURL string) error {
		got = append(got, row{linkID, targetID, targetURL})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(want) < 3 || !slices.Equal(got, want) {
		t.Errorf("EachLinkTarget:\n got %v\nwant %v", got, want)
	}
	if !slices.IsSortedFunc(got, func(a, b row) int { return int(a.link - b.link) }) {
		t.Errorf("not in link order: %v", got)
	}
}
