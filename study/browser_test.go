package study

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/browsertest"
)

// TestIndexHTMLInChromium renders index.html in headless Chromium: the
// charts are there with one point per citation year and wave, the
// references table pages, hostile titles, ids, groups and URLs show as
// text, no script payload runs, no CSP violation or console error
// happens, and only http(s) URLs are links.
func TestIndexHTMLInChromium(t *testing.T) {
	b := browsertest.New(t, browsertest.Options{Width: 1400, Height: 1000})
	w := newWorld(200, 5)
	hostile := []Reference{
		{ID: `"><img src=x onerror="window.__xss=1">`, URL: `https://evil.test/"><script>window.__xss=1</script>`, Title: `<script>window.__xss=1</script>`, Group: `</td><svg onload="window.__xss=1">`},
		{ID: "js", URL: "https://evil.test/js", Title: `<a href="javascript:window.__xss=1">click</a>`, Group: "{{.}} ${x} ]]> </script>"},
	}
	for i := range hostile {
		hostile[i].CitedAt = CitedAt{From: time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2015, 1, 2, 0, 0, 0, 0, time.UTC), Precision: Day}
	}
	refs := append(append([]Reference{}, hostile...), w.refs...)
	w.waves[0].Results["https://evil.test/js"] = Result{Verdict: audit.VerdictOK, Status: 200, Mementos: []Memento{
		{Datetime: time.Date(2015, 1, 1, 12, 0, 0, 0, time.UTC), URL: "javascript:window.__xss=1", Drift: audit.BandMinor},
	}}
	in := &Input{Name: `<i>refs</i>.csv`, Format: FormatCSV, Digest: strings.Repeat("a", 64), References: refs,
		Errors: []RowError{{Line: 3, Reason: `url "<script>window.__xss=1</script>" is not an absolute http(s) URL`}}}
	s := &Study{Input: in, Waves: w.waves, Params: Params{Archives: []string{"<b>archive</b>"}, Version: "test"}}
	dir := t.TempDir()
	if err := WriteDir(dir, s); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"http://", "https://", "//"} {
		// External resources could only come through src/href attributes.
		for _, attr := range []string{`src="` + ext, `href="` + ext} {
			if strings.Contains(string(page), attr) {
				t.Errorf("index.html has an external resource (%s)", attr)
			}
		}
	}

	b.Open(t, "file://"+filepath.Join(dir, "index.html"))
	b.WaitFor(t, "the references table", `document.querySelectorAll('#refs-body tr').length > 0`)

	sum := Summarize(Build(refs, w.waves, s.Params))
	for i, name := range shareNames {
		want := 0
		for _, r := range sum {
			if r.Scope == ScopeYear && r.shares()[i].N > 0 {
				want++
			}
		}
		var got int
		b.Eval(t, `document.querySelectorAll('svg.chart[data-share="`+name+`"] circle.pt').length`, &got)
		var whiskers int
		b.Eval(t, `document.querySelectorAll('svg.chart[data-share="`+name+`"] line.ci').length`, &whiskers)
		if got != want || whiskers != want || want == 0 {
			t.Errorf("chart %s: %d points and %d whiskers, want %d", name, got, whiskers, want)
		}
		var visible bool
		b.Eval(t, `(function(){var r=document.querySelector('svg.chart[data-share="`+name+`"]').getBoundingClientRect();return r.width>100&&r.height>100;})()`, &visible)
		if !visible {
			t.Errorf("chart %s is not laid out", name)
		}
	}

	// The first page holds the hostile references, as text.
	var cells []string
	b.Eval(t, `Array.from(document.querySelectorAll('#refs-body tr:nth-child(-n+4) td')).map(function(td){return td.textContent})`, &cells)
	joined := strings.Join(cells, "\n")
	for _, h := range hostile {
		for _, text := range []string{h.ID, h.URL, h.Title, h.Group} {
			if !strings.Contains(joined, text) {
				t.Errorf("hostile text %q is not shown as text; cells %q", text, cells)
			}
		}
	}
	var hrefs []string
	b.Eval(t, `Array.from(document.querySelectorAll('a')).map(function(a){return a.getAttribute('href')})`, &hrefs)
	for _, h := range hrefs {
		if !strings.HasPrefix(h, "https://") && !strings.HasPrefix(h, "http://") {
			t.Errorf("a link to %q", h)
		}
	}
	var jsCell string
	b.Eval(t, `document.querySelector('#refs-body tr:nth-child(3) td:nth-child(10)').textContent`, &jsCell)
	var jsLinks int
	b.Eval(t, `document.querySelectorAll('#refs-body tr:nth-child(3) td:nth-child(10) a').length`, &jsLinks)
	if jsCell != "javascript:window.__xss=1" || jsLinks != 0 {
		t.Errorf("javascript: memento URL: cell %q, %d links", jsCell, jsLinks)
	}
	var injected int
	b.Eval(t, `document.querySelectorAll('#refs img, #refs script, #refs svg, #summary img, #malformed script').length`, &injected)
	if injected != 0 {
		t.Errorf("%d elements injected by cited text", injected)
	}
	var title, methods, malformed string
	b.Eval(t, `document.title`, &title)
	b.Eval(t, `document.getElementById('methods').textContent`, &methods)
	b.Eval(t, `document.getElementById('malformed').textContent`, &malformed)
	if !strings.Contains(title, "<i>refs</i>.csv") || !strings.Contains(methods, "<b>archive</b>") || !strings.Contains(methods, "within 7 days") ||
		!strings.Contains(malformed, "<script>window.__xss=1</script>") {
		t.Errorf("title %q, methods %q, malformed %q", title, methods, malformed)
	}

	// Paging.
	var pageInfo string
	b.Eval(t, `document.getElementById('refs-page').textContent`, &pageInfo)
	rows := len(refs) * len(w.waves)
	pages := (rows + 49) / 50
	if want := "page 1 of " + itoa(pages) + " (" + itoa(rows) + " rows)"; pageInfo != want {
		t.Errorf("pager %q, want %q", pageInfo, want)
	}
	b.Eval(t, `document.getElementById('refs-next').click(); document.getElementById('refs-page').textContent`, &pageInfo)
	var n int
	b.Eval(t, `document.querySelectorAll('#refs-body tr').length`, &n)
	if !strings.HasPrefix(pageInfo, "page 2 of ") || n != 50 {
		t.Errorf("after next: %q with %d rows", pageInfo, n)
	}
	b.Check(t, "index.html")
	b.Screenshot(t, "study-index.png")
}

func itoa(n int) string { return strconv.Itoa(n) }
