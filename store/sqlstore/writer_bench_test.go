package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// auditBenchPages returns pages lo..lo+n-1 of a generated site of total
// pages shaped like BenchmarkAudit's (package linkrot): each page has
// evidence and 5 links, 3 to pages of the site and 2 to external hosts
// (one target per page, one per 25 pages), so that most targets of a batch
// are new.
func auditBenchPages(lo, n, total int) []*audit.Page {
	const site = "http://127.0.0.1:8000"
	text := strings.Repeat("word text lorem ipsum ", 40)
	pages := make([]*audit.Page, n)
	for k := range pages {
		i := lo + k
		u := fmt.Sprintf("%s/p/%d", site, i)
		p := &audit.Page{
			Extraction: audit.Extraction{URL: u, Title: fmt.Sprintf("Page %d", i), Parsed: true},
			RequestURL: u, Status: 200, ContentType: "text/html", Charset: "utf-8", Size: 1200,
			FetchedAt: time.Now(), Duration: 3 * time.Millisecond,
			Evidence: &audit.PageEvidence{
				Headers: map[string]string{"Content-Type": "text/html; charset=utf-8"},
				HTML:    true, BodyCap: 1 << 20, BodyBytes: 1200, SHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
				SimHash: 0xF0F0F0F0F0F0F0F0 ^ uint64(i), Words: 160, Text: text,
			},
		}
		add := func(href, text string) {
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href, Text: text,
				Line: len(p.Links) + 1, Column: 5, LineHash: "abcd"})
		}
		for _, c := range []int{2*i + 1, 2*i + 2, (i*7919 + 13) % total} {
			if c < total {
				add(fmt.Sprintf("%s/p/%d", site, c), fmt.Sprintf("page %d", c))
			}
		}
		add(fmt.Sprintf("http://127.0.0.1:%d/t/%d", 9000+i%4, i), "t")
		add(fmt.Sprintf("http://127.0.0.1:%d/s/%d", 9000+(i/25)%4, i/25), "s")
		pages[k] = p
	}
	return pages
}

// auditBenchChecks returns checks of the external targets of pages
// lo..lo+n-1 (auditBenchPages), by URL, with soft-404 evidence as the
// audit's checker records it, and of the pages themselves, judged from the
// crawl.
func auditBenchChecks(runID int64, lo, n int) []audit.Check {
	var checks []audit.Check
	for i := lo; i < lo+n; i++ {
		u := fmt.Sprintf("http://127.0.0.1:%d/t/%d", 9000+i%4, i)
		c := benchCheck(runID, 0, u, i)
		c.Redirects = nil
		c.Soft404 = &audit.Soft404Evidence{ProbeURL: u + "-linkrot-probe", ProbeStatus: 404, Similarity: 0.1,
			Signals: []audit.Soft404Signal{{Name: "probe", Score: 0}}}
		checks = append(checks, c)
		p := benchCheck(runID, 0, fmt.Sprintf("http://127.0.0.1:8000/p/%d", i), i)
		p.Redirects, p.FromCrawl = nil, true
		checks = append(checks, p)
	}
	return checks
}

// BenchmarkSaveAuditBatch measures what the audit's writer does for a
// batch of 200 pages shaped like BenchmarkAudit's (package linkrot): one
// SaveCrawl of the pages, then one SaveChecksByURL of 400 checks of their
// targets. Each op is one batch of a site that grows with b.N.
func BenchmarkSaveAuditBatch(b *testing.B) {
	const perBatch = 200
	ctx := context.Background()
	db := MustOpen(b)
	runID := mustCreateRun(b, db)
	total := max(b.N*perBatch, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pages := auditBenchPages(i*perBatch, perBatch, total)
		checks := auditBenchChecks(runID, i*perBatch, perBatch)
		b.StartTimer()
		if err := db.SaveCrawl(ctx, runID, pages, nil); err != nil {
			b.Fatal(err)
		}
		missing, err := db.SaveChecksByURL(ctx, checks)
		if err != nil {
			b.Fatal(err)
		}
		if len(missing) != 0 {
			b.Fatalf("%d checks without a target", len(missing))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "pages/s")
}

// docsBenchPages returns pages lo..lo+n-1 of a generated documentation
// site shaped like Sphinx output (the python3.11-doc tree has about 330
// links a page): each page has 300 links, most to other pages of the site
// (a third of them with a fragment), repeated across pages, on lines of
// their own.
func docsBenchPages(lo, n int) []*audit.Page {
	const site = "http://127.0.0.1:8000"
	pages := make([]*audit.Page, n)
	for k := range pages {
		i := lo + k
		u := fmt.Sprintf("%s/library/m%d.html", site, i)
		p := &audit.Page{
			Extraction: audit.Extraction{URL: u, Title: fmt.Sprintf("Module %d", i), Parsed: true},
			RequestURL: u, Status: 200, ContentType: "text/html", Charset: "utf-8", Size: 90000,
			FetchedAt: time.Now(), Duration: 3 * time.Millisecond,
		}
		for j := range 300 {
			raw := fmt.Sprintf("m%d.html", (i*7+j*13)%600)
			if j%3 == 0 {
				raw += fmt.Sprintf("#sec-%d", j)
			}
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: site + "/library/" + raw, RawHref: raw,
				Text: fmt.Sprintf("section %d", j), Line: 40 + j, Column: 9, LineHash: fmt.Sprintf("%032x", i*1000+j)})
		}
		pages[k] = p
	}
	return pages
}

// BenchmarkSaveDocsPages measures the writer on link-heavy pages: one
// SaveCrawl of 20 pages of 300 links each (docsBenchPages) per op.
func BenchmarkSaveDocsPages(b *testing.B) {
	const perBatch = 20
	ctx := context.Background()
	db := MustOpen(b)
	runID := mustCreateRun(b, db)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pages := docsBenchPages(i*perBatch, perBatch)
		b.StartTimer()
		if err := db.SaveCrawl(ctx, runID, pages, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*perBatch*300)/b.Elapsed().Seconds(), "links/s")
}
