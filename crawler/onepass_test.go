package crawler

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler/extract"
)

// onePassSame runs the one pass and the tree path over body and reports
// whether the pass fell back, or the first difference of their
// extraction or page evidence.
func onePassSame(body []byte, pageURL string) (fellBack bool, diff string) {
	return onePassSameOpt(body, pageURL, extract.Options{})
}

// onePassSameOpt is onePassSame with extraction options opt.
func onePassSameOpt(body []byte, pageURL string, opt extract.Options) (fellBack bool, diff string) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return false, err.Error()
	}
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	ct := h.Get("Content-Type")
	ex, cs, doc, ok := extract.OnePass(body, ct, u, h, opt)
	if !ok {
		return true, ""
	}
	tex, tcs, tdoc, err := extract.ParseTree(body, ct, u, h, opt)
	if err != nil {
		return false, "the tree path failed where the pass did not: " + err.Error()
	}
	if cs != tcs {
		return false, fmt.Sprintf("charset %q, tree %q", cs, tcs)
	}
	if !reflect.DeepEqual(ex, tex) {
		return false, fmt.Sprintf("extraction differs\npass %+v\ntree %+v", ex, tex)
	}
	// Facts reads the facts without the links (compared before Observe,
	// which lower-cases the main text's words in place).
	if f := extract.Facts(doc.Decoded); !reflect.DeepEqual(f, doc.Facts) {
		return false, fmt.Sprintf("Facts differs from the pass's facts\nFacts %+v\npass  %+v", f, doc.Facts)
	}
	e := check.Observe(200, h, body, true, 0, &check.ParsedHTML{Decoded: doc.Decoded, Facts: doc.Facts})
	te := check.Observe(200, h, body, true, 0, &check.ParsedHTML{Decoded: tdoc.Decoded, Doc: tdoc.Root})
	if !reflect.DeepEqual(e, te) {
		var d []string
		if e.Text != te.Text {
			d = append(d, fmt.Sprintf("text\npass %q\ntree %q", cut(e.Text), cut(te.Text)))
		}
		if !reflect.DeepEqual(e.Anchors, te.Anchors) {
			d = append(d, fmt.Sprintf("anchors\npass %q\ntree %q", e.Anchors, te.Anchors))
		}
		if !reflect.DeepEqual(e.Signals, te.Signals) {
			d = append(d, fmt.Sprintf("signals\npass %+v\ntree %+v", e.Signals, te.Signals))
		}
		return false, fmt.Sprintf("evidence differs: %s\npass %+v\ntree %+v", strings.Join(d, "\n"), *e, *te)
	}
	// A cap cutting the page in half: the prefix read by Facts (the
	// crawler's Parsed.Read) or parsed into a tree.
	if half := int64(len(body) / 2); half > 0 {
		e := check.Observe(200, h, body, true, half, &check.ParsedHTML{Decoded: doc.Decoded, Facts: doc.Facts, Read: extract.Facts})
		te := check.Observe(200, h, body, true, half, nil)
		if !reflect.DeepEqual(e, te) {
			return false, fmt.Sprintf("evidence of the first %d bytes differs\npass %+v\ntree %+v", half, *e, *te)
		}
	}
	return false, ""
}

func cut(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "..."
	}
	return s
}

