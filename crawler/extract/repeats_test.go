package extract

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/urls"
)

// TestRepeats_EachLinkItsOwn: links repeating an href or a text (made
// once per page) each get what a link of their own would: the href
// resolved against the page's base, the diagnostics of their own value
// and attribute, the text collapsed.
func TestRepeats_EachLinkItsOwn(t *testing.T) {
	src := "<a href=a.html>one  two</a><a href=a.html#x> one two </a><a href='a\tb.html'>tab</a>" +
		"<img src='a\tb.html' alt=x><a href='a\tb.html'>tab</a><a href=a.html>\u00a0one two</a>" +
		"<a href=http://0x7f.1/>o</a><a href=http://0x7f.1/ rel=next>o</a><a href=../up.html>up</a><a href=../up.html#f>up</a>" +
		"<a href=a.html>   </a><a href=a.html>\u3000</a>"
	wantText := []string{"one two", "one two", "tab", "x", "tab", "one two", "o", "o", "up", "up", "", ""}
	// Pages one after the other (and the tree's path, which the <base>
	// takes): what one page resolved is not another's.
	for _, tc := range []struct{ page, prefix string }{
		{"http://example.org/dir/page.html", ""},
		{"http://other.test/x/y/z.html", ""},
		{"http://example.org/dir/page.html", "<base href=http://third.test/b/c/>"},
		{"http://example.org/dir/page.html", ""},
	} {
		pu, _ := url.Parse(tc.page)
		ex, _, _, err := ParseDocument([]byte(tc.prefix+src), "text/html", pu, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		base := tc.page
		if tc.prefix != "" {
			base = "http://third.test/b/c/"
		}
		res, err := urls.NewResolver(base)
		if err != nil {
			t.Fatal(err)
		}
		if len(ex.Links) != len(wantText) {
			t.Fatalf("%s: %d links, want %d: %+v", tc.page, len(ex.Links), len(wantText), ex.Links)
		}
		for i, l := range ex.Links {
			u, warnings, err := res.Resolve(l.RawHref)
			if err != nil {
				t.Fatalf("%s: link %d: %q does not resolve: %v", base, i, l.RawHref, err)
			}
			if l.Href != u.String() {
				t.Errorf("%s: link %d (%s %s=%q): href %q, resolved alone %q", base, i, l.Element, l.Attr, l.RawHref, l.Href, u.String())
			}
			want := urlDiags(l.Attr, l.RawHref, u, warnings)
			if fmt.Sprint(l.Diagnostics) != fmt.Sprint(want) && !(len(l.Diagnostics) == 0 && len(want) == 0) {
				t.Errorf("%s: link %d (%s %s=%q): diagnostics %v, alone %v", base, i, l.Element, l.Attr, l.RawHref, l.Diagnostics, want)
			}
			if l.Text != wantText[i] {
				t.Errorf("%s: link %d: text %q, want %q", base, i, l.Text, wantText[i])
			}
		}
		// The repeats with a diagnostic keep it, on every attribute.
		for _, i := range []int{2, 3, 4, 6, 7} {
			if len(ex.Links[i].Diagnostics) == 0 || ex.Links[i].Diagnostics[0].Field != ex.Links[i].Attr {
				t.Errorf("%s: link %d (%s=%q): diagnostics %v, want the lenient URL's on %s", base, i, ex.Links[i].Attr, ex.Links[i].RawHref, ex.Links[i].Diagnostics, ex.Links[i].Attr)
			}
		}
	}
}

// TestLinkText_SameAsCollapseBytes: the link text made once per page is
// collapseBytes's, whatever came before it.
func TestLinkText_SameAsCollapseBytes(t *testing.T) {
	u, _ := url.Parse("http://example.org/")
	for _, max := range []int{3, 5, 200} {
		x := newExtractor(u, Options{MaxTextLen: max})
		for _, s := range []string{"", "   ", "\u3000", "a", " a  b ", "a b", "a\u00a0b", "\tlong text here\n", "long text here",
			"héllo wörld", "héllo  wörld ", "ab", "x\u2028y", "a b"} {
			if got, want := x.linkText([]byte(s)), collapseBytes([]byte(s), max); got != want {
				t.Errorf("max %d: linkText(%q) = %q, collapseBytes %q", max, s, got, want)
			}
		}
	}
}

// sphinxLike is a page shaped like python's docs: links to a few pages
// again and again with other fragments, permalinks, the same texts.
func sphinxLike(links int) []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>T</title><link rel=stylesheet href=_static/a.css></head><body><main>")
	for i := range links {
		fmt.Fprintf(&b, "<p>Some text <a class=\"reference internal\" href=\"../library/m%d.html#sec-%d\" title=\"m%d\"><code>m%d.f</code></a>", i%50, i%3, i%50, i%50)
		if i%4 == 0 {
			fmt.Fprintf(&b, "<a class=headerlink href=\"#id%d\" title=\"Permalink to this headline\">¶</a>", i)
		}
	}
	b.WriteString("</main></body></html>")
	return []byte(b.String())
}

