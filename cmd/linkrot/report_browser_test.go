package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/linkrot/linkrot/internal/browsertest"
)

// browser is the shared headless-Chromium harness (internal/browsertest).
type browser = browsertest.Browser

// newBrowser starts Chromium in a window wide enough for the report's
// tables (noOverflow checks them at this size).
func newBrowser(t *testing.T) *browser {
	return browsertest.New(t, browsertest.Options{Width: 1400, Height: 1000})
}

// noOverflow fails the test when a table of the shown view is wider than
// its box (cut off, or scrolling sideways).
func noOverflow(t *testing.T, b *browser, where string) {
	t.Helper()
	var wide []string
	b.Eval(t, `Array.from(document.querySelectorAll('.view.shown table')).filter(function (tb) {
		return tb.getBoundingClientRect().width > tb.parentElement.clientWidth + 1;
	}).map(function (tb) { return (tb.closest('.tbl') || tb.parentElement).id + ' ' + Math.round(tb.getBoundingClientRect().width) + '>' + tb.parentElement.clientWidth; })`, &wide)
	for _, w := range wide {
		t.Errorf("%s: table wider than its box: %s", where, w)
	}
}

// printView switches to print media as the browser does before printing
// and checks the broken links are all opened and no table is wider than
// the paper, then switches back.
func printView(t *testing.T, b *browser, shot string) {
	t.Helper()
	var rows, details int
	// A4 paper is about 720 CSS pixels wide inside its margins.
	if err := chromedp.Run(b.Ctx, emulation.SetEmulatedMedia().WithMedia("print"),
		emulation.SetDeviceMetricsOverride(720, 1000, 1, false)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, `(function () { window.dispatchEvent(new Event('beforeprint')); return 0; })()`, nil)
	b.Eval(t, `document.querySelectorAll('#t-broken tbody tr:not(.detail)').length`, &rows)
	b.Eval(t, `document.querySelectorAll('#t-broken tbody tr.detail').length`, &details)
	if rows == 0 || details != rows {
		t.Errorf("print: %d broken rows, %d opened", rows, details)
	}
	var wideTables []string
	b.Eval(t, `Array.from(document.querySelectorAll('table')).filter(function (tb) {
		var r = tb.getBoundingClientRect();
		return r.width > 0 && (r.width > tb.parentElement.clientWidth + 1 || r.right > document.documentElement.clientWidth + 1);
	}).map(function (tb) { return (tb.closest('.tbl') || tb.parentElement).id + ' ' + Math.round(tb.getBoundingClientRect().right); })`, &wideTables)
	for _, w := range wideTables {
		t.Errorf("print: a table is wider than the page: %s", w)
	}
	b.Eval(t, `(function () { document.getElementById('view-broken').scrollIntoView(); return 0; })()`, nil)
	b.Screenshot(t, shot)
	b.Eval(t, `(function () { window.dispatchEvent(new Event('afterprint')); return document.querySelectorAll('#t-broken tbody tr.detail').length; })()`, &details)
	if err := chromedp.Run(b.Ctx, emulation.SetEmulatedMedia().WithMedia(""), emulation.ClearDeviceMetricsOverride()); err != nil {
		t.Fatal(err)
	}
	b.Check(t, "print")
}

