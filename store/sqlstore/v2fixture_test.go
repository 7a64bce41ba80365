package sqlstore

// The tests of this file are SQLite-only: they read and write SQLite files,
// pragmas and user_version directly. PostgreSQL has its own in
// postgres_test.go.

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// v2Fixture is a database written by linkrot with schema version 2 (crawl
// and checks, before archives and history): two complete nightly runs of
// one site in which /gone answered 410 both times, 24 hours apart. Every
// later migration must open it (TestMigrate_V2Fixture), and its runs must
// fold into the history that version 4 introduced.
var v2Fixture = filepath.Join("..", "..", "testdata", "db", "v2.db")

const (
	v2Site = "https://example.org/"
	v2Gone = "https://example.org/gone"
	v2OK   = "https://example.org/fine"
)

// TestWriteV2Fixture writes the v2 fixture (regenerating the committed file
// when LINKROT_WRITE_V2_FIXTURE=1, else a fresh copy compared with it): migrations 0001 and 0002 only, written by
// the store's own CreateRun, SavePages, SaveChecks and FinishRun (which
// must still write only tables of those migrations).
func TestWriteV2Fixture(t *testing.T) {
	target := v2Fixture
	if os.Getenv("LINKROT_WRITE_V2_FIXTURE") != "1" {
		// Write a fresh copy and compare it with the committed file.
		target = filepath.Join(t.TempDir(), "v2.db")
		defer func() { sameRows(t, v2Fixture, target) }()
	}
	ctx := context.Background()
	abs, err := filepath.Abs(target)
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(abs + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	db := openAtVersion(t, abs, 2, false)
	for day := range 2 {
		at := time.Date(2024, 6, 1+day, 2, 0, 0, 0, time.UTC)
		r := &audit.Run{StartedAt: at, Mode: "site", Seeds: []string{v2Site}, Args: []string{"audit", v2Site}, Version: "v2-fixture"}
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		ids := linkTargets(t, db, r.ID, v2Site, v2Gone, v2OK)
		mustSaveChecks(t, db,
			audit.Check{RunID: r.ID, TargetID: ids[v2Gone], URL: v2Gone, Verdict: audit.VerdictGone, Status: 410, CheckedAt: at.Add(time.Minute)},
			audit.Check{RunID: r.ID, TargetID: ids[v2OK], URL: v2OK, Verdict: audit.VerdictOK, Status: 200, CheckedAt: at.Add(time.Minute)})
		if err := db.FinishRun(ctx, r.ID, audit.RunComplete, at.Add(time.Hour), ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, abs, "")
	for _, q := range []string{`PRAGMA journal_mode = DELETE`, `PRAGMA page_size = 1024`, `VACUUM`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if v := userVersion(t, raw); v != 2 {
		t.Fatalf("fixture has user_version %d", v)
	}
	raw.Close()
}

// TestMigrate_V2Fixture opens a copy of the committed version-2 database:
// it is migrated to the latest version with its rows kept, and the first
// history applied folds its two runs in, confirming /gone.
func TestMigrate_V2Fixture(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	copyFile(t, v2Fixture, path)
	raw := rawDB(t, path, "")
	if v := userVersion(t, raw); v != 2 {
		t.Fatalf("fixture has user_version %d, want 2", v)
	}
	raw.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := userVersion(t, db.write); got != latestVersion() {
		t.Errorf("user_version = %d, want %d", got, latestVersion())
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
	sums, err := db.RunSummaries(ctx, 0)
	if err != nil || len(sums) != 2 || sums[0].Checked != 2 || sums[0].Broken != 1 || sums[0].Confirmed != 0 {
		t.Fatalf("runs of the fixture = %+v, %v", sums, err)
	}

	// A third night, made by this linkrot: /gone still 410.
	run3, ids := nightlyRunOf(t, db, time.Date(2024, 6, 3, 2, 0, 0, 0, time.UTC), v2Site,
		map[string]audit.Verdict{v2Gone: audit.VerdictGone, v2OK: audit.VerdictOK})
	res, err := db.ApplyHistory(ctx, run3, audit.DefaultConfirmRule)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Errorf("applied runs %v, want the fixture's two and the new one", res.Runs)
	}
	h := mustHistories(t, db, ids[v2Gone])[ids[v2Gone]]
	// FirstSeen is the fixture's targets.first_seen_at (when it was written).
	if !h.Confirmed || h.ConfirmedRun != 2 || h.FailedRuns != 3 || h.FirstSeen.IsZero() {
		t.Errorf("history of /gone = %+v", h)
	}
	d, err := db.SinceLastRun(ctx, run3)
	if err != nil {
		t.Fatal(err)
	}
	if d.From != 2 || len(d.NewBroken) != 0 || len(d.NewlyConfirmed) != 0 {
		t.Errorf("since last run = %+v (confirmed in run 2, nothing new in run 3)", d)
	}
	if d, err := db.Diff(ctx, 1, 2); err != nil || len(d.NewlyConfirmed) != 1 || d.NewlyConfirmed[0].URL != v2Gone {
		t.Errorf("diff 1..2 = %+v, %v", d, err)
	}
}

// nightlyRunOf is nightlyRun for a run starting at a given time.
func nightlyRunOf(tb testing.TB, db *DB, at time.Time, site string, verdicts map[string]audit.Verdict) (int64, map[string]int64) {
	tb.Helper()
	ctx := context.Background()
	r := &audit.Run{StartedAt: at, Mode: "site", Seeds: []string{site}, Version: "test"}
	if err := db.CreateRun(ctx, r); err != nil {
		tb.Fatal(err)
	}
	var urls []string
	for u := range verdicts {
		urls = append(urls, u)
	}
	ids := linkTargets(tb, db, r.ID, site, urls...)
	var checks []audit.Check
	for u, v := range verdicts {
		checks = append(checks, audit.Check{RunID: r.ID, TargetID: ids[u], URL: u, Verdict: v, CheckedAt: at.Add(time.Minute)})
	}
	mustSaveChecks(tb, db, checks...)
	if err := db.FinishRun(ctx, r.ID, audit.RunComplete, at.Add(time.Hour), ""); err != nil {
		tb.Fatal(err)
	}
	return r.ID, ids
}

func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}
