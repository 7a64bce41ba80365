package urls

import (
	"bytes"
	"strings"

	wurl "github.com/nlnwa/whatwg-url/url"
)

// Resolver.Resolve's fast path.
//
// Most links on real pages are plain: an absolute http(s) URL already in
// the form the WHATWG parser writes ("https://example.com/a/b?x=1#f"), a
// reference from the site's root ("/a/b.html?x=1#f"), a reference from the
// page's directory ("b.html", "../x/y.html#f", "./", "?q", "#f"), or one
// without a scheme ("//example.com/a"). For those, the parser's steps
// (trimming, removing tabs and newlines, percent-encoding, host parsing
// and IDNA, validation errors) are all the identity, and what is left is
// the relative-reference steps of the URL Standard: take the base's
// scheme, userinfo, host and port, its path without the last segment (or
// no path for "/..."; the base's path, and its query, for "?..." and
// "#..."), and apply the path state to the reference's segments. resolveFast
// does exactly that, and builds the URL the parser's result makes
// (urlOf) from the parts. A "//host..." reference is the absolute URL with the
// base's scheme: the parser reaches the same state for both.
//
// It declines (ok false, and Resolve runs the parser, unchanged) for
// anything else: a reference longer than 511 bytes; one with any character
// that the parser percent-encodes, removes or reads differently (controls,
// space, tab, newline, "\", `"`, "<", ">", "^", "`", "{", "|", "}",
// non-ASCII, a "'" outside the path, a "#" in the fragment), with a "%"
// not before two hex digits, with a "!" (see below), or with a "%2e" (any
// case) in its path, which may be a dot segment; a first path segment
// with a ":" (a scheme, a Windows drive letter, or neither: the parser
// decides); an absolute URL whose scheme is not "http://" or "https://" in
// lower case, that has userinfo, a "." or ".." segment, or a host or port
// not in canonical form (canonicalHTTPParts); and any relative reference
// when the base is not http or https (file:, mailto:, ws:, ...). Warnings are nil on the fast path: none of
// the parser's validation errors can occur for such input; in particular
// "!", which the parser keeps as it is but reports as "not a URL unit"
// (whatwg-url v0.6.2 leaves it out of its URL code points, the Standard
// does not), is left to the parser, although NormalizeURL's fast path
// (canonicalHTTP, which has no warnings) takes it.
//
// NewResolver, likewise, does not parse a base that canonicalHTTPParts
// takes: its fast path's view comes from the parts, and the parser parses
// the base only when a reference needs it (baseURL).
//
// The differential test (TestResolveFast) and FuzzResolveFast hold both
// to the parser's results: every field of the *url.URL, the warnings and
// the error of Resolve, and the base, error and fastBase of NewResolver.

// fastBase is what resolveFast needs of a Resolver's base, computed once
// by NewResolver.
type fastBase struct {
	// scheme, user, pass and host are those of the base as serialised
	// (host with its port, if any).
	scheme     string
	user, pass string
	host       string
	// path is the base's serialised path, starting with "/"; query is its
	// query (hasQuery false: none).
	path     string
	query    string
	hasQuery bool
}

// newFastBase returns the fast path's view of b, or nil when b is not an
// http or https URL.
func newFastBase(b *wurl.Url) *fastBase {
	if s := b.Scheme(); s != "http" && s != "https" {
		return nil
	}
	p := b.Pathname()
	if b.Hostname() == "" || !strings.HasPrefix(p, "/") {
		return nil
	}
	fb := &fastBase{scheme: b.Scheme(), user: b.Username(), pass: b.Password(), host: b.Host(), path: p}
	if href := b.Href(true); strings.Contains(href, "?") {
		fb.hasQuery = true
		_, fb.query, _ = strings.Cut(href, "?")
	}
	return fb
}

// fastBase returns the fast path's view of the URL of p (for which
// canonicalHTTPParts returned ok): what newFastBase returns for the
// parser's result.
func (p httpParts) fastBase() *fastBase {
	return &fastBase{scheme: p.scheme, host: p.host, path: p.parsedPath(), query: p.query, hasQuery: p.hasQuery}
}

