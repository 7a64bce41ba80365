package urls

import "strings"

// canonicalHTTP is NormalizeURL's fast path. Most URLs a run handles are
// http or https URLs that NormalizeURL wrote already (the extractor's
// hrefs, the crawler's queue, the store's targets), and the WHATWG parser
// is a large part of a run's CPU. canonicalHTTP recognises, without
// parsing, a URL on which the parser and the checks of NormalizeURL are
// the identity but for the fragment, and returns it without its fragment
// with ok true: "http://" or "https://", a lower-case ASCII host name
// whose labels start and end with a letter or digit and whose last label
// starts with a letter (no "xn--" label), or a dotted-quad IPv4 address in
// canonical form, an optional non-default port in canonical form, and a path,
// query and fragment of characters that no step of the parser rewrites
// (no ".", ".." or "%2e" segment, "%" only before two hex digits). For
// anything else it returns ok false and NormalizeURL parses. Fuzzing
// (FuzzCanonicalHTTP) holds it to the parser's result.
func canonicalHTTP(raw string) (string, bool) {
	p, ok := canonicalHTTPParts(raw)
	if !ok {
		return "", false
	}
	n, _, _ := strings.Cut(raw, "#")       // the first "#": no other part has one
	return redactHref(p.withPath(n)), true // "http://h" and "http://h?q" have the path "/"
}

// httpParts are the parts of an http or https URL.
type httpParts struct {
	scheme, host      string // host with its port, if any
	path, query, frag string
	hasQuery          bool
}

// parsedPath is the path the URL parser gives p: "/" for none.
func (p httpParts) parsedPath() string {
	if p.path == "" {
		return "/"
	}
	return p.path
}

// withPath returns s, which holds p from its start (scheme, "://" and
// host first), with the "/" the parser gives an empty path.
func (p httpParts) withPath(s string) string {
	if p.path != "" {
		return s
	}
	i := len(p.scheme) + len("://") + len(p.host)
	return s[:i] + "/" + s[i:]
}

// canonicalHTTPParts returns the parts of raw, with ok true, when raw is
// an http(s) URL that canonicalHTTP takes (the URL parser's serialisation
// is raw but for the path "/" when raw has none).
func canonicalHTTPParts(raw string) (p httpParts, ok bool) {
	if len(raw) >= 512 { // tooCostly's cheap bound
		return p, false
	}
	var rest string
	var defPort string
	switch {
	case strings.HasPrefix(raw, "https://"):
		p.scheme, rest, defPort = "https", raw[len("https://"):], "443"
	case strings.HasPrefix(raw, "http://"):
		p.scheme, rest, defPort = "http", raw[len("http://"):], "80"
	default:
		return p, false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	p.host = rest[:end]
	host, port, hasPort := strings.Cut(p.host, ":")
	if !canonicalHost(host) || hasPort && !canonicalPort(port, defPort) {
		return p, false
	}
	tail, frag, hasFrag := strings.Cut(rest[end:], "#")
	if hasFrag && !cleanChars(frag, true) { // a second '#' is not clean either
		return p, false
	}
	p.frag = frag
	p.path, p.query, p.hasQuery = strings.Cut(tail, "?")
	if !cleanChars(p.path, false) || p.hasQuery && !cleanChars(p.query, true) || !plainSegments(p.path) {
		return p, false
	}
	return p, true
}

// canonicalHost reports whether h is a host name the URL parser keeps as
// it is: lower-case ASCII letters, digits and hyphens in non-empty labels
// that start and end with a letter or digit, no IDNA label, the last one
// starting with a letter; or four decimal numbers 0-255 without leading
// zeros.
func canonicalHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	// One pass over the labels: each non-empty, at most 63 bytes, of
	// lower-case letters, digits and inner hyphens, not "xn--"; numeric
	// counts the labels of digits only that could be an IPv4 part.
	labels, numeric, start := 0, 0, 0
	for i := 0; i <= len(h); i++ {
		if i < len(h) && h[i] != '.' {
			continue
		}
		l := h[start:i]
		start = i + 1
		labels++
		if l == "" || len(l) > 63 || strings.HasPrefix(l, "xn--") {
			return false
		}
		digits := true
		for j := 0; j < len(l); j++ {
			c := l[j]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z':
				digits = false
			case c == '-' && j > 0 && j < len(l)-1:
				digits = false
			default:
				return false
			}
		}
		if digits && len(l) <= 3 && (len(l) == 1 || l[0] != '0') && (len(l) < 3 || l <= "255") {
			numeric++
		}
		if i == len(h) {
			// The last label: a name if it starts with a letter (the
			// parser reads a host ending in a number, or in "0-0", as
			// an address), else four decimal numbers 0-255 without
			// leading zeros.
			if c := l[0]; c >= 'a' && c <= 'z' {
				return true
			}
		}
	}
	return labels == 4 && numeric == 4
}

// canonicalPort reports whether p is a port the parser keeps as written:
// 1-65535 without leading zeros, not the scheme's default.
func canonicalPort(p, def string) bool {
	if p == "" || len(p) > 5 || p[0] == '0' || p == def {
		return false
	}
	v := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		v = v*10 + int(p[i]-'0')
	}
	return v <= 65535
}

// cleanChars reports whether s holds only characters that the URL parser
// neither percent-encodes nor removes in a path (query: also "?"), and
// "%" only before two hex digits.
func cleanChars(s string, query bool) bool {
	want := cleanInPath
	if query {
		want = cleanInQuery
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if cleanClass[c]&want != 0 {
			continue
		}
		if c != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return false
		}
	}
	return true
}

// cleanClass says, for each byte, where cleanChars takes it as it is:
// in a path (cleanInPath), in a query or fragment (cleanInQuery). ASCII
// letters and digits and "-._~!$&()*+,;=:@/" are taken in both, "'" in a
// path only (the parser percent-encodes it in the query of http(s)), "?"
// in a query or fragment only.
var cleanClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			strings.IndexByte("-._~!$&()*+,;=:@/", byte(c)) >= 0:
			t[c] = cleanInPath | cleanInQuery
		case c == '\'':
			t[c] = cleanInPath
		case c == '?':
			t[c] = cleanInQuery
		}
	}
	return t
}()

const (
	cleanInPath uint8 = 1 << iota
	cleanInQuery
)

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// plainSegments reports whether no segment of path is one the parser
// resolves ("." or "..", also percent-encoded: no "%2e" anywhere).
func plainSegments(path string) bool {
	start := 0
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '/':
			if seg := path[start:i]; seg == "." || seg == ".." {
				return false
			}
			start = i + 1
		case '%':
			if i+2 < len(path) && path[i+1] == '2' && path[i+2]|0x20 == 'e' {
				return false
			}
		}
	}
	seg := path[start:]
	return seg != "." && seg != ".."
}
