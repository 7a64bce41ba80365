package urls

// A hand-written parser for the HTTP Link header field (RFC 8288) and for
// application/link-format documents (RFC 6690), the serialisation of Memento
// TimeMaps (RFC 7089 §5).
//
// Why hand-written:
//
//   - The standard library has no Link header parser (net/http only splits
//     header lines; mime.ParseMediaType handles one value with parameters,
//     not a comma-separated list of <target>; params).
//   - Link headers are the heart of linkrot's Memento and identifier
//     handling: rel="original"/"timegate"/"timemap"/"memento" navigation,
//     TimeMaps, rel="identifier" and rel="cite-as". A lost link is a wrong
//     audit result, so the parser must be exact and must say what it skipped.
//   - The popular Go packages split the field on "," (and often on ";")
//     before looking at quotes, which breaks on every Memento link, because
//     datetimes are quoted RFC 1123 dates with a comma in them:
//     datetime="Tue, 11 Sep 2001 20:36:26 GMT". tomnomnom/linkheader and
//     peterhellberg/link do this (peterhellberg/link#2 reports a panic on
//     exactly such a Memento header). Commas are also legal inside the target
//     (<http://ex.org/a,b>). tent/http-link-go tokenises correctly, but it is
//     an old RFC 5988 parser (Debian packages a 2013 snapshot) that rejects
//     the whole field on the first error, keeps rel as one string, rejects
//     valueless parameters and has no RFC 8187 support. RFC 8288's own
//     Appendix B algorithm also stops at the first malformed link.
//
// This parser is one forward pass over the input. Quoted strings (with
// backslash escapes) and <targets> are recognised before any delimiter is
// interpreted. A malformed link is skipped: the parser resynchronises at the
// next top-level comma (or at a "<" that starts a new line, which is how
// TimeMaps are laid out), records a *linkHeaderError and keeps going, so every
// well-formed link is still returned. Work is linear in the input size,
// including on hostile input (see scanQuoted), and the number of recorded
// errors is capped.

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// WebLink is one link of an HTTP Link header field (RFC 8288) or of an
// application/link-format document (RFC 6690, TimeMaps).
type WebLink struct {
	// URI is the target as written between < and > (not resolved; leading
	// and trailing spaces removed). It never contains '<', '>' or control
	// characters.
	URI string
	// Rel holds the relation types: the rel parameter split on whitespace,
	// lower-cased for registered (non-URI) types, order kept, duplicates
	// (compared case-insensitively) removed. Nil when the link has no rel.
	Rel []string
	// Params holds the other parameters, keys lower-cased. The first
	// occurrence of a parameter wins (RFC 8288 3.3/3.4). Values are unquoted
	// and unescaped; token parameters with no value map to "". A parameter
	// whose name ends in "*" (title*) carries an RFC 8187 ext-value and is
	// stored decoded (UTF-8), under its own name, language tag dropped.
	// Nil when the link has no parameters other than rel.
	Params map[string]string
}

// HasRel reports whether rel is one of the link's relation types. The
// comparison is case-insensitive (ASCII), as RFC 8288 §2.1 requires for
// both registered and extension relation types.
func (l WebLink) HasRel(rel string) bool {
	for _, r := range l.Rel {
		if asciiEqualFold(r, rel) {
			return true
		}
	}
	return false
}

