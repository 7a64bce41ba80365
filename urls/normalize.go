package urls

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	wurlerrors "github.com/nlnwa/whatwg-url/errors"
	wurl "github.com/nlnwa/whatwg-url/url"
)

// One URL parser for the whole run.
//
// Every URL linkrot reads from the web (href, <base href>, data-originalurl,
// data-versionurl, mset copy links, <link>, HTTP Link fields, sitemap <loc>,
// redirect Location) is parsed here, by the WHATWG URL Standard's basic URL
// parser, the algorithm browsers use. The checker then fetches exactly the
// URL this parser produced, so what is validated (scheme, host, port, the
// SSRF decision) is what is fetched (pitfalls.md, "URL parser confusion":
// `http://127.0.0.1:6666\@1.1.1.1` is host 127.0.0.1 for WHATWG and
// 1.1.1.1 for RFC 3986 parsers).
//
// Library: github.com/nlnwa/whatwg-url (National Library of Norway, used
// in their Veidemann web archive crawler and already in our module graph
// through colly). Judged against the alternatives:
//   - net/url is RFC 3986 with Go's own leniency: it keeps tabs and
//     newlines (or rejects them), does not read "\" as "/" in http(s)
//     URLs, does no IDNA, no IPv4 number forms (0x7f.1, 2852039166 stay
//     host names that glibc would later resolve), and splits userinfo at
//     the last "@".
//   - github.com/ada-url/goada binds the C++ ada library through cgo;
//     linkrot is a pure-Go build (modernc SQLite), so it is ruled out.
//   - purell and similar normalisers sit on net/url and inherit its
//     parsing.
//   - nlnwa/whatwg-url is pure Go, follows the standard as of May 2023 and
//     passes the web-platform-tests URL suite (its README, its tests read
//     the wpt data); v0.6.2 (2025) is maintained. It removes ASCII tab and
//     newline anywhere and C0 control or space at both ends, reads "\" as
//     "/" in special (http, https, ws, wss, ftp, file) URLs, percent-encodes
//     per component with the standard's sets, maps hosts through UTS #46
//     (IDNA) to Punycode, and parses IPv4 numbers in decimal, octal and
//     hex, with fewer than four parts (0x7f.1 = 127.0.0.1, 2852039166 =
//     169.254.169.254).
//
// linkrot sends, for an href, the request target a browser sends for it
// (TestRequestTargets_Browser in check holds the checker to
// Chromium's): a "%" not followed by two hex digits stays "%" ("/a%zz",
// "#%_sec_6.2"), and the fragment is split off before anything else
// (URL). One departure from whatwg-url v0.6.2's sets is Chromium's: "|"
// and "^" in a path are percent-encoded ("/a%7Cb", "/a%5Eb"; the Standard
// has since added "^" to its path percent-encode set).
var urlParser = wurl.NewParser(
	wurl.WithReportValidationErrors(),
	wurl.WithPathPercentEncodeSet(wurl.PathPercentEncodeSet.Set('|', '^')),
)

// errInvalidURL is matched (errors.Is) by every error of ParseURL,
// Resolver.Resolve and NormalizeURL for input that is not a URL.
var errInvalidURL = errors.New("invalid URL")

// invalidURLError is the error for input that is not a URL. Its message names the
// reason only, never the input (which may hold a password).
type invalidURLError struct {
	// Reason is the WHATWG validation error that made parsing fail.
	Reason string
}

func (e *invalidURLError) Error() string { return e.Reason }

// Is reports whether target is errInvalidURL.
func (e *invalidURLError) Is(target error) bool { return target == errInvalidURL }

// ParseURL parses an absolute URL as browsers do (the WHATWG URL Standard).
// It is Resolver{}.Resolve without a base: a relative reference is an
// error.
func ParseURL(raw string) (URL, error) {
	u, _, err := Resolver{}.Resolve(raw)
	return u, err
}

// Resolver resolves references against one base URL with the WHATWG URL
// parser. The zero value has no base: only absolute URLs parse. A Resolver
// is safe for concurrent use.
type Resolver struct {
	base *baseURL // nil: no base
	// fast is the base as resolveFast reads it (nil: no base, or one the
	// fast path does not resolve against).
	fast *fastBase
}