// resolveFast resolves ref against fb (nil: no base, only absolute URLs)
// as the parser and toNetURL would, or returns ok false. See the comment
// at the top of this file for its exact scope.
func resolveFast(fb *fastBase, ref string) (u URL, ok bool) {
	if len(ref) >= 512 {
		return URL{}, false
	}
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		return absoluteFast(ref)
	}
	if fb == nil {
		return URL{}, false
	}
	if strings.HasPrefix(ref, "//") {
		// A reference without a scheme takes the base's: the parser
		// reaches the same state as for the absolute URL ("special
		// authority ignore slashes") with no validation error.
		return absoluteFast(fb.scheme + ":" + ref)
	}
	if strings.IndexByte(ref, '!') >= 0 {
		return URL{}, false // reported by the parser (see the top of this file)
	}
	rest, frag, hasFrag := strings.Cut(ref, "#")
	if hasFrag && !cleanChars(frag, true) { // a second '#' is not clean either
		return URL{}, false
	}
	refPath, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery && !cleanChars(query, true) {
		return URL{}, false
	}
	if !cleanChars(refPath, false) || strings.Contains(refPath, "%2e") || strings.Contains(refPath, "%2E") {
		return URL{}, false
	}
	var path string
	switch {
	case refPath == "":
		// "", "?q", "#f": the base's path; its query unless one is given.
		path = fb.path
		if !hasQuery {
			query, hasQuery = fb.query, fb.hasQuery
		}
	case refPath[0] == '/':
		path = dotSegments("", refPath[1:])
	default:
		if first, _, _ := strings.Cut(refPath, "/"); strings.IndexByte(first, ':') >= 0 {
			return URL{}, false // a scheme, a drive letter, or neither: the parser decides
		}
		path = dotSegments(fb.path[:strings.LastIndexByte(fb.path, '/')], refPath)
	}
	return fastURL(fb.scheme, fb.user, fb.pass, fb.host, path, query, hasQuery, frag, hasFrag), true
}

// absoluteFast returns the URL of an absolute http(s) URL already in
// canonical form (canonicalHTTPParts), or ok false.
func absoluteFast(raw string) (URL, bool) {
	p, ok := canonicalHTTPParts(raw)
	if !ok || strings.IndexByte(raw, '!') >= 0 {
		return URL{}, false // reported by the parser (see the top of this file)
	}
	n, frag, hasFrag := strings.Cut(raw, "#")
	u := URL{href: p.withPath(n), frag: frag, hasFrag: hasFrag, scheme: p.scheme, query: -1}
	u.host, u.port = splitHostPort(p.host)
	u.path = len(p.scheme) + len("://") + len(p.host)
	if p.hasQuery {
		u.query = u.path + len(p.parsedPath())
	}
	return u, true
}

// dotSegments applies the URL parser's path state to the segments of ref
// (a path without "?" and "#") after the serialised path dir ("" or
// "/seg/..."), and returns the serialised result: each segment is
// appended, but ".." removes the last one (if any) and "." is dropped,
// and either of them as the last segment also appends an empty one (so
// that "a/.." is "/" and not "").
func dotSegments(dir, ref string) string {
	if !strings.Contains(ref, ".") {
		// No dot segment: the segments are appended as written.
		return dir + "/" + ref
	}
	b := make([]byte, 0, len(dir)+1+len(ref))
	b = append(b, dir...)
	for {
		seg, rest, more := strings.Cut(ref, "/")
		switch seg {
		case "..":
			if i := bytes.LastIndexByte(b, '/'); i >= 0 {
				b = b[:i]
			}
			if !more {
				b = append(b, '/')
			}
		case ".":
			if !more {
				b = append(b, '/')
			}
		default:
			b = append(b, '/')
			b = append(b, seg...)
		}
		if !more {
			return string(b)
		}
		ref = rest
	}
}

// fastURL returns the URL of scheme "://" [user [":" pass] "@"] host path
// ["?" query] ["#" frag], all of them as the parser serialises them.
func fastURL(scheme, user, pass, host, path, query string, hasQuery bool, frag string, hasFrag bool) URL {
	var b strings.Builder
	b.Grow(len(scheme) + 3 + len(user) + len(pass) + 2 + len(host) + len(path) + 1 + len(query))
	b.WriteString(scheme)
	b.WriteString("://")
	if user != "" || pass != "" {
		b.WriteString(user)
		if pass != "" {
			b.WriteByte(':')
			b.WriteString(pass)
		}
		b.WriteByte('@')
	}
	b.WriteString(host)
	u := URL{scheme: scheme, user: user, pass: pass, frag: frag, hasFrag: hasFrag, path: b.Len(), query: -1}
	u.host, u.port = splitHostPort(host)
	b.WriteString(path)
	if hasQuery {
		u.query = b.Len()
		b.WriteByte('?')
		b.WriteString(query)
	}
	u.href = b.String()
	return u
}

// splitHostPort splits a serialised host[:port] (an IPv6 address in
// brackets).
func splitHostPort(hp string) (host, port string) {
	i := strings.LastIndexByte(hp, ':')
	if i < 0 || strings.IndexByte(hp[i:], ']') >= 0 {
		return hp, ""
	}
	return hp[:i], hp[i+1:]
}
