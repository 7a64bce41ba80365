package extract

import (
	"encoding/json"
	"html"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/urls"
)

// TestPage_WHATWGHrefs: hrefs are read as browsers read them (WHATWG URL
// Standard).
func TestPage_WHATWGHrefs(t *testing.T) {
	tests := []struct {
		name, href, want string
		codes            []string
	}{
		{"newline inside", "https://www.w3.org/\nstandards/", "https://www.w3.org/standards/", []string{"lenient-url"}},
		{"tab inside", "https://example.com/tab\tinside", "https://example.com/tabinside", []string{"lenient-url"}},
		{"backslashes", `https:\\example.com\backslash\path`, "https://example.com/backslash/path", []string{"lenient-url"}},
		{"leading and trailing space and C0", " \x01\x1fhttps://example.com/a \x1f", "https://example.com/a", nil},
		{"upper case and default port", "HTTP://EXAMPLE.COM:80/", "http://example.com/", nil},
		{"IPv4 hex short form", "http://0x7f.1/", "http://127.0.0.1/", []string{"lenient-url"}},
		{"IPv4 one number", "http://2852039166/", "http://169.254.169.254/", []string{"lenient-url"}},
		{"IPv4 short decimal", "http://127.1/", "http://127.0.0.1/", []string{"lenient-url"}},
		{"IPv4 dotted decimal", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/", nil},
		{"IDNA", "https://bücher.example/", "https://xn--bcher-kva.example/", nil},
		{"space and non-ASCII in path and query", "/a b/é?q=a b&r=é", "https://ex.org/a%20b/%C3%A9?q=a%20b&r=%C3%A9", nil},
		{"scheme-relative", "//host/path", "https://host/path", nil},
		{"relative with dot segments", "../up/./x", "https://ex.org/up/x", nil},
		{"encoded dot segments", "/a/%2e%2E/b", "https://ex.org/b", nil},
		{"fragment kept", "#top", "https://ex.org/dir/page.html#top", nil},
		{"javascript stays javascript", "javascript:alert(document.domain)", "javascript:alert(document.domain)", nil},
		{"javascript with newline", "java\nscript:alert(1)", "javascript:alert(1)", []string{"lenient-url"}},
		{"mailto kept as non-HTTP", "mailto:User@Example.COM", "mailto:User@Example.COM", nil},
		{"userinfo confusion", `http://127.0.0.1:6666\@1.1.1.1`, "http://127.0.0.1:6666/@1.1.1.1", []string{"lenient-url"}},
		{"password", "https://user:s3cr3t@host/", "https://user:***@host/", []string{"credentials-in-url"}},
		{"unclosed IPv6", "http://[::1/", "http://[::1/", []string{"invalid-url"}},
		{"space in host", "https://exa mple.com/", "https://exa mple.com/", []string{"invalid-url"}},
		{"bad port", "http://h:99999/", "http://h:99999/", []string{"invalid-url"}},
		// net/url rejects these; browsers follow them.
		{"stray % in the fragment", "https://schemers.org/r5rs-Z-H-9.html#%_sec_6.2", "https://schemers.org/r5rs-Z-H-9.html#%_sec_6.2", []string{"lenient-url"}},
		{"stray % in path and query", "/a%zz/b%?q=%", "https://ex.org/a%zz/b%?q=%", []string{"lenient-url"}},
		{"pipe in a path, as Chromium sends it", "/a|b", "https://ex.org/a%7Cb", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := `<a href="` + html.EscapeString(tc.href) + `">x</a>`
			ex := extractString(t, "https://ex.org/dir/page.html", doc, nil)
			if len(ex.Links) != 1 {
				t.Fatalf("links = %+v", ex.Links)
			}
			l := ex.Links[0]
			if l.Href != tc.want {
				t.Errorf("href %q = %q, want %q", tc.href, l.Href, tc.want)
			}
			want := tc.codes
			if want == nil {
				want = []string{}
			}
			if got := codes(l.Diagnostics); !slices.Equal(got, want) {
				t.Errorf("codes = %q, want %q (%+v)", got, want, l.Diagnostics)
			}
			checkDiags(t, "href", l.Diagnostics)
		})
	}
}

