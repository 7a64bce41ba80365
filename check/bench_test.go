package check

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// BenchmarkChecker checks 20,000 unique targets on 8 hosts whose every
// response takes 20ms, and reports how close the checker comes to the
// latency-bound limit min(Workers, hosts×PerHost) / latency:
//
//	go test -run='^$' -bench=Checker -benchtime=1x ./check/
//
// The mix is mostly 200 HTML pages, with 404s, 410s, 301s, non-HTML files
// and a soft-404 host; directories are few, so soft-404 probes are a
// small share of the requests.
func BenchmarkChecker(b *testing.B) {
	const (
		nHosts   = 8
		nTargets = 20000
		latency  = 20 * time.Millisecond
	)
	o := Options{AllowPrivate: true}
	chk := New(o)

	var targets []Target
	var servers []*server
	for h := range nHosts {
		softHost := h == nHosts-1
		mux := http.NewServeMux()
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(latency)
			p := r.URL.Path
			switch {
			case strings.HasPrefix(p, "/p/") && isNumeric(p[strings.LastIndex(p, "/")+1:]):
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprintf(w, "%s", layout("<h1>Page "+p+"</h1><p>"+strings.Repeat("Some text about "+p+". ", 40)+"</p>"))
			case strings.HasPrefix(p, "/files/"):
				w.Header().Set("Content-Type", "application/pdf")
				w.Write([]byte("%PDF-1.4 not really"))
			case strings.HasPrefix(p, "/old/"):
				http.Redirect(w, r, "/p/"+strings.TrimPrefix(p, "/old/"), http.StatusMovedPermanently)
			case strings.HasPrefix(p, "/gone/"):
				w.WriteHeader(http.StatusGone)
			case softHost:
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(notFoundPage(p)))
			default:
				http.NotFound(w, r)
			}
		})
		s := newBenchServer(b, mux)
		servers = append(servers, s)
	}
	for i := range nTargets {
		base := servers[i%nHosts].URL
		dir := (i / nHosts) % 10
		var path string
		switch r := i % 100; {
		case r < 80:
			path = fmt.Sprintf("/p/d%d/%d", dir, i)
		case r < 88:
			path = fmt.Sprintf("/files/d%d/%d.pdf", dir, i)
		case r < 95:
			path = fmt.Sprintf("/missing/d%d/%d", dir, i) // 404, or a soft 404 on the last host
		case r < 97:
			path = fmt.Sprintf("/gone/d%d/%d", dir, i)
		default:
			path = fmt.Sprintf("/old/d%d/%d", dir, i)
		}
		targets = append(targets, Target{ID: int64(i), URL: base + path})
	}

	limit := float64(min(chk.o.Workers, nHosts*chk.o.PerHost)) / latency.Seconds()
	b.ResetTimer()
	var counts map[audit.Verdict]int
	for range b.N {
		var mu sync.Mutex
		counts = map[audit.Verdict]int{}
		if err := chk.Run(context.Background(), targets, func(c audit.Check) {
			mu.Lock()
			counts[c.Verdict]++
			mu.Unlock()
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perSec := float64(nTargets*b.N) / b.Elapsed().Seconds()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(perSec, "targets/s")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB") // Linux: KiB
	b.ReportMetric(perSec/limit, "ratio")
	b.ReportMetric(0, "ns/op")
	var reqs, conns int64
	for _, s := range servers {
		reqs += s.requests.Load()
		conns += s.conns.Load()
	}
	b.Logf("verdicts %v; %d requests on %d connections; limit %.0f targets/s", counts, reqs, conns, limit)
}

func newBenchServer(b *testing.B, h http.Handler) *server {
	s := newServer(b)
	s.mux.Handle("/", h)
	return s
}

func isNumeric(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
