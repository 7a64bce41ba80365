package urls

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/internal/requestlog"
)

// urlModelBase is the base URL the URL model tables resolve against.
const urlModelBase = "http://127.0.0.1:8080/dir/page.html?x=1"

// TestURL_Valid: the edge forms browsers accept are URLs, with the
// serialisation (fragment apart), the fragment and the request target a
// browser has for them.
func TestURL_Valid(t *testing.T) {
	r, err := NewResolver(urlModelBase)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ref string
		want      string // Unfragmented
		frag      string
		hasFrag   bool
		request   string // RequestURI
	}{
		{"stray % in fragment", "https://schemers.org/r5rs-Z-H-9.html#%_sec_6.2", "https://schemers.org/r5rs-Z-H-9.html", "%_sec_6.2", true, "/r5rs-Z-H-9.html"},
		{"stray % in path", "/a%zz/b%", "http://127.0.0.1:8080/a%zz/b%", "", false, "/a%zz/b%"},
		{"stray % in query", "/p?q=%zz&r=%", "http://127.0.0.1:8080/p?q=%zz&r=%", "", false, "/p?q=%zz&r=%"},
		{"valid escapes kept as written", "/a%2Fb/%7euser?q=%2f", "http://127.0.0.1:8080/a%2Fb/%7euser?q=%2f", "", false, "/a%2Fb/%7euser?q=%2f"},
		{"non-ASCII", "/é/ü?é#é", "http://127.0.0.1:8080/%C3%A9/%C3%BC?%C3%A9", "%C3%A9", true, "/%C3%A9/%C3%BC?%C3%A9"},
		{"space, tab and newline inside", "/a b/c\td\ne?x y", "http://127.0.0.1:8080/a%20b/cde?x%20y", "", false, "/a%20b/cde?x%20y"},
		{"surrounding spaces", "  /p  ", "http://127.0.0.1:8080/p", "", false, "/p"},
		{"backslashes", `\a\b`, "http://127.0.0.1:8080/a/b", "", false, "/a/b"},
		{"dot segments", "/a/./b/../c/%2e%2E/d", "http://127.0.0.1:8080/a/d", "", false, "/a/d"},
		{"upper-case scheme", "HTTP://127.0.0.1:8080/X", "http://127.0.0.1:8080/X", "", false, "/X"},
		{"protocol-relative", "//127.0.0.1:8080/x", "http://127.0.0.1:8080/x", "", false, "/x"},
		{"apostrophe in a query", "/p?q='x'", "http://127.0.0.1:8080/p?q=%27x%27", "", false, "/p?q=%27x%27"},
		{"apostrophe in a path", "/a'b", "http://127.0.0.1:8080/a'b", "", false, "/a'b"},
		{"pipe and caret in a path (as Chromium)", "/a|b^c", "http://127.0.0.1:8080/a%7Cb%5Ec", "", false, "/a%7Cb%5Ec"},
		{"pipe and caret in a query kept", "/p?a|b^c", "http://127.0.0.1:8080/p?a|b^c", "", false, "/p?a|b^c"},
		{"brackets in a path", "/a[b]", "http://127.0.0.1:8080/a[b]", "", false, "/a[b]"},
		{"braces and backtick in a path", "/a{b}`c", "http://127.0.0.1:8080/a%7Bb%7D%60c", "", false, "/a%7Bb%7D%60c"},
		{"empty query", "?", "http://127.0.0.1:8080/dir/page.html?", "", false, "/dir/page.html?"},
		{"empty fragment", "#", "http://127.0.0.1:8080/dir/page.html?x=1", "", true, "/dir/page.html?x=1"},
		{"fragment with a second #", "#a#b", "http://127.0.0.1:8080/dir/page.html?x=1", "a#b", true, "/dir/page.html?x=1"},
		{"fragment only keeps the query", "#f", "http://127.0.0.1:8080/dir/page.html?x=1", "f", true, "/dir/page.html?x=1"},
		{"empty path", "https://example.com", "https://example.com/", "", false, "/"},
		{"default port dropped", "https://example.com:443/x", "https://example.com/x", "", false, "/x"},
		{"IPv6", "http://[::1]:8080/a", "http://[::1]:8080/a", "", false, "/a"},
		{"double slash path", "http://h//a%zz", "http://h//a%zz", "", false, "//a%zz"},
		{"double slash path net/url carries", "http://h//a", "http://h//a", "", false, "//a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, _, err := r.Resolve(tc.ref)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.ref, err)
			}
			if got := u.Unfragmented(); got != tc.want {
				t.Errorf("Unfragmented = %q, want %q", got, tc.want)
			}
			if f, ok := u.Fragment(); f != tc.frag || ok != tc.hasFrag {
				t.Errorf("Fragment = %q, %v, want %q, %v", f, ok, tc.frag, tc.hasFrag)
			}
			wantHref := tc.want
			if tc.hasFrag {
				wantHref += "#" + tc.frag
			}
			if u.Href() != wantHref || u.String() != wantHref {
				t.Errorf("Href = %q, String = %q, want %q", u.Href(), u.String(), wantHref)
			}
			if got := u.RequestURI(); got != tc.request {
				t.Errorf("RequestURI = %q, want %q", got, tc.request)
			}
			if n, err := NormalizeURL(tc.ref); err == nil && n != tc.want && !strings.HasPrefix(strings.TrimSpace(tc.ref), "/") {
				t.Errorf("NormalizeURL = %q, want %q", n, tc.want)
			}
			if u.Key() != tc.want {
				t.Errorf("Key = %q, want %q", u.Key(), tc.want)
			}
			if nu := u.NetURL(); nu.String() != tc.want || nu.Hostname() != u.Hostname() || nu.Port() != u.Port() {
				t.Errorf("NetURL = %q (host %q, port %q), want %q", nu, nu.Hostname(), nu.Port(), tc.want)
			}
			ru := u.RequestURL()
			want := tc.request
			if strings.HasPrefix(want, "//") && u.NetURL().Opaque != "" {
				want = u.Scheme() + "://" + u.Host() + want // absolute form (see RequestURL)
			}
			if got := ru.RequestURI(); got != want {
				t.Errorf("RequestURL().RequestURI() = %q, want %q", got, want)
			}
			if got := RequestURL(u.NetURL()).RequestURI(); got != want {
				t.Errorf("RequestURL(NetURL()).RequestURI() = %q, want %q", got, want)
			}
		})
	}
}

