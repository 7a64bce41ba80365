package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// BenchmarkTargetStatuses reads the status history of 5,000 targets that
// 90 runs checked (450,000 checks), a tenth of them failing in every
// other run, as linkrot report does for the latest run (its 30 latest)
// (go test -run=^$ -bench=TargetStatuses ./store/sqlite). With
// $LINKROT_BENCH_HISTORY_DB set, the database is built once at that path and
// kept.
func BenchmarkTargetStatuses(b *testing.B) {
	const targets, runs, perTarget = 5_000, 90, 30
	ctx := context.Background()
	path := os.Getenv("LINKROT_BENCH_HISTORY_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "history.db")
	}
	_, statErr := os.Stat(path)
	db, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if statErr == nil {
		last, err := db.LatestRun(ctx)
		if err != nil {
			b.Fatal(err)
		}
		benchStatuses(b, db, last.ID, targets, perTarget)
		return
	}
	urls := make([]string, targets)
	for i := range urls {
		urls[i] = "https://host" + strconv.Itoa(i%100) + ".example/article-" + strconv.Itoa(i)
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var last int64
	for r := range runs {
		run := mustCreateRun(b, db)
		var pages []*audit.Page
		for p := 0; p < targets; p += 100 {
			pg := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/p" + strconv.Itoa(p), Parsed: true}, Status: 200}
			for _, u := range urls[p : p+100] {
				pg.Links = append(pg.Links, audit.Link{Element: "a", Attr: "href", Href: u, RawHref: u})
			}
			pages = append(pages, pg)
		}
		mustSave(b, db, run, pages...)
		refs, err := db.Targets(ctx, run)
		if err != nil {
			b.Fatal(err)
		}
		checks := make([]audit.Check, 0, len(refs))
		at := t0.Add(time.Duration(r) * 24 * time.Hour)
		for i, ref := range refs {
			v := audit.VerdictOK
			if i%10 == 0 && r%2 == 1 {
				v = audit.VerdictNotFound
			}
			checks = append(checks, audit.Check{RunID: run, TargetID: ref.ID, URL: ref.URL, Verdict: v, Status: 200, CheckedAt: at})
		}
		mustSaveChecks(b, db, checks...)
		last = run
	}
	benchStatuses(b, db, last, targets, perTarget)
}

func benchStatuses(b *testing.B, db *DB, last int64, targets, perTarget int) {
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		sts, err := db.TargetStatuses(ctx, last, perTarget)
		if err != nil {
			b.Fatal(err)
		}
		if len(sts) != targets || len(sts[0].Checks) != perTarget {
			b.Fatalf("%d statuses, %d checks in the first", len(sts), len(sts[0].Checks))
		}
	}
}
