package storetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

func testStore_DuplicatePage(t *testing.T, open Opener) {
	db := open(t)
	runID := mustCreateRun(t, db)
	first := notFoundPage("https://example.org/x")
	first.Title = "first"
	second := notFoundPage("https://example.org/x")
	second.Title = "second"
	second.Links = []audit.Link{{Element: "a", Href: "https://example.org/y"}}
	mustSave(t, db, runID, first, second)
	third := notFoundPage("https://example.org/x")
	third.Title = "third"
	mustSave(t, db, runID, third)

	pages := mustPages(t, db, runID)
	if len(pages) != 1 || pages[0].Title != "first" || pages[0].Links != nil {
		t.Errorf("pages = %+v, want only the first", pages)
	}
	// Another run records it again.
	run2 := mustCreateRun(t, db)
	mustSave(t, db, run2, third)
	if pages := mustPages(t, db, run2); len(pages) != 1 || pages[0].Title != "third" {
		t.Errorf("run 2 pages = %+v", pages)
	}
}

func testStore_Runs(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)

	t.Run("NotFound", func(t *testing.T) {
		if _, err := db.LatestRun(ctx); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("LatestRun on empty db: %v, want ErrNotFound", err)
		}
		if _, err := db.Run(ctx, 42); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("Run(42): %v, want ErrNotFound", err)
		}
		if _, err := db.RunStats(ctx, 42); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("RunStats(42): %v, want ErrNotFound", err)
		}
		if _, err := db.Pages(ctx, 42); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("Pages(42): %v, want ErrNotFound", err)
		}
		if _, err := db.Targets(ctx, 42); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("Targets(42): %v, want ErrNotFound", err)
		}
		if err := db.FinishRun(ctx, 42, audit.RunComplete, time.Now(), ""); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("FinishRun(42): %v, want ErrNotFound", err)
		}
		err := db.SavePages(ctx, 42, []*audit.Page{notFoundPage("https://example.org/")})
		if !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("SavePages(42): %v, want ErrNotFound", err)
		}
		if err == nil || !strings.HasPrefix(err.Error(), "save pages: ") {
			t.Errorf("SavePages error %q lacks the operation", err)
		}
	})

	started := time.Date(2024, 5, 6, 7, 8, 9, 10, time.FixedZone("CEST", 2*3600))
	r1 := &audit.Run{
		StartedAt: started,
		Mode:      "sitemap",
		Seeds:     []string{"https://example.org/sitemap.xml"},
		Args:      []string{"crawl", "--max-depth", "3", "it's \"quoted\""},
		Version:   "v0.1.0",
	}
	if err := db.CreateRun(ctx, r1); err != nil {
		t.Fatal(err)
	}
	if r1.ID == 0 || r1.Status != audit.RunRunning {
		t.Fatalf("CreateRun left ID %d, status %q", r1.ID, r1.Status)
	}
	got, err := db.Run(ctx, r1.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *r1
	want.StartedAt = started.UTC()
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("Run = %+v\nwant %+v", got, &want)
	}

	// A run started later is the latest, even when created first... and
	// one started earlier is not, whatever its ID. Fractions of seconds
	// must order correctly (fixed-width text).
	r2 := &audit.Run{StartedAt: started.Add(500 * time.Millisecond), Mode: "urls"}
	r3 := &audit.Run{StartedAt: started.Add(-time.Hour), Mode: "dir"}
	for _, r := range []*audit.Run{r2, r3} {
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	latest, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if latest.ID != r2.ID {
		t.Errorf("LatestRun = run %d, want %d", latest.ID, r2.ID)
	}
	if latest.Seeds != nil || latest.Args != nil {
		t.Errorf("empty seeds/args read back as %#v, %#v", latest.Seeds, latest.Args)
	}

	finished := started.Add(time.Minute)
	if err := db.FinishRun(ctx, r1.ID, audit.RunFailed, finished, "store: disk full; '); DROP TABLE runs;--"); err != nil {
		t.Fatal(err)
	}
	got, err = db.Run(ctx, r1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != audit.RunFailed || !got.FinishedAt.Equal(finished) ||
		got.Error != "store: disk full; '); DROP TABLE runs;--" {
		t.Errorf("after FinishRun: %+v", got)
	}
	if err := db.FinishRun(ctx, r2.ID, audit.RunRunning, finished, ""); err == nil {
		t.Error("FinishRun accepted status running")
	}
	if err := db.FinishRun(ctx, r2.ID, "bogus", finished, ""); err == nil {
		t.Error("FinishRun accepted an unknown status")
	}

	// A run with nothing recorded has zero stats.
	stats, err := db.RunStats(ctx, r3.ID)
	if err != nil {
		t.Fatal(err)
	}
	if *stats != (audit.RunStats{}) {
		t.Errorf("RunStats of an empty run = %+v", *stats)
	}
	pages, err := db.Pages(ctx, r3.ID)
	if err != nil || len(pages) != 0 {
		t.Errorf("Pages of an empty run = %v, %v", pages, err)
	}
}
