package check

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// BenchmarkRateLimitedHost: a generated loopback web where one host
// enforces a token bucket (20 requests/s, burst 10; beyond it 429 with
// Retry-After) beside four fast hosts. It reports when the limited host's
// targets are all done against their floor (targets ÷ rate; the goal is
// within 1.5× the floor + 5 s), how long the fast hosts take beside it and
// alone (they must not be slowed), requests sent inside a Retry-After
// window after the 429 that opened it was received (must be 0) and
// targets called broken (must be 0):
//
//	go test -run='^$' -bench=RateLimitedHost -benchtime=1x ./check/
func BenchmarkRateLimitedHost(b *testing.B) {
	const (
		limitedTargets = 300
		rate, burst    = 20.0, 10.0
		fastHosts      = 4
		fastTargets    = 2000 // in all
		latency        = 10 * time.Millisecond
	)
	var fast []*server
	for range fastHosts {
		s := newServer(b)
		s.handle("/", func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(latency)
			w.Header().Set("Content-Type", "text/plain")
		})
		fast = append(fast, s)
	}
	var fastOnly []Target
	for i := range fastTargets {
		fastOnly = append(fastOnly, Target{URL: fmt.Sprintf("%s/f/%d", fast[i%fastHosts].URL, i)})
	}
	o := Options{AllowPrivate: true, Workers: 64, PerHost: 16, Retries: 20, MaxRetryWait: 10 * time.Second}

	var limitedS, fastS, aloneS, violations, broken, refused float64
	for range b.N {
		ws := newWindowServer(b, rate, burst)
		targets := append([]Target(nil), fastOnly...)
		for i := range limitedTargets {
			targets = append(targets, Target{URL: fmt.Sprintf("%s/l/%d", ws.URL, i)})
		}
		oo := o
		oo.Transport = loopbackTransport(o.PerHost)
		var mu sync.Mutex
		var lastLimited, lastFast time.Time
		nBroken := 0
		start := time.Now()
		if err := New(oo).Run(context.Background(), targets, func(c audit.Check) {
			mu.Lock()
			defer mu.Unlock()
			if strings.HasPrefix(c.URL, ws.URL) {
				lastLimited = time.Now()
			} else {
				lastFast = time.Now()
			}
			if c.Verdict.Broken() || c.Verdict == audit.VerdictRateLimited {
				nBroken++
			}
		}); err != nil {
			b.Fatal(err)
		}
		limitedS += lastLimited.Sub(start).Seconds()
		fastS += lastFast.Sub(start).Seconds()
		violations += float64(ws.violations.Load())
		refused += float64(ws.refused.Load())
		broken += float64(nBroken)

		oo.Transport = loopbackTransport(o.PerHost)
		start = time.Now()
		if err := New(oo).Run(context.Background(), fastOnly, func(audit.Check) {}); err != nil {
			b.Fatal(err)
		}
		aloneS += time.Since(start).Seconds()
	}
	n := float64(b.N)
	floor := limitedTargets / rate
	b.ReportMetric(limitedS/n, "limited-s")
	b.ReportMetric(floor, "floor-s")
	b.ReportMetric(limitedS/n/floor, "x-floor")
	b.ReportMetric(fastS/n, "fast-beside-s")
	b.ReportMetric(aloneS/n, "fast-alone-s")
	b.ReportMetric(violations/n, "in-window-reqs")
	b.ReportMetric(refused/n, "429s")
	b.ReportMetric(broken/n, "not-ok")
	b.ReportMetric(0, "ns/op")
	if goal := 1.5*floor + 5; limitedS/n > goal {
		b.Errorf("limited host done in %.1fs, goal %.1fs (1.5x floor + 5s)", limitedS/n, goal)
	}
	if violations > 0 || broken > 0 {
		b.Errorf("%.0f requests inside a Retry-After window, %.0f targets not ok", violations, broken)
	}
}

// BenchmarkFivePercent429: one host carries 5,000 URLs, 5% of which answer
// 429 with Retry-After: 1 for a second after their first request. linkrot's
// checker against a minimal net/http checker built here (same
// concurrency) that only retries those URLs after their Retry-After; the
// goal is to finish within a few seconds of it, with nothing broken:
//
//	go test -run='^$' -bench=FivePercent429 -benchtime=1x ./check/
func BenchmarkFivePercent429(b *testing.B) {
	const (
		n       = 5000
		latency = 20 * time.Millisecond
		workers = 256
	)
	newWeb := func() *server {
		s := newServer(b)
		var seen sync.Map
		s.handle("/", func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(latency)
			i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/u/"))
			if i%20 == 7 {
				first, loaded := seen.LoadOrStore(i, time.Now())
				if !loaded || time.Since(first.(time.Time)) < time.Second {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
			}
			w.Header().Set("Content-Type", "text/plain")
		})
		return s
	}
	var linkrotS, plainS, notOK, plainNotOK, reqs float64
	for range b.N {
		web := newWeb()
		var targets []Target
		for i := range n {
			targets = append(targets, Target{URL: fmt.Sprintf("%s/u/%d", web.URL, i)})
		}
		sched := politeness.New(politeness.Options{PerHost: workers, MaxRetryWait: 10 * time.Second})
		o := Options{AllowPrivate: true, Workers: workers, PerHost: workers, MaxRetryWait: 10 * time.Second, Scheduler: sched}
		var bad atomic.Int64
		start := time.Now()
		if err := New(o).Run(context.Background(), targets, func(c audit.Check) {
			if c.Verdict != audit.VerdictOK {
				bad.Add(1)
			}
		}); err != nil {
			b.Fatal(err)
		}
		linkrotS += time.Since(start).Seconds()
		for _, k := range sched.Keys() {
			b.Logf("%+v", sched.State(k))
		}
		notOK += float64(bad.Load())
		reqs += float64(web.requests.Load())

		web2 := newWeb()
		var urls []string
		for i := range n {
			urls = append(urls, fmt.Sprintf("%s/u/%d", web2.URL, i))
		}
		start = time.Now()
		plainNotOK += float64(plainChecker(urls, workers))
		plainS += time.Since(start).Seconds()
	}
	k := float64(b.N)
	b.ReportMetric(linkrotS/k, "linkrot-s")
	b.ReportMetric(plainS/k, "plain-s")
	b.ReportMetric((linkrotS-plainS)/k, "diff-s")
	b.ReportMetric(notOK/k, "not-ok")
	b.ReportMetric(plainNotOK/k, "plain-not-ok")
	b.ReportMetric(reqs/k, "requests")
	b.ReportMetric(0, "ns/op")
	if notOK > 0 {
		b.Errorf("%.0f targets not ok", notOK)
	}
}

// plainChecker is the yardstick: workers GET each URL once; a 429 is
// retried after its Retry-After (without holding a worker), anything else
// is final. It returns how many URLs did not end in 2xx.
func plainChecker(urls []string, workers int) int {
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: workers, MaxIdleConnsPerHost: workers}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	queue := make(chan string, len(urls))
	for _, u := range urls {
		queue <- u
	}
	var pending sync.WaitGroup
	pending.Add(len(urls))
	var bad atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for u := range queue {
				resp, err := client.Get(u)
				if err != nil {
					bad.Add(1)
					pending.Done()
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusTooManyRequests {
					secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
					time.AfterFunc(time.Duration(secs)*time.Second, func() { queue <- u })
					continue
				}
				if resp.StatusCode >= 300 {
					bad.Add(1)
				}
				pending.Done()
			}
		})
	}
	pending.Wait()
	close(queue)
	wg.Wait()
	return int(bad.Load())
}