// String serialises the link as one link-value: the target in angle
// brackets, rel first, then the other parameters sorted by name. Values are
// always quoted (with '"' and '\' escaped), except names ending in "*",
// which are written as RFC 8187 ext-values (charset UTF-8, no language, the
// value percent-encoded). A parameter with an empty value is written as a
// bare name. Control characters, '<' and '>' in URI are percent-encoded.
// ParseLinkHeader reads the output back to an equal WebLink for every link
// it returned; join several links with ", ".
func (l WebLink) String() string {
	var b strings.Builder
	b.WriteByte('<')
	for i := 0; i < len(l.URI); i++ {
		c := l.URI[i]
		if c == '<' || c == '>' || isCTL(c) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('>')
	if len(l.Rel) > 0 {
		b.WriteString("; rel=")
		writeQuoted(&b, strings.Join(l.Rel, " "))
	}
	keys := make([]string, 0, len(l.Params))
	for k := range l.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := l.Params[k]
		b.WriteString("; ")
		b.WriteString(k)
		switch {
		case v == "":
		case strings.HasSuffix(k, "*"):
			b.WriteString("=UTF-8''")
			writeExtValueChars(&b, v)
		default:
			b.WriteByte('=')
			writeQuoted(&b, v)
		}
	}
	return b.String()
}

// linkHeaderError describes one malformed part of a Link field value.
type linkHeaderError struct {
	// Offset is the byte offset of the problem in the field values joined
	// with ", " (the combined field value of RFC 9110 §5.3); for a single
	// field it is the offset in that field.
	Offset int
	// Excerpt is up to 40 bytes of the input starting at Offset.
	Excerpt string
	// Reason says what is wrong.
	Reason string
}

