package linkrot_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/profiling"
	"github.com/linkrot/linkrot/store/engines"
)

// BenchmarkAuditDir runs the whole pipeline on the directory named by
// $LINKROT_BENCH_DIR (a documentation tree, such as
// /usr/share/doc/python-django-doc/html) served on loopback, from its
// index.html, checking only the tree's own URLs. It is skipped without
// the variable.
func BenchmarkAuditDir(b *testing.B) {
	dir := os.Getenv("LINKROT_BENCH_DIR")
	if dir == "" {
		b.Skip("LINKROT_BENCH_DIR not set")
	}
	site := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer site.Close()
	ctx := context.Background()
	for b.Loop() {
		store, err := engines.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		run := &audit.Run{StartedAt: time.Now().UTC(), Mode: "site", Seeds: []string{site.URL + "/index.html"}}
		if err := store.CreateRun(ctx, run); err != nil {
			b.Fatal(err)
		}
		job := openJob(b, store, run, linkrot.Settings{
			PerHost:  64,
			Check:    linkrot.CheckSettings{Workers: 64, Skip: []string{`^https?://[^/:]*[a-zA-Z]`}},
			Archives: linkrot.ArchiveSettings{Off: true},
		})
		if _, err := job.Audit(ctx, store, stageTimer{b: b, start: time.Now()}); err != nil {
			b.Fatal(err)
		}
		store.Close()
	}
}

// BenchmarkAudit runs the whole pipeline (crawl, checks, findings,
// history, into SQLite) on a generated site of 1,000 pages linking to 4
// external hosts, as cmd/linkrotbench serves at larger sizes. Profile it
// with -cpuprofile.
func BenchmarkAudit(b *testing.B) {
	pages := 1000
	if n, err := strconv.Atoi(os.Getenv("LINKROT_BENCH_PAGES")); err == nil && n > 0 {
		pages = n
	}
	var ext []*httptest.Server
	for range 4 {
		ext = append(ext, httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(5 * time.Millisecond)
			if strings.HasSuffix(r.URL.Path, "7") {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>%s</title><p>External %s %s</p>", r.URL.Path, r.URL.Path, strings.Repeat("lorem ipsum ", 30))
		})))
	}
	defer func() {
		for _, s := range ext {
			s.Close()
		}
	}()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/p/%d", &i); err != nil || i >= pages || r.URL.Path != fmt.Sprintf("/p/%d", i) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Page %d</title><main><h1>Page %d</h1><p>%s</p><ul>", i, i, strings.Repeat(fmt.Sprintf("word%d text ", i), 40))
		for _, c := range []int{2*i + 1, 2*i + 2, (i*7919 + 13) % pages} {
			if c < pages {
				fmt.Fprintf(w, `<li><a href="/p/%d">page %d</a>`, c, c)
			}
		}
		fmt.Fprintf(w, `<li><a href="%s/t/%d">t</a><li><a href="%s/s/%d">s</a></ul></main>`, ext[i%4].URL, i, ext[(i/25)%4].URL, i/25)
	}))
	defer site.Close()
	ctx := context.Background()
	if path := os.Getenv("LINKROT_BENCH_HEAPPROFILE"); path != "" {
		var peak uint64
		stop, err := profiling.Start("", path, &peak)
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := stop(); err != nil {
				b.Error(err)
			}
			b.Logf("peak heap %d MB (profile near it: %s)", peak, path)
		}()
	}
	for b.Loop() {
		store, err := engines.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		run := &audit.Run{StartedAt: time.Now().UTC(), Mode: "site", Seeds: []string{site.URL + "/p/0"}}
		if err := store.CreateRun(ctx, run); err != nil {
			b.Fatal(err)
		}
		job := openJob(b, store, run, linkrot.Settings{
			PerHost: 512,
			// The external hosts are on loopback too.
			Check:    linkrot.CheckSettings{Workers: 512, AllowPrivate: true},
			Archives: linkrot.ArchiveSettings{Off: true},
		})
		sum, err := job.Audit(ctx, store, stageTimer{b: b, start: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Stats.Pages != pages {
			b.Fatalf("%d pages crawled, want %d", sum.Stats.Pages, pages)
		}
		store.Close()
	}
}

// stageTimer logs when each stage starts (go test -v -bench).
type stageTimer struct {
	b     *testing.B
	start time.Time
}

func (stageTimer) Page(*audit.Page)     {}
func (stageTimer) Checked(*audit.Check) {}

func (s stageTimer) Stage(name string) { s.b.Logf("%6.3fs %s", time.Since(s.start).Seconds(), name) }
