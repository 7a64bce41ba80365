package sqlstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

func TestOpenReadOnly(t *testing.T) { forEachBackend(t, testOpenReadOnly) }

func testOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	missing := missingDBName(t)
	if db, err := OpenReadOnly(ctx, missing); err == nil {
		db.Close()
		t.Fatal("OpenReadOnly of a missing file succeeded")
	}
	if !isPostgresTest(t) {
		if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("OpenReadOnly created the missing file: %v", err)
		}
	}
	path := testDBName(t)
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	run, ids := linkedRun(t, w, "https://example.org/a_b", "https://example.org/100%25")
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	// Writes fail; reads see what the writer committed, while it writes.
	if err := ro.CreateRun(ctx, &audit.Run{Mode: "site", Version: "t"}); err == nil {
		t.Error("CreateRun through the read-only DB succeeded")
	}
	if err := ro.SaveChecks(ctx, []audit.Check{{RunID: run, TargetID: ids["https://example.org/a_b"], Verdict: audit.VerdictOK}}); err == nil {
		t.Error("SaveChecks through the read-only DB succeeded")
	}
	rs, err := ro.RunningRuns(ctx)
	if err != nil || len(rs) != 1 || rs[0].RunID != run || rs[0].Pages != 1 || rs[0].Links != 2 {
		t.Fatalf("RunningRuns = %+v, %v", rs, err)
	}
	mustSaveChecks(t, w, audit.Check{RunID: run, TargetID: ids["https://example.org/a_b"], Verdict: audit.VerdictGone, Status: 410, CheckedAt: time.Now()})
	if rs, _ := ro.RunningRuns(ctx); len(rs) != 1 || rs[0].Checked != 1 || rs[0].Broken != 1 {
		t.Errorf("RunningRuns after a check = %+v", rs)
	}
	if err := w.FinishRun(ctx, run, audit.RunComplete, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	if rs, _ := ro.RunningRuns(ctx); len(rs) != 0 {
		t.Errorf("RunningRuns after the run ended = %+v", rs)
	}
	// Search: '_' and '%' are plain characters, case does not matter
	// (EXAMPLE.org: the two targets and the page itself).
	for q, want := range map[string]int{"_": 1, "%25": 1, "%": 1, "EXAMPLE.org": 3, "x'--": 0, "": 0} {
		hits, err := ro.SearchTargets(ctx, q, 10)
		if err != nil || len(hits) != want {
			t.Errorf("SearchTargets(%q) = %+v, %v; want %d", q, hits, err, want)
		}
	}
	if hits, _ := ro.SearchTargets(ctx, "example", 1); len(hits) != 1 {
		t.Errorf("limit 1 gave %d hits", len(hits))
	}
	if hits, _ := ro.SearchPages(ctx, "INDEX", 10); len(hits) != 1 || hits[0].RunID != run {
		t.Errorf("SearchPages = %+v", hits)
	}
	checks, err := ro.TargetChecks(ctx, ids["https://example.org/a_b"], 0)
	if err != nil || len(checks) != 1 || checks[0].Status != 410 {
		t.Errorf("TargetChecks = %+v, %v", checks, err)
	}
	links, err := ro.TargetLinks(ctx, ids["https://example.org/a_b"], 0)
	if err != nil || len(links) != 1 || links[0].PageURL != "https://example.org/index" {
		t.Errorf("TargetLinks = %+v, %v", links, err)
	}
	if _, err := ro.Target(ctx, 99999); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("Target(unknown) = %v", err)
	}
	un, err := ro.UnprotectedLinks(ctx, []int64{run})
	if err != nil || un[run] != 2 {
		t.Errorf("UnprotectedLinks = %v, %v", un, err)
	}
}

// SQLite-only: PostgreSQL has its own, TestPostgres_OpenReadOnlyOlderSchema.
func TestOpenReadOnly_OlderSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "linkrot.db")
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.write.ExecContext(ctx, "PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if db, err := OpenReadOnly(ctx, path); err == nil {
		db.Close()
		t.Fatal("OpenReadOnly of an unmigrated database succeeded")
	}
}
