package urls

import "testing"

// canonicalCases are URLs around the fast path's edges: those it must
// take and those it must leave to the parser.
var canonicalCases = []string{
	"http://example.com/", "https://example.com", "https://example.com?q", "http://example.com#f",
	"http://example.com:8080/a/b?c=d&e=f#g", "http://example.com:80/", "https://example.com:443/",
	"http://example.com:0080/", "http://example.com:/", "http://example.com:65536/", "http://Example.com/",
	"http://127.0.0.1:34727/p/12", "http://127.0.0.01/", "http://1.2.3/", "http://0x7f.1/", "http://a.1/",
	"http://a.0x/", "http://256.1.1.1/", "http://xn--bcher-kva.example/", "http://-a.com/", "http://a-.com/",
	"http://a..com/", "http://a.com./", "http://a_b.com/", "http://u:p@h/", "http://h/a/./b", "http://h/a/../b",
	"http://h/a/%2e/b", "http://h/a/%2E%2e/b", "http://h/.well-known/x", "http://h/a%zz", "http://h/a%2",
	"http://h/a%2Fb", "http://h/a b", "http://h/a'b?c'd", "http://h/a|b", "http://h/a\\b", "http://h/é",
	"http://h/?a=b?c/d", "http://h/#a#b", "http://h/#%zz", "http://h/#a b", "http://h/\t", "http://h/ ",
	"http://h/a//u:p@h2/", "http://h//x", "http://[::1]/", "HTTP://h/", "http:/h/", "http:h/", "ftp://h/",
	"https://h/a;b=c/d:e@f!$&()*+,~", "http://h?", "http://h#", "http://0-0", "http://a.0-0/", "http://a.b1/", "http://h/%7euser", "http://h/a?b=%2", "",
	"http://255.255.255.255/", "http://0.0.0.0/", "http://1.2.3.4.5/", "http://1.2.3.a/", "http://300.1.1.1/",
	"http://1.2.3.256/", "http://1.2.3.250/", "http://00.1.1.1/", "http://1.2.3.0x1/", "http://a.b.c.1/", "http://1-1.com/",
	"http://1.2.3.1-1/", "http://099.1.1.1/",
}

func TestCanonicalHTTP(t *testing.T) {
	took := 0
	for _, s := range canonicalCases {
		checkCanonical(t, s)
		if _, ok := canonicalHTTP(s); ok {
			took++
		}
	}
	if took < 15 {
		t.Errorf("the fast path took %d of the cases, want at least 15", took)
	}
	for _, s := range []string{"http://example.com/", "https://example.com", "http://127.0.0.1:34727/p/12#x"} {
		if _, ok := canonicalHTTP(s); !ok {
			t.Errorf("canonicalHTTP(%q) left a plain URL to the parser", s)
		}
	}
}

func FuzzCanonicalHTTP(f *testing.F) {
	for _, s := range canonicalCases {
		f.Add(s)
	}
	f.Fuzz(checkCanonical)
}

// checkCanonical fails when the fast path takes s and its result differs
// from the parser's.
func checkCanonical(t *testing.T, s string) {
	n, ok := canonicalHTTP(s)
	if !ok {
		return
	}
	want, err := normalizeURL(s)
	if err != nil || want != n {
		t.Fatalf("canonicalHTTP(%q) = %q, the parser: %q, %v", s, n, want, err)
	}
}
