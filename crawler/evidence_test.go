package crawler

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler/crawltest"
	"github.com/linkrot/linkrot/crawler/extract"
	"github.com/linkrot/linkrot/internal/pagefacts"
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
			check.Observe(200, h, body, true, 0, &check.ParsedHTML{Decoded: doc.Decoded, Doc: doc.Root, Facts: doc.Facts})
		}
	})
	b.Run("observe-alone", func(b *testing.B) {
		for b.Loop() {
			check.Observe(200, h, body, true, 0, nil)
		}
	})
}

// TestEvidence_Observe: Options.Observe gets the header as the server sent
// it (its Content-Type put back, the crawler's own fields gone), the body,
// whether it is complete, and the extraction's parse to reuse; without
// Observe a page carries no evidence.
func TestEvidence_Observe(t *testing.T) {
	h := http.Header{}
	h.Set("Content-Type", "text/plain") // what capTransport passed on
	h.Set(headerOrigContentType, "text/html; charset=utf-8")
	h.Set(headerFile, "/tmp/x.html")
	h.Set("ETag", `"e"`)
	body := []byte("<title>x</title><p id=a>hi")
	u, _ := url.Parse("http://example.org/")
	_, _, doc, err := extract.ParseDocument(body, "text/html; charset=utf-8", u, h, extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got http.Header
	var gotDoc bool
	cr := &crawl{Crawler: &Crawler{opts: Options{Observe: func(status int, header http.Header, b []byte, complete bool, parsed *pagefacts.Parsed) *audit.PageEvidence {
		got, gotDoc = header, parsed != nil && parsed.Doc == doc.Root && parsed.Facts == doc.Facts && string(parsed.Decoded) == string(doc.Decoded)
		if status != 200 || string(b) != string(body) || complete {
			t.Errorf("Observe(%d, %q, complete %v)", status, b, complete)
		}
		return check.Observe(status, header, b, complete, 0, parsed)
	}}}}
	p := &audit.Page{Status: 200, Truncated: true}
	e := cr.evidence(p, h, body, doc)
	if e == nil || !e.HTML || e.ETag != `"e"` || !reflect.DeepEqual(e.Anchors, []string{"a"}) {
		t.Errorf("evidence %+v", e)
	}
	if got.Get("Content-Type") != "text/html; charset=utf-8" || got.Get(headerOrigContentType) != "" || got.Get(headerFile) != "" || !gotDoc {
		t.Errorf("Observe got header %v, the parse %v", got, gotDoc)
	}
	if h.Get("Content-Type") != "text/plain" {
		t.Errorf("the crawler's header was changed: %v", h)
	}
	if e := (&crawl{Crawler: &Crawler{}}).evidence(p, h, body, doc); e != nil {
		t.Errorf("no Observe: evidence %+v", e)
	}
}

// TestEvidence_LongerThanCap: a page longer than the checker's body cap is
// observed on its prefix; the prefix is read by the one pass (the
// Parsed.Read the crawler offers), not parsed into a tree, and the
// evidence is the one Observe records without the crawler's parse.
func TestEvidence_LongerThanCap(t *testing.T) {
	h := http.Header{}
	h.Set("Content-Type", "text/html")
	h.Set(headerOrigContentType, "text/html; charset=utf-8")
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>Long page</title></head><body><h1>Index</h1><main>")
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "<p id=p%d>Entry %d of the index, <a href=\"/e/%d\">entry %d</a> and <em>more</em> words.</p>\n", i, i, i, i)
	}
	b.WriteString("</main></body></html>")
	body := []byte(b.String())
	u, _ := url.Parse("http://example.org/index.html")
	_, _, doc, err := extract.ParseDocument(body, "text/html; charset=utf-8", u, h, extract.Options{})
	if err != nil || doc.Facts == nil {
		t.Fatalf("ParseDocument: %v, facts %v", err, doc != nil && doc.Facts != nil)
	}
	const maxBody = 20 << 10 // cuts the page inside an element
	reads := 0
	cr := &crawl{Crawler: &Crawler{opts: Options{Observe: func(status int, header http.Header, b []byte, complete bool, parsed *pagefacts.Parsed) *audit.PageEvidence {
		read := parsed.Read
		if read == nil {
			t.Fatal("the crawler offers no Read")
		}
		parsed.Read = func(d []byte) *pagefacts.Facts {
			reads++
			if len(d) != maxBody {
				t.Errorf("Read of %d bytes, want the %d of the cap", len(d), maxBody)
			}
			return read(d)
		}
		return check.Observe(status, header, b, complete, maxBody, parsed)
	}}}}
	got := cr.evidence(&audit.Page{Status: 200}, h, body, doc)
	if reads != 1 {
		t.Errorf("the prefix was read by the pass %d times, want 1", reads)
	}
	orig := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	want := check.Observe(200, orig, body, true, maxBody, nil) // html.Parse of the prefix
	if got == nil || want == nil || !got.BodyTruncated || got.Words == 0 {
		t.Fatalf("evidence %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("evidence by the pass\n%+v\nwant (by the tree)\n%+v", got, want)
	}
}
