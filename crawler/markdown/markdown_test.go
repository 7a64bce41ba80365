package markdown

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/crawler/extract"
)

const page = "https://ex.org/docs/page.md"

func parse(t testing.TB, src string) *Document {
	t.Helper()
	u, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	return Parse([]byte(src), u, extract.Options{})
}

func links(d *Document) []string {
	var out []string
	for _, l := range d.Extraction.Links {
		out = append(out, fmt.Sprintf("%s %s %s", l.Element, l.Href, l.Text))
	}
	return out
}

// TestParse_CommonMarkLinks runs the link, image and autolink examples of
// the CommonMark spec 0.31.2 (sections 6.3 to 6.5; example numbers in the
// names) and GFM's autolink extension: Markdown in, the links the spec's
// HTML output holds out, as "element href text" (hrefs resolved against
// https://ex.org/docs/page.md).
func TestParse_CommonMarkLinks(t *testing.T) {
	tests := []struct {
		name string
		md   string
		want []string
	}{
		{"482InlineWithTitle", `[link](/uri "title")`, []string{"a https://ex.org/uri link"}},
		{"483Inline", `[link](/uri)`, []string{"a https://ex.org/uri link"}},
		{"485EmptyDestination", `[link]()`, []string{"a https://ex.org/docs/page.md link"}},
		{"486EmptyPointyDestination", `[link](<>)`, []string{"a https://ex.org/docs/page.md link"}},
		{"487SpaceNotAllowed", `[link](/my uri)`, nil},
		{"488PointySpace", `[link](</my uri>)`, []string{"a https://ex.org/my%20uri link"}},
		{"489NoLineBreak", "[link](foo\nbar)", nil},
		{"491PointyParen", `[a](<b)c>)`, []string{"a https://ex.org/docs/b)c a"}},
		{"494EscapedParens", `[link](\(foo\))`, []string{"a https://ex.org/docs/(foo) link"}},
		{"495BalancedParens", `[link](foo(and(bar)))`, []string{"a https://ex.org/docs/foo(and(bar)) link"}},
		// The destination is "foo):"; Go's net/url (as the HTML
		// extractor uses it) rejects a colon in a relative first segment:
		// kept as written with an invalid-url diagnostic.
		{"498EscapedClose", `[link](foo\)\:)`, []string{"a foo): link"}},
		{"499Fragments", "[link](#fragment)\n\n[link](https://example.com#fragment)\n\n[link](https://example.com?foo=3#frag)",
			[]string{"a https://ex.org/docs/page.md#fragment link", "a https://example.com#fragment link", "a https://example.com?foo=3#frag link"}},
		{"501Entity", `[link](foo%20b&auml;)`, []string{"a https://ex.org/docs/foo%20b%C3%A4 link"}},
		{"506Whitespace", "[link](   /uri\n  \"title\"  )", []string{"a https://ex.org/uri link"}},
		{"508NestedBrackets", `[link [foo [bar]]](/uri)`, []string{"a https://ex.org/uri link [foo [bar]]"}},
		{"512Emphasis", "[link *foo **bar** `#`*](/uri)", []string{"a https://ex.org/uri link foo bar #"}},
		{"513ImageInLink", `[![moon](moon.jpg)](/uri)`, []string{"a https://ex.org/uri moon", "img https://ex.org/docs/moon.jpg moon"}},
		{"514NoLinksInLinks", `[foo [bar](/uri)](/uri)`, []string{"a https://ex.org/uri bar"}},
		{"519CodeSpanWins", "[foo`](/uri)`", nil},
		{"520AutolinkWins", `[foo<https://example.com/?search=](uri)>`, []string{"a https://example.com/?search=](uri) https://example.com/?search=](uri)"}},
		{"521FullReference", "[foo][bar]\n\n[bar]: /url \"title\"", []string{"a https://ex.org/url foo"}},
		{"533CaseInsensitiveLabel", "[foo][BaR]\n\n[bar]: /url", []string{"a https://ex.org/url foo"}},
		{"542FirstDefinitionWins", "[foo][bar]\n\n[bar]: /url1\n[bar]: /url2", []string{"a https://ex.org/url1 foo"}},
		{"553Collapsed", "[foo][]\n\n[foo]: /url \"title\"", []string{"a https://ex.org/url foo"}},
		{"557Shortcut", "[foo]\n\n[foo]: /url \"title\"", []string{"a https://ex.org/url foo"}},
		{"564UndefinedIsText", "[foo][bar]\n\n[baz]: /url", nil},
		{"572Image", `![foo](/url "title")`, []string{"img https://ex.org/url foo"}},
		{"576ImageAltFromMarkup", `![foo *bar*](train.jpg)`, []string{"img https://ex.org/docs/train.jpg foo bar"}},
		{"580ImagePointy", `![foo](<url>)`, []string{"img https://ex.org/docs/url foo"}},
		{"582ImageReference", "![foo][bar]\n\n[bar]: /url", []string{"img https://ex.org/url foo"}},
		{"594Autolink", `<http://foo.bar.baz>`, []string{"a http://foo.bar.baz http://foo.bar.baz"}},
		{"597UpperScheme", `<MAILTO:FOO@BAR.BAZ>`, []string{"a mailto:FOO@BAR.BAZ MAILTO:FOO@BAR.BAZ"}},
		{"606Email", `<foo@bar.example.com>`, []string{"a mailto:foo@bar.example.com foo@bar.example.com"}},
		{"602SpaceNotAutolink", `<https://foo.bar/baz bim>`, nil},
		// GFM autolinks extension: bare www. and http(s) URLs.
		{"GFM622Www", `www.commonmark.org`, []string{"a http://www.commonmark.org www.commonmark.org"}},
		{"GFM624TrailingPunctuation", `Visit www.commonmark.org/a.b.`, []string{"a http://www.commonmark.org/a.b www.commonmark.org/a.b"}},
		{"GFM631Bare", `https://www.commonmark.org/help`, []string{"a https://www.commonmark.org/help https://www.commonmark.org/help"}},
		{"CodeBlockIsNotLinks", "    [link](/uri)\n\n```\n<https://x.org>\n```", nil},
		// Raw HTML goes through the HTML extractor.
		{"InlineHTML", `see <a href="/x">x</a>`, []string{"a https://ex.org/x "}},
		{"HTMLBlock", "<div>\n<img src=\"a.png\" alt=\"A\">\n</div>", []string{"img https://ex.org/docs/a.png A"}},
		{"RelativeMarkdown", `[next](../guide/next.md#setup)`, []string{"a https://ex.org/guide/next.md#setup next"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := links(parse(t, tt.md)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("links of %q:\n got %q\nwant %q", tt.md, got, tt.want)
			}
		})
	}
}

