package extract

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
)

// Diagnostic codes. They are stable, kebab-case identifiers stored in
// audit.Diagnostic.Code; reports group and count diagnostics by them, so a
// code is never renamed once released. Codes whose name starts with
// "invalid-" mean that a value (or part of it) was rejected and dropped;
// "lenient-" codes mean that a value breaks its grammar but was understood
// and kept.
const (
	// CodeInvalidDatetime: a datetime (data-versiondate, a datetime inside
	// data-versionurl or mset) matches none of the accepted forms or names an
	// impossible instant (2024-02-30, hour 24, ...). The datetime is dropped.
	CodeInvalidDatetime = "invalid-datetime"
	// CodeLenientDatetime: a datetime breaks the grammar of its attribute in
	// an obvious, unambiguous way (20241121T162207Z, a numeric offset, a
	// missing "Z", fractional seconds, surrounding whitespace, ...) and was
	// accepted. The message names the form the grammar expects.
	CodeLenientDatetime = "lenient-datetime"
	// CodeLeapSecond: a datetime has second 60 at 23:59:60 UTC, a leap
	// second (RFC 3339 5.7). It is valid: the raw value is kept and the
	// instant is recorded as the next second, 00:00:00 UTC of the next day,
	// with the leap_second flag set (see ParseVersionDate).
	CodeLeapSecond = "leap-second"
	// CodeRelativeURL: a URL that must be absolute (a data-versionurl
	// snapshot URI, robust-links 3.4) is relative; it was resolved against
	// the page's base URL. An mset copy link may be relative (HTML's
	// "valid non-empty URL") and gets no such diagnostic.
	CodeRelativeURL = "relative-url"
	// CodeInvalidURL: a URL cannot be parsed, lacks the host its scheme
	// needs, contains markup characters, or is relative with no base to
	// resolve it against. The URL is dropped.
	CodeInvalidURL = "invalid-url"
	// CodeUnexpectedScheme: a snapshot URI or copy link uses a scheme other
	// than http, https, pwid or urn:pwid. It is kept.
	CodeUnexpectedScheme = "unexpected-scheme"
	// CodeDatetimeWithoutURI: a datetime in data-versionurl has no snapshot
	// URI before it (for example it is the first token). It is dropped.
	CodeDatetimeWithoutURI = "datetime-without-uri"
	// CodeExtraDatetime: a second datetime follows a snapshot URI in
	// data-versionurl (only one is allowed; the second is dropped).
	CodeExtraDatetime = "extra-datetime"
	// CodeEmptyValue: an attribute is present but empty or only whitespace.
	CodeEmptyValue = "empty-value"
	// CodeEmptyCandidate: an mset reference candidate is empty, e.g. after a
	// trailing or doubled comma.
	CodeEmptyCandidate = "empty-candidate"
	// CodeInvalidCandidate: an mset reference candidate does not follow the
	// candidate grammar (a datetime followed by more tokens, a second
	// datetime or URL in a copy link, tokens after the link type). For a
	// copy link, the parts before the offending token are kept.
	CodeInvalidCandidate = "invalid-candidate"
	// CodeInvalidLinkType: the link type of an mset copy link is not a link
	// type keyword. The copy is kept without a link type.
	CodeInvalidLinkType = "invalid-link-type"
	// CodeInvalidPWID: a pwid: or urn:pwid: URI breaks the pwid grammar
	// beyond repair (missing parts, impossible date, bad archive id).
	CodeInvalidPWID = "invalid-pwid"
	// CodeLenientPWID: a pwid URI breaks its grammar in an understood way
	// (colons in a pwid: time, a ":page:" segment under pwid:, lower-case
	// "z", missing "Z", ...) and was accepted.
	CodeLenientPWID = "lenient-pwid"
	// CodeTooManyValues: an attribute holds more than MaxValues tokens or
	// candidates; the rest was not read.
	CodeTooManyValues = "too-many-values"

	// The codes below are raised by the HTML walker, not by the grammar
	// parsers; they are declared here so that all codes live in one place.

	// CodeMissingOriginalURL: a link has Robust Links attributes but no
	// data-originalurl (REQUIRED, robust-links 3.2); href is used instead.
	CodeMissingOriginalURL = "missing-originalurl"
	// CodeMissingVersionDate: a link has Robust Links attributes but no
	// data-versiondate (REQUIRED, robust-links 3.3).
	CodeMissingVersionDate = "missing-versiondate"
	// CodeMsetWithoutHref: an element has an mset attribute but no href
	// (mset 3.1: the attribute must be omitted then).
	CodeMsetWithoutHref = "mset-without-href"
	// CodeMultipleIdentifiers: a page declares more than one preferred
	// identifier (rel="identifier" / rel="cite-as").
	CodeMultipleIdentifiers = "multiple-identifiers"
	// CodeInvalidLinkHeader: an HTTP Link header field cannot be parsed.
	CodeInvalidLinkHeader = "invalid-link-header"
	// CodeRelativeOriginalURL: data-originalurl is relative (it must be
	// absolute, robust-links 3.2); it was resolved against the base URL.
	CodeRelativeOriginalURL = "relative-originalurl"
	// CodePWIDInHref: an href holds a pwid: or urn:pwid: URI, which browsers
	// cannot follow.
	CodePWIDInHref = "pwid-in-href"
	// CodeLenientURL: a URL was read as browsers read it (WHATWG URL
	// Standard) although it breaks the URL syntax: tab or newline
	// characters removed, "\" read as "/". The resolved URL is kept.
	CodeLenientURL = "lenient-url"
	// CodeCredentialsInURL: a URL holds a password in its userinfo. The
	// password is redacted ("user:***@") wherever the URL is recorded, and
	// the URL is checked without credentials.
	CodeCredentialsInURL = "credentials-in-url"
	// CodeIgnoredBase: a <base href> is ignored: it does not parse, its
	// scheme cannot be fetched (javascript:, data:, mailto:, ...; HTML
	// ignores such a base), or it is not the first <base> with an href
	// (only the first one counts, HTML "frozen base URL"). When the first
	// one is ignored, links resolve against the document URL.
	CodeIgnoredBase = "ignored-base"
	// CodeAnchoredLink: an HTTP Link identifier or cite-as link carries an
	// anchor parameter naming another context (RFC 8288 3.2), so it does
	// not identify the page; it is ignored.
	CodeAnchoredLink = "anchored-link"
)

