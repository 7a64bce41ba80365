package extract

import (
	"net/url"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

const fieldVersionURL = "data-versionurl"

// isPWIDRef reports whether s starts with a pwid: or urn:pwid: scheme,
// ignoring case.
func isPWIDRef(s string) bool {
	return hasPrefixFold(s, "pwid:") || hasPrefixFold(s, "urn:pwid:")
}

// markupChars are characters that cannot appear in a URL written in an
// attribute unless markup leaked into it (a missing quote, an unescaped
// tag). The URL parser would percent-encode them; linkrot rejects them.
const markupChars = "<>\""

// resolveRef reads tok, a URL that the grammar of field requires to be
// absolute (a snapshot URI, an mset copy link), and returns the URL to
// record. what names the role in messages ("snapshot URI", "copy link").
// URLs are read by the WHATWG URL parser (urls.Resolver), as hrefs are.
//
//   - pwid: and urn:pwid: URIs are returned verbatim, unvalidated: they are
//     not locators, have no "//", and are parsed separately by ParsePWID.
//   - Absolute URLs are returned in their WHATWG serialisation. http and
//     https URLs must have a host (the parser requires one). The
//     snapshot-URI ABNF asks for path-absolute after the authority, which
//     strictly rejects https://example.org (empty path); RFC 3986 URIs use
//     path-abempty, practice agrees, and nothing is lost, so an empty path
//     is valid.
//   - Other schemes are kept with a CodeUnexpectedScheme diagnostic.
//   - Relative references are resolved against base with a
//     CodeRelativeURL diagnostic, or dropped (CodeInvalidURL) when there is
//     no absolute base.
//   - Unparsable URLs, and URLs holding markup characters (< > "), are
//     dropped with CodeInvalidURL. Tabs, newlines and "\" are read as
//     browsers read them, with a CodeLenientURL diagnostic.
func resolveRef(field, what, tok string, base *url.URL) (string, []audit.Diagnostic, bool) {
	return resolveURL(field, what, tok, base, false)
}

// resolveURL is resolveRef, except that with relativeValid a relative
// reference that resolves against base is valid (no CodeRelativeURL): a
// grammar that asks for any valid URL, as mset's copy links do (HTML's
// "valid non-empty URL"), allows relative ones.
func resolveURL(field, what, tok string, base *url.URL, relativeValid bool) (string, []audit.Diagnostic, bool) {
	if isPWIDRef(tok) {
		return tok, nil, true
	}
	if i := strings.IndexAny(tok, markupChars); i >= 0 {
		return "", []audit.Diagnostic{newDiag(field, CodeInvalidURL,
			"invalid %s %s: it contains %s, which suggests broken markup", what, quoteValue(tok), quoteValue(tok[i:i+1]))}, false
	}
	var diags []audit.Diagnostic
	u, warnings, err := urls.ParseURLWarn(tok)
	if err == nil && fetchable(u.Scheme()) && !hasAuthoritySlashes(tok) {
		// Browsers read "https:foo" as https://foo/; an attribute that
		// must hold an absolute URI (RFC 3986 "//" authority) does not.
		return "", []audit.Diagnostic{newDiag(field, CodeInvalidURL,
			"invalid %s %s: no host (expected scheme://host/path)", what, quoteValue(tok))}, false
	}
	if err != nil {
		res := resolverFor(base)
		if res.Base() == "" || !looksRelative(tok) {
			if res.Base() == "" && looksRelative(tok) {
				return "", []audit.Diagnostic{newDiag(field, CodeInvalidURL,
					"invalid %s %s: a relative URL, and there is no base URL to resolve it against", what, quoteValue(tok))}, false
			}
			return "", []audit.Diagnostic{newDiag(field, CodeInvalidURL,
				"invalid %s %s: not a URL (%s)", what, quoteValue(tok), quoteValue(errText(err)))}, false
		}
		u, warnings, err = res.Resolve(tok)
		if err != nil {
			return "", []audit.Diagnostic{newDiag(field, CodeInvalidURL,
				"invalid %s %s: a relative URL that does not resolve to a valid absolute URL (%s)", what, quoteValue(tok), quoteValue(errText(err)))}, false
		}
		if !relativeValid {
			diags = append(diags, newDiag(field, CodeRelativeURL,
				"relative %s %s must be absolute (robust-links 3.4: URIs must be absolute, not relative); resolved to %s", what, quoteValue(tok), quoteValue(u.String())))
		}
	}
	diags = append(diags, urlDiags(field, tok, u, warnings)...)
	if !fetchable(u.Scheme()) {
		diags = append(diags, newDiag(field, CodeUnexpectedScheme,
			"%s %s has scheme %s; expected http, https or pwid", what, quoteValue(tok), quoteValue(u.Scheme())))
	}
	return u.String(), diags, true
}

// hasAuthoritySlashes reports whether the scheme of s (an absolute URL) is
// followed by two slashes (or backslashes), tabs and newlines aside.
func hasAuthoritySlashes(s string) bool {
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return false
	}
	n := 0
	for _, c := range []byte(s[i+1:]) {
		switch c {
		case '\t', '\n', '\r':
			continue
		case '/', '\\':
			n++
			if n == 2 {
				return true
			}
			continue
		}
		break
	}
	return false
}

