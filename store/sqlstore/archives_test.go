package sqlstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// archiveRun creates a run with one page and two links and returns the
// run, the link IDs and the target ID of the first link.
func archiveRun(t *testing.T, db *DB) (runID int64, links []int64, target int64) {
	t.Helper()
	ctx := context.Background()
	runID = mustCreateRun(t, db)
	mustSave(t, db, runID, &audit.Page{
		Extraction: audit.Extraction{URL: "https://example.org/", Parsed: true, Links: []audit.Link{
			{Element: "a", Href: "https://other.example/a", Text: "A"},
			{Element: "a", Href: "https://other.example/b", Text: "B"},
		}},
		RequestURL: "https://example.org/", Status: 200, FetchedAt: time.Now(),
	})
	refs, err := db.LinkRefs(ctx, runID)
	if err != nil || len(refs) != 2 {
		t.Fatalf("LinkRefs = %+v, %v", refs, err)
	}
	return runID, []int64{refs[0].LinkID, refs[1].LinkID}, refs[0].TargetID
}

func utc(y int, m time.Month, d, h, min, s, ns int) time.Time {
	return time.Date(y, m, d, h, min, s, ns, time.UTC)
}

func TestArchives_RoundTrip(t *testing.T) { forEachBackend(t, testArchives_RoundTrip) }

