package urls

import (
	"strings"
	"testing"
)

func TestNormalizeURL(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		// Case.
		{name: "scheme and host lower-cased, path kept", in: "HTTP://Example.COM/Path/File.HTML", want: "http://example.com/Path/File.HTML"},
		{name: "IPv6 host lower-cased", in: "HTTP://[2001:DB8::1]/A", want: "http://[2001:db8::1]/A"},

		// Ports.
		{name: "http default port", in: "http://example.com:80/a", want: "http://example.com/a"},
		{name: "https default port", in: "https://example.com:443/a", want: "https://example.com/a"},
		{name: "https port on http kept", in: "http://example.com:443/", want: "http://example.com:443/"},
		{name: "http port on https kept", in: "https://example.com:80/", want: "https://example.com:80/"},
		{name: "non-default port kept", in: "http://example.com:8080/", want: "http://example.com:8080/"},
		{name: "empty port dropped", in: "http://example.com:/", want: "http://example.com/"},
		{name: "IPv6 http default port", in: "http://[::1]:80/", want: "http://[::1]/"},
		{name: "IPv6 https default port", in: "https://[::1]:443/x", want: "https://[::1]/x"},
		{name: "IPv6 default port, no path", in: "http://[::1]:80", want: "http://[::1]/"},
		{name: "IPv6 non-default port kept", in: "http://[::1]:8080/", want: "http://[::1]:8080/"},
		{name: "IPv6 https port on http kept", in: "http://[::1]:443/", want: "http://[::1]:443/"},
		{name: "IPv6 without port", in: "http://[::1]/", want: "http://[::1]/"},
		// WHATWG: a scheme-relative reference has no meaning without a base.
		{name: "scheme-relative URL without base", in: "//Example.com:80/a", wantErr: true},

		// Path.
		{name: "empty path", in: "http://example.com", want: "http://example.com/"},
		{name: "empty path with query", in: "http://example.com?q=1", want: "http://example.com/?q=1"},
		{name: "dot segments", in: "http://h/a/./b/../c", want: "http://h/a/c"},
		{name: "trailing dot-dot", in: "http://h/a/b/..", want: "http://h/a/"},
		{name: "dot-dot above root", in: "http://h/../../x", want: "http://h/x"},
		{name: "double slash kept", in: "http://h//a/../b", want: "http://h//b"},

		// Percent-encoding is preserved byte for byte.
		{name: "encoded slash", in: "http://h/a%2Fb", want: "http://h/a%2Fb"},
		{name: "encoded slash, lower-case hex", in: "http://h/a%2fb", want: "http://h/a%2fb"},
		{name: "encoded tilde", in: "http://h/%7Euser", want: "http://h/%7Euser"},
		// Changed with WHATWG parsing: "%2E%2E" is a dot segment for
		// browsers (URL Standard, "double-dot URL path segment"), so the
		// server sees /b.
		{name: "encoded dots are dot segments", in: "http://h/a/%2E%2E/b", want: "http://h/b"},
		{name: "encoded single dot", in: "http://h/a/%2e/b", want: "http://h/a/b"},
		{name: "encoded slash with dot segments", in: "http://h/a%2Fb/./c/../d", want: "http://h/a%2Fb/d"},
		{name: "encoded slash is one segment", in: "http://h/x/a%2Fb/../c", want: "http://h/x/c"},
		{name: "encoded slash next to a raw space", in: "http://h/a%2Fb/c d", want: "http://h/a%2Fb/c%20d"},
		{name: "encoded semicolon next to braces", in: "http://h/a%3Bb/{x}|y", want: "http://h/a%3Bb/%7Bx%7D%7Cy"},
		{name: "caret and backslash in a non-special path", in: "foo://h/a^b\\c", want: "foo://h/a%5Eb\\c"},
		{name: "raw space encoded", in: "http://h/a b", want: "http://h/a%20b"},
		{name: "raw non-ASCII next to an encoded slash", in: "http://h/caf\u00e9/a%2Fb", want: "http://h/caf%C3%A9/a%2Fb"},
		{name: "encoded slash next to a raw space, empty host", in: "file:///a%2Fb/c d", want: "file:///a%2Fb/c%20d"},
		{name: "relative path is not a URL", in: "/%2F\"", wantErr: true},

		// Query: kept byte for byte.
		{name: "query order and encoding kept", in: "http://h/p?b=2&a=1&a=%20+x&c=%2F/", want: "http://h/p?b=2&a=1&a=%20+x&c=%2F/"},
		{name: "query dot segments untouched", in: "http://h/a/../b?x=../y", want: "http://h/b?x=../y"},
		{name: "empty query kept", in: "http://h/p?", want: "http://h/p?"},
		{name: "empty query, empty path", in: "http://h?", want: "http://h/?"},
		{name: "empty query, fragment removed", in: "http://h/p?#f", want: "http://h/p?"},
		// A lone "%" in the query is kept (net/url carries the query as is).
		{name: "invalid escape in query kept", in: "http://h/a?%zz", want: "http://h/a?%zz"},
		{name: "query spaces and non-ASCII encoded", in: "http://h/p?q=a b&x=\u00e9", want: "http://h/p?q=a%20b&x=%C3%A9"},
		{name: "query apostrophe encoded (special scheme)", in: "http://h/p?a='b'", want: "http://h/p?a=%27b%27"},

		// Fragment.
		{name: "fragment removed", in: "http://h/p#frag", want: "http://h/p"},
		{name: "fragment removed, query kept", in: "http://h/p?q=1#frag", want: "http://h/p?q=1"},
		{name: "empty fragment removed", in: "http://h/p#", want: "http://h/p"},

		// Userinfo.
		// Changed: the password is redacted in the normal form (secrets are
		// never stored); the user name is kept.
		{name: "password redacted, host lower-cased, port dropped", in: "http://User:Se%20cret@Example.COM:80/", want: "http://User:***@example.com/"},
		{name: "user without password kept", in: "https://user@h/", want: "https://user@h/"},
		{name: "empty password dropped", in: "https://user:@h/", want: "https://user@h/"},
		{name: "password with @ redacted", in: "https://u:p@ss@h/x", want: "https://u:***@h/x"},

		// Opaque and non-hierarchical URLs: scheme lower-cased, fragment removed.
		{name: "mailto", in: "mailto:User@Example.COM", want: "mailto:User@Example.COM"},
		{name: "MAILTO with fragment", in: "MAILTO:User@Example.COM#x", want: "mailto:User@Example.COM"},
		{name: "mailto with query", in: "mailto:a@example.org?subject=Hi%20there", want: "mailto:a@example.org?subject=Hi%20there"},
		{name: "javascript", in: "javascript:alert(1)", want: "javascript:alert(1)"},
		{name: "JavaScript", in: "JavaScript:void(0)", want: "javascript:void(0)"},
		{name: "tel", in: "tel:+1-555-0100", want: "tel:+1-555-0100"},
		{name: "urn", in: "urn:ISBN:0451450523", want: "urn:ISBN:0451450523"},
		{name: "file with empty host", in: "file:///etc/hosts", want: "file:///etc/hosts"},

		// Input trimming.
		{name: "surrounding space", in: "  http://h/p \n", want: "http://h/p"},
		{name: "surrounding C0 controls", in: "\x00\x01http://h/p\x1f ", want: "http://h/p"},

		// WHATWG URL Standard cases (issue 11).
		{name: "newline inside removed", in: "https://www.w3.org/\nstandards/", want: "https://www.w3.org/standards/"},
		{name: "tab inside removed", in: "https://example.com/tab\tinside", want: "https://example.com/tabinside"},
		{name: "backslashes are slashes", in: "https:\\\\example.com\\backslash\\path", want: "https://example.com/backslash/path"},
		{name: "upper case and default port", in: "HTTP://EXAMPLE.COM:80/", want: "http://example.com/"},
		{name: "IPv4 hex and short form", in: "http://0x7f.1/", want: "http://127.0.0.1/"},
		{name: "IPv4 as one decimal number", in: "http://2852039166/", want: "http://169.254.169.254/"},
		{name: "IPv4 octal", in: "http://0177.0.0.01/", want: "http://127.0.0.1/"},
		{name: "IDNA to Punycode", in: "https://b\u00fccher.example/", want: "https://xn--bcher-kva.example/"},
		{name: "IDNA upper case", in: "https://B\u00dcCHER.example/", want: "https://xn--bcher-kva.example/"},
		{name: "fullwidth dot", in: "https://example\uff0ecom/", want: "https://example.com/"},
		{name: "backslash before @ ends the host", in: "http://127.0.0.1:6666\\@1.1.1.1", want: "http://127.0.0.1:6666/@1.1.1.1"},
		{name: "special scheme without slashes", in: "https:example.com/x", want: "https://example.com/x"},
		{name: "trailing dot kept", in: "http://Example.COM./", want: "http://example.com./"},
		{name: "IPv6 compressed", in: "http://[0:0:0:0:0:0:0:1]/", want: "http://[::1]/"},
		{name: "IPv4-mapped IPv6", in: "http://[::ffff:127.0.0.1]/", want: "http://[::ffff:7f00:1]/"},
		{name: "javascript stays non-HTTP", in: "javascript:alert(1)//x", want: "javascript:alert(1)//x"},
		{name: "space in host", in: "https://exa mple.com/", wantErr: true},
		{name: "forbidden host code point", in: "http://a<b/", wantErr: true},
		{name: "invalid IPv4 number", in: "http://1.2.3.256/", wantErr: true},
		{name: "empty host", in: "http:///", wantErr: true},
		{name: "port out of range", in: "http://h:65536/", wantErr: true},

		// Errors.
		{name: "unclosed IPv6 literal", in: "http://[::1", wantErr: true},
		// Changed: WHATWG accepts a lone "%" and keeps it (browsers send
		// "/%zz"), and percent-encodes control characters.
		{name: "invalid escape in path", in: "http://h/%zz", want: "http://h/%zz"},
		{name: "lone percent at the end of the path", in: "http://h/a%", want: "http://h/a%"},
		{name: "invalid escape in fragment removed", in: "https://schemers.org/r5rs-Z-H-9.html#%_sec_6.2", want: "https://schemers.org/r5rs-Z-H-9.html"},
		// As Chromium sends them.
		{name: "pipe and caret in a path encoded", in: "http://h/a|b^c", want: "http://h/a%7Cb%5Ec"},
		{name: "non-numeric port", in: "http://h:port/", wantErr: true},
		{name: "control character", in: "http://h/a\x7fb", want: "http://h/a%7Fb"},
		{name: "relative reference", in: "a/b", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeURL(tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("NormalizeURL(%q) = %q, want an error", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeURL(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("NormalizeURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
			// Normalising is idempotent.
			again, err := NormalizeURL(got)
			if err != nil || again != got {
				t.Errorf("NormalizeURL(%q) = %q, %v; not idempotent", got, again, err)
			}
		})
	}
}

// FuzzNormalizeURL checks that a normalised URL is a fixed point.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{
		"HTTP://Example.COM:80/a/./b/../c?b=2&a=1#f", "https://[::1]:443", "http://h/a%2Fb/c d",
		"http://h/%7Euser?", "mailto:User@Example.COM#x", "//h:80/a", "file:///a%2Fb/c d",
		"/%2F\"", // found by fuzzing: the relative path became "//%22", a host
		"? #",    // found by fuzzing: the query keeps its raw trailing space (see below)
		"https://www.w3.org/\nstandards/", "https:\\\\example.com\\a", "http://0x7f.1/", "https://b\u00fccher.example/",
		"http://127.0.0.1:6666\\@1.1.1.1", "https://user:s3cr3t@host/", "web+demo:/.//not-a-host/", "http://h/a%2e%2E/b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := NormalizeURL(s)
		if err != nil {
			return
		}
		if strings.Contains(n, "#") && !strings.Contains(s, "#") {
			t.Fatalf("NormalizeURL(%q) = %q grew a fragment", s, n)
		}
		if strings.TrimSpace(n) != n {
			// The query is kept byte for byte, even a raw trailing space
			// ("? #" gives "? "), but NormalizeURL trims its input.
			return
		}
		again, err := NormalizeURL(n)
		if err != nil || again != n {
			t.Fatalf("NormalizeURL(%q) = %q, but NormalizeURL(%q) = %q, %v", s, n, n, again, err)
		}
	})
}
