package dashboard

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/engines"
)

// benchDB builds a finished run of pages pages with links links each over
// pages*links/4 targets, a quarter of them broken.
func benchDB(b *testing.B, pages, links int) string {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "bench.db")
	db, err := engines.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	run := &audit.Run{Mode: "site", Seeds: []string{site}, Version: "bench"}
	if err := db.CreateRun(ctx, run); err != nil {
		b.Fatal(err)
	}
	targets := pages * links / 4
	var batch []*audit.Page
	for p := 0; p < pages; p++ {
		pg := &audit.Page{Extraction: audit.Extraction{URL: fmt.Sprintf("https://site.example/p/%d", p), Parsed: true}, Status: 200}
		for l := 0; l < links; l++ {
			u := fmt.Sprintf("https://t%d.example/x/%d", (p*links+l)%97, (p*links+l)%targets)
			pg.Links = append(pg.Links, audit.Link{Element: "a", Attr: "href", Href: u, RawHref: u, Text: fmt.Sprintf("link %d", l)})
		}
		batch = append(batch, pg)
		if len(batch) == 200 || p == pages-1 {
			if err := db.SavePages(ctx, run.ID, batch); err != nil {
				b.Fatal(err)
			}
			batch = nil
		}
	}
	refs, err := db.Targets(ctx, run.ID)
	if err != nil {
		b.Fatal(err)
	}
	checks := make([]audit.Check, len(refs))
	for i, t := range refs {
		v, st := audit.VerdictOK, 200
		if i%4 == 0 {
			v, st = audit.VerdictNotFound, 404
		}
		checks[i] = audit.Check{RunID: run.ID, TargetID: t.ID, URL: t.URL, Verdict: v, Status: st, CheckedAt: time.Now()}
	}
	if err := db.SaveChecks(ctx, checks); err != nil {
		b.Fatal(err)
	}
	if err := db.FinishRun(ctx, run.ID, audit.RunComplete, time.Now(), ""); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkDashboard_Broken renders the broken-links table of a run of
// 1,000 pages and 20,000 links: cold (the run read from the database) and
// warm (from the cache, as when a filter changes).
func BenchmarkDashboard_Broken(b *testing.B) {
	path := benchDB(b, 1000, 20)
	db, err := engines.OpenReadOnly(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warm"
		}
		b.Run(name, func(b *testing.B) {
			h := New(db, Options{}).(*handler)
			if warm {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/broken", nil))
			}
			b.ReportAllocs()
			for b.Loop() {
				if !warm {
					h.cache.mu.Lock()
					clear(h.cache.entries)
					h.cache.mu.Unlock()
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/broken?verdict=not-found&p=2", nil))
				if rec.Code != 200 {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}
