package extract

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// linkLine is "element attr href resource" for a link.
func linkLine(l audit.Link) string {
	return fmt.Sprintf("%s %s %s %v", l.Element, l.Attr, l.Href, l.Resource)
}

// candidate is a srcset candidate of the URL v with descriptor d, or v
// alone when v is blank (a blank URL followed by a descriptor would make
// the descriptor the URL).
func candidate(v, d string) string {
	if strings.TrimSpace(v) == "" {
		return v
	}
	return v + " " + d
}

// TestPage_URLAttributes runs each URL-bearing element and attribute
// through the extractor: a valid URL, a URL that does not parse, an empty
// value, and a relative URL under a <base>.
func TestPage_URLAttributes(t *testing.T) {
	type element struct {
		name string
		// tag writes the element with the attribute's value v.
		tag      func(v string) string
		attr     string
		resource bool
		// emptyIsDocument: an empty value links to the document itself
		// (else it is no link, and an empty-value diagnostic).
		emptyIsDocument bool
	}
	elements := []element{
		{"a", func(v string) string { return `<a href="` + v + `">t</a>` }, "href", false, true},
		{"area", func(v string) string { return `<map><area href="` + v + `"></map>` }, "href", false, true},
		{"link", func(v string) string { return `<link rel=stylesheet href="` + v + `">` }, "href", true, false},
		{"img", func(v string) string { return `<img src="` + v + `">` }, "src", true, false},
		{"img", func(v string) string { return `<img srcset="` + candidate(v, "2x") + `">` }, "srcset", true, false},
		{"script", func(v string) string { return `<script src="` + v + `"></script>` }, "src", true, false},
		{"iframe", func(v string) string { return `<iframe src="` + v + `"></iframe>` }, "src", true, false},
		{"source", func(v string) string { return `<video><source src="` + v + `"></video>` }, "src", true, false},
		{"source", func(v string) string { return `<picture><source srcset="` + candidate(v, "100w") + `"></picture>` }, "srcset", true, false},
		{"video", func(v string) string { return `<video src="` + v + `"></video>` }, "src", true, false},
		{"video", func(v string) string { return `<video poster="` + v + `"></video>` }, "poster", true, false},
		{"audio", func(v string) string { return `<audio src="` + v + `"></audio>` }, "src", true, false},
		{"track", func(v string) string { return `<video><track src="` + v + `"></video>` }, "src", true, false},
		{"embed", func(v string) string { return `<embed src="` + v + `">` }, "src", true, false},
		{"object", func(v string) string { return `<object data="` + v + `"></object>` }, "data", true, false},
		{"input", func(v string) string { return `<input type="image" src="` + v + `">` }, "src", true, false},
		{"meta", func(v string) string { return `<meta http-equiv="refresh" content="0; url=` + v + `">` }, "content", false, false},
		{"blockquote", func(v string) string { return `<blockquote cite="` + v + `">q</blockquote>` }, "cite", false, false},
		{"q", func(v string) string { return `<q cite="` + v + `">q</q>` }, "cite", false, false},
		{"del", func(v string) string { return `<del cite="` + v + `">d</del>` }, "cite", false, false},
		{"ins", func(v string) string { return `<ins cite="` + v + `">i</ins>` }, "cite", false, false},
	}
	const page = "https://ex.org/dir/page.html"
	for _, e := range elements {
		t.Run(e.name+"_"+e.attr, func(t *testing.T) {
			one := func(t *testing.T, html string) audit.Extraction {
				t.Helper()
				ex := extractString(t, page, html, nil)
				return ex
			}
			// Valid: resolved against the document, with its element,
			// attribute, kind and position.
			ex := one(t, "<p>\n"+e.tag("img/x.png"))
			if len(ex.Links) != 1 {
				t.Fatalf("valid: %d links %v, want 1", len(ex.Links), ex.Links)
			}
			l := ex.Links[0]
			if got, want := linkLine(l), fmt.Sprintf("%s %s https://ex.org/dir/img/x.png %v", e.name, e.attr, e.resource); got != want {
				t.Errorf("valid: %q, want %q", got, want)
			}
			if l.Line != 2 || l.Column < 2 {
				t.Errorf("valid: position %d:%d, want on line 2", l.Line, l.Column)
			}
			if src := e.tag("img/x.png"); l.Column != 1+strings.Index(src, "img/x.png") {
				t.Errorf("valid: column %d, want %d (the URL in %s)", l.Column, 1+strings.Index(src, "img/x.png"), src)
			}
			if len(l.Diagnostics) != 0 {
				t.Errorf("valid: diagnostics %v", l.Diagnostics)
			}

			// Broken: a URL that does not parse is recorded as written
			// with an invalid-url diagnostic.
			ex = one(t, e.tag("http://[::1/x"))
			if len(ex.Links) != 1 || ex.Links[0].Href != "http://[::1/x" || !slices.Contains(codes(ex.Links[0].Diagnostics), CodeInvalidURL) {
				t.Errorf("broken: links %v, want one with %s", ex.Links, CodeInvalidURL)
			}

			// Relative under <base>: resolved against the base.
			ex = one(t, `<base href="https://cdn.ex.org/assets/">`+e.tag("y/z.png"))
			if len(ex.Links) != 1 || ex.Links[0].Href != "https://cdn.ex.org/assets/y/z.png" {
				t.Errorf("base: links %v, want https://cdn.ex.org/assets/y/z.png", ex.Links)
			}

			// Blank.
			ex = one(t, e.tag("  "))
			switch {
			case e.emptyIsDocument:
				if len(ex.Links) != 1 || ex.Links[0].Href != page {
					t.Errorf("blank: links %v, want one to the document", ex.Links)
				}
			case e.name == "meta":
				// "0; url=  " names no URL: the page reloads itself.
				if len(ex.Links) != 0 || len(ex.Diagnostics) != 0 {
					t.Errorf("blank: links %v, diagnostics %v; want none (a reload)", ex.Links, ex.Diagnostics)
				}
			default:
				if len(ex.Links) != 0 || !slices.Contains(codes(ex.Diagnostics), CodeEmptyValue) {
					t.Errorf("blank: links %v, diagnostics %v; want none and %s", ex.Links, ex.Diagnostics, CodeEmptyValue)
				}
			}
		})
	}
}

