package extract

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
)

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func extractString(t testing.TB, page, html string, h http.Header) audit.Extraction {
	t.Helper()
	ex, _, err := Parse([]byte(html), "text/html; charset=utf-8", mustParse(t, page), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func codes(ds []audit.Diagnostic) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Code)
	}
	return out
}

func TestPage_Links(t *testing.T) {
	tests := []struct {
		name string
		html string
		// want is "element href text rel" per link.
		want []string
	}{
		{"RelativeAgainstDocument", `<a href="b.html">B</a>`, []string{"a https://ex.org/dir/b.html B"}},
		// The first <base href> wins; later ones are ignored (HTML standard).
		{"FirstBaseWins", `<base href="https://cdn.ex.org/x/"><base href="https://other.ex/"><a href="y">Y</a>`, []string{"a https://cdn.ex.org/x/y Y"}},
		// A base without href does not count as "the first base".
		{"BaseWithoutHref", `<base target="_blank"><base href="/root/"><a href="y">Y</a>`, []string{"a https://ex.org/root/y Y"}},
		{"TextCollapsed", "<a href=/x>\n  Hello \t <b>bold</b>\n world </a>", []string{"a https://ex.org/x Hello bold world"}},
		{"RelTokens", `<a href="/x" rel="NoFollow  external nofollow">x</a>`, []string{"a https://ex.org/x x nofollow,external"}},
		{"AreaAndResources", `<map><area href="/m" alt="m"></map><img src="i.png" alt=" Logo "><script src="/s.js"></script><iframe src="/f"></iframe><video><source src="v.mp4"></video><link rel="stylesheet" href="c.css">`,
			[]string{"area https://ex.org/m ", "img https://ex.org/dir/i.png Logo", "script https://ex.org/s.js ", "iframe https://ex.org/f ", "source https://ex.org/dir/v.mp4 ", "link https://ex.org/dir/c.css  stylesheet"}},
		{"NoHrefNoLink", `<a name="top">anchor</a><img alt="x">`, nil},
		{"EmptyHrefIsDocument", `<a href="">self</a>`, []string{"a https://ex.org/dir/page.html self"}},
		{"FragmentKept", `<a href="#sec">s</a>`, []string{"a https://ex.org/dir/page.html#sec s"}},
		{"SchemesKept", `<a href="mailto:a@b.c">m</a><a href="JavaScript:alert(1)">j</a>`, []string{"a mailto:a@b.c m", "a javascript:alert(1) j"}},
		// Broken markup: unclosed tags and stray end tags still yield links.
		{"Malformed", `<a href="/1">one<a href="/2">two</p></div><a href=/3>three`, []string{"a https://ex.org/1 one", "a https://ex.org/2 two", "a https://ex.org/3 three"}},
		{"SpacesAroundHref", `<a href="  /x  ">x</a>`, []string{"a https://ex.org/x x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := extractString(t, "https://ex.org/dir/page.html", tt.html, nil)
			var got []string
			for _, l := range ex.Links {
				s := fmt.Sprintf("%s %s %s", l.Element, l.Href, l.Text)
				if len(l.Rel) > 0 {
					s += " " + strings.Join(l.Rel, ",")
				}
				got = append(got, s)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("links:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPage_TextBounded(t *testing.T) {
	long := strings.Repeat("é", 1000)
	ex := extractString(t, "https://ex.org/", `<a href="/x">`+long+`</a>`, nil)
	if n := utf8.RuneCountInString(ex.Links[0].Text); n != 301 { // 300 + ellipsis
		t.Errorf("text length %d runes, want 301", n)
	}
}

func TestPage_Robust(t *testing.T) {
	tests := []struct {
		name         string
		attrs        string
		wantOrig     string
		wantInferred bool
		wantDate     string
		wantSnaps    int
		wantCodes    []string
	}{
		{"Complete", `href="https://w3.org/" data-originalurl="https://w3.org/" data-versiondate="2024-11-20" data-versionurl="https://perma.cc/44TF-9JXB 2024-11-20T16:43:33Z"`,
			"https://w3.org/", false, "2024-11-20T12:00:00Z", 1, []string{}},
		{"MissingOriginalInferred", `href="/rel" data-versiondate="20241121"`, "https://ex.org/rel", true, "2024-11-21T12:00:00Z", 0, []string{"missing-originalurl"}},
		{"EmptyOriginal", `href="/rel" data-originalurl="  " data-versiondate="20241121"`, "https://ex.org/rel", true, "2024-11-21T12:00:00Z", 0, []string{"missing-originalurl"}},
		{"RelativeOriginal", `href="https://x.org/" data-originalurl="/orig" data-versiondate="2024-11-21T10:00:00Z"`, "https://ex.org/orig", false, "2024-11-21T10:00:00Z", 0, []string{"relative-originalurl"}},
		{"MissingDate", `href="https://x.org/" data-originalurl="https://x.org/"`, "https://x.org/", false, "0001-01-01T00:00:00Z", 0, []string{"missing-versiondate"}},
		{"ImpossibleDate", `href="https://x.org/" data-originalurl="https://x.org/" data-versiondate="2023-02-29"`, "https://x.org/", false, "0001-01-01T00:00:00Z", 0, []string{"invalid-datetime"}},
		{"OnlyVersionURL", `href="https://x.org/" data-versionurl="https://web.archive.org/web/2024/https://x.org/"`, "https://x.org/", true, "0001-01-01T00:00:00Z", 1, []string{"missing-originalurl", "missing-versiondate"}},
		// data-originalurl follows the snapshot URI rules.
		{"OriginalJavascript", `href="https://x.org/" data-originalurl="javascript:alert(1)" data-versiondate="2024-01-01"`, "javascript:alert(1)", false, "2024-01-01T12:00:00Z", 0, []string{"unexpected-scheme"}},
		{"OriginalNoHost", `href="https://x.org/" data-originalurl="https:foo" data-versiondate="2024-01-01"`, "", false, "2024-01-01T12:00:00Z", 0, []string{"invalid-url"}},
		{"OriginalMarkup", `href="https://x.org/" data-originalurl='https://x.org/"><b>' data-versiondate="2024-01-01"`, "", false, "2024-01-01T12:00:00Z", 0, []string{"invalid-url"}},
		// An unparsable href cannot stand in for the original.
		{"BadHrefNoInference", `href="http://[::1" data-versiondate="2024-01-01"`, "", false, "2024-01-01T12:00:00Z", 0, []string{"invalid-url", "missing-originalurl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := extractString(t, "https://ex.org/", `<a `+tt.attrs+`>x</a>`, nil)
			if len(ex.Links) != 1 || ex.Links[0].Robust == nil {
				t.Fatalf("links = %+v", ex.Links)
			}
			l := ex.Links[0]
			r := l.Robust
			if r.OriginalURL != tt.wantOrig || r.OriginalInferred != tt.wantInferred {
				t.Errorf("original = %q inferred %v, want %q %v", r.OriginalURL, r.OriginalInferred, tt.wantOrig, tt.wantInferred)
			}
			if got := r.VersionDate.UTC().Format("2006-01-02T15:04:05Z"); got != tt.wantDate {
				t.Errorf("versiondate = %s, want %s", got, tt.wantDate)
			}
			if len(r.Snapshots) != tt.wantSnaps {
				t.Errorf("snapshots = %+v", r.Snapshots)
			}
			if got := codes(l.Diagnostics); !reflect.DeepEqual(got, tt.wantCodes) {
				t.Errorf("diagnostics = %v, want %v", got, tt.wantCodes)
			}
		})
	}
}

func TestPage_Identifiers(t *testing.T) {
	h := http.Header{}
	h.Add("Link", `<https://doi.org/10.1/a>; rel="identifier", <https://ex.org/cite>; rel="cite-as"`)
	h.Add("Link", `</relative-id>; rel="IDENTIFIER"`) // relative: resolved against the request URL, not <base>
	tests := []struct {
		name      string
		html      string
		header    http.Header
		want      []audit.Identifier
		wantCodes []string
	}{
		{"HTMLOnly", `<link rel="identifier" href="https://doi.org/10.1/a">`, nil,
			[]audit.Identifier{{URL: "https://doi.org/10.1/a", Rel: "identifier", Source: "html"}}, []string{}},
		{"SameInHeaderAndHTML", `<link rel="identifier" href="https://doi.org/10.1/a">`, http.Header{"Link": {`<https://doi.org/10.1/a>; rel=identifier`}},
			[]audit.Identifier{{URL: "https://doi.org/10.1/a", Rel: "identifier", Source: "header"}, {URL: "https://doi.org/10.1/a", Rel: "identifier", Source: "html"}}, []string{}},
		{"HeaderFieldsAndRelative", `<base href="https://cdn.example/">`, h,
			[]audit.Identifier{
				{URL: "https://doi.org/10.1/a", Rel: "identifier", Source: "header"},
				{URL: "https://ex.org/cite", Rel: "cite-as", Source: "header"},
				{URL: "https://ex.org/relative-id", Rel: "identifier", Source: "header"},
			}, []string{"multiple-identifiers"}},
		{"MultiTokenRel", `<link rel="alternate identifier" href="/id">`, nil,
			[]audit.Identifier{{URL: "https://ex.org/id", Rel: "identifier", Source: "html"}}, []string{}},
		// anchor changes the link context (RFC 8288 3.2): a section's
		// cite-as is not the page's; an anchor naming the page itself is.
		{"AnchoredElsewhere", ``, http.Header{"Link": {`<https://y.org/id>; anchor="#sec"; rel="cite-as", <https://doi.org/10.1/p>; anchor="https://ex.org/page"; rel=identifier`}},
			[]audit.Identifier{{URL: "https://doi.org/10.1/p", Rel: "identifier", Source: "header"}}, []string{"anchored-link"}},
		{"BadHeader", ``, http.Header{"Link": {`<https://ok.example/>; rel=identifier, garbage, <x`}},
			[]audit.Identifier{{URL: "https://ok.example/", Rel: "identifier", Source: "header"}}, []string{"invalid-link-header"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := extractString(t, "https://ex.org/page", tt.html, tt.header)
			if !reflect.DeepEqual(ex.Identifiers, tt.want) {
				t.Errorf("identifiers:\n got %+v\nwant %+v", ex.Identifiers, tt.want)
			}
			if got := codes(ex.Diagnostics); !reflect.DeepEqual(got, tt.wantCodes) {
				t.Errorf("diagnostics = %v, want %v", got, tt.wantCodes)
			}
		})
	}
}

func TestPage_PWIDs(t *testing.T) {
	html := `<a href="pwid:archive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk">a</a>
<a href="https://x.org/" mset="pwid:archive.org:2016-01-22_11.20.29Z_page:https://x.org/ memento">b</a>
<p>See pwid:archive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk and (pwid:netarkivet.dk:2015-03-01_10.00.00Z_part:id123).</p>
<script>var s = "pwid:archive.org:2016-01-22_11.20.29Z_page:https://hidden.example";</script>`
	ex := extractString(t, "https://ex.org/", html, nil)
	var got []string
	for _, p := range ex.PWIDs {
		got = append(got, fmt.Sprintf("%s %s %d %s", p.Source, p.ArchiveID, p.Link, p.Item))
	}
	want := []string{
		"href archive.org 0 https://www.dr.dk",
		"mset archive.org 1 https://x.org/",
		// The text pwid equal to the href one is not repeated; script text is not page text.
		"text netarkivet.dk -1 id123",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pwids:\n got %q\nwant %q", got, want)
	}
}

func TestPage_PWIDSplitByMarkup(t *testing.T) {
	// A citation typeset with inline markup is one pwid; a block boundary
	// ends it.
	ex := extractString(t, "https://ex.org/", `<p>See pwid:archive.org:2016-01-22_<em>11.20.29Z</em>_page:https://www.dr.dk</p><p>next</p>`, nil)
	if len(ex.PWIDs) != 1 || ex.PWIDs[0].Item != "https://www.dr.dk" || len(ex.Diagnostics) != 0 {
		t.Errorf("pwids %+v, diagnostics %v", ex.PWIDs, codes(ex.Diagnostics))
	}
}

func TestPage_PWIDInHref(t *testing.T) {
	ex := extractString(t, "https://ex.org/", `<a href="pwid:archive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk">x</a>`, nil)
	if len(ex.Links) != 1 || !reflect.DeepEqual(codes(ex.Links[0].Diagnostics), []string{"pwid-in-href"}) {
		t.Errorf("links %+v", ex.Links)
	}
}

func TestPage_MsetWithoutHref(t *testing.T) {
	ex := extractString(t, "https://ex.org/", `<a mset="2014-03-17">x</a>`, nil)
	if len(ex.Links) != 0 || !reflect.DeepEqual(codes(ex.Diagnostics), []string{"mset-without-href"}) {
		t.Errorf("links %+v diagnostics %v", ex.Links, codes(ex.Diagnostics))
	}
}

func TestPage_MaxLinks(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, `<a href="/%d">%d</a>`, i, i)
	}
	ex, _, err := Parse([]byte(b.String()), "text/html", mustParse(t, "https://ex.org/"), nil, Options{MaxLinks: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Links) != 10 || !reflect.DeepEqual(codes(ex.Diagnostics), []string{CodeTooManyValues}) {
		t.Errorf("%d links, diagnostics %v", len(ex.Links), codes(ex.Diagnostics))
	}
}

func TestDecode(t *testing.T) {
	latin := []byte("<title>caf\xe9</title>")
	tests := []struct {
		name, contentType string
		body              []byte
		wantCharset       string
		wantContains      string
	}{
		{"HeaderCharset", "text/html; charset=ISO-8859-1", latin, "windows-1252", "café"},
		{"MetaCharset", "text/html", append([]byte(`<meta charset="windows-1252">`), latin...), "windows-1252", "café"},
		{"MetaHTTPEquiv", "", append([]byte(`<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">`), 0xc1), "koi8-r", "а"},
		{"BOMBeatsHeader", "text/html; charset=windows-1252", []byte("\xef\xbb\xbf<p>é</p>"), "utf-8", "é"},
		// An ASCII head longer than the 1024-byte prescan, then UTF-8.
		{"LateUTF8", "text/html", []byte(strings.Repeat(" ", 2000) + "<p>é</p>"), "utf-8", "é"},
		{"NoHintNotUTF8", "text/html", latin, "windows-1252", "café"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, cs := Decode(tt.body, tt.contentType)
			if cs != tt.wantCharset || !strings.Contains(string(out), tt.wantContains) {
				t.Errorf("Decode = %q, %q; want charset %q containing %q", out, cs, tt.wantCharset, tt.wantContains)
			}
		})
	}
}

// fixtureSeeds returns the fixture pages of testdata/ as fuzz seeds.
func fixtureSeeds(tb testing.TB) [][]byte {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "testdata")
	var out [][]byte
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".html") {
			if b, err := os.ReadFile(p); err == nil {
				out = append(out, b)
			}
		}
		return nil
	})
	if len(out) == 0 {
		tb.Fatal("no fixture pages found under testdata/")
	}
	return out
}