// baseURL is a Resolver's base URL, parsed when the parser first needs it
// (NewResolver leaves a base already in canonical form unparsed: most
// references are resolved without it).
type baseURL struct {
	raw  string // as given to NewResolver
	href string // its serialisation, when NewResolver did not parse it
	once sync.Once
	w    *wurl.Url
	err  error
}

// parsed returns the base parsed.
func (b *baseURL) parsed() (*wurl.Url, error) {
	b.once.Do(func() {
		if b.w == nil {
			b.w, b.err = urlParser.Parse(b.raw)
		}
	})
	return b.w, b.err
}

// NewResolver returns a Resolver for base, which must be an absolute URL
// (it is parsed by the same rules).
func NewResolver(base string) (Resolver, error) {
	if p, ok := canonicalHTTPParts(base); ok {
		// The parser's serialisation of base is base (with the path "/"
		// if it has none), and parsing it cannot fail.
		return Resolver{base: &baseURL{raw: base, href: p.withPath(base)}, fast: p.fastBase()}, nil
	}
	return newResolver(base)
}

// newResolver is NewResolver through the parser.
func newResolver(base string) (Resolver, error) {
	b, err := urlParser.Parse(base)
	if err != nil {
		return Resolver{}, urlError(err)
	}
	return Resolver{base: &baseURL{raw: base, w: b}, fast: newFastBase(b)}, nil
}

// Base returns the base URL's serialisation ("" for the zero Resolver).
func (r Resolver) Base() string {
	if r.base == nil {
		return ""
	}
	if r.base.href != "" {
		return r.base.href
	}
	w, err := r.base.parsed()
	if err != nil {
		return ""
	}
	return w.Href(false)
}

// Resolve parses ref against the base as browsers do and returns the
// result (see URL; its fragment kept apart). warnings are the validation errors that did not stop
// parsing (a tab or newline removed, "\" read as "/", a space
// percent-encoded, ...), deduplicated, without the input. Userinfo is
// returned as found; see redactURL.
func (r Resolver) Resolve(ref string) (u URL, warnings []string, err error) {
	if u, ok := resolveFast(r.fast, ref); ok {
		return u, nil, nil
	}
	return r.resolve(ref)
}

// resolve is Resolve through the parser (no fast path).
func (r Resolver) resolve(ref string) (u URL, warnings []string, err error) {
	if reason := tooCostly(ref); reason != "" {
		return URL{}, nil, &invalidURLError{Reason: reason}
	}
	var w *wurl.Url
	if r.base != nil {
		b, berr := r.base.parsed()
		if berr != nil {
			return URL{}, nil, urlError(berr) // not reached: NewResolver's base parses
		}
		w, err = b.Parse(ref)
	} else {
		w, err = urlParser.Parse(ref)
	}
	if err != nil {
		return URL{}, nil, urlError(err)
	}
	for _, ve := range w.ValidationErrors() {
		msg := reason(ve)
		dup := false
		for _, s := range warnings {
			dup = dup || s == msg
		}
		if !dup {
			warnings = append(warnings, msg)
		}
	}
	return urlOf(w), warnings, nil
}

func urlError(err error) error {
	return &invalidURLError{Reason: reason(err)}
}