// openAll is a script opening every closed row under sel; it returns how
// many rows it opened.
func openAll(sel string) string {
	return `(function () { var n = 0; document.querySelectorAll('` + sel + ` .toggle[aria-expanded=false]').forEach(function (b) { b.click(); n++; }); return n; })()`
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
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
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(url+"#links"), chromedp.WaitVisible(`#t-links tbody tr`)); err != nil {
		t.Fatal(err)
	}
	b.Check(t, "links view")
	var all, filtered, searched int
	b.Eval(t, rows("#t-links"), &all)
	b.Eval(t, `(function () {
		var s = document.querySelector('#t-links select[data-filter=verdict]');
		s.value = 'not-found';
		s.dispatchEvent(new Event('change'));
		return document.querySelectorAll('#t-links tbody tr').length;
	})()`, &filtered)
	if all < 40 || filtered == 0 || filtered >= all {
		t.Errorf("verdict filter: %d rows before, %d after", all, filtered)
	}
	var badges []string
	b.Eval(t, `Array.from(document.querySelectorAll('#t-links tbody tr td:last-child .badge')).map(function (e) { return e.textContent; })`, &badges)
	for _, v := range badges {
		if v != "not-found" {
			t.Errorf("filtered to not-found, a row shows %q", v)
		}
	}
	// Clear the filter, then search by typing.
	b.Eval(t, `(function () { var s = document.querySelector('#t-links select[data-filter=verdict]'); s.value = ''; s.dispatchEvent(new Event('change')); return 0; })()`, nil)
	if err := chromedp.Run(b.Ctx, chromedp.SendKeys(`#t-links input[type=search]`, "dead link 1"), chromedp.Sleep(400*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, rows("#t-links"), &searched)
	if searched == 0 || searched >= all {
		t.Errorf("search: %d rows of %d", searched, all)
	}
	b.Eval(t, `(function () { var s = document.querySelector('#t-links input[type=search]'); s.value = ''; s.dispatchEvent(new Event('input')); return 0; })()`, nil)
	if err := chromedp.Run(b.Ctx, chromedp.Sleep(400*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// Sorting by anchor text, both ways, changes the first row.
	var first, asc, desc string
	firstJS := `document.querySelector('#t-links tbody tr td:nth-child(2)').textContent`
	b.Eval(t, firstJS, &first)
	if err := chromedp.Run(b.Ctx, chromedp.Click(`#t-links thead th:nth-child(2) button`)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, firstJS, &asc)
	if err := chromedp.Run(b.Ctx, chromedp.Click(`#t-links thead th:nth-child(2) button`)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, firstJS, &desc)
	if asc == desc || (first == asc && first == desc) {
		t.Errorf("sorting did not change the rows: first %q, ascending %q, descending %q", first, asc, desc)
	}
	var sortState string
	b.Eval(t, `document.querySelector('#t-links thead th:nth-child(2)').getAttribute('aria-sort')`, &sortState)
	if sortState != "descending" {
		t.Errorf("aria-sort = %q after two clicks", sortState)
	}
	b.Check(t, "links table")

	// Every other view, with rows opened, renders the payloads as text
	// (archive answers included: drifts, mementos, suggestions,
	// identifier checks).
	for _, view := range []struct{ hash, table string }{
		{"#broken", "#t-broken"}, {"#pages", "#t-pages"}, {"#robust", "#t-robust"},
		{"#drift", "#t-drift"}, {"#identifiers", "#t-ids"}, {"#overview", ""},
	} {
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(url+view.hash), chromedp.WaitReady(`body`)); err != nil {
			t.Fatal(err)
		}
		if view.table != "" {
			var opened int
			b.Eval(t, openAll(view.table), &opened)
			if opened == 0 && view.hash != "#robust" {
				t.Errorf("%s: no row to open", view.hash)
			}
		}
		b.Check(t, view.hash)
		if view.hash == "#drift" {
			b.Screenshot(t, "report-xss-drift.png")
		}
		noOverflow(t, b, view.hash)
	}
	// Drift is ordered by band (drift rank), most drifted first.
	var sorted string
	b.Eval(t, `(function () { var th = document.querySelector('#t-drift thead th[aria-sort]'); return th ? th.textContent + ' ' + th.getAttribute('aria-sort') : 'none'; })()`, &sorted)
	if !strings.HasPrefix(sorted, "Band") || !strings.HasSuffix(sorted, "descending") {
		t.Errorf("drift table sorted by %q, want Band descending", sorted)
	}
	// Drift: link-level rows name their link, the target-level one says so.
	var driftLinks []string
	b.Eval(t, `(function () { location.hash = '#drift'; return Array.from(document.querySelectorAll('#t-drift tbody tr:not(.detail) td:nth-child(3)')).map(function (td) { return td.textContent; }); })()`, &driftLinks)
	if !slices.ContainsFunc(driftLinks, func(s string) bool { return strings.Contains(s, "“fine link 0”") }) ||
		!slices.ContainsFunc(driftLinks, func(s string) bool { return strings.Contains(s, "the target (every link)") }) {
		t.Errorf("drift Link column: %q", driftLinks)
	}
	// Identifiers: one that does not resolve is labelled so, even when it
	// is a link target's; opened rows list the linking pages.
	var idLabels []string
	var idLinking int
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(url+"#identifiers"), chromedp.WaitVisible(`#t-ids tbody tr`)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, `Array.from(document.querySelectorAll('#t-ids tbody tr td:last-child .badge')).map(function (e) { return e.textContent; })`, &idLabels)
	if n := countOf(idLabels, "does not resolve"); n != 2 || countOf(idLabels, "links should cite the identifier") != 1 {
		t.Errorf("identifier findings %q: want 2 that do not resolve and 1 that links should cite", idLabels)
	}
	b.Eval(t, openAll("#t-ids"), nil)
	b.Eval(t, `document.querySelectorAll('#t-ids tr.detail li').length`, &idLinking)
	if idLinking == 0 {
		t.Error("opened identifier rows list no linking page")
	}
	b.Check(t, "identifiers")

	// The copy button of a Robust Link snippet: the headless clipboard may
	// refuse, but the button must not throw and must say what happened.
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(url+"#broken"), chromedp.WaitVisible(`#t-broken tbody tr`),
		chromedp.SendKeys(`#t-broken input[type=search]`, "missing-0"), chromedp.Sleep(400*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var copied string
	b.Eval(t, `(function () {
		var rows = document.querySelectorAll('#t-broken tbody tr:not(.detail)');
		if (rows.length !== 1) return 'rows: ' + rows.length;
		var tg = rows[0].querySelector('.toggle');
		if (tg.getAttribute('aria-expanded') !== 'true') tg.click();
		var btn = document.querySelector('#t-broken .snippet .btn');
		if (!btn) return 'no copy button';
		btn.click();
		return 'clicked';
	})()`, &copied)
	if copied != "clicked" {
		t.Fatalf("copy button: %s", copied)
	}
	if err := chromedp.Run(b.Ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, `document.querySelector('#t-broken .snippet .btn').textContent`, &copied)
	if copied != "Copied" && copied != "Select and copy" {
		t.Errorf("copy button says %q after a click, want Copied or Select and copy", copied)
	}
	b.Check(t, "copy button")

	// Printing: every broken row opened (linking pages, fixes and snippets
	// on paper), and no table wider than the page.
	printView(t, b, "report-xss-print.png")
	var nTargets int
	b.Eval(t, `JSON.parse(document.getElementById('report-data').textContent).targets.length`, &nTargets)
	for i := range nTargets {
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(url+"#target/"+strconv.Itoa(i)), chromedp.WaitVisible(`#view-target h1`)); err != nil {
			t.Fatal(err)
		}
	}
	b.Check(t, "target views")
	var hostileLinks []string
	b.Eval(t, `Array.from(document.querySelectorAll('a[href]')).map(function (a) { return new URL(a.getAttribute('href'), document.baseURI).href; }).filter(function (h) { return !/^(https?:|mailto:|file:)/i.test(h); })`, &hostileLinks)
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
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(gurl), chromedp.WaitVisible(`#view-overview svg`)); err != nil {
		t.Fatal(err)
	}
	b.Check(t, "golden overview")
	b.Screenshot(t, "report-overview.png")
	b.Eval(t, `(function () { document.querySelector('#view-overview .grid').scrollIntoView(); return 0; })()`, nil)
	b.Screenshot(t, "report-charts.png")
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(gurl+"#broken"), chromedp.WaitVisible(`#t-broken tbody tr`), chromedp.Click(`#t-broken tbody tr .toggle`)); err != nil {
		t.Fatal(err)
	}
	b.Check(t, "golden broken links")
	b.Screenshot(t, "report-broken.png")
	noOverflow(t, b, "golden #broken")
	// Search covers where a target is linked: an anchor text of the about
	// page finds the workshop.
	var found []string
	if err := chromedp.Run(b.Ctx, chromedp.SendKeys(`#t-broken input[type=search]`, "workshop programme"), chromedp.Sleep(400*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, `Array.from(document.querySelectorAll('#t-broken tbody tr:not(.detail) td:nth-child(2)')).map(function (td) { return td.textContent; })`, &found)
	if len(found) != 1 || !strings.Contains(found[0], "ext.example/gone") {
		t.Errorf("searching a linking anchor text found %q, want the workshop", found)
	}
	// The rows show where each target is linked.
	var from string
	b.Eval(t, `(function () { var s = document.querySelector('#t-broken input[type=search]'); s.value = ''; s.dispatchEvent(new Event('input')); return ''; })()`, nil)
	if err := chromedp.Run(b.Ctx, chromedp.Sleep(400*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, `document.querySelector('#t-broken tbody tr:not(.detail) td:nth-child(5)').textContent`, &from)
	if !strings.Contains(from, "site.example/") || !strings.Contains(from, "“") {
		t.Errorf("Linked from cell %q lacks page and anchor text", from)
	}
	// A missing #fragment has its own evidence and fix.
	var frag string
	b.Eval(t, `(function () {
		var rows = Array.from(document.querySelectorAll('#t-broken tbody tr:not(.detail)')).filter(function (tr) { return /fragment-missing/.test(tr.textContent); });
		if (rows.length !== 1) return 'rows: ' + rows.length;
		var tg = rows[0].querySelector('.toggle');
		if (tg.getAttribute('aria-expanded') !== 'true') tg.click();
		return rows[0].textContent + ' || ' + rows[0].nextSibling.textContent;
	})()`, &frag)
	for _, want := range []string{"missing #team", "#team is not an id on the page; link to the page or an existing anchor", "the anchor is not"} {
		if !strings.Contains(frag, want) {
			t.Errorf("fragment row lacks %q: %s", want, frag)
		}
	}
	if strings.Contains(frag, "Nothing to fix") {
		t.Errorf("fragment row says there is nothing to fix: %s", frag)
	}
	b.Check(t, "golden fragment row")

	// Since last run, and the target details it links to: the target dead
	// since run 1 is confirmed broken.
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(gurl+"#overview"), chromedp.WaitVisible(`#since`)); err != nil {
		t.Fatal(err)
	}
	var since []string
	b.Eval(t, `Array.from(document.querySelectorAll('.since h3')).map(function (h) { return h.textContent.replace(/\s+/g, ' ').trim(); })`, &since)
	if want := []string{"Newly broken 2", "Newly confirmed broken 1", "Recovered 1", "Newly drifted 1", "Newly moved 1"}; !slices.Equal(since, want) {
		t.Errorf("since last run: %q, want %q", since, want)
	}
	var detail string
	if err := chromedp.Run(b.Ctx, chromedp.Click(`.since a[href^="#target/"]`), chromedp.WaitVisible(`#view-target h1`)); err != nil {
		t.Fatal(err)
	}
	var deadHref string
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(gurl+"#overview"), chromedp.WaitVisible(`#since`)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, `Array.from(document.querySelectorAll('.since a[href^="#target/"]')).filter(function (a) { return a.textContent === 'https://ext.example/dead'; })[0].getAttribute('href')`, &deadHref)
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(gurl+deadHref), chromedp.WaitVisible(`#view-target h1`), chromedp.Sleep(100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b.Eval(t, `document.getElementById('view-target').textContent`, &detail)
	for _, want := range []string{"confirmed broken", "failing in 2 consecutive runs", "run #1"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail of the dead target lacks %q:\n%s", want, detail)
		}
	}
	b.Check(t, "golden since and target detail")
	b.Screenshot(t, "report-target.png")

	// Wide tables fit the 1400px window.
	for _, hash := range []string{"#robust", "#drift", "#identifiers", "#links", "#pages"} {
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(gurl+hash), chromedp.WaitReady(`body`)); err != nil {
			t.Fatal(err)
		}
		b.Eval(t, openAll(".view.shown"), nil)
		noOverflow(t, b, "golden "+hash)
		if hash == "#robust" {
			b.Screenshot(t, "report-robust.png")
		}
	}
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(gurl+"#broken"), chromedp.WaitVisible(`#t-broken tbody tr`)); err != nil {
		t.Fatal(err)
	}
	printView(t, b, "report-print.png")
	if err := chromedp.Run(b.Ctx, emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}),
		chromedp.Navigate(gurl+"#overview"), chromedp.WaitVisible(`#view-overview svg`)); err != nil {
		t.Fatal(err)
	}
	b.Check(t, "golden overview, dark")
	b.Screenshot(t, "report-dark.png")
}