// TestPage_Kinds checks the links' kinds as audit.LinkRules classifies
// them: connection hints are recorded and never checked, preload and
// its kin are fetches, cite and a meta refresh lead to pages.
func TestPage_Kinds(t *testing.T) {
	ex := extractString(t, "https://ex.org/", `<head>
<link rel="dns-prefetch" href="https://dns.example">
<link rel="preconnect" href="https://pre.example" crossorigin>
<link rel="PreConnect dns-prefetch" href="https://both.example">
<link rel="preconnect stylesheet" href="https://mixed.example/s.css">
<link rel="preload" href="/font.woff2" as="font">
<link rel="modulepreload" href="/m.js">
<link rel="prefetch" href="/next.html">
<meta http-equiv="refresh" content="3;url=/moved.html">
</head><body>
<iframe src="/frame.html"></iframe><video poster="/p.jpg" src="/v.webm"></video>
<blockquote cite="/source.html">q</blockquote><a href="/a">a</a></body>`, nil)
	type row struct {
		href          string
		kind          audit.LinkKind
		checked, page bool
	}
	var got []row
	for i := range ex.Links {
		l := &ex.Links[i]
		r := l.Rule()
		got = append(got, row{l.Href, r.Kind, l.Checked(), r.Page})
	}
	want := []row{
		{"https://dns.example/", audit.KindHint, false, false},
		{"https://pre.example/", audit.KindHint, false, false},
		{"https://both.example/", audit.KindHint, false, false},
		{"https://mixed.example/s.css", audit.KindResource, true, false},
		{"https://ex.org/font.woff2", audit.KindResource, true, false},
		{"https://ex.org/m.js", audit.KindResource, true, false},
		{"https://ex.org/next.html", audit.KindResource, true, false},
		{"https://ex.org/moved.html", audit.KindNavigation, true, true},
		{"https://ex.org/frame.html", audit.KindResource, true, true},
		{"https://ex.org/v.webm", audit.KindResource, true, false},
		{"https://ex.org/p.jpg", audit.KindResource, true, false},
		{"https://ex.org/source.html", audit.KindNavigation, true, true},
		{"https://ex.org/a", audit.KindNavigation, true, true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kinds:\n got %v\nwant %v", got, want)
	}
}

// TestPage_Conditions checks the attributes an element's URL depends on:
// input only of type image, meta only as a refresh, both compared ASCII
// case-insensitively (a long s is not an s).
func TestPage_Conditions(t *testing.T) {
	tests := []struct {
		name, html string
		want       []string
	}{
		{"InputImage", `<input type="IMAGE" src="/go.png" alt=" Go ">`, []string{"input src https://ex.org/go.png true"}},
		{"InputText", `<input type="text" src="/no.png"><input src="/none.png">`, nil},
		{"MetaRefresh", `<meta HTTP-EQUIV="REFRESH" content="0;url=/r">`, []string{"meta content https://ex.org/r false"}},
		{"MetaOther", `<meta http-equiv="content-type" content="0;url=/r"><meta name="refresh" content="0;url=/r">`, nil},
		{"LongS", "<meta http-equiv=\"refre\u017fh\" content=\"0;url=/r\">", nil},
		{"VideoBoth", `<video src="/v.mp4" poster="/p.png"><source src="/s.webm"><track src="/t.vtt"></video>`,
			[]string{"video src https://ex.org/v.mp4 true", "video poster https://ex.org/p.png true", "source src https://ex.org/s.webm true", "track src https://ex.org/t.vtt true"}},
		{"ImgSrcThenSrcset", `<img srcset="/a.png 1x, /b.png 2x" src="/c.png">`,
			[]string{"img src https://ex.org/c.png true", "img srcset https://ex.org/a.png true", "img srcset https://ex.org/b.png true"}},
		{"DuplicateSrcsetFirstWins", `<img srcset="/a.png" srcset="/b.png">`, []string{"img srcset https://ex.org/a.png true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := extractString(t, "https://ex.org/", tt.html, nil)
			var got []string
			for _, l := range ex.Links {
				got = append(got, linkLine(l))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("links:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	ex := extractString(t, "https://ex.org/", `<input type=image src=/i.png alt="Send it">`, nil)
	if ex.Links[0].Text != "Send it" {
		t.Errorf("input image text %q, want its alt", ex.Links[0].Text)
	}
}

// TestPage_SrcsetAndRefreshDiagnostics checks what a page says of the
// srcset candidates and refreshes browsers drop.
func TestPage_SrcsetAndRefreshDiagnostics(t *testing.T) {
	ex := extractString(t, "https://ex.org/", `<img srcset="/ok.png 1x, /bad.png 1q, /worse.png 0w">`+
		`<meta http-equiv=refresh content="url=/x"><meta http-equiv=refresh content="soon"><meta http-equiv=refresh content="30">`, nil)
	var got []string
	for _, l := range ex.Links {
		got = append(got, l.Href)
	}
	if !reflect.DeepEqual(got, []string{"https://ex.org/ok.png"}) {
		t.Errorf("links %q, want the valid candidate only", got)
	}
	if c := codes(ex.Diagnostics); !reflect.DeepEqual(c, []string{CodeInvalidSrcset, CodeInvalidSrcset, CodeInvalidRefresh, CodeInvalidRefresh}) {
		t.Errorf("diagnostics %q (%v)", c, ex.Diagnostics)
	}
}

// TestPage_URLAttributePositions checks where each new kind of link is:
// a srcset candidate at its own URL, a meta refresh at the URL after
// "url=", with entities and odd spacing in the value.
func TestPage_URLAttributePositions(t *testing.T) {
	tests := []struct {
		name, html string
		want       []string // "line:col href"
	}{
		{"Srcset", "<img srcset=\"a.png 1x,\n   b.png 2x\" src=c.png>",
			[]string{"2:18 https://ex.org/c.png", "1:14 https://ex.org/a.png", "2:4 https://ex.org/b.png"}},
		{"SrcsetEntities", `<img srcset="a.png?x=1&amp;y=2 1x, b.png 2x">`,
			[]string{"1:14 https://ex.org/a.png?x=1&y=2", "1:36 https://ex.org/b.png"}},
		{"SrcsetCommaInURL", `<img srcset="a,b.png 1x,c.png">`,
			[]string{"1:14 https://ex.org/a,b.png", "1:25 https://ex.org/c.png"}},
		{"Refresh", `<meta http-equiv=refresh content="0; URL = 'next.html'">`, []string{"1:45 https://ex.org/next.html"}},
		{"RefreshBare", `<meta content="5, there.html" http-equiv=Refresh>`, []string{"1:19 https://ex.org/there.html"}},
		{"PosterAfterSrc", `<video poster=p.png src="v.mp4">`, []string{"1:26 https://ex.org/v.mp4", "1:15 https://ex.org/p.png"}},
		{"InputSkipsText", "<input type=text src=x.png>\n<input src=x.png type=image>", []string{"2:12 https://ex.org/x.png"}},
		{"Cites", "<q cite=a.html>a</q><del\ncite='d.html'>d</del>", []string{"1:9 https://ex.org/a.html", "2:7 https://ex.org/d.html"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := extractString(t, "https://ex.org/", tt.html, nil)
			var got []string
			for _, l := range ex.Links {
				got = append(got, fmt.Sprintf("%d:%d %s", l.Line, l.Column, l.Href))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("positions:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