func FuzzPage(f *testing.F) {
	for _, b := range fixtureSeeds(f) {
		f.Add(b, "text/html", `<https://doi.org/10.1/x>; rel="identifier"`)
	}
	f.Add([]byte(`<a href="pwid:x:2016-02-30_11.20.29Z:y" mset=",,," data-versionurl="2024 2024" data-versiondate="9999-99-99">`), "text/html; charset=bogus", `<`)
	f.Fuzz(func(t *testing.T, body []byte, contentType, link string) {
		h := http.Header{"Link": {link}}
		ex, _, err := Parse(body, contentType, &url.URL{Scheme: "https", Host: "ex.org", Path: "/p"}, h, Options{MaxLinks: 1000})
		if err != nil {
			return
		}
		for _, l := range ex.Links {
			if l.Element == "" || l.Diagnostics == nil || l.Rel == nil {
				t.Fatalf("link with missing fields: %+v", l)
			}
			for _, d := range l.Diagnostics {
				if d.Field == "" || d.Code == "" || d.Message == "" {
					t.Fatalf("incomplete diagnostic %+v", d)
				}
			}
			if l.Line < 0 || l.Line > len(body)+1 || (l.Line > 0 && (l.Column < 1 || l.LineHash == "")) || (l.Line == 0 && l.Column != 0) {
				t.Fatalf("link %q at %d:%d in a %d-byte body", l.Href, l.Line, l.Column, len(body))
			}
			if l.Robust != nil && !l.Robust.VersionDate.IsZero() && l.Robust.VersionDate.Location() != l.Robust.VersionDate.UTC().Location() {
				t.Fatalf("versiondate not UTC: %v", l.Robust.VersionDate)
			}
		}
		for _, p := range ex.PWIDs {
			if p.Source == "text" && p.Link != -1 || p.Source != "text" && (p.Link < 0 || p.Link >= len(ex.Links)) {
				t.Fatalf("pwid with bad link index: %+v (links %d)", p, len(ex.Links))
			}
		}
	})
}

