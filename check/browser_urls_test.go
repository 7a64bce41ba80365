package check

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	xhtml "golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/extract"
	"github.com/linkrot/linkrot/internal/browsertest"
	"github.com/linkrot/linkrot/internal/requestlog"
	"github.com/linkrot/linkrot/urls"
)

const browserPagePath = "/dir/page.html"

// browserLinks are href values (as written in the HTML source, attribute
// escaping included) that browsers accept, each under its own first path
// segment /L<n>/ so that a request names its link. "%HOST%" is the
// server's host:port.
var browserLinks = []struct{ name, href string }{
	{"stray % in path", "/L0/a%zz/b%"},
	{"stray % at the end of the path", "/L1/a%"},
	{"stray % in query", "/L2/p?q=%zz&amp;r=%"},
	{"stray % in fragment", "/L3/r5rs-Z-H-9.html#%_sec_6.2"},
	{"non-ASCII in path, query and fragment", "/L4/é/ü?é=ü#é"},
	{"spaces inside", "/L5/a b/c?d e"},
	{"tab and newline inside", "/L6/a\tb\nc?d\te"},
	{"surrounding spaces", "   /L7/p   "},
	{"backslashes", `\L8\a\b`},
	{"dot segments", "/L9/a/./b/../c/%2e%2E/d/."},
	{"upper-case scheme", "HTTP://%HOST%/L10/X"},
	{"protocol-relative", "//%HOST%/L11/x"},
	{"&amp; in a query", "/L12/p?a=1&amp;b=2"},
	{"apostrophe in a query", "/L13/p?q='x'"},
	{"pipe in a path", "/L14/a|b"},
	{"caret in a path", "/L15/a^b"},
	{"brackets, braces and backtick in a path", "/L16/a[b]{c}`d"},
	{"relative path", "../L17/x.html"},
	{"quotes and angle brackets in a query", "/L18/p?a=&quot;&lt;&gt;&quot;"},
	{"valid escapes kept as written", "/L19/a%2Fb/%7euser?q=%2f&amp;r=%C3%a9"},
	{"apostrophe in a path", "/L20/a'b"},
	{"pipe and stray % in a query", "/L21/p?a|b=%"},
	{"upper-case host", "http://%HOST%/L22/Ä"},
	{"fragment with a second #", "/L23/p#a#b"},
	{"empty query", "/L24/p?"},
}

var linkSegment = regexp.MustCompile(`/L([0-9]+)/`)

// byLink groups request targets by the link they name (/L<n>/ in the
// path: absolute-form targets count too); other requests (the page, a
// favicon) are dropped.
func byLink(targets []string) map[string][]string {
	out := map[string][]string{}
	for _, t := range targets {
		m := linkSegment.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		out[m[1]] = append(out[m[1]], t)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// TestRequestTargets_Browser compares, link by link, the request target
// Chromium sends for each href of a page with the one linkrot's checker
// sends for the target linkrot extracts from the same href: they must be
// identical. Chromium fetches every link's href (the anchor's parsed URL,
// its fragment dropped as for a navigation); linkrot extracts the page
// (crawler/extract), normalizes each href into its target (as the store
// does) and checks it (CheckOne).
func TestRequestTargets_Browser(t *testing.T) {
	var page strings.Builder
	s := requestlog.New(t, func(target string) requestlog.Response {
		if target == browserPagePath {
			return requestlog.Response{ContentType: "text/html; charset=utf-8", Body: page.String()}
		}
		return requestlog.Response{Status: 404, Body: "not here"}
	})
	page.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>links</title></head><body>`)
	for i, l := range browserLinks {
		href := strings.ReplaceAll(l.href, "%HOST%", s.Host())
		fmt.Fprintf(&page, "<p><a id=\"l%d\" href=\"%s\">%s</a></p>\n", i, href, html.EscapeString(l.name))
	}
	page.WriteString(`<script>
async function go() {
  for (const a of document.querySelectorAll('a')) {
    try { await fetch(a.href, {cache: 'no-store'}); } catch (e) { }
  }
  document.title = 'done';
}
</script></body></html>`)
	pageURL := "http://" + s.Host() + browserPagePath

	b := browsertest.New(t, browsertest.Options{})
	var title string
	var done bool
	if err := chromedp.Run(b.Ctx,
		chromedp.Navigate(pageURL),
		chromedp.Evaluate(`go().then(() => true)`, &done, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
		chromedp.Title(&title),
	); err != nil {
		t.Fatalf("browser: %v", err)
	}
	if title != "done" {
		t.Fatalf("the page's script did not finish: title %q", title)
	}
	browser := byLink(s.Take())

	root, err := xhtml.Parse(strings.NewReader(page.String()))
	if err != nil {
		t.Fatal(err)
	}
	pu, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	ex := extract.Page(root, pu, nil, extract.Options{})
	if len(ex.Links) != len(browserLinks) {
		t.Fatalf("extracted %d links, want %d", len(ex.Links), len(browserLinks))
	}
	o := testOptions()
	o.Retries = 0
	c := New(o)
	for i, l := range ex.Links {
		target, err := urls.NormalizeURL(l.Href)
		if err != nil {
			t.Errorf("link %d (%s): href %q has no target: %v", i, browserLinks[i].name, l.Href, err)
			continue
		}
		if ch := c.CheckOne(context.Background(), Target{ID: int64(i + 1), URL: target}); ch.Verdict == audit.VerdictSkipped {
			t.Errorf("link %d (%s): target %q skipped: %s", i, browserLinks[i].name, target, ch.Reason)
		}
	}
	linkrot := byLink(s.Take())

	for i, l := range browserLinks {
		k := fmt.Sprint(i)
		bt, lt := browser[k], linkrot[k]
		if len(bt) == 0 {
			t.Errorf("link %d (%s): Chromium sent no request", i, l.name)
			continue
		}
		if strings.Join(bt, "\n") != strings.Join(lt, "\n") {
			t.Errorf("link %d (%s), href %q:\n  Chromium sent %q\n  linkrot sent  %q", i, l.name, l.href, bt, lt)
		}
	}
}
