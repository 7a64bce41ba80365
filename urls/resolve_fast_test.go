package urls

import (
	"io"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// fastBases are bases around the fast path's edges: http(s) with and
// without path, query, fragment, port, userinfo, escapes in the path, an
// IPv6 or IDNA host, and bases it must not resolve against (file:,
// non-special and opaque URLs).
var fastBases = []string{
	"https://example.com/dir/page.html?x=1#top",
	"http://example.com/dir/",
	"http://example.com",
	"http://example.com?q",
	"http://example.com/?",
	"http://example.com/a/b?",
	"http://example.com:8080/a/b/c?q=1&r=2",
	"https://example.com:443/a/b",
	"http://[::1]:8080/a/b",
	"http://[2001:db8::1]/x/",
	"https://user:pass@example.com/a/b",
	"http://user@example.com/a",
	"http://127.0.0.1:34727/p/12",
	"http://0x7f.1/a/b",
	"https://bücher.example/%C3%A9/x%7Cy/z",
	"http://h/a(b)/c'd/e*f!",
	"http://h/a%2Fb/c",
	"http://h/a%2fb/",
	"http://h/%41/b",
	"http://h/a b/c",
	"http://h/a//b/",
	"http://h//",
	"HTTP://EXAMPLE.COM:80/A/../B",
	"http://h/a/%2e%2e/b",
	"http://h/ü/x?ü#ü",
	"http://h/a?q#%zz",
	"http://h/a?b'c",
	"ws://h/a/b",
	"ftp://h/a/b",
	"file:///home/u/doc.html",
	"file://host/c:/x/y",
	"mailto:someone@example.com",
	"javascript:void(0)",
	"foo://host/a/b",
	"foo:/a/b",
	"urn:isbn:0451450523",
	"data:text/plain,hi",
}

// fastRefs are references around the fast path's edges.
var fastRefs = []string{
	"", "#", "#f", "#f%20g", "#%41", "#a#b", "#a'b", "#a b", "#é", "#%zz", "#a?b/c", "#!$&()*+,;=:@~",
	"?", "?q", "?q=1&r=2#f", "?q#", "??", "?a?b", "?a'b", "?%41", "?%zz", "?a b",
	"b.html", "b.html?x=1#frag", "b.html?", "b.html#", "./", ".", "..", "../", "../..", "../../../../x",
	"./a/./b/../c", "a/..", "a/.", "a/../", "a//b", "a/", "a/b/", "...", ".../x", "..x", ".x", "x.", "x..",
	"/", "/a/b.html?x=1#frag", "/a/", "//", "///", "///x", "//h", "//h2/x", "//h2:80/x", "//h2:8080/x?q#f",
	"//u@h/", "//u:p@h/", "//[::1]/", "//H2/", "//h2./", "//xn--bcher-kva.example/", "//0x7f.1/", "//h2/./x",
	"/..", "/./a", "/a/../../b", "/a/.", "/a/..", "/.", "//h2/..",
	"a:b", "a/b:c", "1a:b", "+a:b", ":a", "a@b:c", "@x", "a@b", "~user/", "a;b=c,d", "a!$&()*+,;=:@b",
	"http:x", "http:/x", "http:", "https:", "http://h2/p", "https://h2", "https://h2?q", "https://h2#f",
	"https://h2/a?b#c", "http://h2:80/", "http://h2:8080", "HTTP://h2/", "http://H2/", "http://h2/a/../b",
	"http://h2/%2e", "http://u:p@h2/", "http://[::1]/", "http://127.0.0.1/", "http://127.1/", "http://h2/a b",
	"%2e/x", "%2E%2E/x", ".%2e/x", "a/%2e", "a%20b", "a%zz", "a%2", "a%2fb", "a%2Fb", "a%41b", "a%e9",
	"a(b)", "a'b", "a!*b", "a|b", "a^b", "a{b}", "a`b", "a<b", "a\"b", "a b", " a", "a ", "a\tb", "a\nb", "\na",
	"a\\b", `\\h2\x`, "/\\x", "é", "a?b'c", "a#b'c", "a?b c", "mailto:x@y", "javascript:x", "c:/x", "C|/x",
	"c:", "file:///x", "ws://h2/x", "\x00", "a\x00b", "\x7f", strings.Repeat("a/", 300),
}

// TestResolveFast compares the fast path with the parser on every base
// and reference of the tables: where it does not decline, the URL (every
// field), the warnings and the error must be the parser's.
func TestResolveFast(t *testing.T) {
	type pair struct{ r, parsed Resolver }
	resolvers := []pair{{}}
	for _, b := range append(fastBases, canonicalCases...) {
		r, rs, err := checkNewResolver(t, b)
		if err == nil {
			resolvers = append(resolvers, pair{r, rs})
		}
	}
	took, lazy := 0, 0
	for _, p := range resolvers {
		if p.r.base != nil && p.r.base.w == nil {
			lazy++
		}
		for _, ref := range fastRefs {
			if checkResolveFast(t, p.r, p.parsed, ref) {
				took++
			}
		}
	}
	if took < 2000 {
		t.Errorf("the fast path took %d of %d cases, want at least 2000", took, len(resolvers)*len(fastRefs))
	}
	if lazy < 20 {
		t.Errorf("NewResolver left %d bases unparsed, want at least 20", lazy)
	}
}

// TestResolveFast_Takes lists references the fast path must resolve (the
// common links of real pages) and those it must leave to the parser.
func TestResolveFast_Takes(t *testing.T) {
	r, err := NewResolver("https://example.com/dir/page.html?x=1#top")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{
		"", "#f", "?q", "b.html", "b.html#f", "../a/b.html#f", "./", "/", "/a/b.html?x=1#frag",
		"//cdn.example/x.js", "https://other.example/a?b#c", "http://127.0.0.1:8080/", "a%20b/c",
	} {
		if _, ok := resolveFast(r.fast, ref); !ok {
			t.Errorf("resolveFast(%q) declined", ref)
		}
	}
	for _, ref := range []string{
		"a b", "a\tb", `a\b`, "é", "a:b", "%2e%2e/x", "a%zz", "HTTP://h/", "http://h/./x", "http://u:p@h/",
		"mailto:x@y", "//h/a b", "?a'b", "#a#b",
	} {
		if _, ok := resolveFast(r.fast, ref); ok {
			t.Errorf("resolveFast(%q) did not decline", ref)
		}
	}
	for _, b := range []string{"file:///a/b", "mailto:x@y", "ws://h/a", "foo://h/a"} {
		r, err := NewResolver(b)
		if err != nil {
			t.Fatal(err)
		}
		if r.fast != nil {
			t.Errorf("NewResolver(%q) has a fast base", b)
		}
		if _, ok := resolveFast(r.fast, "b.html"); ok {
			t.Errorf("resolveFast(%q, \"b.html\") did not decline", b)
		}
	}
}

// TestResolveFast_Mutable checks that results share nothing a caller can
// change: changing the net/url value of one result leaves the next one as
// it was.
func TestResolveFast_Mutable(t *testing.T) {
	r, err := NewResolver("https://user:pass@example.com/dir/page.html?x=1")
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := r.Resolve("#f")
	if err != nil {
		t.Fatal(err)
	}
	nu := u.NetURL()
	nu.Host, nu.Path, nu.RawQuery, nu.User = "evil.example", "/evil", "evil", url.User("evil")
	v, _, err := r.Resolve("#f")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "https://user:pass@example.com/dir/page.html?x=1#f"; got != want {
		t.Errorf("after changing a result, Resolve = %q, want %q", got, want)
	}
	if got, want := u.NetURL().String(), "https://user:pass@example.com/dir/page.html?x=1"; got != want {
		t.Errorf("after changing a NetURL, NetURL = %q, want %q", got, want)
	}
}

func FuzzResolveFast(f *testing.F) {
	for i, b := range fastBases {
		for j, ref := range fastRefs {
			if (i+j)%7 == 0 {
				f.Add(b, ref)
			}
		}
	}
	f.Fuzz(func(t *testing.T, base, ref string) {
		if len(base) > 2048 {
			return // NewResolver applies no length limit; keep the fuzzer fast
		}
		r, rs, err := checkNewResolver(t, base)
		if err != nil {
			r, rs = Resolver{}, Resolver{}
		}
		checkResolveFast(t, r, rs, ref)
	})
}

// checkNewResolver fails when NewResolver(base) differs from the
// Resolver of the parsed base (newResolver): its error, its Base, its
// fast path's view of the base. It returns both.
func checkNewResolver(t *testing.T, base string) (r, parsed Resolver, err error) {
	t.Helper()
	r, err = NewResolver(base)
	parsed, perr := newResolver(base)
	if !reflect.DeepEqual(err, perr) {
		t.Fatalf("NewResolver(%q): %v; the parser: %v", base, err, perr)
	}
	if err != nil {
		return r, parsed, err
	}
	if r.Base() != parsed.Base() || !reflect.DeepEqual(r.fast, parsed.fast) {
		t.Fatalf("NewResolver(%q): base %q, fast %+v; the parser: %q, %+v", base, r.Base(), r.fast, parsed.Base(), parsed.fast)
	}
	return r, parsed, nil
}

// checkResolveFast fails when r.Resolve(ref) differs in any way from
// parsed.resolve(ref), the parser's result against the parsed base (r
// and parsed resolve against the same base), or when r's parser does; it
// reports whether the fast path took ref.
func checkResolveFast(t *testing.T, r, parsed Resolver, ref string) bool {
	t.Helper()
	su, swarn, serr := parsed.resolve(ref)
	for _, resolve := range []func(string) (URL, []string, error){r.Resolve, r.resolve} {
		u, warn, err := resolve(ref)
		if u != su || !reflect.DeepEqual(warn, swarn) || !reflect.DeepEqual(err, serr) {
			t.Fatalf("base %q, ref %q: Resolve = %#v, %q, %v; the parser: %#v, %q, %v", r.Base(), ref, u, warn, err, su, swarn, serr)
		}
	}
	_, ok := resolveFast(r.fast, ref)
	return ok
}

// benchPage is a page of the Django documentation (Debian's
// python-django-doc), whose links BenchmarkResolve resolves; it is read at
// benchmark time and never copied into the repository.
const benchPage = "/usr/share/doc/python-django-doc/html/ref/models/querysets.html"

// benchRefs returns the href and src values of benchPage, or, when it is
// not installed, the references of fastRefs.
func benchRefs(b *testing.B) []string {
	f, err := os.Open(benchPage)
	if err != nil {
		b.Logf("%v: resolving fastRefs instead", err)
		return fastRefs
	}
	defer f.Close()
	var refs []string
	z := html.NewTokenizer(f)
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				b.Fatal(z.Err())
			}
			return refs
		case html.StartTagToken, html.SelfClosingTagToken:
			for {
				k, v, more := z.TagAttr()
				if s := string(k); s == "href" || s == "src" {
					refs = append(refs, string(v))
				}
				if !more {
					break
				}
			}
		}
	}
}

// BenchmarkResolve resolves the links of a real page against its URL as a
// local server would serve it, through Resolve ("fast") and through the
// parser alone ("parser", Resolve before its fast path).
func BenchmarkResolve(b *testing.B) {
	refs := benchRefs(b)
	r, err := NewResolver("http://127.0.0.1:36111/ref/models/querysets.html")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name    string
		resolve func(string) (URL, []string, error)
	}{{"fast", r.Resolve}, {"parser", r.resolve}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, ref := range refs {
					if _, _, err := bc.resolve(ref); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(refs)), "ns/ref")
		})
	}
}