func (e *linkHeaderError) Error() string {
	if e.Excerpt == "" {
		return fmt.Sprintf("link header: offset %d: %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("link header: offset %d: %s: %q", e.Offset, e.Reason, e.Excerpt)
}

const (
	// maxLinkHeaderErrors caps the *linkHeaderError values kept by one
	// ParseLinkHeader call; further problems are counted in one summary
	// error, so that a huge garbage header cannot make a huge error.
	maxLinkHeaderErrors = 20
	linkExcerptLen      = 40
)

// ParseLinkHeader parses one or more Link field values (several fields,
// several links per field), or the body of an application/link-format
// document. It never panics. Malformed links are skipped and reported in the
// returned error (an errors.Join of *linkHeaderError values with the offset
// and a quoted excerpt) while every well-formed link is still returned, in
// order. Besides skipped links, the error also reports problems that cost no
// link: a missing comma between two links (both are returned) and an invalid
// RFC 8187 ext-value (the parameter is dropped, the link kept). Empty list
// elements (",,", a trailing comma) and a trailing ";" are accepted silently.
// The result is nil when there are no links. Work is linear in the input.
func ParseLinkHeader(fields ...string) ([]WebLink, error) {
	var p linkParser
	var links []WebLink
	base := 0
	for _, f := range fields {
		p.s, p.i, p.base = f, 0, base
		p.openFrom, p.openTo = -1, -1
		links = p.parseField(links)
		base += len(f) + len(", ")
	}
	return links, p.err()
}

// ResolveLinks returns copies of links (Rel and Params copied too) with URI
// resolved against base when it is a relative reference, by the WHATWG URL
// parser (see Resolver; the same rules as an href, so a reference with a
// tab, a newline or backslashes resolves as a browser would resolve it).
// Absolute targets, and targets that do not resolve, are kept byte for
// byte. A nil base returns plain copies.
func ResolveLinks(base *url.URL, links []WebLink) []WebLink {
	if links == nil {
		return nil
	}
	var res Resolver
	hasBase := false
	if base != nil {
		// The target's fragment never comes from the base (RFC 3986
		// 5.2.2; the WHATWG parser agrees).
		c := *base
		c.Fragment, c.RawFragment = "", ""
		if r, err := NewResolver(c.String()); err == nil {
			res, hasBase = r, true
		}
	}
	out := make([]WebLink, len(links))
	for i, l := range links {
		c := WebLink{URI: l.URI, Rel: slices.Clone(l.Rel)}
		if l.Params != nil {
			c.Params = make(map[string]string, len(l.Params))
			for k, v := range l.Params {
				c.Params[k] = v
			}
		}
		if hasBase {
			if _, err := ParseURL(l.URI); err != nil {
				if u, _, err := res.Resolve(l.URI); err == nil {
					c.URI = u.String()
				}
			}
		}
		out[i] = c
	}
	return out
}

// linkParser holds the state of one ParseLinkHeader call.
type linkParser struct {
	s    string // current field value
	i    int    // read position in s
	base int    // offset of s in the combined field value

	errs       []error
	more       int // problems beyond maxLinkHeaderErrors
	moreOffset int

	// A quoted string opened at an index in (openFrom, openTo) is known to be
	// unterminated and to break off at openTo (see scanQuoted).
	openFrom, openTo int
}

func (p *linkParser) fail(off int, reason string) {
	if len(p.errs) < maxLinkHeaderErrors {
		p.errs = append(p.errs, &linkHeaderError{Offset: p.base + off, Excerpt: excerpt(p.s, off), Reason: reason})
		return
	}
	if p.more == 0 {
		p.moreOffset = p.base + off
	}
	p.more++
}

func (p *linkParser) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	errs := p.errs
	if p.more > 0 {
		errs = append(errs, &linkHeaderError{Offset: p.moreOffset, Reason: fmt.Sprintf("%d more problems not listed", p.more)})
	}
	return errors.Join(errs...)
}

func excerpt(s string, off int) string {
	if off >= len(s) {
		return ""
	}
	end := min(len(s), off+linkExcerptLen)
	for end < len(s) && end > off+1 && !utf8.RuneStart(s[end]) {
		end--
	}
	return strings.Clone(s[off:end])
}

// skipSpace skips SP, HTAB, CR and LF: OWS, plus the line breaks that
// TimeMaps put between (and inside) link-values.
func (p *linkParser) skipSpace() {
	for p.i < len(p.s) && isLinkSpace(p.s[p.i]) {
		p.i++
	}
}

// parseField appends the links of p.s to links.
func (p *linkParser) parseField(links []WebLink) []WebLink {
	for {
		// Empty list elements are allowed (RFC 9110 §5.6.1).
		for p.i < len(p.s) && (isLinkSpace(p.s[p.i]) || p.s[p.i] == ',') {
			p.i++
		}
		if p.i >= len(p.s) {
			return links
		}
		if p.s[p.i] != '<' {
			p.fail(p.i, "expected '<' at the start of a link")
			p.recover(p.i)
			continue
		}
		if l, ok := p.parseLink(); ok {
			links = append(links, l)
		}
	}
}

// parseLink parses one link-value at p.s[p.i] == '<'. On success p.i is at the
// end of input, at the ',' that ends the link or at the '<' of a link that
// follows without a comma. On failure the problem is recorded and p.i is at a
// resynchronisation point.
func (p *linkParser) parseLink() (WebLink, bool) {
	start := p.i
	j := start + 1
	for j < len(p.s) && p.s[j] != '>' && p.s[j] != '<' && !isCTL(p.s[j]) {
		j++
	}
	if j >= len(p.s) || p.s[j] != '>' {
		p.fail(start, "missing '>' after link target")
		if j < len(p.s) && p.s[j] == '<' {
			p.i = j
		} else {
			p.recover(j)
		}
		return WebLink{}, false
	}
	l := WebLink{URI: strings.Trim(p.s[start+1:j], " ")}
	p.i = j + 1
	relSeen := false
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			return l, true
		}
		switch p.s[p.i] {
		case ',':
			return l, true
		case '<':
			p.fail(p.i, "missing ',' between links")
			return l, true
		case ';':
			p.i++
			if !p.parseParam(&l, &relSeen) {
				return WebLink{}, false
			}
		default:
			p.fail(p.i, "unexpected character after link, expected ';' or ','")
			p.recover(p.i)
			return WebLink{}, false
		}
	}
}

