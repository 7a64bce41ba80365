// Command benchweb serves, on loopback, the generated web linkrot's checker
// benchmark uses (check BenchmarkChecker): several hosts (distinct
// ports), 20,000 unique targets with a realistic mix of verdicts (80% HTML
// pages, 8% PDFs, 7% missing — a soft-404 host among them —, 2% gone, 3%
// moved) and an injected latency per response. Host 0 also serves
// /index.html linking every target, so any link checker can be timed on
// the same web:
//
//	go run ./cmd/benchweb -hosts 8 -targets 20000 -latency 20ms &
//	time linkrot audit http://127.0.0.1:PORT/index.html --max-pages 1 \
//	    --concurrency 32 --per-host 4 --retries 0 --fail-on none --no-archives
//	time npx linkinator http://127.0.0.1:PORT/index.html --concurrency 32
//
// With -once429 F, a fraction F of the targets answer 429 Retry-After: 1
// for a second after their first request.
//
// It prints the index URL and the latency-bound limit
// targets × latency ÷ min(concurrency, hosts × per-host) for the given
// settings, then serves until interrupted.
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	hosts := flag.Int("hosts", 8, "number of hosts (ports)")
	targets := flag.Int("targets", 20000, "number of unique targets")
	latency := flag.Duration("latency", 20*time.Millisecond, "latency added to every response")
	concurrency := flag.Int("concurrency", 32, "checker concurrency, for the printed limit")
	perHost := flag.Int("per-host", 4, "checker per-host limit, for the printed limit")
	once429 := flag.Float64("once429", 0, "fraction of targets answering 429 Retry-After: 1 for a second after their first request (issue 11's web)")
	flag.Parse()
	refuse := newOnce429(*once429)

	var bases []string
	var listeners []net.Listener
	for range *hosts {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatal(err)
		}
		listeners = append(listeners, ln)
		bases = append(bases, "http://"+ln.Addr().String())
	}
	urls := make([]string, *targets)
	for i := range urls {
		urls[i] = bases[i%*hosts] + targetPath(i)
	}
	for h, ln := range listeners {
		srv := &http.Server{Handler: handler(h == 0, h == *hosts-1, *latency, urls, refuse), ReadHeaderTimeout: 10 * time.Second}
		go func() { log.Print(srv.Serve(ln)) }()
	}
	limit := float64(*targets) * latency.Seconds() / float64(min(*concurrency, *hosts**perHost))
	fmt.Printf("index: %s/index.html\nlatency-bound limit: %.1f s (%.0f targets/s)\n", bases[0], limit, float64(*targets)/limit)
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
}

func targetPath(i int) string {
	dir := (i / 8) % 10
	switch r := i % 100; {
	case r < 80:
		return fmt.Sprintf("/p/d%d/%d", dir, i)
	case r < 88:
		return fmt.Sprintf("/files/d%d/%d.pdf", dir, i)
	case r < 95:
		return fmt.Sprintf("/missing/d%d/%d", dir, i)
	case r < 97:
		return fmt.Sprintf("/gone/d%d/%d", dir, i)
	default:
		return fmt.Sprintf("/old/d%d/%d", dir, i)
	}
}

// once429 decides which targets answer 429 once: every k-th target number,
// for a second after its first request.
type once429 struct {
	every int
	first sync.Map // target number -> time of its first request
}

func newOnce429(fraction float64) *once429 {
	if fraction <= 0 {
		return nil
	}
	return &once429{every: max(1, int(math.Round(1/fraction)))}
}

// refused reports whether the request to path p is answered 429.
func (o *once429) refused(p string) bool {
	if o == nil {
		return false
	}
	last := p[strings.LastIndex(p, "/")+1:]
	last, _, _ = strings.Cut(last, ".")
	n, err := strconv.Atoi(last)
	if err != nil || n%o.every != o.every/2 {
		return false
	}
	t, seen := o.first.LoadOrStore(n, time.Now())
	return !seen || time.Since(t.(time.Time)) < time.Second
}

func handler(index, soft bool, latency time.Duration, urls []string, refuse *once429) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if index && p == "/index.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			var b strings.Builder
			b.WriteString("<!doctype html><title>benchweb</title><ul>\n")
			for _, u := range urls {
				fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", u, u)
			}
			b.WriteString("</ul>\n")
			w.Write([]byte(b.String()))
			return
		}
		if p == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(latency)
		if refuse.refused(p) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		switch {
		case strings.HasPrefix(p, "/p/") && isNumeric(p[strings.LastIndex(p, "/")+1:]):
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>%s</title><main><h1>Page %s</h1><p>%s</p></main>", p, p, strings.Repeat("Some text about "+p+". ", 40))
		case strings.HasPrefix(p, "/files/"):
			w.Header().Set("Content-Type", "application/pdf")
			w.Write([]byte("%PDF-1.4 not really"))
		case strings.HasPrefix(p, "/old/"):
			http.Redirect(w, r, "/p/"+strings.TrimPrefix(p, "/old/"), http.StatusMovedPermanently)
		case strings.HasPrefix(p, "/gone/"):
			w.WriteHeader(http.StatusGone)
		case soft:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>Not found</title><main><p>Sorry, %s does not exist here.</p></main>", p)
		default:
			http.NotFound(w, r)
		}
	})
}

// isNumeric reports whether s is a non-empty string of ASCII digits: page
// URLs end in their number, so a probe's random last segment is a 404 (or
// a soft 404 on the last host), as in the benchmark.
func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
