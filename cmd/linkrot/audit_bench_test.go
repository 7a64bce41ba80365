package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkAuditProfile runs `linkrot audit` in-process on a generated
// 5,000-page site linking to 8 external hosts (5 ms latency), for CPU
// profiles of the whole command (before/after comparisons).
func BenchmarkAuditProfile(b *testing.B) {
	const pages = 5000
	var ext []*httptest.Server
	for range 8 {
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
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/p/%d", &i); err != nil || i >= pages {
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
		fmt.Fprintf(w, `<li><a href="%s/t/%d">t</a><li><a href="%s/s/%d">s</a></ul></main>`, ext[i%8].URL, i, ext[(i/25)%8].URL, i/25)
	}))
	defer site.Close()
	for b.Loop() {
		db := filepath.Join(b.TempDir(), "p.db")
		code := Run(context.Background(), []string{"audit", site.URL + "/p/0", "--db", db, "--no-archives", "--no-report", "--fail-on", "none",
			"--workers", "512", "--per-host", "512", "--quiet", "--allow-private"}, strings.NewReader(""), io.Discard, io.Discard)
		if code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