// TestURL_Invalid: what the WHATWG parser rejects is invalid, with its
// reason and never the input in the message; the fragment never is the
// reason.
func TestURL_Invalid(t *testing.T) {
	tests := []struct{ name, in, reason string }{
		{"port out of range", "http://example.com:99999/", "port is outside the range"},
		{"unterminated IPv6 literal", "http://[::1", "missing the closing"},
		{"non-numeric port", "http://h:x/", "port"},
		{"forbidden host code point", "http://a|b/", "forbidden domain code point"},
		{"space in host", "https://exa mple.com/#%_x", "forbidden"},
		{"invalid IPv4", "http://1.2.3.256/", "IPv4"},
		{"relative reference without base", "/a#%_x", "scheme"},
		{"empty host", "http:///#f", "host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ParseURL(tc.in)
			if err == nil {
				t.Fatalf("ParseURL(%q) = %q, want an error", tc.in, u)
			}
			if !errors.Is(err, errInvalidURL) {
				t.Errorf("error %v is not errInvalidURL", err)
			}
			var ue *invalidURLError
			if !errors.As(err, &ue) || !strings.Contains(strings.ToLower(ue.Reason), strings.ToLower(tc.reason)) {
				t.Errorf("reason %q, want it to mention %q", err, tc.reason)
			}
			if strings.Contains(err.Error(), tc.in) {
				t.Errorf("error %q quotes the input", err)
			}
			if !u.IsZero() {
				t.Errorf("ParseURL returned %q with an error", u)
			}
			if _, err := NormalizeURL(tc.in); !errors.Is(err, errInvalidURL) {
				t.Errorf("NormalizeURL: %v, want errInvalidURL", err)
			}
		})
	}
}