// parseParam parses one link-param after its ';' into l. It reports false
// when the link is malformed (the problem is then recorded and p.i moved to
// a resynchronisation point).
func (p *linkParser) parseParam(l *WebLink, relSeen *bool) bool {
	p.skipSpace()
	ns := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	name := p.s[ns:p.i]
	if name == "" {
		if p.i >= len(p.s) || p.s[p.i] == ';' || p.s[p.i] == ',' || p.s[p.i] == '<' {
			return true // empty parameter: "<a>;" or "<a>; ;"
		}
		p.fail(p.i, "invalid parameter name")
		p.recover(p.i)
		return false
	}
	p.skipSpace()
	value, hasValue, vs := "", false, p.i
	if p.i < len(p.s) && p.s[p.i] == '=' {
		p.i++
		p.skipSpace()
		hasValue, vs = true, p.i
		if p.i < len(p.s) && p.s[p.i] == '"' {
			v, end, ok := p.scanQuoted(p.i, true)
			if !ok {
				p.fail(vs, "unterminated quoted string")
				// Take the quote as a stray character and resynchronise after
				// it, so that "<a>; title=\"oops, <b>" still yields <b>.
				p.recover(vs + 1)
				return false
			}
			value, p.i = v, end
		} else {
			for p.i < len(p.s) && isLinkValueChar(p.s[p.i]) {
				p.i++
			}
			value = p.s[vs:p.i]
		}
	}
	key := asciiLower(name)
	if hasValue && strings.HasSuffix(key, "*") {
		dec, err := decodeExtValue(value)
		if err != nil {
			p.fail(vs, fmt.Sprintf("parameter %s dropped: %v", key, err))
			return true
		}
		value = dec
	}
	if key == "rel" {
		if !*relSeen {
			*relSeen = true
			l.Rel = splitRel(value)
		}
		return true
	}
	if _, dup := l.Params[key]; !dup {
		if l.Params == nil {
			l.Params = make(map[string]string)
		}
		l.Params[key] = value
	}
	return true
}

// scanQuoted scans the quoted-string whose opening DQUOTE is at p.s[q]. It
// returns the unescaped content (when want is set) and the index after the
// closing DQUOTE. ok is false when the string is unterminated: it reaches the
// end of input or a control character other than HTAB (a quoted string
// cannot span lines) first; end is then where it broke off.
//
// Linear time: recovery treats the opening quote of an unterminated string as
// a stray character and goes on scanning after it, so a later quote inside
// the same stretch could be scanned again, and again (quadratic on input such
// as `"\"\"\"\"...`). But every DQUOTE inside the stretch is escaped, so
// a quoted string opened there runs in step with the first one and breaks off
// at the same place: that is remembered in openFrom/openTo and answered
// without scanning.
func (p *linkParser) scanQuoted(q int, want bool) (val string, end int, ok bool) {
	if q > p.openFrom && q < p.openTo {
		return "", p.openTo, false
	}
	escaped := false
	j := q + 1
	for ; j < len(p.s); j++ {
		c := p.s[j]
		if c == '"' {
			switch {
			case !want:
				return "", j + 1, true
			case !escaped:
				return p.s[q+1 : j], j + 1, true
			default:
				return unescapeQuoted(p.s[q+1 : j]), j + 1, true
			}
		}
		if c == '\\' {
			if j+1 >= len(p.s) || (isCTL(p.s[j+1]) && p.s[j+1] != '\t') {
				break
			}
			escaped = true
			j++
			continue
		}
		if isCTL(c) && c != '\t' {
			break
		}
	}
	p.openFrom, p.openTo = q, j
	return "", j, false
}

// unescapeQuoted removes the backslashes of the quoted-pairs in s, the
// content of a well-formed quoted-string.
func unescapeQuoted(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b = append(b, s[i])
	}
	return string(b)
}

// recover moves p.i to the next resynchronisation point at or after from:
// the next ',' outside quoted strings, a '<' that is the first non-blank
// character of a line, or the end of input.
func (p *linkParser) recover(from int) {
	lineStart := false
	for j := from; j < len(p.s); {
		switch c := p.s[j]; {
		case c == ',':
			p.i = j
			return
		case c == '\r' || c == '\n':
			lineStart = true
		case c == ' ' || c == '\t':
		case c == '<' && lineStart:
			p.i = j
			return
		case c == '"':
			lineStart = false
			if _, end, ok := p.scanQuoted(j, false); ok {
				j = end
				continue
			}
		default:
			lineStart = false
		}
		j++
	}
	p.i = len(p.s)
}