func TestParse_Positions(t *testing.T) {
	src := "# Title\r\n\r\nSome é😀 text [a](/a) and\r\n<https://b.example/>\n\n" +
		"* item ![i](i.png)\n\n" +
		"<p>\n  <a\n   href=\"/c\">c</a>\n</p>\n\n" +
		"[ref]\n\n[ref]: /r\n\n" +
		"> quoted <a href=\"/d\">d</a>\n"
	d := parse(t, src)
	var got []string
	for _, l := range d.Extraction.Links {
		got = append(got, fmt.Sprintf("%s %d:%d", l.Href, l.Line, l.Column))
	}
	want := []string{
		// é is one UTF-16 unit, 😀 two: "Some é😀 text " is 14 units.
		"https://ex.org/a 3:15",
		"https://b.example/ 4:1",
		"https://ex.org/docs/i.png 6:8",
		// Inside an HTML block, at the attribute value.
		"https://ex.org/c 10:10",
		// A reference link is where it is used.
		"https://ex.org/r 13:1",
		"https://ex.org/d 17:19",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("positions:\n got %q\nwant %q", got, want)
	}
}

func TestParse_Anchors(t *testing.T) {
	src := "# Hello, World!\n\n## Hello, World!\n\n## Hello World 1\n\n## `go install` & *more*_stuff-here\n\n" +
		"Setext\n------\n\n## Ünïcödé Straße\n\n## Hello, World!\n\n## 😀 Emoji\n"
	d := parse(t, src)
	want := []string{"hello-world", "hello-world-1", "hello-world-1-1", "go-install--more_stuff-here", "setext",
		"ünïcödé-straße", "hello-world-2", "-emoji"}
	if !reflect.DeepEqual(d.Anchors, want) {
		t.Errorf("anchors:\n got %q\nwant %q", d.Anchors, want)
	}
	if d.Extraction.Title != "Hello, World!" {
		t.Errorf("title %q", d.Extraction.Title)
	}
	if !strings.Contains(string(d.HTML), `<h2 id="hello-world-1">`) {
		t.Errorf("rendered HTML lacks the anchor id:\n%s", d.HTML)
	}
}

func TestParse_RobustLinksInRawHTML(t *testing.T) {
	src := "Intro\n\n<a href=\"https://example.com/a\" data-versionurl=\"https://web.archive.org/web/20200101000000/https://example.com/a\"\n" +
		"   data-versiondate=\"2020-01-01\">a</a> and <a href=\"pwid:archive.org:2020-01-01T00:00:00Z:page:https://example.com/\">p</a>\n"
	d := parse(t, src)
	ls := d.Extraction.Links
	if len(ls) != 2 {
		t.Fatalf("links: %q", links(d))
	}
	if ls[0].Robust == nil || len(ls[0].Robust.Snapshots) != 1 || ls[0].Line != 3 || ls[0].Column != 10 {
		t.Errorf("robust link: %+v at %d:%d", ls[0].Robust, ls[0].Line, ls[0].Column)
	}
	if len(d.Extraction.PWIDs) != 1 || d.Extraction.PWIDs[0].Link != 1 {
		t.Errorf("pwids: %+v", d.Extraction.PWIDs)
	}
}

func TestParse_MaxLinks(t *testing.T) {
	u, _ := url.Parse(page)
	d := Parse([]byte(strings.Repeat("[x](/x) <a href=/y>y</a>\n", 10)), u, extract.Options{MaxLinks: 5})
	if len(d.Extraction.Links) != 5 || len(d.Extraction.Diagnostics) != 1 {
		t.Errorf("%d links, diagnostics %+v", len(d.Extraction.Links), d.Extraction.Diagnostics)
	}
}

func TestIsPath(t *testing.T) {
	for p, want := range map[string]bool{"a.md": true, "A.MARKDOWN": true, "x.mdx": false, "md": false, "a.html": false} {
		if IsPath(p) != want {
			t.Errorf("IsPath(%q) = %v", p, !want)
		}
	}
}