// onePassTree runs onePassSame over every .html file below dir and
// returns the number of pages and of fallbacks.
func onePassTree(t *testing.T, dir string) (pages, fallbacks int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		pages++
		fb, diff := onePassSame(body, "http://docs.test/"+filepath.ToSlash(rel))
		if fb {
			fallbacks++
		}
		if diff != "" {
			t.Errorf("%s: %s", rel, diff)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages, fallbacks
}

// TestOnePass_DocTrees: over every page of the Debian documentation trees
// (python3.11-doc, python-django-doc), the one pass gives the tree path's
// extraction (links, positions, diagnostics, identifiers, pwids) and page
// evidence (main-text fingerprint and text, anchors, soft-404 signals),
// or falls back; at most 1% of the pages fall back (none did when this
// was written).
// LINKROT_REQUIRE_PYDOCS=1 makes the Python tree required.
func TestOnePass_DocTrees(t *testing.T) {
	if testing.Short() {
		t.Skip("reads two documentation trees")
	}
	for _, tc := range []struct {
		dir      string
		required bool
	}{
		{"/usr/share/doc/python3.11/html", os.Getenv("LINKROT_REQUIRE_PYDOCS") == "1"},
		{"/usr/share/doc/python-django-doc/html", false},
	} {
		t.Run(filepath.Base(filepath.Dir(tc.dir)), func(t *testing.T) {
			if _, err := os.Stat(tc.dir); err != nil {
				if tc.required {
					t.Fatalf("LINKROT_REQUIRE_PYDOCS=1 but %s is missing: %v (install python3.11-doc)", tc.dir, err)
				}
				t.Skipf("%s is absent (install the Debian -doc package to run this test): %v", tc.dir, err)
			}
			pages, fb := onePassTree(t, tc.dir)
			t.Logf("%s: %d pages, %d fell back to html.Parse", tc.dir, pages, fb)
			if pages == 0 {
				t.Fatal("no pages")
			}
			if fb*100 > pages {
				t.Errorf("%d of %d pages fell back: more than 1%%", fb, pages)
			}
		})
	}
}

// TestOnePass_Fixtures: the test sites and the extraction fixtures give
// the same results by the pass as by the tree (or fall back).
func TestOnePass_Fixtures(t *testing.T) {
	pages := 0
	for _, dir := range []string{"../testdata", "extract/testdata", "../internal/demo"} {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		n, _ := onePassTree(t, dir)
		pages += n
	}
	if pages == 0 {
		t.Fatal("no fixture pages found")
	}
	for i, src := range onePassSeeds {
		if _, diff := onePassSame([]byte(src), "http://example.org/dir/page.html"); diff != "" {
			t.Errorf("seed %d %q: %s", i, src, diff)
		}
	}
}

// onePassModelled are pages whose constructs the pass models (implied
// elements and end tags, tables, SVG, forms, hidden subtrees, raw text,
// templates, markup after </body>): none falls back.
var onePassModelled = []string{
	// Repeats a page resolves or collapses once (the same href, with and
	// without a fragment, with a diagnostic; the same text, spaced
	// otherwise).
	"<head><link rel=next href=a.html></head><body><a href=a.html>one  two</a><a href=a.html#x> one two </a>" +
		"<a href='a\tb.html'>x</a><a href='a\tb.html'>x</a><a href=//o.test:0x1/>p</a><a href=//o.test:0x1/>p</a>" +
		"<a href=a.html rel=next>\u00a0one two</a><img src=a.html alt=' one\ntwo '><a href=a.html#x>\u3000</a><a href=a.html#x>   </a>",
	// "<base" that is no element: in a comment, a script, an attribute
	// value, a title.
	"<!-- <base href=http://other/> --><title><base href=t></title><a href=x title='<base href=y>'>x</a><script>s='<base href=z>'</script>",
	"<!DOCTYPE html><html><head><title>T</title></head><body><main><h1>Hi</h1><p>a<a href=x>link <b>b</b></a></main></body></html>",
	"<p>one<p>two<ul><li>a<li>b</ul><dl><dt>t<dd>d</dl>",
	"<table><tr><td><a href=/a>A</a><td>b</table><table><colgroup><col><col></colgroup><tbody><tr><th>x</th></tr></tbody></table>",
	"<svg><a href=/s><text>t</text></a><path d=x /></svg><a xlink:href=y>z</a>",
	"<p><svg viewBox='0 0 1 1'><a xlink:href='/x' id=sv><text>t</text></a><clipPath id=c><style>a{x:y}</style></clipPath></svg>after",
	"<form><input type=image src=i.png></form><article>art <form>f</form></article>",
	"<div hidden><a href=h>hidden</a></div><nav>nav</nav><h1 hidden>no</h1><h1>yes <span hidden>x</span></h1>",
	"<textarea>\nx</textarea><pre>\ny</pre><script>var a='<a href=q>'</script><style>p{}</style>",
	"<meta http-equiv=refresh content='0; url=/next'><img src=a.png srcset='b.png 2x, c.png 3x' alt=alt>",
	"<blockquote cite=/c>q</blockquote><q cite=/q>q</q><del cite=/d>d</del><ins cite=/i>i</ins>",
	"<a href='http://x/' data-originalurl='http://o/' data-versiondate='2020-01-01' data-versionurl='http://archive/'>r</a>",
	"<select><option>a<option>b</select><object data=o.swf></object><iframe src=f></iframe>",
	"</p><br></br><h2>a<h3>b</h3></h2><li>x</li></body></html><!-- c -->  ",
	"<head><template><a href=t>t</a><p id=x>y</template><title>after</title></head><body>b<template>in body<div id=d><a href=u name=n>u</a></div></template></body>",
	"</template><template><template>nested</template></template>",
	"<html data-adblockkey=k><script src=//parking.example/x.js></script><script>window.location='http://ww1.x/'</script>",
	"<A HREF='?a=1&amp;b=2' ID=Up>entities &amp; upper case</A>",
}

// onePassFallbacks are pages with a construct the pass leaves to the tree
// (see docs/crawling.md): each falls back.
var onePassFallbacks = []string{
	"<base href=/sub/><a href=a.html>x</a><a href=a.html#y>x</a><a href='a\tb.html'>x</a><a href='a\tb.html'>x</a>", // <base>: the tree
	"<p><b>unclosed<p>next",                       // reconstruction of formatting elements
	"<a href=1><a href=2>x</a></a>",               // the adoption agency
	"<table>text<a href=t>t</a></table>",          // foster parenting
	"<base href=http://other/><a href=x>x</a>",    // the base applies to earlier links
	"<a href=x>x</a><p><BASE HREF=http://other/>", // also to the links before it
	"<svg><base href=http://other/></svg><a href=x>x</a>",
	"<template><base href=http://other/></template><a href=x>x</a>",
	"text pwid:archive.org:2020-01-01T00:00:00Z:page:http://a/ here",
	"<template><tr><td>x</td></tr></template>", // table parts in a template
	"<div><template><b>x</template></div>",     // a formatting element closed by </template>
	"<math><mi>x</mi></math>",                  // MathML
	"<svg><title>t</title></svg>",              // an SVG HTML integration point
	"<body>x</body><p>after",                   // content after </body>
}

// onePassSeeds are both lists.
var onePassSeeds = append(append([]string{}, onePassModelled...), onePassFallbacks...)

// TestOnePass_Rules: the modelled constructs are read by the pass, the
// others fall back; both give the tree path's results.
func TestOnePass_Rules(t *testing.T) {
	for _, src := range onePassModelled {
		fb, diff := onePassSame([]byte(src), "http://example.org/dir/page.html")
		if fb || diff != "" {
			t.Errorf("%q: fell back %v, %s", src, fb, diff)
		}
	}
	for _, src := range onePassFallbacks {
		fb, diff := onePassSame([]byte(src), "http://example.org/dir/page.html")
		if !fb || diff != "" {
			t.Errorf("%q: fell back %v (want true), %s", src, fb, diff)
		}
	}
	// ParseDocument builds no tree for a modelled page, and a tree for a
	// page that falls back, which FallbackPages counts.
	u, _ := url.Parse("http://example.org/")
	before := extract.FallbackPages()
	_, _, doc, err := extract.ParseDocument([]byte(onePassModelled[0]), "text/html", u, nil, extract.Options{})
	if err != nil || doc.Root != nil || doc.Facts == nil || extract.FallbackPages() != before {
		t.Errorf("modelled page: err %v, tree %v, facts %v, fallbacks %d -> %d", err, doc.Root != nil, doc.Facts != nil, before, extract.FallbackPages())
	}
	_, _, doc, err = extract.ParseDocument([]byte(onePassFallbacks[0]), "text/html", u, nil, extract.Options{})
	if err != nil || doc.Root == nil || doc.Facts != nil || extract.FallbackPages() != before+1 {
		t.Errorf("fallback page: err %v, tree %v, facts %v, fallbacks %d -> %d", err, doc.Root != nil, doc.Facts != nil, before, extract.FallbackPages())
	}
}

// FuzzOnePass: on any input, the one pass falls back or gives the tree
// path's extraction and evidence.
func FuzzOnePass(f *testing.F) {
	for _, s := range onePassSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 64<<10 {
			return
		}
		if _, diff := onePassSame(body, "http://example.org/dir/page.html"); diff != "" {
			t.Fatal(diff)
		}
		// Small bounds: the text, link and pwid-scan caps are reached.
		small := extract.Options{MaxTextLen: 5, MaxLinks: 3, MaxTextScan: 16}
		if _, diff := onePassSameOpt(body, "http://example.org/dir/page.html", small); diff != "" {
			t.Fatalf("with %+v: %s", small, diff)
		}
	})
}

