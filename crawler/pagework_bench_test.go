package crawler

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler/crawltest"
	"github.com/linkrot/linkrot/crawler/extract"
)

// benchPage is one HTML page as the crawler received it.
type benchPage struct {
	u    *url.URL
	h    http.Header
	body []byte
}

// benchPages returns the pages BenchmarkPageWork works on: the HTML files
// of the directory named by LINKROT_BENCH_HTML (read at benchmark time,
// every len/60th in name order, about 60: a documentation tree such as the Django
// docs), else 20 pages of the generated site.
func benchPages(b *testing.B) []benchPage {
	// The header as the crawler's transport leaves it (capTransport): the
	// media type, and the server's Content-Type beside it, which the
	// extraction and the evidence read.
	h := http.Header{"Content-Type": {"text/html"}, headerOrigContentType: {"text/html; charset=utf-8"}}
	if dir := os.Getenv("LINKROT_BENCH_HTML"); dir != "" {
		var paths []string
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(p) == ".html" {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		sort.Strings(paths)
		var pages []benchPage
		step := max(1, len(paths)/60)
		if os.Getenv("LINKROT_BENCH_ALL") == "1" {
			step = 1
		}
		for i := 0; i < len(paths); i += step {
			p := paths[i]
			body, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, p)
			u, _ := url.Parse("http://docs.test/" + filepath.ToSlash(rel))
			pages = append(pages, benchPage{u: u, h: h, body: body})
		}
		return pages
	}
	site := crawltest.NewGenerated(b, 100)
	var pages []benchPage
	for i := range 20 {
		raw := site.URL + "/p/" + strconv.Itoa(i*5)
		resp, err := http.Get(raw)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		u, _ := url.Parse(raw)
		h := resp.Header
		if ct := h.Get("Content-Type"); ct != "" {
			h.Set(headerOrigContentType, ct)
			h.Set("Content-Type", "text/html")
		}
		pages = append(pages, benchPage{u: u, h: h, body: body})
	}
	return pages
}

// BenchmarkPageWork is the crawler's per-page CPU work outside the
// database: the extraction (parse, links, positions) and the evidence
// for the checker (check.Observe on the same parse), for each page of
// benchPages per op.
//
//	LINKROT_BENCH_HTML=/usr/share/doc/python-django-doc/html go test -run='^$' -bench=PageWork -benchmem ./crawler/
func BenchmarkPageWork(b *testing.B) {
	b.Run("onepass", func(b *testing.B) { benchPageWork(b, extract.ParseDocument) })
	// The tree path (html.Parse of every page), the reference the one
	// pass replaced, measured in the same run.
	b.Run("tree", func(b *testing.B) { benchPageWork(b, extract.ParseTree) })
}

// BenchmarkPageWorkPyDocs is BenchmarkPageWork over every page of the
// python3.11-doc tree (530 pages per op), by the one pass and by the tree.
//
//	go test -run='^$' -bench=PageWorkPyDocs -benchmem ./crawler/
func BenchmarkPageWorkPyDocs(b *testing.B) {
	const dir = "/usr/share/doc/python3.11/html"
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("%s is absent (install python3.11-doc): %v", dir, err)
	}
	b.Setenv("LINKROT_BENCH_HTML", dir)
	b.Setenv("LINKROT_BENCH_ALL", "1")
	b.Run("onepass", func(b *testing.B) { benchPageWork(b, extract.ParseDocument) })
	b.Run("tree", func(b *testing.B) { benchPageWork(b, extract.ParseTree) })
}

func benchPageWork(b *testing.B, parse func([]byte, string, *url.URL, http.Header, extract.Options) (audit.Extraction, string, *extract.Document, error)) {
	pages := benchPages(b)
	cr := &crawl{Crawler: &Crawler{opts: Options{Observe: check.Observer(0)}}}
	var size int64
	for _, p := range pages {
		size += int64(len(p.body))
	}
	b.SetBytes(size)
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for b.Loop() {
		for _, pg := range pages {
			ex, _, doc, err := parse(pg.body, pg.h.Get(headerOrigContentType), pg.u, pg.h, extract.Options{})
			if err != nil {
				b.Fatal(err)
			}
			p := &audit.Page{Status: 200, Extraction: ex}
			if cr.evidence(p, pg.h, pg.body, doc) == nil {
				b.Fatal("no evidence")
			}
		}
	}
	// CPU time (user and system, the garbage collector's included) per
	// op: steadier than wall time on a shared machine.
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
}
