package urls

import (
	"net/url"
	"strings"

	wurl "github.com/nlnwa/whatwg-url/url"
)

// URL is a URL as linkrot carries it: parsed once by the WHATWG URL
// parser (see urlParser), and never re-parsed by another one.
//
// It holds three views of one parse:
//   - Unfragmented, the serialisation without the fragment: the URL that
//     is fetched, and with the password redacted (Key, NormalizeURL's
//     result) the form under which targets are deduplicated and stored;
//   - Fragment, split off before anything else: it never reaches a
//     request, and a URL is never invalid because of its fragment
//     (browsers do not send it; "#%_sec_6.2" is a fine fragment);
//   - RequestURI and RequestURL, the request target exactly as a browser
//     sends it for the same href: the path and query as the parser
//     serialised them, "%" not followed by two hex digits kept as "%".
//
// net/url cannot hold every such URL in its Path and RawPath ("/a%zz" does
// not parse). NetURL returns a *url.URL
// whose String is Unfragmented for any URL; RequestURL returns one whose
// RequestURI is RequestURI, which is what net/http sends.
//
// The zero URL is not a URL (IsZero).
type URL struct {
	href    string // serialisation without the fragment
	frag    string
	hasFrag bool
	scheme  string
	user    string // username as serialised
	pass    string // password as serialised ("" none)
	host    string // host as serialised (IPv6 in brackets), "" none
	port    string // "" for none or the scheme's default
	path    int    // index in href where the path starts
	query   int    // index in href of the "?" that starts the query, -1 none
}

// urlOf returns the URL of a parser result.
func urlOf(w *wurl.Url) URL {
	href := w.Href(true)
	u := URL{href: href, scheme: w.Scheme(), user: w.Username(), pass: w.Password(),
		host: w.Hostname(), port: w.Port(), query: -1}
	if full := w.Href(false); len(full) > len(href) {
		u.frag, u.hasFrag = full[len(href)+1:], true
	}
	// No part before the query holds a "?": the path, userinfo and host
	// percent-encode or forbid it.
	end := len(href)
	if i := strings.IndexByte(href, '?'); i >= 0 {
		u.query, end = i, i
	}
	u.path = end - len(w.Pathname())
	return u
}

// IsZero reports whether u is the zero URL (no URL).
func (u URL) IsZero() bool { return u.href == "" }

// String returns the serialisation of u with its fragment (Href).
func (u URL) String() string { return u.Href() }

// Href returns the serialisation of u with its fragment: the WHATWG href.
func (u URL) Href() string {
	if !u.hasFrag {
		return u.href
	}
	return u.href + "#" + u.frag
}

// Unfragmented returns the serialisation of u without its fragment,
// password included (Key redacts it).
func (u URL) Unfragmented() string { return u.href }

// Key returns Unfragmented with the password redacted: NormalizeURL's
// result, under which targets are deduplicated and stored.
func (u URL) Key() string { return redactHref(u.href) }

// Fragment returns the fragment as serialised (without "#") and whether
// there is one ("#" alone is an empty fragment).
func (u URL) Fragment() (string, bool) { return u.frag, u.hasFrag }

// WithoutFragment returns u without its fragment.
func (u URL) WithoutFragment() URL {
	u.frag, u.hasFrag = "", false
	return u
}

// Scheme returns the scheme, in lower case.
func (u URL) Scheme() string { return u.scheme }

// Hostname returns the host without port, and without the brackets of an
// IPv6 address (as net/url's Hostname), "" when there is none.
func (u URL) Hostname() string { return strings.TrimSuffix(strings.TrimPrefix(u.host, "["), "]") }

// Host returns host[:port] as serialised (a default port is never
// written), "" when there is none.
func (u URL) Host() string {
	if u.port == "" {
		return u.host
	}
	return u.host + ":" + u.port
}

// Port returns the port, "" when it is absent or the scheme's default.
func (u URL) Port() string { return u.port }

// Username returns the user name as serialised.
func (u URL) Username() string { return u.user }

// Password returns the password as serialised and whether there is one.
func (u URL) Password() (string, bool) { return u.pass, u.pass != "" }

// Path returns the path as serialised (percent-encoded).
func (u URL) Path() string {
	if u.query >= 0 {
		return u.href[u.path:u.query]
	}
	return u.href[u.path:]
}

