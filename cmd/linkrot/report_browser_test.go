package main

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

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// findChromium returns the browser the test drives: $LINKROT_CHROMIUM, or
// Debian's chromium (.ci/run installs it).
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

// browser is a headless Chromium tab that records what a report must never
// cause: console errors, uncaught exceptions, CSP violations and dialogs.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := findChromium()
	if exe == "" {
		t.Skip("no Chromium found: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set LINKROT_CHROMIUM")
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
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
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
			b.problem("exception: " + ev.ExceptionDetails.Text + " " + exceptionDescription(ev.ExceptionDetails))
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError || ev.Entry.Source == cdplog.SourceSecurity || ev.Entry.Source == cdplog.SourceViolation {
				b.problem("log " + string(ev.Entry.Source) + "/" + string(ev.Entry.Level) + ": " + ev.Entry.Text)
			}
		case *cdppage.EventJavascriptDialogOpening:
			b.problem("dialog opened: " + ev.Message)
			go chromedp.Run(ctx, cdppage.HandleJavaScriptDialog(false))
		}
	})
	// Recorded before any script of the page runs; DevTools scripts are not
	// subject to the page's CSP.
	const watch = `window.__csp = []; document.addEventListener('securitypolicyviolation', function (e) { window.__csp.push(e.violatedDirective + ' ' + e.blockedURI); });`
	err := chromedp.Run(ctx, cdplog.Enable(), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := cdppage.AddScriptToEvaluateOnNewDocument(watch).Do(ctx)
		return err
	}))
	if err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	return b
}

