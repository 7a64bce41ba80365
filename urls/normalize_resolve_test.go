package urls

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestResolver_Resolve(t *testing.T) {
	r, err := NewResolver("https://example.com/dir/page.html?x#top")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ref, want string
		warn            bool // a validation warning is expected
		wantErr         bool
	}{
		{name: "relative path", ref: "../a/b", want: "https://example.com/a/b"},
		{name: "query only", ref: "?q=1", want: "https://example.com/dir/page.html?q=1"},
		{name: "fragment only", ref: "#f", want: "https://example.com/dir/page.html?x#f"},
		{name: "empty reference is the base without fragment", ref: "", want: "https://example.com/dir/page.html?x"},
		{name: "scheme-relative", ref: "//host/path", want: "https://host/path"},
		{name: "scheme-relative with backslashes", ref: `\\host\path`, want: "https://host/path", warn: true},
		{name: "newline removed", ref: "https://www.w3.org/\nstandards/", want: "https://www.w3.org/standards/", warn: true},
		{name: "tab removed", ref: "https://example.com/tab\tinside", want: "https://example.com/tabinside", warn: true},
		{name: "backslashes", ref: `https:\\example.com\backslash\path`, want: "https://example.com/backslash/path", warn: true},
		{name: "leading and trailing C0 and space", ref: "\x00 \x1f/p \x01", want: "https://example.com/p", warn: true},
		{name: "upper case, default port", ref: "HTTP://EXAMPLE.COM:80/", want: "http://example.com/"},
		{name: "IPv4 hex", ref: "http://0x7f.1/", want: "http://127.0.0.1/", warn: true},
		{name: "IDNA", ref: "https://bücher.example/", want: "https://xn--bcher-kva.example/"},
		{name: "space and non-ASCII in path and query", ref: "/a b/é?q=a b&r=é", want: "https://example.com/a%20b/%C3%A9?q=a%20b&r=%C3%A9", warn: true},
		{name: "javascript is not made hierarchical", ref: "javascript:alert(1)", want: "javascript:alert(1)"},
		{name: "mailto kept", ref: "mailto:User@Example.COM", want: "mailto:User@Example.COM"},
		{name: "data URL", ref: "data:text/html,<b>x</b>", want: "data:text/html,<b>x</b>", warn: true},
		{name: "userinfo backslash confusion", ref: `http://127.0.0.1:6666\@1.1.1.1`, want: "http://127.0.0.1:6666/@1.1.1.1", warn: true},
		{name: "credentials are returned as found", ref: "https://user:s3cr3t@host/", want: "https://user:s3cr3t@host/", warn: true},
		{name: "unclosed IPv6", ref: "http://[::1/", wantErr: true},
		{name: "space in host", ref: "https://exa mple.com/", wantErr: true},
		{name: "bad port", ref: "http://h:x/", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, warns, err := r.Resolve(tc.ref)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Resolve(%q) = %v, want an error", tc.ref, u)
				}
				if !errors.Is(err, errInvalidURL) {
					t.Errorf("error %v is not errInvalidURL", err)
				}
				if strings.Contains(err.Error(), tc.ref) {
					t.Errorf("error %q quotes the input", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.ref, err)
			}
			if got := u.String(); got != tc.want {
				t.Errorf("Resolve(%q) = %q, want %q", tc.ref, got, tc.want)
			}
			if (len(warns) > 0) != tc.warn {
				t.Errorf("Resolve(%q) warnings = %q, want some: %v", tc.ref, warns, tc.warn)
			}
		})
	}
	if _, _, err := (Resolver{}).Resolve("/relative"); err == nil {
		t.Error("zero Resolver resolved a relative reference")
	}
	if _, err := NewResolver("not a url"); err == nil {
		t.Error("NewResolver accepted a relative base")
	}
}