// looksRelative reports whether s has no scheme (WHATWG: an ASCII alpha
// followed by alphanumerics, "+", "-" or "." and then ":").
func looksRelative(s string) bool {
	s = strings.TrimLeft(s, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == '\t' || c == '\n' || c == '\r':
		case c == ':' && i > 0:
			return false
		default:
			return true
		}
	}
	return true
}

// ParseVersionURL parses a data-versionurl value (Robust Links ABNF 6.2): a
// list of snapshot URIs, each optionally followed by one datetime
// (ParseVersionDate forms) that belongs to the URI before it. Tokens are
// separated by any HTML whitespace; runs of whitespace and newlines, as in
// the spec's own multi-line examples, are tolerated without diagnostics.
//
// A token starting with a digit is a datetime; any other token is a URI.
// Date-only datetimes are noon UTC with DateOnly set (robust-links 3.4);
// DatetimeRaw keeps the datetime as written, also when it is invalid (then
// Datetime is zero). URIs are checked as resolveRef describes: relative ones
// are resolved against base, pwid: and urn:pwid: ones are kept verbatim,
// unexpected schemes are kept with a diagnostic, unusable ones are dropped
// (with the datetime that follows them, silently).
//
// A datetime with no URI before it (CodeDatetimeWithoutURI) and a second
// datetime after a URI (CodeExtraDatetime) are dropped, and the rest of the
// list is still read. At most MaxValues tokens are read
// (CodeTooManyValues). An empty value yields CodeEmptyValue and no
// snapshots.
func ParseVersionURL(s string, base *url.URL) ([]audit.Snapshot, []audit.Diagnostic) {
	var snaps []audit.Snapshot
	var diags []audit.Diagnostic
	const (
		none    = -1 // no URI yet
		dropped = -2 // the last URI was dropped
	)
	cur := none       // index in snaps of the URI owning the next datetime
	curHasDT := false // the URI before has its datetime already
	count := 0
	for i := 0; ; {
		sp, ok := nextToken(s, i)
		if !ok {
			break
		}
		i = sp.end
		count++
		if count > MaxValues {
			diags = append(diags, newDiag(fieldVersionURL, CodeTooManyValues,
				"data-versionurl has more than %d tokens; the rest, from %s, was not read", MaxValues, quoteValue(s[sp.start:])))
			break
		}
		tok := s[sp.start:sp.end]
		if !looksLikeDatetime(tok) {
			u, d, ok := resolveRef(fieldVersionURL, "snapshot URI", tok, base)
			diags = append(diags, d...)
			curHasDT = false
			if !ok {
				cur = dropped
				continue
			}
			snaps = append(snaps, audit.Snapshot{URL: u})
			cur = len(snaps) - 1
			continue
		}
		switch {
		case cur == none:
			diags = append(diags, newDiag(fieldVersionURL, CodeDatetimeWithoutURI,
				"datetime %s has no snapshot URI before it; ignored", quoteValue(tok)))
			continue
		case curHasDT:
			diags = append(diags, newDiag(fieldVersionURL, CodeExtraDatetime,
				"second datetime %s after one snapshot URI; only one is allowed, ignored", quoteValue(tok)))
			continue
		}
		curHasDT = true
		if cur == dropped {
			continue // belongs to a URI already reported and dropped
		}
		t, dateOnly, d := parseDatetimeToken(fieldVersionURL, tok, dtRobust)
		diags = append(diags, d...)
		snaps[cur].Datetime = t
		snaps[cur].DateOnly = dateOnly
		snaps[cur].DatetimeRaw = tok
		snaps[cur].LeapSecond = hasLeapSecond(d)
	}
	if count == 0 {
		diags = append(diags, newDiag(fieldVersionURL, CodeEmptyValue,
			"empty data-versionurl %s; expected one or more snapshot URIs", quoteValue(s)))
	}
	return snaps, diags
}