// RawQuery returns the query as serialised (without "?") and whether there
// is one ("?" alone is an empty query).
func (u URL) RawQuery() (string, bool) {
	if u.query < 0 {
		return "", false
	}
	return u.href[u.query+1:], true
}

// RequestURI returns the request target a browser sends for u in origin
// form: the path and query as serialised ("/" for an empty path).
func (u URL) RequestURI() string {
	if s := u.href[u.path:]; s != "" && s[0] == '/' {
		return s
	}
	return "/" + u.href[u.path:]
}

// NetURL returns u, without its fragment, as a *url.URL whose String is
// u.Unfragmented(), and whose Scheme, User, Host, Hostname and Port are u's,
// for code that carries net/url values. When net/url parses the
// serialisation back to itself, that is the result. Otherwise (a "%" not
// before two hex digits in the path, "[" in a path, ...) the authority and
// path are held in Opaque ("//host/a%zz"), which net/url writes back
// verbatim, and Path holds the path with its valid escapes decoded, for
// code that matches paths (robots.txt rules, trap guards); the request is
// built by RequestURL, never from such a value directly.
func (u URL) NetURL() *url.URL {
	if u.href == "" {
		return &url.URL{}
	}
	if n, err := url.Parse(u.href); err == nil && n.String() == u.href && n.Host == u.Host() {
		return n
	}
	end := len(u.href)
	n := &url.URL{Scheme: u.scheme, Host: u.Host()}
	if q, ok := u.RawQuery(); ok {
		end = u.query
		n.RawQuery, n.ForceQuery = q, q == ""
	}
	n.Opaque = u.href[len(u.scheme)+1 : end]
	if u.user != "" || u.pass != "" {
		user, _ := url.PathUnescape(u.user)
		if u.pass != "" {
			pass, _ := url.PathUnescape(u.pass)
			n.User = url.UserPassword(user, pass)
		} else {
			n.User = url.User(user)
		}
	}
	n.Path = lenientUnescape(u.Path())
	return n
}

// RequestURL returns the URL to give net/http for fetching u: without
// userinfo and fragment, such that its RequestURI (what net/http writes in
// the request line) is u.RequestURI(). When NetURL cannot carry the path,
// the path is held in Opaque, which net/http sends verbatim; a path that
// starts with "//" cannot be held that way (net/http would read it as an
// authority) and is then sent in absolute form ("http://host//a%zz"), which
// every HTTP/1.1 server must accept as the same target (RFC 9112, 3.2.2).
func (u URL) RequestURL() *url.URL {
	n := u.NetURL()
	n.User = nil
	if n.Opaque == "" {
		return n
	}
	p := u.Path() // n.Path stays NetURL's, for code that matches paths
	if strings.HasPrefix(p, "//") || !strings.HasPrefix(p, "/") {
		n.Opaque = "//" + u.Host() + p
	} else {
		n.Opaque = p
	}
	return n
}

// RequestURL returns the URL to give net/http for fetching u, which came
// from URL.NetURL or url.Parse: URL.RequestURL when u holds its path in
// Opaque (see NetURL), else u without userinfo and fragment.
func RequestURL(u *url.URL) *url.URL {
	if u == nil {
		return nil
	}
	if strings.HasPrefix(u.Opaque, "//") {
		if p, err := ParseURL(u.String()); err == nil {
			return p.RequestURL() // u has no fragment: NetURL does not write one
		}
	}
	c := *u
	c.User, c.Fragment, c.RawFragment = nil, "", ""
	return &c
}

// lenientUnescape decodes the valid percent-escapes of s and keeps the
// rest as written.
func lenientUnescape(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// TargetKey returns the key of the target a link's href names: the
// normalized URL without its fragment, credentials redacted (URL.Key).
// ok is false when href names no target: empty or blank, or not an
// absolute URL the WHATWG parser accepts. The pipeline's router and the
// store both map links to targets with it, so a link always finds the
// target the store gave it.
func TargetKey(href string) (key string, u URL, ok bool) {
	if strings.TrimSpace(href) == "" {
		return "", URL{}, false
	}
	p, err := ParseURL(href)
	if err != nil {
		return "", URL{}, false
	}
	return p.Key(), p, true
}