func testArchives_RoundTrip(t *testing.T) {
	db := MustOpen(t)
	ctx := context.Background()
	runID, links, target := archiveRun(t, db)

	sc := audit.SnapshotCheck{RunID: runID, LinkID: links[0], Source: "versionurl", Declared: "https://web.archive.org/web/2020/x",
		URL: "https://web.archive.org/web/2020/x", FinalURL: "https://web.archive.org/web/20200101000000/x", Verdict: audit.SnapshotOK,
		Status: 200, Reason: "why", MementoDatetime: utc(2020, 1, 1, 0, 0, 0, 0), DeclaredDatetime: utc(2020, 1, 2, 12, 0, 0, 0),
		DeclaredDateOnly: true, DatetimeMismatch: true, DeclaredDelta: -36 * time.Hour, VersionDateDelta: 90 * time.Minute,
		Original: "https://other.example/a", OriginalMismatch: true, CheckedAt: utc(2025, 5, 5, 5, 5, 5, 123456789)}
	pwidCheck := audit.SnapshotCheck{RunID: runID, LinkID: links[1], Source: "pwid", Declared: "urn:pwid:x:…", Verdict: audit.SnapshotError,
		Reason: "archive id not in the pwid registry"}
	if err := db.SaveSnapshotChecks(ctx, []audit.SnapshotCheck{sc, pwidCheck}); err != nil {
		t.Fatal(err)
	}
	gotSC, err := db.SnapshotChecks(ctx, runID)
	if err != nil || len(gotSC) != 2 || !reflect.DeepEqual(gotSC[0], sc) || !reflect.DeepEqual(gotSC[1], pwidCheck) {
		t.Errorf("SnapshotChecks = %+v, %v\nwant %+v", gotSC, err, sc)
	}

	m := audit.Memento{RunID: runID, LinkID: links[0], TargetID: target, Archive: "ia", Wanted: utc(2020, 1, 1, 12, 0, 0, 0),
		WantedFrom: "versiondate", URL: "https://web.archive.org/web/20200101000000/x", Datetime: utc(2020, 1, 1, 0, 0, 0, 0),
		Distance: 12 * time.Hour, Representative: true, Nearest: true, Count: 3, First: utc(2019, 1, 1, 0, 0, 0, 0),
		Last: utc(2024, 1, 1, 0, 0, 0, 0), CheckedAt: utc(2025, 5, 5, 5, 5, 5, 0)}
	none := audit.Memento{RunID: runID, LinkID: links[0], Archive: "timetravel", Wanted: m.Wanted, WantedFrom: "versiondate", Error: "no memento"}
	if err := db.SaveMementos(ctx, []audit.Memento{m, none}); err != nil {
		t.Fatal(err)
	}
	gotM, err := db.Mementos(ctx, runID)
	if err != nil || len(gotM) != 2 || !reflect.DeepEqual(gotM[0], m) || !reflect.DeepEqual(gotM[1], none) {
		t.Errorf("Mementos = %+v, %v", gotM, err)
	}
	if err := db.SaveMementos(ctx, []audit.Memento{m}); err == nil {
		t.Error("second record for the same link and archive accepted")
	}

	d := audit.Drift{RunID: runID, LinkID: links[0], TargetID: target, Kind: "memento", ReferenceURL: "r", ReferenceTime: m.Datetime,
		LiveURL: "l", SimHashDistance: 7, Jaccard: 0.5, Dice: 2.0 / 3, Cosine: 0.9, WordsReference: 10, WordsLive: 12, WordChange: 0.2,
		TextMeasured: true, Band: audit.BandMajor, ExcerptReference: "a", ExcerptLive: "b", MeasuredAt: utc(2025, 1, 1, 0, 0, 0, 0)}
	fs := audit.Drift{RunID: runID, TargetID: target, Kind: "first-seen", ReferenceURL: "r", LiveURL: "l", SimHashDistance: 2,
		Jaccard: 0.3, WordsReference: 5, WordsLive: 5, Band: audit.BandMinor}
	if err := db.SaveDrifts(ctx, []audit.Drift{d, fs}); err != nil {
		t.Fatal(err)
	}
	gotD, err := db.Drifts(ctx, runID)
	fsWant := fs
	fsWant.Jaccard = 0 // not text-measured: not stored
	if err != nil || len(gotD) != 2 || !reflect.DeepEqual(gotD[0], d) || !reflect.DeepEqual(gotD[1], fsWant) {
		t.Errorf("Drifts = %+v, %v", gotD, err)
	}

	ic := audit.IdentifierCheck{RunID: runID, AccessURL: "https://other.example/a", Identifier: "https://doi.org/10.1/x", Rel: "cite-as",
		LinkingPages: []string{"https://example.org/"}, Resolves: true, LeadsBack: true, Status: 200, How: "redirect",
		CheckedAt: utc(2025, 1, 1, 0, 0, 0, 0)}
	own := audit.IdentifierCheck{RunID: runID, AccessURL: "https://example.org/", Identifier: "https://id.example/1", Rel: "identifier", OwnPage: true, Reason: "no"}
	if err := db.SaveIdentifierChecks(ctx, []audit.IdentifierCheck{ic, own}); err != nil {
		t.Fatal(err)
	}
	gotI, err := db.IdentifierChecks(ctx, runID)
	if err != nil || len(gotI) != 2 || !reflect.DeepEqual(gotI[0], own) || !reflect.DeepEqual(gotI[1], ic) {
		t.Errorf("IdentifierChecks = %+v, %v", gotI, err)
	}

	sg := audit.Suggestion{RunID: runID, LinkID: links[1], PageURL: "https://example.org/", Href: "https://other.example/b", Text: "B",
		Reason: "no-robustness-data", OriginalURL: "https://other.example/b", VersionDate: utc(2024, 2, 3, 0, 0, 0, 0), HTML: `<a href="…">B</a>`}
	if err := db.SaveSuggestions(ctx, []audit.Suggestion{sg}); err != nil {
		t.Fatal(err)
	}
	gotS, err := db.Suggestions(ctx, runID)
	if err != nil || len(gotS) != 1 || !reflect.DeepEqual(gotS[0], sg) {
		t.Errorf("Suggestions = %+v, %v", gotS, err)
	}

	sr := audit.SaveRequest{RunID: runID, URL: "https://other.example/b", Archive: "ia", JobID: "spn2-1", Status: "success",
		Memento: "https://web.archive.org/web/20250101000000/https://other.example/b", Requested: utc(2025, 1, 1, 0, 0, 0, 5)}
	if err := db.SaveSaveRequests(ctx, []audit.SaveRequest{sr}); err != nil {
		t.Fatal(err)
	}
	gotR, err := db.SaveRequests(ctx, runID)
	if err != nil || len(gotR) != 1 || !reflect.DeepEqual(gotR[0], sr) {
		t.Errorf("SaveRequests = %+v, %v", gotR, err)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}

	// ClearArchives empties the run's five result tables, nothing else:
	// the save requests that were sent stay recorded.
	if err := db.ClearArchives(ctx, runID); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"snapshot_checks", "mementos", "drifts", "identifier_checks", "suggestions"} {
		if n := count(t, db, `SELECT count(*) FROM `+table+` WHERE run_id = $1`, runID); n != 0 {
			t.Errorf("%s: %d rows after ClearArchives", table, n)
		}
	}
	if gotR, err := db.SaveRequests(ctx, runID); err != nil || len(gotR) != 1 {
		t.Errorf("SaveRequests after ClearArchives = %+v, %v", gotR, err)
	}
	if n := count(t, db, `SELECT count(*) FROM links WHERE run_id = $1`, runID); n != 2 {
		t.Errorf("links: %d rows after ClearArchives", n)
	}
}

