package dashboard

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/sqlite"
	"net/http/httptest"
)

// The browser harness of cmd/linkrot's report test (same launch flags,
// same problem recording), for the dashboard served over HTTP.

func findChromium() string {
	if p := os.Getenv("LINKROT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := findChromium()
	if exe == "" {
		if os.Getenv("LINKROT_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("no Chromium found and LINKROT_REQUIRE_CHROMIUM=1 (CI installs Debian's chromium)")
		}
		t.Skip("no Chromium found: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set LINKROT_CHROMIUM")
	}
	profile, err := os.MkdirTemp("", "linkrot-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		for i := 0; i < 50; i++ {
			if err := os.RemoveAll(profile); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the browser profile %s", profile)
	})
	b := &browser{ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert || ev.Type == runtime.APITypeWarning {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				b.problem("console." + string(ev.Type) + ": " + strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			desc := ""
			if ev.ExceptionDetails.Exception != nil {
				desc = ev.ExceptionDetails.Exception.Description
			}
			b.problem("exception: " + ev.ExceptionDetails.Text + " " + desc)
		case *cdplog.EventEntryAdded:
			// The favicon request is the browser's own, not the page's.
			if strings.Contains(ev.Entry.URL, "favicon.ico") {
				return
			}
			if ev.Entry.Level == cdplog.LevelError || ev.Entry.Source == cdplog.SourceSecurity || ev.Entry.Source == cdplog.SourceViolation {
				b.problem("log " + string(ev.Entry.Source) + "/" + string(ev.Entry.Level) + ": " + ev.Entry.Text)
			}
		case *cdppage.EventJavascriptDialogOpening:
			b.problem("dialog opened: " + ev.Message)
			go chromedp.Run(ctx, cdppage.HandleJavaScriptDialog(false))
		}
	})
	const watch = `window.__csp = []; document.addEventListener('securitypolicyviolation', function (e) { window.__csp.push(e.violatedDirective + ' ' + e.blockedURI); });`
	err = chromedp.Run(ctx, cdplog.Enable(), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := cdppage.AddScriptToEvaluateOnNewDocument(watch).Do(ctx)
		return err
	}))
	if err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	return b
}

func (b *browser) problem(s string) {
	b.mu.Lock()
	b.problems = append(b.problems, s)
	b.mu.Unlock()
}

// check fails the test for any problem recorded so far, any CSP violation
// and any sign that a payload ran.
func (b *browser) check(t *testing.T, where string) {
	t.Helper()
	var csp []string
	var xss bool
	if err := chromedp.Run(b.ctx,
		chromedp.Evaluate(`window.__csp || []`, &csp),
		chromedp.Evaluate(`window.__xss !== undefined`, &xss),
	); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, v := range csp {
		t.Errorf("%s: CSP violation: %s", where, v)
	}
	if xss {
		t.Errorf("%s: a script payload ran (window.__xss is set)", where)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		t.Errorf("%s: %s", where, p)
	}
	b.problems = nil
}

func (b *browser) eval(t *testing.T, js string, out any) {
	t.Helper()
	if err := chromedp.Run(b.ctx, chromedp.Evaluate(js, out)); err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
}

func (b *browser) open(t *testing.T, u string) {
	t.Helper()
	if err := chromedp.Run(b.ctx, chromedp.Navigate(u), chromedp.WaitReady(`body`)); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
}