// TestPage_Base follows HTML's base URL rules.
func TestPage_Base(t *testing.T) {
	tests := []struct {
		name, head, wantBase, wantHref string
		codes                          []string
	}{
		{"no base", ``, "https://ex.org/dir/page.html", "https://ex.org/dir/a", nil},
		{"absolute base", `<base href="https://cdn.example/x/">`, "https://cdn.example/x/", "https://cdn.example/x/a", nil},
		{"relative base against the document URL", `<base href="../other/">`, "https://ex.org/other/", "https://ex.org/other/a", nil},
		{"first base with href wins", `<base target="_blank"><base href="/one/"><base href="/two/">`, "https://ex.org/one/", "https://ex.org/one/a", []string{"ignored-base"}},
		{"javascript base ignored", `<base href="javascript:alert(1)//">`, "https://ex.org/dir/page.html", "https://ex.org/dir/a", []string{"ignored-base"}},
		{"base with a hex IPv4 address", `<base href="http://0x7f.1/x/">`, "http://127.0.0.1/x/", "http://127.0.0.1/x/a", []string{"lenient-url"}},
		{"data base ignored", `<base href="data:text/html,x">`, "https://ex.org/dir/page.html", "https://ex.org/dir/a", []string{"ignored-base"}},
		{"mailto base ignored", `<base href="mailto:a@b">`, "https://ex.org/dir/page.html", "https://ex.org/dir/a", []string{"ignored-base"}},
		{"an ignored first base is not replaced by the second", `<base href="javascript:x"><base href="https://cdn.example/">`, "https://ex.org/dir/page.html", "https://ex.org/dir/a", []string{"ignored-base", "ignored-base"}},
		{"invalid base ignored", `<base href="http://[::1">`, "https://ex.org/dir/page.html", "https://ex.org/dir/a", []string{"ignored-base"}},
		{"base with newline and backslashes", "<base href=\"https:\\\\cdn.exa\nmple\\x\\\">", "https://cdn.example/x/", "https://cdn.example/x/a", []string{"lenient-url"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := extractString(t, "https://ex.org/dir/page.html", `<head>`+tc.head+`</head><a href="a">x</a>`, nil)
			if ex.Base != tc.wantBase {
				t.Errorf("base = %q, want %q", ex.Base, tc.wantBase)
			}
			if ex.Links[0].Href != tc.wantHref {
				t.Errorf("href = %q, want %q", ex.Links[0].Href, tc.wantHref)
			}
			want := tc.codes
			if want == nil {
				want = []string{}
			}
			if got := codes(ex.Diagnostics); !slices.Equal(got, want) {
				t.Errorf("codes = %q, want %q (%+v)", got, want, ex.Diagnostics)
			}
			checkDiags(t, "base", ex.Diagnostics)
		})
	}
}

// TestPage_RedactsPasswords: a password in any URL of a page appears
// nowhere in the extraction.
func TestPage_RedactsPasswords(t *testing.T) {
	doc := `<title>https://t:s3cr3t@title/</title>
<base href="https://b:s3cr3t@ex.org/">
<a href="https://user:s3cr3t@host/" data-originalurl="https://o:s3cr3t@host/"
   data-versiondate="2024-01-01" data-versionurl="https://v:s3cr3t@archive/x 2024-01-01"
   mset="https://m:s3cr3t@copy/x 2024-01-01">see https://user:s3cr3t@host/</a>
<a href="https://user:s3cr3t@exa mple.com/">bad</a>
<a href="https:\\user:s3cr3t@host\x">bs</a>
<link rel="identifier" href="https://i:s3cr3t@id/">
<p>pwid:archive.org:2016-01-22T11:20:29Z:page:https://p:s3cr3t@item/</p>`
	h := http.Header{"Link": {`<https://l:s3cr3t@hdr/>; rel="cite-as"`}}
	ex := extractString(t, "https://ex.org/", doc, h)
	b, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cr3t") {
		t.Fatalf("password in extraction: %s", b)
	}
	if ex.Links[0].Href != "https://user:***@host/" {
		t.Errorf("href = %q", ex.Links[0].Href)
	}
}