// reason is the text of a WHATWG validation error without the input URL,
// which the library's Error method appends.
func reason(err error) string {
	t := string(wurlerrors.Type(err))
	if t == "" {
		return "invalid URL"
	}
	t = strings.TrimSuffix(t, ".")
	if d := wurlerrors.Description(err); d != "" {
		t += fmt.Sprintf(" (%q)", truncateRunes(d, 40))
	}
	return t
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// NormalizeURL returns the form of a URL under which targets are
// deduplicated, stored and fetched: the WHATWG serialisation (see
// urlParser) of raw parsed without a base, with the fragment removed and
// the userinfo password replaced by "***" (redactURL). That is: scheme and
// host lower-cased, the host in Punycode or as a canonical IP address,
// default ports dropped, an empty path made "/" (http, https, ws, wss, ftp,
// file), dot segments resolved (also "%2E%2E", as browsers do), tab and
// newline removed, surrounding C0 controls and spaces trimmed, characters
// that must be escaped percent-encoded (existing escapes are kept as
// written, "%2F" stays "%2F", and a "%" not before two hex digits stays
// "%"). The query is kept as written but for that encoding (its order can
// be meaningful). The fragment never makes a URL invalid. Non-special URLs (mailto:,
// javascript:, urn:, ...) keep their case and path. A relative reference
// is an error (errInvalidURL). NormalizeURL(NormalizeURL(x)) is
// NormalizeURL(x).
func NormalizeURL(raw string) (string, error) {
	if n, ok := canonicalHTTP(raw); ok {
		return n, nil
	}
	return normalizeURL(raw)
}

// normalizeURL is NormalizeURL through the parser (no fast path).
func normalizeURL(raw string) (string, error) {
	if reason := tooCostly(raw); reason != "" {
		return "", fmt.Errorf("normalize URL: %w", &invalidURLError{Reason: reason})
	}
	w, err := urlParser.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("normalize URL: %w", urlError(err))
	}
	return redactHref(w.Href(true)), nil
}

// ParseURLWarn is ParseURL that also returns the validation warnings (see
// Resolver.Resolve).
func ParseURLWarn(raw string) (URL, []string, error) {
	return Resolver{}.Resolve(raw)
}

// Limits of the URL parser's input. nlnwa/whatwg-url takes time quadratic
// in the number of path segments, in the length of the userinfo and in the
// number of "@" in an authority, so hostile pages could stall
// extraction; URLs beyond these limits are invalid for linkrot (a link
// diagnostic, never a crash or a stall). maxURLLen is RFC 9110's
// recommended minimum a server should support (8000 octets) eight times
// over; a data: URL is exempt (its path is opaque and parsed in linear
// time; inline images are often larger).
const (
	maxURLLen          = 64000
	maxURLPathSlashes  = 1024
	maxURLAuthorityAts = 8
	maxURLAuthorityLen = 1024
)

// tooCostly returns why s is beyond the parser's limits, or "".
func tooCostly(s string) string {
	if len(s) > maxURLLen && !hasDataScheme(s) {
		return fmt.Sprintf("URL of %d bytes is longer than %d", len(s), maxURLLen)
	}
	if len(s) < 512 {
		return "" // cheap whatever it holds
	}
	// Only hierarchical URLs have path segments and an authority: a
	// scheme-less reference, a special scheme, or a scheme followed by
	// "/".
	scheme, rest, hasScheme := strings.Cut(strings.TrimLeft(s, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "), ":")
	if hasScheme && !validScheme(scheme) {
		rest, hasScheme = s, false
	}
	if hasScheme && !isSpecialScheme(strings.ToLower(scheme)) && !strings.HasPrefix(rest, "/") {
		return ""
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if n := strings.Count(rest, "/") + strings.Count(rest, "\\"); n > maxURLPathSlashes {
		return fmt.Sprintf("URL path has %d slashes, more than %d", n, maxURLPathSlashes)
	}
	auth := strings.TrimLeft(rest, "/\\\t\n\r")
	if i := strings.IndexAny(auth, "/\\"); i >= 0 {
		auth = auth[:i]
	}
	if len(auth) > maxURLAuthorityLen {
		return fmt.Sprintf("URL authority of %d bytes is longer than %d", len(auth), maxURLAuthorityLen)
	}
	if n := strings.Count(auth, "@"); n > maxURLAuthorityAts {
		return fmt.Sprintf("URL authority has %d \"@\", more than %d", n, maxURLAuthorityAts)
	}
	return ""
}

func hasDataScheme(s string) bool {
	s = strings.TrimLeft(s, "\t\n\r\f ")
	return len(s) >= 5 && strings.EqualFold(s[:5], "data:")
}

func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.' || c == '\t' || c == '\n' || c == '\r'):
		default:
			return false
		}
	}
	return true
}

func isSpecialScheme(s string) bool {
	switch strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s) {
	case "http", "https", "ws", "wss", "ftp", "file":
		return true
	}
	return false
}