// TestReportBrowser_LinkPages opens the HTML report of a run with more
// links than the report details (lowered with --detail-links): the Links
// view lists the link pages, a later link page shows its rows with the
// pager around it, no CSP violation or console error happens, and the
// hostile database's payloads do not run on the link pages either.
func TestReportBrowser_LinkPages(t *testing.T) {
	b := newBrowser(t)
	fixReportTime(t)
	for _, tc := range []struct {
		name string
		runs []fixtureRun
	}{{"golden", goldenRuns()}, {"hostile", xssRuns()}} {
		dir := t.TempDir()
		dbPath := filepath.Join(dir, tc.name+".db")
		buildReportDB(t, dbPath, tc.runs...)
		out := filepath.Join(dir, "r")
		if code, _, stderr := run(t, "", "report", "--db", dbPath, "--out", out, "--detail-links", "2", "--links-per-page", "3"); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		pages, err := filepath.Glob(filepath.Join(out, "links", "*.html"))
		if err != nil || len(pages) < 3 {
			t.Fatalf("%s: link pages %v, %v; want at least 3", tc.name, pages, err)
		}
		index := "file://" + filepath.ToSlash(filepath.Join(out, "index.html"))
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(index+"#links"), chromedp.WaitVisible(`#link-pages a`)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var hrefs []string
		b.Eval(t, `Array.from(document.querySelectorAll('#link-pages a')).map(function (a) { return a.getAttribute('href'); })`, &hrefs)
		if len(hrefs) != len(pages) {
			t.Errorf("%s: the Links view lists %d link pages, want %d", tc.name, len(hrefs), len(pages))
		}
		b.Check(t, tc.name+" links view")

		// A later page, reached from the index as a reader would.
		last := len(hrefs)
		if err := chromedp.Run(b.Ctx, chromedp.Click(`#link-pages a:nth-of-type(`+strconv.Itoa(last-1)+`)`, chromedp.NodeVisible),
			chromedp.WaitVisible(`#links tbody tr`)); err != nil {
			t.Fatalf("%s: open link page %d: %v", tc.name, last-1, err)
		}
		var got struct {
			Rows    int    `json:"rows"`
			First   string `json:"first"`
			Heading string `json:"heading"`
			Next    bool   `json:"next"`
			Prev    bool   `json:"prev"`
			Path    string `json:"path"`
		}
		b.Eval(t, `({rows: document.querySelectorAll('#links tbody tr').length,
			first: document.querySelector('#links tbody tr td').textContent,
			heading: document.querySelector('h1').textContent,
			next: !!document.querySelector('a[rel=next]'), prev: !!document.querySelector('a[rel=prev]'),
			path: location.pathname})`, &got)
		if got.Rows != 3 || got.First != strconv.Itoa((last-2)*3+1) || !got.Next || !got.Prev ||
			!strings.HasSuffix(got.Path, "/links/"+strconv.Itoa(last-1)+".html") {
			t.Errorf("%s: link page %d: %+v", tc.name, last-1, got)
		}
		if want := "page " + strconv.Itoa(last-1) + " of " + strconv.Itoa(last); !strings.Contains(got.Heading, want) {
			t.Errorf("%s: heading %q, want %q in it", tc.name, got.Heading, want)
		}
		b.Check(t, tc.name+" link page")
		// Next leads to the last page; it has no next, and the rest of the
		// links.
		if err := chromedp.Run(b.Ctx, chromedp.Click(`a[rel=next]`, chromedp.NodeVisible), chromedp.WaitVisible(`#links tbody tr`)); err != nil {
			t.Fatalf("%s: next: %v", tc.name, err)
		}
		b.Eval(t, `({rows: document.querySelectorAll('#links tbody tr').length,
			first: document.querySelector('#links tbody tr td').textContent,
			heading: document.querySelector('h1').textContent,
			next: !!document.querySelector('a[rel=next]'), prev: !!document.querySelector('a[rel=prev]'),
			path: location.pathname})`, &got)
		if got.Rows < 1 || got.Rows > 3 || got.Next || !got.Prev || got.First != strconv.Itoa((last-1)*3+1) {
			t.Errorf("%s: last link page: %+v", tc.name, got)
		}
		b.Check(t, tc.name+" last link page")
		if tc.name == "golden" {
			b.Screenshot(t, "report-link-page.png")
		}
	}
}