// TestOnePass_PasswordInText: a page showing URLs with a password as its
// text (in a link's text, in a paragraph, across an inline element, in
// main) gives the same evidence by the one pass and by the tree, and the
// kept words hold none of the passwords, on every path (the checker's own
// parse too): the words are stored.
func TestOnePass_PasswordInText(t *testing.T) {
	body := []byte(`<!doctype html><title>t</title><main>
<p><a href="https://user:s3cr3t@example.org/private">https://user:s3cr3t@example.org/private</a> and more words</p>
<p>ftp://anon:pa55word@files.example/ <b>and</b> see me@example.org, @decorators, a@b</p>
<p>http://<em>x</em>:hunter2@example.org/ inline</p>
</main>`)
	if fellBack, diff := onePassSame(body, "https://example.org/p"); fellBack || diff != "" {
		t.Fatalf("fell back %v, diff %s", fellBack, diff)
	}
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	u, _ := url.Parse("https://example.org/p")
	_, _, doc, ok := extract.OnePass(body, h.Get("Content-Type"), u, h, extract.Options{})
	if !ok {
		t.Fatal("the pass fell back")
	}
	for name, e := range map[string]*audit.PageEvidence{
		"pass":    check.Observe(200, h, body, true, 0, &check.ParsedHTML{Decoded: doc.Decoded, Facts: doc.Facts}),
		"checker": check.Observe(200, h, body, true, 0, nil),
	} {
		for _, secret := range []string{"s3cr3t", "pa55word", "hunter2"} {
			if strings.Contains(e.Text, secret) {
				t.Errorf("%s: the kept words hold %q: %q", name, secret, e.Text)
			}
		}
		for _, w := range []string{"user", "private", "more", "words", "anon", "decorators", "inline"} {
			if !slices.Contains(strings.Fields(e.Text), w) {
				t.Errorf("%s: the kept words lack %q: %q", name, w, e.Text)
			}
		}
	}
}