// MaxValues bounds the work done on one attribute value: at most MaxValues
// tokens of data-versionurl, candidates of mset, or pwid candidates of a
// text are read. Beyond that a CodeTooManyValues diagnostic is raised (by
// the attribute parsers; FindPWIDs just stops).
const MaxValues = 1000

// maxQuoted is the number of characters of a value quoted in a diagnostic
// message, so that hostile megabyte attributes do not produce megabyte
// messages.
const maxQuoted = 120

// newDiag returns a diagnostic whose message is fmt.Sprintf(format, args).
// Values interpolated into the message must go through quoteValue.
func newDiag(field, code, format string, args ...any) audit.Diagnostic {
	return audit.Diagnostic{Field: field, Code: code, Message: fmt.Sprintf(format, args...)}
}

// quoteValue returns s as a Go-syntax quoted string, cut after about
// maxQuoted characters of output (the cut is marked with "…" and the length
// of s). Invalid UTF-8 and non-printable characters are escaped.
func quoteValue(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	n := 0
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			// Printable ASCII stands for itself (strconv would say so
			// after an allocation per character).
			if n+1 > maxQuoted {
				b.WriteString(`"… (`)
				b.WriteString(strconv.Itoa(len(s)))
				b.WriteString(" bytes)")
				return b.String()
			}
			b.WriteByte(c)
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = fmt.Sprintf(`\x%02x`, s[i])
		case r == '"':
			piece = `\"`
		case r == '\'':
			piece = "'"
		default:
			q := strconv.QuoteRune(r)
			piece = q[1 : len(q)-1]
		}
		if n+len(piece) > maxQuoted {
			b.WriteString(`"… (`)
			b.WriteString(strconv.Itoa(len(s)))
			b.WriteString(" bytes)")
			return b.String()
		}
		b.WriteString(piece)
		n += len(piece)
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// isHTMLSpace reports whether c is ASCII whitespace as HTML defines it:
// space, tab, line feed, form feed, carriage return.
func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// trimHTMLSpace removes leading and trailing HTML whitespace.
func trimHTMLSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isHTMLSpace(s[i]) {
		i++
	}
	for j > i && isHTMLSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// span is a token of a value: s[start:end].
type span struct{ start, end int }

// nextToken returns the next whitespace-separated token of s at or after
// offset i, and ok=false when there is none.
func nextToken(s string, i int) (span, bool) {
	for i < len(s) && isHTMLSpace(s[i]) {
		i++
	}
	if i >= len(s) {
		return span{}, false
	}
	j := i
	for j < len(s) && !isHTMLSpace(s[j]) {
		j++
	}
	return span{i, j}, true
}

// hasPrefixFold reports whether s begins with prefix, ignoring ASCII case.
// prefix must be lower-case ASCII.
func hasPrefixFold[T string | []byte](s T, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