func TestRedactText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain URL", "https://user:s3cr3t@host/", "https://user:***@host/"},
		{"no password", "https://user@host/", "https://user@host/"},
		{"no userinfo", "https://host/a@b", "https://host/a@b"},
		{"email in prose", "write to bob@example.org: thanks", "write to bob@example.org: thanks"},
		{"prose with a URL and an address", "see https://example.org: mail bob@example.org", "see https://example.org: mail bob@example.org"},
		{"several @", "http://u:p@ss@h/", "http://u:***@h/"},
		{"backslashes", `https:\\u:pw@h\x`, `https:\\u:***@h\x`},
		{"no slashes after special scheme", "https:u:pw@h/", "https:u:***@h/"},
		{"one slash", "https:/u:pw@h/", "https:/u:***@h/"},
		{"scheme-relative", "//u:pw@h/", "//u:***@h/"},
		{"newline inside the password", "https://u:s3\ncr3t@h/", "https://u:***@h/"},
		{"backslash ends a special host", `http://127.0.0.1:6666\@1.1.1.1`, `http://127.0.0.1:6666\@1.1.1.1`},
		{"backslash is userinfo in a non-special URL", `foo://u:p\w@h/`, `foo://u:***@h/`},
		{"in a message", `href="https://a:b@h/" is broken`, `href="https://a:***@h/" is broken`},
		{"two URLs", "https://a:1@h/ and ftp://b:2@i/", "https://a:***@h/ and ftp://b:***@i/"},
		{"already redacted", "https://user:***@host/", "https://user:***@host/"},
		{"upper-case scheme", "HTTPS://u:pw@h/", "HTTPS://u:***@h/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RedactText(tc.in)
			if got != tc.want {
				t.Fatalf("RedactText(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := RedactText(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	u, _ := url.Parse("https://user:s3cr3t@host/p")
	r := redactURL(u)
	if p, _ := r.User.Password(); p != RedactedPassword {
		t.Errorf("password %q", p)
	}
	if p, _ := u.User.Password(); p != "s3cr3t" {
		t.Error("redactURL changed its argument")
	}
	if s := stripUserinfo(u); s.User != nil || s.String() != "https://host/p" {
		t.Errorf("stripUserinfo = %v", s)
	}
}

// FuzzResolve checks the resolve and normalise path: it never panics, the
// result is a fixed point of NormalizeURL, net/url reads the same host, and
// a password never survives normalisation.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"https://www.w3.org/\nstandards/", "https://example.com/tab\tinside", `https:\\example.com\backslash\path`,
		"\x00 http://h/ \x1f", "HTTP://EXAMPLE.COM:80/", "http://0x7f.1/", "https://bücher.example/", "/a b/é?q=é",
		"//host/path", "javascript:alert(1)", "mailto:a@b", "http://[::1/", "https://exa mple.com/",
		`http://127.0.0.1:6666\@1.1.1.1`, "https://user:s3cr3t@host/", "../../x", "?q#f", "http://2852039166/",
		"web+demo:/.//not-a-host/", "foo://h/a^b\\c", "http://h/%zz%", "file:///C|/x",
	} {
		f.Add(s)
	}
	r, err := NewResolver("https://example.com/dir/page?x")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, _, err := r.Resolve(s)
		if err != nil {
			return
		}
		n, err := NormalizeURL(u.String())
		if err != nil {
			t.Fatalf("Resolve(%q) = %q, which does not normalise: %v", s, u, err)
		}
		// A fixed point, but for a raw trailing space that the fragment
		// kept in an opaque path or a query ("a:x #f" gives "a:x "),
		// which NormalizeURL trims from its input (see FuzzNormalizeURL).
		if again, err := NormalizeURL(n); (err != nil || again != n) && strings.TrimSpace(n) == n {
			t.Fatalf("NormalizeURL(%q) = %q, then %q, %v", u, n, again, err)
		}
		if n != u.Key() {
			t.Fatalf("NormalizeURL(%q) = %q, Key %q", u, n, u.Key())
		}
		if p, ok := u.Password(); ok && len(p) > 3 && p != RedactedPassword && strings.Contains(n, ":"+p+"@") {
			t.Fatalf("NormalizeURL(%q) = %q keeps the password", u, n)
		}
		// net/url carries every URL: its String is the serialisation,
		// its host the parser's, and what net/http sends is the request
		// target a browser sends.
		nu := u.NetURL()
		if nu.String() != u.Unfragmented() {
			t.Fatalf("NetURL(%q).String() = %q", u, nu.String())
		}
		if nu.Hostname() != u.Hostname() || nu.Port() != u.Port() || nu.Scheme != u.Scheme() {
			t.Fatalf("NetURL(%q): scheme, host, port %q %q %q", u, nu.Scheme, nu.Hostname(), nu.Port())
		}
		if s := u.Scheme(); s != "http" && s != "https" {
			return
		}
		ru := u.RequestURL()
		if ru.User != nil || ru.Host != u.Host() {
			t.Fatalf("RequestURL(%q) = %#v", u, ru)
		}
		want := u.RequestURI()
		if strings.HasPrefix(want, "//") && nu.Opaque != "" {
			want = u.Scheme() + "://" + u.Host() + want // absolute form (see RequestURL)
		}
		if got := ru.RequestURI(); got != want {
			t.Fatalf("RequestURL(%q).RequestURI() = %q, want %q", u, got, want)
		}
	})
}

// TestResolve_Limits: inputs that would make the parser work in quadratic
// time are invalid URLs; ordinary long URLs are not.
func TestResolve_Limits(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"long user name", "http://" + strings.Repeat("a", 1100) + "@h/", false},
		{"many @", "http://" + strings.Repeat("a@", 300) + "h/", false},
		{"many segments", "http://h" + strings.Repeat("/a", 1100), false},
		{"too long", "http://h/" + strings.Repeat("a", maxURLLen), false},
		{"large data URL", "data:image/png;base64," + strings.Repeat("iVBORw0KGgo=", 20000), true},
		{"mailto with many recipients", "mailto:" + strings.Repeat("a@example.org,", 100), true},
		{"long query with slashes", "http://h/?" + strings.Repeat("a/@", 10000), true},
		{"long path", "http://h/" + strings.Repeat("a/", 1000) + strings.Repeat("b", 30000), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseURL(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("ParseURL: %v, want ok=%v", err, tc.ok)
			}
			if _, err := NormalizeURL(tc.in); (err == nil) != tc.ok {
				t.Fatalf("NormalizeURL: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// BenchmarkNormalizeURL_Hostile measures the worst inputs within the
// limits (see tooCostly).
func BenchmarkNormalizeURL_Hostile(b *testing.B) {
	for name, s := range map[string]string{
		"typical":    "https://Example.COM:443/a/./b/../c?q=1#f",
		"userinfo":   "http://" + strings.Repeat("a", 1000) + strings.Repeat("@", 8) + "h/",
		"segments":   "http://h" + strings.Repeat("/a", 512),
		"data-200KB": "data:image/png;base64," + strings.Repeat("iVBORw0KGgo=", 17000),
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				NormalizeURL(s)
			}
		})
	}
}
