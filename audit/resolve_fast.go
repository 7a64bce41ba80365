package audit

import (
	"bytes"
	"net/url"
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
// does exactly that, and builds the *url.URL that net/url's Parse makes
// of the result (toNetURL) field by field, with net/url's own rules for
// Path, RawPath, Fragment, RawFragment and ForceQuery, without writing
// the serialisation. A "//host..." reference is the absolute URL with the
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
// when the base is not http or https (file:, mailto:, ws:, ...) or its
// serialisation does not parse with net/url to the same host (toNetURL
// would fail on every result). Warnings are nil on the fast path: none of
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
	// scheme, user and host are those of the base as net/url reads its
	// serialisation; user is shared by the results, which is safe since a
	// *url.Userinfo cannot be changed.
	scheme string
	user   *url.Userinfo
	host   string
	// path is the base's serialised path, starting with "/"; query is its
	// query (hasQuery false: none).
	path     string
	query    string
	hasQuery bool
}

// newFastBase returns the fast path's view of b, or nil when b is not an
// http or https URL that net/url carries with the same host.
func newFastBase(b *wurl.Url) *fastBase {
	if s := b.Scheme(); s != "http" && s != "https" {
		return nil
	}
	u, err := toNetURL(b)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil
	}
	p := b.Pathname()
	if !strings.HasPrefix(p, "/") {
		return nil
	}
	fb := &fastBase{scheme: u.Scheme, user: u.User, host: u.Host, path: p}
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
func resolveFast(fb *fastBase, ref string) (u *url.URL, ok bool) {
	if len(ref) >= 512 {
		return nil, false
	}
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		return absoluteFast(ref)
	}
	if fb == nil {
		return nil, false
	}
	if strings.HasPrefix(ref, "//") {
		// A reference without a scheme takes the base's: the parser
		// reaches the same state as for the absolute URL ("special
		// authority ignore slashes") with no validation error.
		return absoluteFast(fb.scheme + ":" + ref)
	}
	if strings.IndexByte(ref, '!') >= 0 {
		return nil, false // reported by the parser (see the top of this file)
	}
	rest, frag, hasFrag := strings.Cut(ref, "#")
	if hasFrag && !cleanChars(frag, true) { // a second '#' is not clean either
		return nil, false
	}
	refPath, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery && !cleanChars(query, true) {
		return nil, false
	}
	if !cleanChars(refPath, false) || strings.Contains(refPath, "%2e") || strings.Contains(refPath, "%2E") {
		return nil, false
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
			return nil, false // a scheme, a drive letter, or neither: the parser decides
		}
		path = dotSegments(fb.path[:strings.LastIndexByte(fb.path, '/')], refPath)
	}
	return netURL(fb.scheme, fb.user, fb.host, path, query, hasQuery, frag)
}

// absoluteFast returns the *url.URL of an absolute http(s) URL already in
// canonical form (canonicalHTTPParts), or ok false.
func absoluteFast(raw string) (*url.URL, bool) {
	p, ok := canonicalHTTPParts(raw)
	if !ok || strings.IndexByte(raw, '!') >= 0 {
		return nil, false // reported by the parser (see the top of this file)
	}
	return netURL(p.scheme, nil, p.host, p.parsedPath(), p.query, p.hasQuery, p.frag)
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

// netURL returns what url.Parse makes of scheme "://" [user "@"] host path
// ["?" query] ["#" frag] for a path and fragment of cleanChars, with its
// rules for Path and RawPath (setPath), ForceQuery, and Fragment and
// RawFragment (setFragment), or ok false.
func netURL(scheme string, user *url.Userinfo, host, path, query string, hasQuery bool, frag string) (*url.URL, bool) {
	u := &url.URL{Scheme: scheme, User: user, Host: host, RawQuery: query, ForceQuery: hasQuery && query == ""}
	var err error
	if u.Path, err = url.PathUnescape(path); err != nil {
		return nil, false
	}
	if (&url.URL{Path: u.Path}).EscapedPath() != path {
		u.RawPath = path
	}
	if frag != "" {
		if u.Fragment, err = url.PathUnescape(frag); err != nil {
			return nil, false
		}
		if (&url.URL{Fragment: u.Fragment}).EscapedFragment() != frag {
			u.RawFragment = frag
		}
	}
	return u, true
}
