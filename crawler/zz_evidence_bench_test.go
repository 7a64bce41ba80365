package crawler

import (
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/linkrot/linkrot/audit/check"
	"github.com/linkrot/linkrot/crawler/crawltest"
	"github.com/linkrot/linkrot/crawler/extract"
)

func BenchmarkZZPage(b *testing.B) {
	site := crawltest.NewGenerated(b, 100)
	resp, err := http.Get(site.URL + "/p/7")
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h := resp.Header
	u, _ := url.Parse(site.URL + "/p/7")
	b.Run("extract", func(b *testing.B) {
		for b.Loop() {
			extract.ParseDocument(body, h.Get("Content-Type"), u, h, extract.Options{})
		}
	})
	_, _, doc, _ := extract.ParseDocument(body, h.Get("Content-Type"), u, h, extract.Options{})
	b.Run("observe-shared", func(b *testing.B) {
		for b.Loop() {
			check.Observe(200, h, body, true, 0, &check.ParsedHTML{Decoded: doc.Decoded, Doc: doc.Root})
		}
	})
	b.Run("observe-alone", func(b *testing.B) {
		for b.Loop() {
			check.Observe(200, h, body, true, 0, nil)
		}
	})
}
