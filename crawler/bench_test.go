package crawler_test

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/crawler/crawltest"
)

type countSink struct{ pages, links atomic.Int64 }

func (c *countSink) Add(p *audit.Page) {
	c.pages.Add(1)
	c.links.Add(int64(len(p.Links)))
}

// BenchmarkCrawl crawls a generated 5,000-page loopback site (about 13 MB of
// HTML) with 8 parallel requests into a counting sink (no database: see
// cmd/linkrot BenchmarkCrawlCommand for the crawl into SQLite) and reports
// pages/s, MB/s and the process's peak RSS.
func BenchmarkCrawl(b *testing.B) {
	const n = 5000
	site := crawltest.NewGenerated(b, n)
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		site.Bytes.Store(0)
		sink := &countSink{}
		st, err := crawler.New(crawler.Options{PerHost: 8}, sink).Crawl(context.Background(), []string{site.URL + "/p/0"})
		if err != nil {
			b.Fatal(err)
		}
		if st.Pages != n {
			b.Fatalf("crawled %d pages, want %d", st.Pages, n)
		}
	}
	cpu := cpuTime() - cpu0
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N*n)/sec, "pages/s")
	// CPU time (user and system, the in-process test site included) per
	// crawl: steadier than wall time on a shared machine.
	b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(site.Bytes.Load())*float64(b.N)/sec/1e6, "MB/s")
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}