func exceptionDescription(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
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

const rowsJS = `document.querySelectorAll('%s tbody tr:not(.detail)').length`

func rows(table string) string { return strings.Replace(rowsJS, "%s", table, 1) }

// TestReportBrowser opens generated reports from file:// in headless
// Chromium: no console errors or CSP violations, filtering, searching and
// sorting change the visible rows, and the hostile database's payloads
// never run.
func TestReportBrowser(t *testing.T) {
	b := newBrowser(t)

	// The hostile database, in every view.
	path := xssReport(t)
	url := "file://" + filepath.ToSlash(path)
	if err := chromedp.Run(b.ctx, chromedp.Navigate(url+"#links"), chromedp.WaitVisible(`#t-links tbody tr`)); err != nil {
		t.Fatal(err)
	}
	b.check(t, "links view")
	var all, filtered, searched int
	b.eval(t, rows("#t-links"), &all)
	b.eval(t, `(function () {
		var s = document.querySelector('#t-links select[data-filter=verdict]');
		s.value = 'not-found';
		s.dispatchEvent(new Event('change'));
		return document.querySelectorAll('#t-links tbody tr').length;
	})()`, &filtered)
	if all < 40 || filtered == 0 || filtered >= all {
		t.Errorf("verdict filter: %d rows before, %d after", all, filtered)
	}
	var badges []string
	b.eval(t, `Array.from(document.querySelectorAll('#t-links tbody tr td:last-child .badge')).map(function (e) { return e.textContent; })`, &badges)
	for _, v := range badges {
		if v != "not-found" {
			t.Errorf("filtered to not-found, a row shows %q", v)
		}
	}
	// Clear the filter, then search by typing.
	b.eval(t, `(function () { var s = document.querySelector('#t-links select[data-filter=verdict]'); s.value = ''; s.dispatchEvent(new Event('change')); return 0; })()`, nil)
	if err := chromedp.Run(b.ctx, chromedp.SendKeys(`#t-links input[type=search]`, "dead link 1"), chromedp.Sleep(400*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b.eval(t, rows("#t-links"), &searched)
	if searched == 0 || searched >= all {
		t.Errorf("search: %d rows of %d", searched, all)
	}
	b.eval(t, `(function () { var s = document.querySelector('#t-links input[type=search]'); s.value = ''; s.dispatchEvent(new Event('input')); return 0; })()`, nil)
	if err := chromedp.Run(b.ctx, chromedp.Sleep(400*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// Sorting by anchor text, both ways, changes the first row.
	var first, asc, desc string
	firstJS := `document.querySelector('#t-links tbody tr td:nth-child(2)').textContent`
	b.eval(t, firstJS, &first)
	if err := chromedp.Run(b.ctx, chromedp.Click(`#t-links thead th:nth-child(2) button`)); err != nil {
		t.Fatal(err)
	}
	b.eval(t, firstJS, &asc)
	if err := chromedp.Run(b.ctx, chromedp.Click(`#t-links thead th:nth-child(2) button`)); err != nil {
		t.Fatal(err)
	}
	b.eval(t, firstJS, &desc)
	if asc == desc || (first == asc && first == desc) {
		t.Errorf("sorting did not change the rows: first %q, ascending %q, descending %q", first, asc, desc)
	}
	var sortState string
	b.eval(t, `document.querySelector('#t-links thead th:nth-child(2)').getAttribute('aria-sort')`, &sortState)
	if sortState != "descending" {
		t.Errorf("aria-sort = %q after two clicks", sortState)
	}
	b.check(t, "links table")

	// Every other view, with rows opened, renders the payloads as text.
	for _, view := range []struct{ hash, table string }{
		{"#broken", "#t-broken"}, {"#pages", "#t-pages"}, {"#robust", "#t-robust"},
		{"#identifiers", "#t-ids"}, {"#overview", ""},
	} {
		if err := chromedp.Run(b.ctx, chromedp.Navigate(url+view.hash), chromedp.WaitReady(`body`)); err != nil {
			t.Fatal(err)
		}
		if view.table != "" {
			b.eval(t, `(function () { var n = 0; document.querySelectorAll('`+view.table+` .toggle').forEach(function (b) { b.click(); n++; }); return n; })()`, nil)
		}
		b.check(t, view.hash)
	}
	var nTargets int
	b.eval(t, `JSON.parse(document.getElementById('report-data').textContent).targets.length`, &nTargets)
	for i := range nTargets {
		if err := chromedp.Run(b.ctx, chromedp.Navigate(url+"#target/"+strconv.Itoa(i)), chromedp.WaitVisible(`#view-target h1`)); err != nil {
			t.Fatal(err)
		}
	}
	b.check(t, "target views")
	var hostileLinks []string
	b.eval(t, `Array.from(document.querySelectorAll('a[href]')).map(function (a) { return new URL(a.getAttribute('href'), document.baseURI).href; }).filter(function (h) { return !/^(https?:|mailto:|file:)/i.test(h); })`, &hostileLinks)
	for _, h := range hostileLinks {
		t.Errorf("link with a scheme other than http, https, mailto: %q", h)
	}

	// The golden database: a screenshot of a normal report, light and dark.
	fixReportTime(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "golden.db")
	buildReportDB(t, dbPath, goldenRuns()...)
	if code, _, stderr := run(t, "", "report", "--db", dbPath, "--out", filepath.Join(dir, "r")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	gurl := "file://" + filepath.ToSlash(filepath.Join(dir, "r", "index.html"))
	if err := chromedp.Run(b.ctx, chromedp.Navigate(gurl), chromedp.WaitVisible(`#view-overview svg`)); err != nil {
		t.Fatal(err)
	}
	b.check(t, "golden overview")
	b.screenshot(t, "report-overview.png")
	if err := chromedp.Run(b.ctx, chromedp.Navigate(gurl+"#broken"), chromedp.WaitVisible(`#t-broken tbody tr`), chromedp.Click(`#t-broken tbody tr .toggle`)); err != nil {
		t.Fatal(err)
	}
	b.check(t, "golden broken links")
	b.screenshot(t, "report-broken.png")
	if err := chromedp.Run(b.ctx, emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}),
		chromedp.Navigate(gurl+"#overview"), chromedp.WaitVisible(`#view-overview svg`)); err != nil {
		t.Fatal(err)
	}
	b.check(t, "golden overview, dark")
	b.screenshot(t, "report-dark.png")
}
