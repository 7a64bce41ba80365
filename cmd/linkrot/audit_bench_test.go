package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkrot/linkrot/internal/pgtest"
)

// BenchmarkAuditProfile runs `linkrot audit` in-process on a generated
// 5,000-page site linking to 8 external hosts (5 ms latency), for CPU
// profiles of the whole command (before/after comparisons).
func BenchmarkAuditProfile(b *testing.B) {
	site := newProfileSite(b)
	for b.Loop() {
		db := filepath.Join(b.TempDir(), "p.db")
		code := Run(context.Background(), []string{"audit", site.URL + "/p/0", "--db", db, "--no-archives", "--no-report", "--fail-on", "none",
			"--workers", "512", "--per-host", "512", "--quiet", "--allow-private"}, strings.NewReader(""), io.Discard, io.Discard)
		if code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// newProfileSite starts the generated site of BenchmarkAuditProfile, closed
// when b ends.
func newProfileSite(b *testing.B) *httptest.Server {
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
		fmt.Fprintf(w, `<li><a href="%s/t/%d">t</a><li><a href="%s/s/%d">s</a></ul></main>`, ext[i%8].URL, i, ext[(i/25)%8].URL, i/25)
	}))
	b.Cleanup(site.Close)
	for _, e := range ext {
		b.Cleanup(e.Close)
	}
	return site
}

// BenchmarkAuditBackends runs the audit of BenchmarkAuditProfile into a new
// SQLite file and into a new PostgreSQL database (the test's loopback
// server, fsync off), and reports the database's size.
func BenchmarkAuditBackends(b *testing.B) {
	site := newProfileSite(b)
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			var size int64
			for b.Loop() {
				b.StopTimer()
				db := filepath.Join(b.TempDir(), "p.db")
				if backend == "postgres" {
					db = pgtest.DSN(b)
				}
				b.StartTimer()
				code := Run(context.Background(), []string{"audit", site.URL + "/p/0", "--db", db, "--no-archives", "--no-report", "--fail-on", "none",
					"--workers", "512", "--per-host", "512", "--quiet", "--allow-private"}, strings.NewReader(""), io.Discard, io.Discard)
				if code != 0 {
					b.Fatalf("exit %d", code)
				}
				b.StopTimer()
				size = dbSize(b, db)
				b.StartTimer()
			}
			b.ReportMetric(float64(size)/(1<<20), "MiB")
		})
	}
}

// dbSize is the size of a SQLite file (with its WAL) or of the tables and
// indexes of a PostgreSQL database.
func dbSize(b *testing.B, db string) int64 {
	ctx := context.Background()
	if !strings.HasPrefix(db, "postgres") {
		var n int64
		for _, suffix := range []string{"", "-wal"} {
			if st, err := os.Stat(db + suffix); err == nil {
				n += st.Size()
			}
		}
		return n
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, `SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
		JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = 'public' AND c.relkind = 'r'`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
