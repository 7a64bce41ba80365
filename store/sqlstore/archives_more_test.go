package sqlstore

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// TestArchives_DriftFailures: failed drift measurements round-trip, stay
// out of the drifts table (its readers see measurements only), and
// ClearArchives removes them with the rest.
func TestArchives_DriftFailures(t *testing.T) { forEachBackend(t, testArchives_DriftFailures) }

func testArchives_DriftFailures(t *testing.T) {
	db := MustOpen(t)
	ctx := context.Background()
	runID, links, target := archiveRun(t, db)
	f := audit.DriftFailure{RunID: runID, LinkID: links[0], TargetID: target, Kind: "memento",
		ReferenceURL: "https://web.archive.org/web/20200101000000id_/x", LiveURL: "https://other.example/a",
		Reason: "memento answered without Memento-Datetime: no reference", MeasuredAt: utc(2025, 1, 2, 3, 4, 5, 6)}
	if err := db.SaveDriftFailures(ctx, []audit.DriftFailure{f}); err != nil {
		t.Fatal(err)
	}
	got, err := db.DriftFailures(ctx, runID)
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], f) {
		t.Errorf("DriftFailures = %+v, %v\nwant %+v", got, err, f)
	}
	if d, err := db.Drifts(ctx, runID); err != nil || len(d) != 0 {
		t.Errorf("Drifts = %+v, %v: a failure is no measurement", d, err)
	}
	if err := db.SaveDriftFailures(ctx, []audit.DriftFailure{{RunID: 999, TargetID: target, Kind: "memento"}}); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
	if _, err := db.DriftFailures(ctx, 999); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("DriftFailures of an unknown run: %v", err)
	}
	if err := db.ClearArchives(ctx, runID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM drift_failures`); n != 0 {
		t.Errorf("%d drift failures after ClearArchives", n)
	}
}

// TestArchives_PWIDSnapshots: the check of a pwid that resolved stores the
// resolved snapshot in the snapshots table (source 'pwid'), in the order
// of the link's pwids, with its target; an unresolved pwid stores none.
// The crawl's snapshot count does not include them, and ClearArchives
// removes them.
func TestArchives_PWIDSnapshots(t *testing.T) { forEachBackend(t, testArchives_PWIDSnapshots) }

func testArchives_PWIDSnapshots(t *testing.T) {
	db := MustOpen(t)
	ctx := context.Background()
	runID, links, _ := archiveRun(t, db)
	before, err := db.RunStats(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	at1, at2 := utc(2018, 2, 22, 11, 54, 11, 0), utc(2019, 3, 3, 0, 0, 0, 0)
	u1 := "https://web.archive.org/web/20180222115411/https://ipres2018.org/"
	u2 := "https://web.archive.org/web/20190303000000/https://ipres2018.org/"
	checks := []audit.SnapshotCheck{
		{RunID: runID, LinkID: links[0], Source: "pwid", Declared: "urn:pwid:archive.org:2018-02-22T11:54:11Z:page:https://ipres2018.org/",
			URL: u1, DeclaredDatetime: at1, Verdict: audit.SnapshotOK},
		{RunID: runID, LinkID: links[0], Source: "pwid", Declared: "urn:pwid:archive.org:2019-03-03T00:00:00Z:page:https://ipres2018.org/",
			URL: u2, DeclaredDatetime: at2, Verdict: audit.SnapshotMissing},
		{RunID: runID, LinkID: links[1], Source: "pwid", Declared: "urn:pwid:unknown.example:2019-03-03T00:00:00Z:page:x",
			Verdict: audit.SnapshotError, Reason: "archive id not in the pwid registry"},
		{RunID: runID, LinkID: links[1], Source: "versionurl", Declared: u1, URL: u1, Verdict: audit.SnapshotOK},
	}
	if err := db.SaveSnapshotChecks(ctx, checks); err != nil {
		t.Fatal(err)
	}
	got, err := db.PWIDSnapshots(ctx, runID)
	if err != nil || len(got) != 2 {
		t.Fatalf("PWIDSnapshots = %+v, %v", got, err)
	}
	var target int64
	if err := db.read.QueryRow(`SELECT id FROM targets WHERE url = $1`, u1).Scan(&target); err != nil {
		t.Fatalf("no target for the resolved pwid: %v", err)
	}
	want := []store.PWIDSnapshot{{LinkID: links[0], Ord: 0, URL: u1, Datetime: at1, TargetID: target}, {LinkID: links[0], Ord: 1, URL: u2, Datetime: at2}}
	want[1].TargetID = got[1].TargetID
	if !reflect.DeepEqual(got, want) || got[1].TargetID == 0 {
		t.Errorf("PWIDSnapshots = %+v\nwant %+v", got, want)
	}
	// The crawl's data is untouched: links read back without them.
	for _, p := range mustPages(t, db, runID) {
		for _, l := range p.Links {
			if l.Robust != nil || l.Mset != nil {
				t.Errorf("link %s reads back with snapshots: %+v %+v", l.Href, l.Robust, l.Mset)
			}
		}
	}
	after, err := db.RunStats(ctx, runID)
	if err != nil || after.Snapshots != before.Snapshots {
		t.Errorf("RunStats snapshots %d → %d, %v", before.Snapshots, after.Snapshots, err)
	}
	if err := db.ClearArchives(ctx, runID); err != nil {
		t.Fatal(err)
	}
	if got, err := db.PWIDSnapshots(ctx, runID); err != nil || len(got) != 0 {
		t.Errorf("PWIDSnapshots after ClearArchives = %+v, %v", got, err)
	}
	// Saved again (the stage run again): same rows, same order.
	if err := db.SaveSnapshotChecks(ctx, checks); err != nil {
		t.Fatal(err)
	}
	if got, err := db.PWIDSnapshots(ctx, runID); err != nil || len(got) != 2 || got[1].Ord != 1 {
		t.Errorf("PWIDSnapshots after a second pass = %+v, %v", got, err)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestLinksFirstSeen: a link's first sight is the earliest fetch of the
// same page linking to the same target, across runs; a page that starts
// linking to a known target in a later run has that later date, while the
// target's first sight stays the earlier one.
func TestLinksFirstSeen(t *testing.T) { forEachBackend(t, testLinksFirstSeen) }

func testLinksFirstSeen(t *testing.T) {
	db := MustOpen(t)
	ctx := context.Background()
	day1 := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Microsecond)
	day2 := day1.Add(24 * time.Hour)
	home := func(fetched time.Time, links ...audit.Link) *audit.Page {
		return &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/", Parsed: true, Links: links},
			RequestURL: "https://example.org/", Status: 200, FetchedAt: fetched}
	}
	news := func(fetched time.Time, links ...audit.Link) *audit.Page {
		return &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/news", Parsed: true, Links: links},
			RequestURL: "https://example.org/news", Status: 200, FetchedAt: fetched}
	}
	a := audit.Link{Element: "a", Href: "https://other.example/a", Text: "A"}
	b := audit.Link{Element: "a", Href: "https://other.example/b", Text: "B"}
	run1 := mustCreateRun(t, db)
	mustSave(t, db, run1, home(day1, a), news(day1, b))
	run2 := mustCreateRun(t, db)
	mustSave(t, db, run2, home(day2, a), news(day2, a, b))

	refs, err := db.LinkRefs(ctx, run2)
	if err != nil || len(refs) != 3 {
		t.Fatalf("LinkRefs = %+v, %v", refs, err)
	}
	seen, err := db.LinksFirstSeen(ctx, run2)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		want := day1 // home → a, news → b: both already in run 1
		if r.PageURL == "https://example.org/news" && r.Href == a.Href {
			want = day2 // news → a is new in run 2
		}
		if !seen[r.LinkID].Equal(want) {
			t.Errorf("%s → %s first seen %v, want %v", r.PageURL, r.Href, seen[r.LinkID], want)
		}
	}
	// Run 1 knows nothing of run 2.
	seen1, err := db.LinksFirstSeen(ctx, run1)
	if err != nil || len(seen1) != 2 {
		t.Fatalf("LinksFirstSeen(run1) = %v, %v", seen1, err)
	}
	for id, s := range seen1 {
		if !s.Equal(day1) {
			t.Errorf("run 1 link %d first seen %v", id, s)
		}
	}
	if _, err := db.LinksFirstSeen(ctx, 999); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
	// LinkDates: the distinct LinksFirstSeen dates of one target's links.
	for _, tc := range []struct {
		run    int64
		target string
		want   []time.Time
	}{
		{run2, a.Href, []time.Time{day1, day2}},
		{run2, b.Href, []time.Time{day1}},
		{run1, a.Href, []time.Time{day1}},
		{run2, "https://other.example/none", nil},
	} {
		got, err := db.LinkDates(ctx, tc.run, tc.target)
		slices.SortFunc(got, time.Time.Compare)
		if err != nil || !slices.EqualFunc(got, tc.want, time.Time.Equal) {
			t.Errorf("LinkDates(run %d, %s) = %v, %v; want %v", tc.run, tc.target, got, err, tc.want)
		}
	}
}
