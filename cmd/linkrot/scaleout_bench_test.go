package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchWeb is a latency-bound web: site A (pages of 30 ms) linking to
// targets on five slow hosts (200 ms each).
type benchWeb struct {
	site  *httptest.Server
	slow  []*httptest.Server
	meter []*hostMeter
}

func newBenchWeb(b *testing.B, pages, perPage int) *benchWeb {
	w := &benchWeb{}
	for i := range 5 {
		m := &hostMeter{name: fmt.Sprintf("S%d", i), latency: 200 * time.Millisecond}
		m.reset()
		w.meter = append(w.meter, m)
		w.slow = append(w.slow, httptest.NewServer(m.wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "7") {
				http.NotFound(rw, r)
				return
			}
			fmt.Fprint(rw, "<!doctype html><title>t</title><p>target</p>")
		}))))
	}
	m := &hostMeter{name: "A", latency: 30 * time.Millisecond}
	m.reset()
	w.meter = append(w.meter, m)
	w.site = httptest.NewServer(m.wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var i int
		if r.URL.Path != "/" {
			if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &i); err != nil || i >= pages || r.URL.Path != fmt.Sprintf("/p%d", i) {
				http.NotFound(rw, r)
				return
			}
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, `<a href="/p%d">n</a> <a href="/p%d">m</a> `, (i+1)%pages, (i*7+3)%pages)
		for k := range perPage {
			fmt.Fprintf(&sb, `<a href="%s/t%d-%d">t</a> `, w.slow[(i+k)%5].URL, i, k)
		}
		rw.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(rw, "<!doctype html><title>p</title><body>%s</body>", sb.String())
	})))
	b.Cleanup(func() {
		for _, s := range append(w.slow, w.site) {
			s.Close()
		}
	})
	return w
}

func (w *benchWeb) requests() int {
	n := 0
	for _, m := range w.meter {
		m.mu.Lock()
		n += len(m.starts)
		m.mu.Unlock()
	}
	return n
}

// BenchmarkScaleOut audits a latency-bound web (40 pages, 320 targets on
// five slow hosts, --per-host 2) with 1, 2 and 4 in-process workers of 4
// units each on an embedded NATS server and a SQLite file: throughput
// grows with the workers until the per-host limits bind (5 slow hosts x 2
// = 10 requests in flight at most).
//
//	go test -run '^$' -bench BenchmarkScaleOut -benchtime 1x ./cmd/linkrot
func BenchmarkScaleOut(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			web := newBenchWeb(b, 40, 8)
			ns := startNATS(b)
			db := filepath.Join(b.TempDir(), "l.db")
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer func() {
				cancel()
				wg.Wait()
			}()
			args := []string{"--nats", ns.ClientURL(), "--partitions", "64", "--db", db}
			openDB(b, db).Close() // the database exists before the workers open it
			for range n {
				wg.Go(func() {
					Run(ctx, append([]string{"worker", "--workers", "4", "--log-level", "error"}, args...), strings.NewReader(""), io.Discard, io.Discard)
				})
			}
			b.ResetTimer()
			before, start := web.requests(), time.Now()
			for b.Loop() {
				var stderr strings.Builder
				if code := Run(context.Background(), append(append([]string{"audit"}, args...), "--per-host", "2", "--allow-private", "--no-report",
					"--fail-on", "none", "--no-archives", web.site.URL+"/"), strings.NewReader(""), io.Discard, &stderr); code != exitOK {
					b.Fatalf("audit --nats: exit %d\n%s", code, stderr.String())
				}
			}
			b.StopTimer()
			secs := time.Since(start).Seconds()
			b.ReportMetric(float64(web.requests()-before)/secs, "requests/s")
			most := 0
			for _, m := range web.meter {
				m.mu.Lock()
				most = max(most, m.most)
				m.mu.Unlock()
			}
			b.ReportMetric(float64(most), "max-in-flight/host")
			if most > 2 {
				b.Errorf("%d requests in flight to one host, --per-host 2", most)
			}
		})
	}
}