func TestArchives_NotFound(t *testing.T) { forEachBackend(t, testArchives_NotFound) }

func testArchives_NotFound(t *testing.T) {
	db := MustOpen(t)
	ctx := context.Background()
	runID, links, _ := archiveRun(t, db)
	other := mustCreateRun(t, db)
	tests := map[string]error{
		"UnknownRun":       db.SaveSnapshotChecks(ctx, []audit.SnapshotCheck{{RunID: 999, Source: "mset", Verdict: audit.SnapshotOK}}),
		"LinkOfOtherRun":   db.SaveSnapshotChecks(ctx, []audit.SnapshotCheck{{RunID: other, LinkID: links[0], Source: "mset", Verdict: audit.SnapshotOK}}),
		"MementoNoLink":    db.SaveMementos(ctx, []audit.Memento{{RunID: runID, Archive: "ia", WantedFrom: "mset", Wanted: time.Now()}}),
		"SuggestionOther":  db.SaveSuggestions(ctx, []audit.Suggestion{{RunID: other, LinkID: links[1], Reason: "use-identifier"}}),
		"DriftUnknownRun":  db.SaveDrifts(ctx, []audit.Drift{{RunID: 999, Kind: "memento", Band: audit.BandMinor}}),
		"IdentUnknownRun":  db.SaveIdentifierChecks(ctx, []audit.IdentifierCheck{{RunID: 999}}),
		"SaveReqUnknownRn": db.SaveSaveRequests(ctx, []audit.SaveRequest{{RunID: 999, Status: "error"}}),
		"ClearUnknownRun":  db.ClearArchives(ctx, 999),
	}
	for name, err := range tests {
		if !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	for name, f := range map[string]func() error{
		"SnapshotChecks":   func() error { _, err := db.SnapshotChecks(ctx, 999); return err },
		"Mementos":         func() error { _, err := db.Mementos(ctx, 999); return err },
		"Drifts":           func() error { _, err := db.Drifts(ctx, 999); return err },
		"IdentifierChecks": func() error { _, err := db.IdentifierChecks(ctx, 999); return err },
		"Suggestions":      func() error { _, err := db.Suggestions(ctx, 999); return err },
		"SaveRequests":     func() error { _, err := db.SaveRequests(ctx, 999); return err },
	} {
		if err := f(); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("%s of an unknown run: %v", name, err)
		}
	}
	// A batch with one bad record stores none.
	err := db.SaveSnapshotChecks(ctx, []audit.SnapshotCheck{
		{RunID: runID, LinkID: links[0], Source: "mset", Verdict: audit.SnapshotOK},
		{RunID: runID, LinkID: links[0], Source: "mset", Verdict: "bogus"},
	})
	if err == nil || count(t, db, `SELECT count(*) FROM snapshot_checks`) != 0 {
		t.Errorf("bad batch: %v, %d rows", err, count(t, db, `SELECT count(*) FROM snapshot_checks`))
	}
}

// TestArchives_V1Fixture: a database written with schema 1 migrates to
// the archives tables, and their records attach to its old links.
//
// SQLite-only: it migrates a committed SQLite file of schema 1.
func TestArchives_V1Fixture(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile(v1Fixture)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v1.db")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refs, err := db.LinkRefs(ctx, v1FixtureRun.id)
	if err != nil || len(refs) == 0 {
		t.Fatalf("LinkRefs = %v, %v", refs, err)
	}
	sc := audit.SnapshotCheck{RunID: v1FixtureRun.id, LinkID: refs[0].LinkID, Source: "versionurl", Declared: "d", URL: "u", Verdict: audit.SnapshotMissing}
	if err := db.SaveSnapshotChecks(ctx, []audit.SnapshotCheck{sc}); err != nil {
		t.Fatal(err)
	}
	got, err := db.SnapshotChecks(ctx, v1FixtureRun.id)
	if err != nil || len(got) != 1 || got[0].LinkID != refs[0].LinkID {
		t.Errorf("SnapshotChecks = %+v, %v", got, err)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}