// FuzzPageURLs: a page with a hostile <base> and href never panics, never
// keeps a URL password, and every http(s) href it records is in the
// normal form's domain (NormalizeURL accepts it, idempotently).
func FuzzPageURLs(f *testing.F) {
	for _, s := range []struct{ base, href string }{
		{"", "https://www.w3.org/\nstandards/"},
		{"javascript:alert(1)", "a"},
		{"../x/", `https:\\example.com\backslash\path`},
		{"https://u:pw@h/", "//host/path"},
		{"data:,x", "http://0x7f.1/"},
		{"", "https://user:s3cr3t@host/"},
		{"http://[::1", "http://[::1/"},
	} {
		f.Add(s.base, s.href)
	}
	f.Fuzz(func(t *testing.T, base, href string) {
		doc := `<base href="` + html.EscapeString(base) + `"><a href="` + html.EscapeString(href) + `">x</a>`
		ex := extractString(t, "https://ex.org/dir/", doc, nil)
		for _, l := range ex.Links {
			if !strings.HasPrefix(l.Href, "http:") && !strings.HasPrefix(l.Href, "https:") {
				continue
			}
			if !hasCode(l.Diagnostics, CodeInvalidURL) {
				n, err := urls.NormalizeURL(l.Href)
				if err != nil {
					t.Fatalf("href %q recorded as %q, which does not normalise: %v", href, l.Href, err)
				}
				if again, _ := urls.NormalizeURL(n); again != n {
					t.Fatalf("NormalizeURL not idempotent on %q", n)
				}
			}
		}
		for _, v := range []string{base, href} {
			u, err := urls.ParseURL(v)
			if err != nil {
				continue
			}
			if p, ok := u.Password(); ok && len(p) > 3 && p != urls.RedactedPassword {
				b, _ := json.Marshal(ex)
				if strings.Contains(string(b), ":"+p+"@") {
					t.Fatalf("password %q kept: %s", p, b)
				}
			}
		}
	})
}

// TestPage_RelativeOnIPv4Site: a relative reference on a page served from
// an IPv4 address takes the address from the page's URL, so it writes no
// address in another form; an absolute one that does is still reported.
func TestPage_RelativeOnIPv4Site(t *testing.T) {
	doc := `<a href="a.html">a</a><a href="/b/">b</a><a href="?q">q</a><a href="http://0x7f.1/c">c</a><a href="//2130706433/d">d</a>`
	ex := extractString(t, "http://127.0.0.1:8000/dir/page.html", doc, nil)
	want := [][]string{{}, {}, {}, {"lenient-url"}, {"lenient-url"}}
	if len(ex.Links) != len(want) {
		t.Fatalf("links = %+v", ex.Links)
	}
	for i, l := range ex.Links {
		if got := codes(l.Diagnostics); !slices.Equal(got, want[i]) {
			t.Errorf("%s: codes = %q, want %q", l.RawHref, got, want[i])
		}
	}
}

// TestPage_InvalidURLReason: an href the URL parser rejects is an
// invalid-url diagnostic that gives the parser's reason.
func TestPage_InvalidURLReason(t *testing.T) {
	for href, reason := range map[string]string{
		"http://h:99999/": "port is outside the range",
		"http://[::1":     "IPv6 address is missing the closing",
	} {
		ex := extractString(t, "https://ex.org/dir/page.html", `<a href="`+html.EscapeString(href)+`">x</a>`, nil)
		if len(ex.Links) != 1 || len(ex.Links[0].Diagnostics) != 1 {
			t.Fatalf("%q: links %+v", href, ex.Links)
		}
		d := ex.Links[0].Diagnostics[0]
		if d.Code != CodeInvalidURL || !strings.Contains(d.Message, reason) {
			t.Errorf("%q: diagnostic %+v, want %s with %q", href, d, CodeInvalidURL, reason)
		}
	}
}