// BenchmarkExtract measures extraction of a 10,000-link page with a mix of
// plain links, Robust Links and mset attributes.
func BenchmarkExtract(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("<!doctype html><html><head><title>big</title></head><body>")
	for i := 0; i < 10_000; i++ {
		switch i % 10 {
		case 0:
			fmt.Fprintf(&sb, `<p><a href="https://site%d.example/p/%d" data-originalurl="https://site%d.example/p/%d" data-versiondate="2024-11-20" data-versionurl="https://web.archive.org/web/20241121100333/https://site%d.example/p/%d 2024-11-21T10:03:33Z">robust link %d</a></p>`, i%50, i, i%50, i, i%50, i, i)
		case 1:
			fmt.Fprintf(&sb, `<p><a href="/local/%d" mset="2014-03-17, http://perma.cc/RL33-%d 2014-03-10 memento">mset link %d</a></p>`, i, i, i)
		default:
			fmt.Fprintf(&sb, `<li><a href="/page/%d?x=%d#frag" rel="nofollow">plain link number %d with some words</a></li>`, i, i, i)
		}
	}
	sb.WriteString("</body></html>")
	page := []byte(sb.String())
	u := &url.URL{Scheme: "https", Host: "ex.org", Path: "/"}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ex, _, err := Parse(page, "text/html; charset=utf-8", u, nil, Options{})
		if err != nil || len(ex.Links) != 10_000 {
			b.Fatalf("links %d err %v", len(ex.Links), err)
		}
	}
	b.ReportMetric(float64(b.N*10_000)/b.Elapsed().Seconds(), "links/s")
}