// splitRel splits a rel value into relation types (see WebLink.Rel).
func splitRel(v string) []string {
	var rels []string
	var seen map[string]struct{} // for long lists, to stay linear
	for len(v) > 0 {
		k := 0
		for k < len(v) && isLinkSpace(v[k]) {
			k++
		}
		e := k
		for e < len(v) && !isLinkSpace(v[e]) {
			e++
		}
		t := v[k:e]
		v = v[e:]
		if t == "" {
			continue
		}
		if !strings.Contains(t, ":") {
			// A registered type; extension types are URIs and keep their
			// spelling (they compare case-insensitively anyway).
			t = asciiLower(t)
		}
		if seen == nil && len(rels) >= 8 {
			seen = make(map[string]struct{}, 2*len(rels))
			for _, r := range rels {
				seen[asciiLower(r)] = struct{}{}
			}
		}
		if seen != nil {
			key := asciiLower(t)
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
		} else if slices.ContainsFunc(rels, func(r string) bool { return asciiEqualFold(r, t) }) {
			continue
		}
		rels = append(rels, t)
	}
	return rels
}

// decodeExtValue decodes an RFC 8187 ext-value (charset "'" [language] "'"
// value-chars) to UTF-8. UTF-8 and ISO-8859-1 are supported, as RFC 8187
// requires; other charsets are an error.
func decodeExtValue(v string) (string, error) {
	charset, rest, ok := strings.Cut(v, "'")
	if !ok {
		return "", errors.New("RFC 8187 value without charset")
	}
	_, enc, ok := strings.Cut(rest, "'")
	if !ok {
		return "", errors.New("RFC 8187 value without language delimiter")
	}
	buf := make([]byte, 0, len(enc))
	for i := 0; i < len(enc); i++ {
		c := enc[i]
		switch {
		case c == '%':
			if i+2 >= len(enc) || unhexDigit(enc[i+1]) < 0 || unhexDigit(enc[i+2]) < 0 {
				return "", errors.New("RFC 8187 value with invalid percent-encoding")
			}
			buf = append(buf, byte(unhexDigit(enc[i+1])<<4|unhexDigit(enc[i+2])))
			i += 2
		case isAttrChar(c):
			buf = append(buf, c)
		default:
			return "", fmt.Errorf("RFC 8187 value with invalid character %q", c)
		}
	}
	switch {
	case asciiEqualFold(charset, "UTF-8"):
		if !utf8.Valid(buf) {
			return "", errors.New("RFC 8187 value is not valid UTF-8")
		}
		return string(buf), nil
	case asciiEqualFold(charset, "ISO-8859-1"):
		r := make([]rune, len(buf))
		for i, c := range buf {
			r[i] = rune(c)
		}
		return string(r), nil
	default:
		return "", fmt.Errorf("RFC 8187 value in unsupported charset %q", charset)
	}
}

func writeQuoted(b *strings.Builder, v string) {
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if v[i] == '"' || v[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
}

func writeExtValueChars(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; isAttrChar(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(b, "%%%02X", c)
		}
	}
}

func isLinkSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isCTL(c byte) bool { return c < 0x20 || c == 0x7f }

// isTchar reports whether c may appear in an RFC 9110 token.
func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// isLinkValueChar reports whether c may appear in an unquoted parameter
// value. This is wider than token, because unquoted media types
// (type=text/html) and URIs (anchor=http://...) occur in the wild.
func isLinkValueChar(c byte) bool {
	return c > ' ' && c != 0x7f && c != '"' && c != ',' && c != ';' && c != '<' && c != '>'
}

// isAttrChar reports whether c is an RFC 8187 attr-char.
func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

func unhexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
