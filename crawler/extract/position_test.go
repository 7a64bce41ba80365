package extract

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func TestPositions(t *testing.T) {
	// Each want entry is "line:col" of the first character of the URL
	// attribute's value; columns are UTF-16 code units, 1-based (SARIF
	// 2.1.0, 3.30.2 with columnKind utf16CodeUnits).
	tests := []struct {
		name string
		html string
		want []string
	}{
		{"FirstLine", `<a href="/a">a</a>`, []string{"1:10"}},
		{"LF", "<p>x</p>\n<p><a href=/b>b</a>", []string{"2:12"}},
		{"CRLF", "<p>x</p>\r\n\r\n  <a href='/c'>c</a>\r\n<img src=/d>", []string{"3:12", "4:10"}},
		// A lone CR is a newline sequence too.
		{"CR", "<p>x</p>\r<a href=/e>e</a>", []string{"2:9"}},
		{"MultiLineTag", "<a\n  class=\"x\"\n  href=\"/f\"\n>f</a>", []string{"3:9"}},
		{"AttributeValueSplitAcrossLines", "<a title=\"one\ntwo\" href=\n  \"/g\">g</a>", []string{"3:4"}},
		{"UpperCase", "<A HREF = '/h'>h</A>", []string{"1:12"}},
		// Columns count source characters: an entity is as long as it is
		// written, not as the character it stands for.
		{"EntitiesBefore", `<p>&eacute;&amp;&#x1F600;</p><a href="/i">i</a>`, []string{"1:39"}},
		{"EntityInValue", `<a href="/j?a=1&amp;b=2">j</a>`, []string{"1:10"}},
		// é is 2 bytes and 1 code unit; 中 3 bytes, 1 unit: 5 units before </p>.
		{"NonASCIIBefore", "<p>é中</p><a href=/k>k</a>", []string{"1:18"}},
		// U+1F600 is 4 bytes in UTF-8 and 2 UTF-16 code units (a
		// surrogate pair); U+10348 too: 7 units before </p>, 2 more than
		// the same tag after two BMP characters.
		{"AstralPlane", "<p>😀𐍈</p><a href=/l>l</a>", []string{"1:20"}},
		{"BOMNotCounted", "\uFEFF<a href=/m>m</a>", []string{"1:9"}},
		{"ScriptTextIsNotMarkup", "<script>var s = '<a href=/no>';</script>\n<a href=/n>n</a>", []string{"2:9"}},
		{"CommentIsNotMarkup", "<!-- <a href=/no> -->\n<a href=/o>o</a>", []string{"2:9"}},
		{"DuplicateAttributeFirstWins", `<a href="/p" href="/q">p</a>`, []string{"1:10"}},
		{"SameURLTwice", "<a href=/r>1</a>\n<a href=/r>2</a>", []string{"1:9", "2:9"}},
		{"EmptyValue", `<a href="">self</a>`, []string{"1:10"}},
		{"SelfClosingAndResources", "<link rel=stylesheet href=/s.css/>\n<script src=/t.js></script><iframe src=/u></iframe>", []string{"1:27", "2:13", "2:40"}},
		// Foster parenting moves the link before the table in the tree;
		// it is still found where it was written.
		{"FosterParented", "<table><tr><td>x</td></tr>\n<a href=/v>v</a></table><a href=/w>w</a>", []string{"2:9", "2:33"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := extractString(t, "https://ex.org/", tt.html, nil)
			var got []string
			for _, l := range ex.Links {
				got = append(got, fmt.Sprintf("%d:%d", l.Line, l.Column))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("positions:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestLineIndex(t *testing.T) {
	src := []byte("ab\r\nc😀d\re\n")
	ix := NewLineIndex(src)
	for _, tt := range []struct {
		off       int
		line, col int
	}{
		{0, 1, 1}, {2, 1, 3}, {4, 2, 1}, {5, 2, 2}, {9, 2, 4}, {11, 3, 1}, {12, 3, 2}, {13, 4, 1}, {99, 4, 1},
	} {
		if l, c := ix.Position(tt.off); l != tt.line || c != tt.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tt.off, l, c, tt.line, tt.col)
		}
	}
	if n := UTF16Len([]byte("a😀é\xff")); n != 5 {
		t.Errorf("UTF16Len = %d, want 5", n)
	}
}

// benchPages are the documents of BenchmarkLocate and BenchmarkParseDocument.
var benchPages = []struct {
	name  string
	page  func() []byte
	links int
}{
	{"MultiLine", multiLinePage, 600},
	{"OneLine1MB", oneLinePage, 5_000},
	{"Generated", generatedPage, 6},
}

// multiLinePage is a typical hand-written or CMS page: indented lines of
// up to ~120 characters, some non-ASCII text, 600 links.
func multiLinePage() []byte {
	var sb strings.Builder
	sb.WriteString("<!doctype html>\n<html lang=fr>\n<head>\n  <meta charset=utf-8>\n  <title>Les pages</title>\n")
	sb.WriteString("  <link rel=stylesheet href=\"/static/site.css\">\n  <script src=\"/static/site.js\"></script>\n</head>\n<body>\n  <main>\n")
	for i := range 598 {
		if i%20 == 0 {
			fmt.Fprintf(&sb, "    <h2>Section %d — résumé</h2>\n    <ul>\n", i/20)
		}
		fmt.Fprintf(&sb, "      <li><a href=\"/docs/page-%d.html\" title=\"Page %d\">Page %d: été, 中文 😀</a> — a short description of the page</li>\n", i, i, i)
		if i%20 == 19 {
			sb.WriteString("    </ul>\n")
		}
	}
	sb.WriteString("    </ul>\n  </main>\n</body>\n</html>\n")
	return []byte(sb.String())
}

// oneLinePage is a minified page of about 1 MB on one line with 5,000
// links between prose holding non-ASCII and astral characters.
func oneLinePage() []byte {
	var sb strings.Builder
	sb.WriteString("<!doctype html><html><head><meta charset=utf-8><title>minified</title></head><body><main>")
	filler := strings.Repeat("Prose with été, 中文 and 😀 between the links; ", 4)
	for i := range 5_000 {
		fmt.Fprintf(&sb, "<p>%d %s<a href=\"https://site%d.example/articles/%d?ref=home&amp;x=%d\" class=\"link\">article %d</a></p>", i, filler, i%50, i, i, i)
	}
	sb.WriteString("</main></body></html>")
	return []byte(sb.String())
}

// generatedPage is a page of the site cmd/linkrotbench generates: one
// line, six links.
func generatedPage() []byte {
	var sb strings.Builder
	i := 1234
	fmt.Fprintf(&sb, "<!doctype html><html><head><title>Page %d</title></head><body><main><h1 id=\"top-%d\">Page %d</h1><p>", i, i, i)
	for k := range 40 {
		fmt.Fprintf(&sb, "word%d text%d ", (i*31+k)%997, k)
	}
	sb.WriteString("</p><ul>")
	for _, c := range []int{2*i + 1, 2*i + 2, (i*7919 + 13) % 5000} {
		fmt.Fprintf(&sb, `<li><a href="/p/%d">page %d</a></li>`, c, c)
	}
	fmt.Fprintf(&sb, `<li><a href="http://127.0.0.1:40001/t/%d">target %d</a></li>`, i, i)
	fmt.Fprintf(&sb, `<li><a href="http://127.0.0.1:40002/s/%d">shared %d</a></li>`, i/25, i/25)
	sb.WriteString(`<li><a href="http://127.0.0.1:40001/everywhere">everywhere</a></li>`)
	sb.WriteString("</ul></main></body></html>")
	return []byte(sb.String())
}

// BenchmarkLocate measures the source positions of a page's links (the
// tokenizer pass and the line and column arithmetic), without the parse.
func BenchmarkLocate(b *testing.B) {
	u := &url.URL{Scheme: "https", Host: "ex.org", Path: "/"}
	for _, bp := range benchPages {
		b.Run(bp.name, func(b *testing.B) {
			page := bp.page()
			ex, _, err := Parse(page, "text/html; charset=utf-8", u, nil, Options{})
			if err != nil || len(ex.Links) != bp.links {
				b.Fatalf("links %d err %v", len(ex.Links), err)
			}
			for _, l := range ex.Links {
				if l.Line == 0 {
					b.Fatalf("link %+v not placed", l)
				}
			}
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				Locate(page, ex.Links)
			}
		})
	}
}

// BenchmarkParseDocument measures the whole of a page's extraction:
// decoding, parse, Page and Locate.
func BenchmarkParseDocument(b *testing.B) {
	u := &url.URL{Scheme: "https", Host: "ex.org", Path: "/"}
	for _, bp := range benchPages {
		b.Run(bp.name, func(b *testing.B) {
			page := bp.page()
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				ex, _, _, err := ParseDocument(page, "text/html; charset=utf-8", u, nil, Options{})
				if err != nil || len(ex.Links) != bp.links {
					b.Fatalf("links %d err %v", len(ex.Links), err)
				}
			}
		})
	}
}

// BenchmarkOffsetsUnmatched measures Offsets on a page none of whose 5,000
// links the tokenizer pass can match (as when every link's URL carried a
// password the extractor redacted): each link falls back to the index of
// tags, where a scan of every tag per link would make it quadratic.
func BenchmarkOffsetsUnmatched(b *testing.B) {
	var page strings.Builder
	links := make([]audit.Link, 5000)
	for i := range links {
		fmt.Fprintf(&page, `<a href="https://u:pw@ex.org/%d">x</a>`, i)
		links[i] = audit.Link{Element: "a", RawHref: fmt.Sprintf("https://u:***@ex.org/%d", i)}
	}
	src := []byte(page.String())
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		offs := Offsets(src, links)
		if offs[4999] < 0 { // the element fallback: the next <a>
			b.Fatal("link not placed")
		}
	}
}