// TestURL_Parts: the accessors read the one parse.
func TestURL_Parts(t *testing.T) {
	u, err := ParseURL("HTTPS://User:Pa%20ss@[2001:DB8::1]:8443/a%zz[b]?q=%zz#%_f")
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme() != "https" || u.Hostname() != "2001:db8::1" || u.Host() != "[2001:db8::1]:8443" || u.Port() != "8443" {
		t.Errorf("scheme %q hostname %q host %q port %q", u.Scheme(), u.Hostname(), u.Host(), u.Port())
	}
	if p, ok := u.Password(); u.Username() != "User" || p != "Pa%20ss" || !ok {
		t.Errorf("user %q password %q %v", u.Username(), p, ok)
	}
	if u.Path() != "/a%zz[b]" {
		t.Errorf("Path = %q", u.Path())
	}
	if q, ok := u.RawQuery(); q != "q=%zz" || !ok {
		t.Errorf("RawQuery = %q, %v", q, ok)
	}
	if u.Key() != "https://User:***@[2001:db8::1]:8443/a%zz[b]?q=%zz" {
		t.Errorf("Key = %q", u.Key())
	}
	nu := u.NetURL()
	if nu.String() != u.Unfragmented() || nu.User.Username() != "User" || nu.Path != "/a%zz[b]" {
		t.Errorf("NetURL = %q, user %v, path %q", nu, nu.User, nu.Path)
	}
	if ru := u.RequestURL(); ru.User != nil || ru.RequestURI() != "/a%zz[b]?q=%zz" || ru.Host != "[2001:db8::1]:8443" {
		t.Errorf("RequestURL = %#v (%q)", ru, ru.RequestURI())
	}
	if w := u.WithoutFragment(); w.Href() != u.Unfragmented() {
		t.Errorf("WithoutFragment().Href() = %q", w.Href())
	}
	if !(URL{}).IsZero() || u.IsZero() {
		t.Error("IsZero")
	}
	if m, err := ParseURL("mailto:User@Example.COM?subject=%zz#x"); err != nil || m.Unfragmented() != "mailto:User@Example.COM?subject=%zz" || m.NetURL().String() != m.Unfragmented() {
		t.Errorf("mailto: %q, %v", m, err)
	}
}

// TestURL_RequestOnTheWire: net/http sends RequestURL's target byte for
// byte: what the server reads in the request line is what a browser
// sends.
func TestURL_RequestOnTheWire(t *testing.T) {
	srv := requestlog.New(t, func(string) requestlog.Response { return requestlog.Response{} })
	r, err := NewResolver(srv.URL() + "/dir/")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"/a%zz/b%?q=%zz#%_sec", "/a|b^c[d]", "/é?é", "x'y?'", "/a/%2e%2E/b", "//" + srv.Host() + "//a%zz", "//" + srv.Host() + "//a"} {
		u, _, err := r.Resolve(ref)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", ref, err)
		}
		req, err := http.NewRequest(http.MethodGet, "/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL = u.RequestURL()
		req.Host = req.URL.Host
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatalf("%q: %v", ref, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%q: %s", ref, resp.Status)
		}
		got := srv.Take()
		if len(got) != 1 {
			t.Fatalf("%q: the server read %q, want one request", ref, got)
		}
		last := got[0]
		want := u.RequestURI()
		if strings.HasPrefix(want, "//") && u.NetURL().Opaque != "" {
			want = u.Unfragmented() // absolute form (see RequestURL)
		}
		if last != want {
			t.Errorf("%q: the server read %q, want %q", ref, last, want)
		}
	}
}

// FuzzURLModel holds the URL model to its contract for any input: a
// result's views agree with each other and with NormalizeURL.
func FuzzURLModel(f *testing.F) {
	for _, s := range []string{
		"https://schemers.org/r5rs-Z-H-9.html#%_sec_6.2", "/a%zz|b?q=%#%", "//h/x", "http://[::1", "http://h:99999/",
		"https://u:p@h/a^b", "mailto:x@y#%", "http://h//a%zz", "http://h//a[b]", "  /p\t#é", "?", "#", "foo://h/a%zz",
	} {
		f.Add(s)
	}
	r, err := NewResolver(urlModelBase)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, _, err := r.Resolve(s)
		if err != nil {
			if !errors.Is(err, errInvalidURL) || !u.IsZero() {
				t.Fatalf("Resolve(%q): %v, %q", s, err, u)
			}
			return
		}
		f, hasFrag := u.Fragment()
		if hasFrag && u.Href() != u.Unfragmented()+"#"+f || !hasFrag && u.Href() != u.Unfragmented() {
			t.Fatalf("Href %q, Unfragmented %q, Fragment %q %v", u.Href(), u.Unfragmented(), f, hasFrag)
		}
		if strings.Contains(u.Unfragmented(), "#") {
			t.Fatalf("Unfragmented %q holds a #", u.Unfragmented())
		}
		if n, err := NormalizeURL(u.Href()); err != nil || n != u.Key() {
			t.Fatalf("NormalizeURL(%q) = %q, %v; Key %q", u.Href(), n, err, u.Key())
		}
		if !strings.HasPrefix(u.Unfragmented(), u.Scheme()+":") || !strings.HasSuffix(strings.SplitN(u.Unfragmented(), "?", 2)[0], u.Path()) {
			t.Fatalf("scheme %q or path %q not in %q", u.Scheme(), u.Path(), u.Unfragmented())
		}
	})
}
