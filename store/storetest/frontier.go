package storetest

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

func testStore_RunState(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	any := store.ResumeQuery{Command: audit.CommandAudit}
	if _, err := db.UnfinishedRun(ctx, any); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("UnfinishedRun on an empty database = %v", err)
	}
	run1 := mustCreateRun(t, db)
	run2 := mustCreateRun(t, db)
	if err := db.SaveRunSettings(ctx, run1, audit.CommandAudit, "fp-a", []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveRunSettings(ctx, run2, audit.CommandAudit, "fp-b", []byte(`{"x":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveRunSettings(ctx, run2, audit.CommandAudit, "fp-b", []byte(`not json`)); err == nil {
		t.Error("invalid settings JSON stored")
	}
	fp, s, err := db.RunSettings(ctx, run2)
	if err != nil || fp != "fp-b" || string(s) != `{"x":2}` {
		t.Errorf("RunSettings = %q, %q, %v", fp, s, err)
	}
	if r, err := db.UnfinishedRun(ctx, store.ResumeQuery{Command: audit.CommandAudit, Fingerprint: "fp-a"}); err != nil || r.ID != run1 {
		t.Errorf("UnfinishedRun(fp-a) = %+v, %v", r, err)
	}
	if r, err := db.UnfinishedRun(ctx, any); err != nil || r.ID != run2 {
		t.Errorf("UnfinishedRun(any) = %+v, %v", r, err)
	}
	if err := db.FinishRun(ctx, run2, audit.RunComplete, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UnfinishedRun(ctx, store.ResumeQuery{Command: audit.CommandAudit, Fingerprint: "fp-b"}); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("a complete run is unfinished: %v", err)
	}
	if err := db.FinishRun(ctx, run1, audit.RunInterrupted, time.Time{}, "x"); err != nil {
		t.Fatal(err)
	}
	if err := db.ReopenRun(ctx, run1); err != nil {
		t.Fatal(err)
	}
	if r, err := db.Run(ctx, run1); err != nil || r.Status != audit.RunRunning || !r.FinishedAt.IsZero() || r.Error != "" {
		t.Errorf("reopened run = %+v, %v", r, err)
	}
	if err := db.ReopenRun(ctx, 999); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("ReopenRun(unknown) = %v", err)
	}

	if err := db.MarkStage(ctx, run1, audit.StageCrawl); err != nil {
		t.Fatal(err)
	}
	st, err := db.Stages(ctx, run1)
	if err != nil || len(st) != 1 || st[audit.StageCrawl].IsZero() {
		t.Fatalf("Stages = %v, %v", st, err)
	}
	first := st[audit.StageCrawl]
	time.Sleep(2 * time.Millisecond)
	if err := db.MarkStage(ctx, run1, audit.StageCrawl); err != nil {
		t.Fatal(err)
	}
	if st, _ := db.Stages(ctx, run1); !st[audit.StageCrawl].Equal(first) {
		t.Error("marking a stage again changed its time")
	}
	if err := db.MarkStage(ctx, 999, audit.StageCrawl); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("MarkStage(unknown) = %v", err)
	}
}

func testStore_SaveCrawlFrontier(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	run := mustCreateRun(t, db)
	redirected := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/new"}, RequestURL: "https://example.org/old",
		Status: 200, Redirects: []audit.Redirect{
			{From: "https://example.org/old", To: "https://example.org/mid", Status: 301},
			{From: "https://example.org/mid", To: "https://example.org/new", Status: 302},
		}}
	stopped := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/away"}, RequestURL: "https://example.org/away",
		Status: 301, Redirects: []audit.Redirect{{From: "https://example.org/away", To: "https://other.example/", Status: 301}}}
	err := db.SaveCrawl(ctx, run, []*audit.Page{redirected, stopped}, []audit.FrontierEntry{
		{URL: "https://example.org/", Depth: 0}, {URL: "https://example.org/old", Depth: 1},
		{URL: "https://example.org/todo", Depth: 2}, {URL: "https://example.org/old", Depth: 5}, // duplicate: first wins
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveCrawl(ctx, run, nil, []audit.FrontierEntry{{URL: "https://example.org/more", Depth: 2}}); err != nil {
		t.Fatal(err)
	}
	queued, visited, err := db.Frontier(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	wantQueued := []audit.FrontierEntry{{URL: "https://example.org/", Depth: 0}, {URL: "https://example.org/old", Depth: 1},
		{URL: "https://example.org/more", Depth: 2}, {URL: "https://example.org/todo", Depth: 2}}
	if !reflect.DeepEqual(queued, wantQueued) {
		t.Errorf("queued = %+v\nwant %+v", queued, wantQueued)
	}
	slices.Sort(visited)
	// The target of the stopped redirect (other.example) was not visited.
	wantVisited := []string{"https://example.org/away", "https://example.org/mid", "https://example.org/new", "https://example.org/old"}
	if !reflect.DeepEqual(visited, wantVisited) {
		t.Errorf("visited = %v\nwant %v", visited, wantVisited)
	}
	if len(mustPages(t, db, run)) != 2 {
		t.Error("pages of the crawl batch not stored")
	}

	// A failing batch stores neither its pages nor its queue.
	bad := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/bad", PWIDs: []audit.PWID{{Link: 3}}}}
	if err := db.SaveCrawl(ctx, run, []*audit.Page{bad}, []audit.FrontierEntry{{URL: "https://example.org/lost"}}); err == nil {
		t.Fatal("bad batch saved")
	}
	if q, _, _ := db.Frontier(ctx, run); len(q) != len(wantQueued) {
		t.Errorf("failed batch left %d queue entries", len(q)-len(wantQueued))
	}
	if err := db.SaveCrawl(ctx, 999, nil, []audit.FrontierEntry{{URL: "x"}}); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("SaveCrawl(unknown run) = %v", err)
	}
	if _, _, err := db.Frontier(ctx, 999); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("Frontier(unknown run) = %v", err)
	}
}
