package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// testStore_ResumeCandidates covers what UnfinishedRun selects: runs of the
// command asked for, not abandoned, and (WithReport) complete runs whose
// report was never written; NewerCompleteRun finds the complete run that
// makes an older unfinished one stale.
func testStore_ResumeCandidates(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	settings := func(id int64, command, fp string) {
		t.Helper()
		if err := db.SaveRunSettings(ctx, id, command, fp, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	finish := func(id int64, st audit.RunStatus) {
		t.Helper()
		if err := db.FinishRun(ctx, id, st, time.Time{}, ""); err != nil {
			t.Fatal(err)
		}
	}
	want := func(q store.ResumeQuery, id int64) {
		t.Helper()
		r, err := db.UnfinishedRun(ctx, q)
		if id == 0 {
			if !errors.Is(err, audit.ErrNotFound) {
				t.Errorf("UnfinishedRun(%+v) = %+v, %v; want none", q, r, err)
			}
			return
		}
		if err != nil || r.ID != id {
			t.Errorf("UnfinishedRun(%+v) = %+v, %v; want run %d", q, r, err, id)
		}
	}
	audits := store.ResumeQuery{Command: audit.CommandAudit, Fingerprint: "a", WithReport: true}
	crawls := store.ResumeQuery{Command: audit.CommandCrawl}

	killed := mustCreateRun(t, db) // 1: killed audit
	settings(killed, audit.CommandAudit, "a")
	crawl := mustCreateRun(t, db) // 2: killed crawl, same fingerprint
	settings(crawl, audit.CommandCrawl, "a")
	want(audits, killed)
	want(crawls, crawl)
	if err := db.SaveRunSettings(ctx, killed, "", "a", []byte(`{}`)); err == nil {
		t.Error("settings without a command stored")
	}

	// No newer complete run yet; a complete crawl of the same fingerprint
	// does not count for an audit.
	if r, err := db.NewerCompleteRun(ctx, killed); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("NewerCompleteRun = %+v, %v", r, err)
	}
	finish(crawl, audit.RunComplete)
	if r, err := db.NewerCompleteRun(ctx, killed); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("NewerCompleteRun counts a crawl: %+v, %v", r, err)
	}
	want(crawls, 0)

	// Run 3 completes with the same settings, its report written; run 4,
	// other settings, completes without its report.
	done := mustCreateRun(t, db)
	settings(done, audit.CommandAudit, "a")
	finish(done, audit.RunComplete)
	if err := db.MarkStage(ctx, done, audit.StageReport); err != nil {
		t.Fatal(err)
	}
	other := mustCreateRun(t, db)
	settings(other, audit.CommandAudit, "b")
	finish(other, audit.RunComplete)
	if r, err := db.NewerCompleteRun(ctx, killed); err != nil || r.ID != done {
		t.Errorf("NewerCompleteRun = %+v, %v; want run %d", r, err, done)
	}
	if r, err := db.NewerCompleteRun(ctx, done); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("NewerCompleteRun(latest) = %+v, %v", r, err)
	}
	want(store.ResumeQuery{Command: audit.CommandAudit, Fingerprint: "b", WithReport: true}, other)
	want(store.ResumeQuery{Command: audit.CommandAudit, Fingerprint: "b"}, 0)
	want(store.ResumeQuery{Command: audit.CommandAudit, WithReport: true}, other)

	// Abandoned runs are never candidates again, and runs shows them.
	if err := db.AbandonRun(ctx, killed); err != nil {
		t.Fatal(err)
	}
	want(audits, 0)
	if err := db.AbandonRun(ctx, 999); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("AbandonRun(unknown) = %v", err)
	}
	sums, err := db.RunSummaries(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.Abandoned != (s.ID == killed) {
			t.Errorf("run %d: abandoned = %v", s.ID, s.Abandoned)
		}
		if s.ID == killed && s.Status != audit.RunRunning {
			t.Errorf("abandoning changed the status to %s", s.Status)
		}
	}
}
