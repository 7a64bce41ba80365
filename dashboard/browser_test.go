package dashboard

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/browsertest"
	"github.com/linkrot/linkrot/store/engines"
)

// browser is the shared headless-Chromium harness (internal/browsertest).
type browser = browsertest.Browser

// newBrowser starts Chromium; the browser's own favicon request is not a
// problem of the page.
func newBrowser(t *testing.T) *browser {
	return browsertest.New(t, browsertest.Options{IgnoreLog: func(u string) bool { return strings.Contains(u, "favicon.ico") }})
}

// TestDashboardBrowser opens the dashboard over a database of three runs
// in headless Chromium: the trend chart renders with a point per run and
// series, filters change the rows (with JavaScript: on change), a target
// page lists its history, hostile link text stays text, no CSP violation
// or console error, and a run in progress updates live over SSE.
func TestDashboardBrowser(t *testing.T) {
	b := newBrowser(t)
	f := newFixture(t)
	srv := httptest.NewServer(New(f.openRO(t), Options{PollInterval: 100 * time.Millisecond, Generator: "linkrot test"}))
	defer srv.Close()

	// Overview: the trend chart is an SVG with 3 series of 3 points.
	b.Open(t, srv.URL+"/")
	var dots, series int
	var box map[string]float64
	b.Eval(t, `document.querySelectorAll('#trend svg circle').length`, &dots)
	b.Eval(t, `document.querySelectorAll('#trend svg g.line polyline').length`, &series)
	b.Eval(t, `(function () { var r = document.querySelector('#trend svg').getBoundingClientRect(); return {w: r.width, h: r.height}; })()`, &box)
	if dots != 9 || series != 3 || box["w"] < 300 || box["h"] < 80 {
		t.Errorf("trend chart: %d points, %d lines, %vx%v px", dots, series, box["w"], box["h"])
	}
	var stroke string
	b.Eval(t, `getComputedStyle(document.querySelector('#trend g.line.bad polyline')).stroke`, &stroke)
	if stroke == "" || stroke == "none" {
		t.Errorf("the broken line has no stroke (%q): the stylesheet did not apply", stroke)
	}
	b.Check(t, "overview")
	b.Screenshot(t, "dashboard-overview.png")

	// Broken links: the verdict select submits on change.
	rows := `document.querySelectorAll('#t-broken tbody tr:not(:has(td[colspan]))').length`
	b.Open(t, srv.URL+"/broken")
	var all, filtered int
	b.Eval(t, rows, &all)
	b.Eval(t, `(function () { var s = document.querySelector('select[name=verdict]'); s.value = 'moved'; s.dispatchEvent(new Event('change')); return 0; })()`, nil)
	b.WaitFor(t, "the filtered page", `location.search.indexOf('verdict=moved') >= 0 && document.readyState === 'complete' && !!document.querySelector('#t-broken')`)
	b.Eval(t, rows, &filtered)
	if all != 4 || filtered != 1 {
		t.Errorf("verdict filter: %d rows before, %d after (want 4, 1)", all, filtered)
	}
	var badge string
	b.Eval(t, `document.querySelector('#t-broken tbody tr td:nth-child(2) .badge').textContent`, &badge)
	if badge != "moved" {
		t.Errorf("filtered to moved, the row shows %q", badge)
	}
	b.Check(t, "broken links")

	// A target page lists its history: one check per run.
	b.Open(t, srv.URL+"/target/"+strconv.FormatInt(f.targets[gonePath], 10))
	var verdicts []string
	b.Eval(t, `Array.from(document.querySelectorAll('#t-checks tbody tr td:nth-child(3) .badge')).map(function (e) { return e.textContent; })`, &verdicts)
	if strings.Join(verdicts, ",") != "gone,not-found,ok" {
		t.Errorf("target history = %v, want gone, not-found, ok (newest first)", verdicts)
	}
	var dotsT int
	b.Eval(t, `document.querySelectorAll('.timeline span').length`, &dotsT)
	if dotsT != 3 {
		t.Errorf("timeline has %d checks, want 3", dotsT)
	}
	b.Check(t, "target page")

	// Hostile link text stays text, in every view that shows it.
	b.Open(t, srv.URL+"/links")
	var texts []string
	b.Eval(t, `Array.from(document.querySelectorAll('#t-links td.anchor')).map(function (e) { return e.textContent; })`, &texts)
	found := 0
	for _, s := range texts {
		if s == hostileText || s == hostileAttr {
			found++
		}
	}
	if found != 2 {
		t.Errorf("hostile anchor texts shown as text: %d of 2 (%q)", found, texts)
	}
	var scripts, imgs int
	b.Eval(t, `document.querySelectorAll('script').length`, &scripts)
	b.Eval(t, `document.querySelectorAll('img').length`, &imgs)
	if scripts != 1 || imgs != 0 {
		t.Errorf("links page has %d scripts and %d images (want only the dashboard's script)", scripts, imgs)
	}
	var jsLinks int
	b.Eval(t, `Array.from(document.querySelectorAll('a[href]')).filter(function (a) { return !/^https?:$/.test(a.protocol); }).length`, &jsLinks)
	if jsLinks != 0 {
		t.Errorf("%d links with a scheme other than http(s)", jsLinks)
	}
	b.Check(t, "links page")
	for _, u := range []string{"/page?url=" + aboutURL, "/broken", "/pages", "/search?q=example", "/target/" + strconv.FormatInt(f.targets[hostileHref], 10)} {
		b.Open(t, srv.URL+u)
		b.Check(t, u)
	}

	// A run in progress: the overview follows its counts over SSE.
	w, err := engines.Open(context.Background(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	run := &audit.Run{Mode: "site", Seeds: []string{site}, Version: "test"}
	if err := w.CreateRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	b.Open(t, srv.URL+"/")
	b.WaitFor(t, "the live panel's script", `document.getElementById('live') && document.getElementById('live').getAttribute('data-js') === 'live'`)
	p := &audit.Page{Extraction: audit.Extraction{URL: site, Parsed: true}, Status: 200}
	q := &audit.Page{Extraction: audit.Extraction{URL: aboutURL, Parsed: true}, Status: 200}
	if err := w.SavePages(context.Background(), run.ID, []*audit.Page{p, q}); err != nil {
		t.Fatal(err)
	}
	b.WaitFor(t, "the page count to update live", `document.querySelector('#live [data-k=pages]').textContent === '2'`)
	b.Screenshot(t, "dashboard-live.png")
	if err := w.FinishRun(context.Background(), run.ID, audit.RunComplete, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	// The run ended: the page reloads and shows it as the latest run.
	b.WaitFor(t, "the reload after the run ended", `!document.getElementById('live') && document.readyState === 'complete' && /Run #`+strconv.FormatInt(run.ID, 10)+` /.test(document.querySelector('main .lede').textContent)`)
	b.Check(t, "live run")
}