// waitFor polls a boolean expression until it holds or 10 s pass.
func (b *browser) waitFor(t *testing.T, what, js string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ok bool
		// A navigation in progress makes Evaluate fail: retry.
		if err := chromedp.Run(b.ctx, chromedp.Evaluate(js, &ok)); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(b.ctx, chromedp.Sleep(100*time.Millisecond), chromedp.CaptureScreenshot(&png)); err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("LINKROT_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
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
	b.open(t, srv.URL+"/")
	var dots, series int
	var box map[string]float64
	b.eval(t, `document.querySelectorAll('#trend svg circle').length`, &dots)
	b.eval(t, `document.querySelectorAll('#trend svg g.line polyline').length`, &series)
	b.eval(t, `(function () { var r = document.querySelector('#trend svg').getBoundingClientRect(); return {w: r.width, h: r.height}; })()`, &box)
	if dots != 9 || series != 3 || box["w"] < 300 || box["h"] < 80 {
		t.Errorf("trend chart: %d points, %d lines, %vx%v px", dots, series, box["w"], box["h"])
	}
	var stroke string
	b.eval(t, `getComputedStyle(document.querySelector('#trend g.line.bad polyline')).stroke`, &stroke)
	if stroke == "" || stroke == "none" {
		t.Errorf("the broken line has no stroke (%q): the stylesheet did not apply", stroke)
	}
	b.check(t, "overview")
	b.screenshot(t, "dashboard-overview.png")

	// Broken links: the verdict select submits on change.
	rows := `document.querySelectorAll('#t-broken tbody tr:not(:has(td[colspan]))').length`
	b.open(t, srv.URL+"/broken")
	var all, filtered int
	b.eval(t, rows, &all)
	b.eval(t, `(function () { var s = document.querySelector('select[name=verdict]'); s.value = 'moved'; s.dispatchEvent(new Event('change')); return 0; })()`, nil)
	b.waitFor(t, "the filtered page", `location.search.indexOf('verdict=moved') >= 0 && document.readyState === 'complete' && !!document.querySelector('#t-broken')`)
	b.eval(t, rows, &filtered)
	if all != 4 || filtered != 1 {
		t.Errorf("verdict filter: %d rows before, %d after (want 4, 1)", all, filtered)
	}
	var badge string
	b.eval(t, `document.querySelector('#t-broken tbody tr td:nth-child(2) .badge').textContent`, &badge)
	if badge != "moved" {
		t.Errorf("filtered to moved, the row shows %q", badge)
	}
	b.check(t, "broken links")

	// A target page lists its history: one check per run.
	b.open(t, srv.URL+"/target/"+strconv.FormatInt(f.targets[gonePath], 10))
	var verdicts []string
	b.eval(t, `Array.from(document.querySelectorAll('#t-checks tbody tr td:nth-child(3) .badge')).map(function (e) { return e.textContent; })`, &verdicts)
	if strings.Join(verdicts, ",") != "gone,not-found,ok" {
		t.Errorf("target history = %v, want gone, not-found, ok (newest first)", verdicts)
	}
	var dotsT int
	b.eval(t, `document.querySelectorAll('.timeline span').length`, &dotsT)
	if dotsT != 3 {
		t.Errorf("timeline has %d checks, want 3", dotsT)
	}
	b.check(t, "target page")

	// Hostile link text stays text, in every view that shows it.
	b.open(t, srv.URL+"/links")
	var texts []string
	b.eval(t, `Array.from(document.querySelectorAll('#t-links td.anchor')).map(function (e) { return e.textContent; })`, &texts)
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
	b.eval(t, `document.querySelectorAll('script').length`, &scripts)
	b.eval(t, `document.querySelectorAll('img').length`, &imgs)
	if scripts != 1 || imgs != 0 {
		t.Errorf("links page has %d scripts and %d images (want only the dashboard's script)", scripts, imgs)
	}
	var jsLinks int
	b.eval(t, `Array.from(document.querySelectorAll('a[href]')).filter(function (a) { return !/^https?:$/.test(a.protocol); }).length`, &jsLinks)
	if jsLinks != 0 {
		t.Errorf("%d links with a scheme other than http(s)", jsLinks)
	}
	b.check(t, "links page")
	for _, u := range []string{"/page?url=" + aboutURL, "/broken", "/pages", "/search?q=example", "/target/" + strconv.FormatInt(f.targets[hostileHref], 10)} {
		b.open(t, srv.URL+u)
		b.check(t, u)
	}

	// A run in progress: the overview follows its counts over SSE.
	w, err := sqlite.Open(context.Background(), f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	run := &audit.Run{Mode: "site", Seeds: []string{site}, Version: "test"}
	if err := w.CreateRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	b.open(t, srv.URL+"/")
	b.waitFor(t, "the live panel's script", `document.getElementById('live') && document.getElementById('live').getAttribute('data-js') === 'live'`)
	p := &audit.Page{Extraction: audit.Extraction{URL: site, Parsed: true}, Status: 200}
	q := &audit.Page{Extraction: audit.Extraction{URL: aboutURL, Parsed: true}, Status: 200}
	if err := w.SavePages(context.Background(), run.ID, []*audit.Page{p, q}); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, "the page count to update live", `document.querySelector('#live [data-k=pages]').textContent === '2'`)
	b.screenshot(t, "dashboard-live.png")
	if err := w.FinishRun(context.Background(), run.ID, audit.RunComplete, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	// The run ended: the page reloads and shows it as the latest run.
	b.waitFor(t, "the reload after the run ended", `!document.getElementById('live') && document.readyState === 'complete' && /Run #`+strconv.FormatInt(run.ID, 10)+` /.test(document.querySelector('main .lede').textContent)`)
	b.check(t, "live run")
}
