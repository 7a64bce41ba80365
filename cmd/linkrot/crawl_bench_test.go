package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/linkrot/linkrot/crawler/crawltest"
)

// BenchmarkCrawlCommand runs `linkrot crawl` end to end on a generated
// 5,000-page loopback site (about 22 links per page) into a real SQLite
// file: Colly, extraction, the batched writer and the store together.
//
//	go test -run='^$' -bench=CrawlCommand -benchtime=1x ./cmd/linkrot
func BenchmarkCrawlCommand(b *testing.B) {
	const n = 5000
	site := crawltest.NewGenerated(b, n)
	var bytesServed int64
	for i := 0; b.Loop(); i++ {
		site.Bytes.Store(0)
		db := filepath.Join(b.TempDir(), "bench.db")
		var out, errb bytes.Buffer
		code := Run(context.Background(), []string{"crawl", site.URL + "/p/0", "--db", db, "--concurrency", "8", "--ignore-robots"},
			strings.NewReader(""), &out, &errb)
		if code != 0 || !strings.Contains(out.String(), "Crawled 5000 pages") {
			b.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
		}
		bytesServed += site.Bytes.Load()
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N*n)/sec, "pages/s")
	b.ReportMetric(float64(bytesServed)/sec/1e6, "MB/s")
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
}
