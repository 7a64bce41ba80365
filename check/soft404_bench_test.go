package check

import (
	"bytes"
	"net/url"
	"testing"

	"github.com/linkrot/linkrot/drift/textsim"
	"golang.org/x/net/html"
)

// BenchmarkSoft404Classify measures the classifier alone on a long
// documentation page compared with a catch-all probe answer: the cost a
// 2xx HTML target adds to its check beyond fetching and fingerprinting.
func BenchmarkSoft404Classify(b *testing.B) {
	fp := fingerprintPage([]byte(docPage()), "text/html", false, nil, false)
	pw := textsim.Words(textsim.MainText([]byte(layout(article))))
	probe := &probeResult{url: "https://example.com/docs/abc", final: "https://example.com/docs/abc", status: 200,
		words: pw, shingles: shingleSet(pw, soft404Shingle), urlWords: urlWords(&url.URL{Path: "/docs/abc"})}
	u, _ := url.Parse("https://example.com/docs/howto/404.html")
	in := &soft404Input{start: u, final: u, words: fp.words, count: fp.count, page: fp.signals,
		simhash: fp.simhash, probe: probe, probeThreshold: defaultSoft404Threshold}
	b.ReportAllocs()
	for b.Loop() {
		if res := classifySoft404(in); res.verdict != "" {
			b.Fatal(res.reason)
		}
	}
	b.ReportMetric(float64(len(fp.words)), "words/page")
}

// BenchmarkPageSignals measures reading the title, headings and parking
// fingerprints of a parsed page (done with the fingerprint of every 2xx
// HTML target and crawled page).
func BenchmarkPageSignals(b *testing.B) {
	body := []byte(docPage())
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if pageSignals(doc) == nil {
			b.Fatal("no signals")
		}
	}
}
