package crawler

import (
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler/crawltest"
	"github.com/linkrot/linkrot/crawler/extract"
)

// BenchmarkEvidence compares, for one page of the generated site, the
// extraction the crawler always does with the evidence it records for the
// checker (check.Observe), sharing the extraction's parse ("shared") or
// not ("alone").
func BenchmarkEvidence(b *testing.B) {
	site := crawltest.NewGenerated(b, 100)
	resp, err := http.Get(site.URL + "/p/7")
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	h := resp.Header
	u, _ := url.Parse(site.URL + "/p/7")
	b.Run("extract", func(b *testing.B) {
		for b.Loop() {
			extract.ParseDocument(body, h.Get("Content-Type"), u, h, extract.Options{})
		}
	})
	_, _, doc, err := extract.ParseDocument(body, h.Get("Content-Type"), u, h, extract.Options{})
	if err != nil {
		b.Fatal(err)
	}
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