// TestLineIndex_LineHashCache: Place hashes each line once however many
// links it holds (the last line hashed and the long lines are kept), and
// every link's LineHash is audit.LineHash of its line's text: links on
// one line, on different lines, CR LF and lone CR line ends, a last line
// without a newline, a long line placed again after another line, and
// offsets placed out of order.
func TestLineIndex_LineHashCache(t *testing.T) {
	long := strings.Repeat("<a href=x>word</a>   \t", 20) // longer than longLine
	for _, tc := range []struct {
		name string
		src  string
		offs []int // placed in this order
	}{
		{"one line", `<p><a href="a">a</a> <a href="b">b</a>  <a href="c">c</a>`, []int{3, 21, 40}},
		{"lines", "<a href=a>\n  <a href=b>\n\t<a href=c>", []int{0, 13, 26}},
		{"crlf", "<a href=a>\r\n <a href=b>  x\r\n<a href=c>\r\n", []int{0, 13, 29}},
		{"lone cr", "<a href=a>\r<a href=b>\r\r <a href=c>", []int{0, 11, 24}},
		{"last line without newline", "x\n  y  <a href=a> z", []int{7, 2}},
		{"long line again", long + "\nshort <a>\n" + long, []int{0, 40, len(long) + 7, 5, len(long) + 12, 100}},
		{"out of order", "a\nb <a>\nc <a> <a>\nd", []int{13, 4, 11, 2, 17}},
		{"unicode space", "a\u00a0 b\u2003<a>\nc", []int{7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewLineIndex([]byte(tc.src))
			for _, off := range tc.offs {
				var l audit.Link
				ix.Place(&l, off)
				line, _ := NewLineIndex([]byte(tc.src)).Position(off)
				if l.Line != line {
					t.Errorf("offset %d: line %d, want %d", off, l.Line, line)
				}
				text := ix.LineText(line)
				if want := audit.LineHash(text); l.LineHash != want {
					t.Errorf("offset %d (line %d %q): LineHash %s, want %s", off, line, text, l.LineHash, want)
				}
			}
		})
	}
}