// TestParseDocument_AllocsPerLink bounds the allocations of extracting a
// page per link, so that a regression in the crawl's hot loop fails. Of
// the 7.6 a link when this was written, about 6 are x/net's tokenizer's
// (two a start tag attribute); the page's repeated hrefs and texts made
// once took it from 11.0.
func TestParseDocument_AllocsPerLink(t *testing.T) {
	src := sphinxLike(400)
	u, _ := url.Parse("http://example.org/dir/page.html")
	ex, _, _, err := ParseDocument(src, "text/html; charset=utf-8", u, nil, Options{})
	if err != nil || len(ex.Links) != 501 {
		t.Fatalf("%d links, err %v", len(ex.Links), err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if _, _, _, err := ParseDocument(src, "text/html; charset=utf-8", u, nil, Options{}); err != nil {
			t.Fatal(err)
		}
	})
	perLink := allocs / float64(len(ex.Links))
	t.Logf("%.0f allocations, %.2f a link", allocs, perLink)
	if perLink > 8.5 {
		t.Fatalf("%.2f allocations a link, want at most 8.5 (10.98 before the page's repeats were made once)", perLink)
	}
}

// FuzzKnownHref: a value resolved from an earlier one of the page
// (knownHref) is what resolving it alone gives, without a diagnostic.
func FuzzKnownHref(f *testing.F) {
	for _, s := range [][3]string{
		{"http://example.org/dir/page.html", "a.html#x", "a.html#y"},
		{"http://example.org/dir/page.html", "../b/c.html?q=1#x", "../b/c.html?q=1#sec-2.1"},
		{"http://example.org/", "a.html #x", "a.html #y"},
		{"http://example.org/", " a.html#x", " a.html#y "},
		{"http://example.org/", "a.html#x", "a.html#y%zz"},
		{"http://example.org/", "http://0x7f.1/#a", "http://0x7f.1/#b"},
		{"http://example.org/", "//h/%2e%2e/#a", "//h/%2e%2e/#b"},
		{"https://example.org/a/", "#x", "#y"},
		{"http://example.org/", "a.html#x", "a.html#"},
		{"http://example.org/", "a\\b#x", "a\\b#y"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, page, first, second string) {
		pu, err := url.Parse(page)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return
		}
		x := newExtractor(pu, Options{})
		first, second = urls.RedactURLString(first), urls.RedactURLString(second)
		u, warnings, err := x.res.Resolve(first)
		if err != nil || len(urlDiags("href", first, u, warnings)) != 0 {
			return
		}
		x.knowHref(first, u.String(), u)
		got, ok := x.knownHref(second)
		if !ok {
			return
		}
		w, warnings, err := x.res.Resolve(second)
		if err != nil {
			t.Fatalf("after %q: %q known as %q, but alone: %v", first, second, got, err)
		}
		if got != w.String() {
			t.Fatalf("after %q: %q known as %q, alone %q", first, second, got, w.String())
		}
		if d := urlDiags("href", second, w, warnings); len(d) != 0 {
			t.Fatalf("after %q: %q known without a diagnostic, alone %v", first, second, d)
		}
	})
}
