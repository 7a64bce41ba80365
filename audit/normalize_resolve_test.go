package audit

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
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
				if !errors.Is(err, ErrInvalidURL) {
					t.Errorf("error %v is not ErrInvalidURL", err)
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

func TestRedactStrings(t *testing.T) {
	p := &Page{
		Extraction: Extraction{
			URL:   "https://u:pw1@h/",
			Links: []Link{{Href: "https://u:pw2@h/", Robust: &Robust{OriginalRaw: "https://u:pw3@h/"}}},
		},
		Redirects: []Redirect{{From: "https://h/", To: "https://u:pw4@h/"}},
		Evidence:  &PageEvidence{Headers: map[string]string{"Location": "https://u:pw5@h/"}},
	}
	RedactStrings(p)
	for _, s := range []string{p.URL, p.Links[0].Href, p.Links[0].Robust.OriginalRaw, p.Redirects[0].To, p.Evidence.Headers["Location"]} {
		if s != "https://u:***@h/" {
			t.Errorf("got %q, want it redacted", s)
		}
	}
}

// redactNode is a recursive type for TestRedactStrings_Shapes.
type redactNode struct {
	Next  *redactNode
	Kids  []redactNode
	Count int
	Name  string
}

type redactName string

// TestRedactStrings_Shapes: the walk skips only what cannot hold a string
// (it caches which fields can): strings behind interfaces, nested slices,
// maps of slices, named string types, recursive types and embedded
// structs are redacted; unexported fields and map keys are left alone.
func TestRedactStrings_Shapes(t *testing.T) {
	const secret, redacted = "https://u:pw@h/", "https://u:***@h/"
	type Embedded struct{ E string }
	type shapes struct {
		Embedded
		N       int
		When    Time
		Any     any
		AnyPtr  any
		Nested  [][]string
		Arr     [2]string
		MapList map[string][]string
		Named   map[string]redactName
		Tree    *redactNode
		hidden  string
		Keys    map[string]int
	}
	v := &shapes{
		Embedded: Embedded{E: secret},
		Any:      secret,
		AnyPtr:   &Redirect{To: secret},
		Nested:   [][]string{{"x", secret}},
		Arr:      [2]string{secret, "y"},
		MapList:  map[string][]string{"k": {secret}},
		Named:    map[string]redactName{"k": secret, "plain": "ok"},
		Tree:     &redactNode{Next: &redactNode{Name: secret}, Kids: []redactNode{{Name: secret}}},
		hidden:   secret,
		Keys:     map[string]int{secret: 1},
	}
	RedactStrings(v)
	for i, s := range []string{v.E, v.Any.(string), v.AnyPtr.(*Redirect).To, v.Nested[0][1], v.Arr[0],
		v.MapList["k"][0], string(v.Named["k"]), v.Tree.Next.Name, v.Tree.Kids[0].Name} {
		if s != redacted {
			t.Errorf("string %d = %q, want it redacted", i, s)
		}
	}
	if v.hidden != secret || v.Keys[secret] != 1 || v.Named["plain"] != "ok" {
		t.Errorf("unexported field, map key or clean value changed: %+v", v)
	}
}

// TestRedactStrings_CleanAllocs: a page without a password costs the
// walk no allocation (the store redacts every page and check it writes).
func TestRedactStrings_CleanAllocs(t *testing.T) {
	p := &Page{
		Extraction: Extraction{
			URL:   "https://h/",
			Links: []Link{{Href: "https://h/a", Rel: []string{"x"}}, {Href: "https://h/b", Robust: &Robust{OriginalRaw: "https://h/c"}}},
		},
		Redirects: []Redirect{{From: "https://h/", To: "https://h/x"}},
		Evidence:  &PageEvidence{Headers: map[string]string{"Location": "https://h/", "Content-Type": "text/html"}},
	}
	if n := testing.AllocsPerRun(20, func() { RedactStrings(p) }); n != 0 {
		t.Errorf("%v allocations per clean page, want 0", n)
	}
}

func TestRedactURL(t *testing.T) {
	u, _ := url.Parse("https://user:s3cr3t@host/p")
	r := RedactURL(u)
	if p, _ := r.User.Password(); p != RedactedPassword {
		t.Errorf("password %q", p)
	}
	if p, _ := u.User.Password(); p != "s3cr3t" {
		t.Error("RedactURL changed its argument")
	}
	if s := StripUserinfo(u); s.User != nil || s.String() != "https://host/p" {
		t.Errorf("StripUserinfo = %v", s)
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
		{"too long", "http://h/" + strings.Repeat("a", MaxURLLen), false},
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

// TestRedactStrings_Nested covers what the per-type walk must still reach
// (and what it must leave alone) beyond a page: recursive types,
// interfaces, maps of structs, arrays, named string types, unexported
// fields, and types that hold no string at all.
func TestRedactStrings_Nested(t *testing.T) {
	const secret, redacted = "https://u:pw@h/", "https://u:***@h/"
	type named string
	type node struct {
		Val  string
		Next *node
		Kids []node
	}
	type inner struct{ S named }
	type shapes struct {
		List     *node
		Any      any
		AnyPtr   any
		Map      map[string]inner
		Arr      [2]string
		Named    named
		NoString struct {
			N int
			B []byte
		}
		hidden string
	}
	v := &shapes{
		List:   &node{Val: secret, Next: &node{Val: secret, Kids: []node{{Val: secret}}}},
		Any:    secret,
		AnyPtr: &inner{S: secret},
		Map:    map[string]inner{"k": {S: secret}},
		Arr:    [2]string{"plain", secret},
		Named:  secret,
		hidden: secret,
	}
	v.NoString.B = []byte(secret)
	RedactStrings(v)
	for name, got := range map[string]string{
		"list":       v.List.Val,
		"list.next":  v.List.Next.Val,
		"list.kids":  v.List.Next.Kids[0].Val,
		"any":        v.Any.(string),
		"any ptr":    string(v.AnyPtr.(*inner).S),
		"map value":  string(v.Map["k"].S),
		"array":      v.Arr[1],
		"named type": string(v.Named),
	} {
		if got != redacted {
			t.Errorf("%s: %q, want %q", name, got, redacted)
		}
	}
	if v.Arr[0] != "plain" {
		t.Errorf("array: %q changed", v.Arr[0])
	}
	if v.hidden != secret || string(v.NoString.B) != secret {
		t.Errorf("unexported field or bytes changed: %q %q (RedactStrings reaches exported strings only)", v.hidden, v.NoString.B)
	}
	if holdsStrings(reflect.TypeOf(v.NoString)) {
		t.Error("a struct of an int and a []byte: plan says it holds a string")
	}
}

func BenchmarkRedactStrings_Page(b *testing.B) {
	p := &Page{Extraction: Extraction{URL: "https://h/"}}
	for i := range 50 {
		p.Links = append(p.Links, Link{Href: fmt.Sprintf("https://h/%d", i), RawHref: "/x", Text: "text", Rel: []string{"a"}})
	}
	for b.Loop() {
		RedactStrings(p)
	}
}
