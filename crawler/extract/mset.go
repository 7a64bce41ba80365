package extract

import (
	"net/url"
	"strings"

	"github.com/linkrot/linkrot/audit"
)

const fieldMset = "mset"

// isLinkType reports whether tok is a link type keyword as linkrot reads
// it: ALPHA *( ALPHA / DIGIT / "-" / "." / "_" / ":" ). HTML link types
// are keywords (registered ones such as "alternate", extension ones from
// the microformats wiki such as "memento" or "first-memento"); "." "_" and
// ":" admit namespaced extension names (e.g. "schema:copy"). A URL is never
// a link type here: in mset a URL in that position is a missing comma.
func isLinkType(tok string) bool {
	if tok == "" {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && (isDigit(c) || c == '-' || c == '.' || c == '_' || c == ':'):
		default:
			return false
		}
	}
	return true
}

// looksLikeURL reports whether a token in link-type position is rather a
// URL: it has "://" or a pwid scheme.
func looksLikeURL(tok string) bool {
	return strings.Contains(tok, "://") || isPWIDRef(tok)
}

// isTimeToken reports whether tok starts like the time of a date and time
// written with a space separator (hh:...), as in "2014-03-17 10:00Z".
func isTimeToken(tok string) bool {
	return len(tok) >= 3 && isDigit(tok[0]) && isDigit(tok[1]) && tok[2] == ':'
}

// datetimeSpan returns the datetime starting with token t of cand: the
// token itself or, when t is an ISO date (YYYY-MM-DD) followed by exactly
// one space and a time, both tokens (an HTML global date and time may use a
// space instead of "T").
func datetimeSpan(cand string, t span) span {
	if t.end-t.start != 10 || t.end+1 >= len(cand) || cand[t.end] != ' ' {
		return t
	}
	n, ok := nextToken(cand, t.end)
	if !ok || n.start != t.end+1 || !isTimeToken(cand[n.start:n.end]) {
		return t
	}
	return span{t.start, n.end}
}

// ParseMset parses an mset attribute (mset-attribute spec, 3.1): reference
// candidates separated by commas, each a temporal reference (a datetime
// alone) or a copy link (a URL, then optionally a datetime, then
// optionally a link type such as "memento"), with any HTML whitespace,
// including newlines, around every part. Every comma separates candidates,
// as in HTML's comma-separated tokens, so a URL cannot contain a raw comma.
//
// Datetimes are HTML datetime values, as the spec references HTML: a valid
// date string (2014-03-17), a valid local date and time string
// (2014-03-17T10:00, "2014-03-17 10:00:00.5"; read as UTC, since it names
// no zone) or a valid global date and time string (2014-03-17T10:00Z,
// 2014-03-17T10:00:00+01:00, +0100, "2014-03-17 10:00Z") is valid; the
// Robust Links forms (YYYYMMDD, YYYYMMDDhhmmss) and the lenient forms of
// ParseVersionDate (lower-case "t" or "z", which HTML's parser rejects,
// more than 3 fraction digits, ...) are accepted with CodeLenientDatetime.
// The mset spec is silent on what a date-only value means as an instant;
// linkrot applies the Robust Links noon rule (noon UTC, DateOnly on
// copies) for consistency between the two attributes.
//
// A copy link is "a valid non-empty URL" (HTML), which may be relative: a
// relative one is resolved against base without diagnostic (it is dropped
// with CodeInvalidURL only when there is no base). pwid: and urn:pwid:
// ones are kept verbatim without diagnostic, other schemes than http(s)
// get CodeUnexpectedScheme, unusable ones drop the candidate
// (CodeInvalidURL).
// A copy whose datetime is invalid is kept with a zero Datetime and its
// DatetimeRaw. Link types are lower-cased (HTML link types are ASCII
// case-insensitive); an invalid one is reported (CodeInvalidLinkType) and
// the copy kept without it. A second datetime or URL, or tokens after the
// link type, are reported (CodeInvalidCandidate) and ignored, the copy
// being kept; a temporal reference followed by other tokens is dropped
// (CodeInvalidCandidate). Empty candidates give CodeEmptyCandidate; more
// than one temporal reference is valid (all are kept); at most MaxValues
// candidates are read (CodeTooManyValues).
//
// ParseMset returns a nil Mset, with a CodeEmptyValue diagnostic, only when
// s is empty or whitespace. Otherwise Temporal and Copies are non-nil.
func ParseMset(s string, base *url.URL) (*audit.Mset, []audit.Diagnostic) {
	if trimHTMLSpace(s) == "" {
		return nil, []audit.Diagnostic{newDiag(fieldMset, CodeEmptyValue,
			"empty mset attribute %s; it must hold one or more reference candidates, or be omitted", quoteValue(s))}
	}
	m := &audit.Mset{Raw: s, Temporal: []audit.Time{}, Copies: []audit.Copy{}}
	var diags []audit.Diagnostic
	n := 0
	for start := 0; ; {
		end := strings.IndexByte(s[start:], ',')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		n++
		if n > MaxValues {
			diags = append(diags, newDiag(fieldMset, CodeTooManyValues,
				"mset has more than %d reference candidates; the rest, from %s, was not read", MaxValues, quoteValue(s[start:])))
			break
		}
		diags = append(diags, msetCandidate(m, n, s[start:end], base)...)
		if end == len(s) {
			break
		}
		start = end + 1
	}
	return m, diags
}

// msetCandidate parses candidate number n (1-based) into m.
func msetCandidate(m *audit.Mset, n int, cand string, base *url.URL) []audit.Diagnostic {
	first, ok := nextToken(cand, 0)
	if !ok {
		return []audit.Diagnostic{newDiag(fieldMset, CodeEmptyCandidate,
			"mset reference candidate %d is empty (a leading, trailing or doubled comma?)", n)}
	}
	whole := quoteValue(trimHTMLSpace(cand))
	tok := cand[first.start:first.end]
	if looksLikeDatetime(tok) {
		dt := datetimeSpan(cand, first)
		value := cand[dt.start:dt.end]
		if extra, ok := nextToken(cand, dt.end); ok {
			return []audit.Diagnostic{newDiag(fieldMset, CodeInvalidCandidate,
				"mset reference candidate %s is invalid: a temporal reference is a datetime alone, but %s follows it; candidate ignored",
				whole, quoteValue(cand[extra.start:]))}
		}
		t, _, diags := parseDatetimeToken(fieldMset, value, dtHTML)
		if !t.IsZero() {
			// Any candidate may be a temporal reference: the grammar
			// sets no limit, so a second one is kept without comment.
			m.Temporal = append(m.Temporal, t)
		}
		return diags
	}

	u, diags, ok := resolveURL(fieldMset, "copy link", tok, base, true)
	if !ok {
		return diags
	}
	c := audit.Copy{URL: u}
	defer func() { m.Copies = append(m.Copies, c) }()
	pos := first.end

	next, ok := nextToken(cand, pos)
	if ok && looksLikeDatetime(cand[next.start:next.end]) {
		dt := datetimeSpan(cand, next)
		value := cand[dt.start:dt.end]
		t, dateOnly, d := parseDatetimeToken(fieldMset, value, dtHTML)
		diags = append(diags, d...)
		c.Datetime, c.DateOnly, c.DatetimeRaw = t, dateOnly, value
		c.LeapSecond = hasLeapSecond(d)
		pos = dt.end
		next, ok = nextToken(cand, pos)
	}
	if !ok {
		return diags
	}
	tok = cand[next.start:next.end]
	switch {
	case looksLikeDatetime(tok):
		// The first datetime was consumed above: this is a second one.
		return append(diags, newDiag(fieldMset, CodeInvalidCandidate,
			"mset reference candidate %s is invalid: a second datetime %s; a copy link has at most one datetime; ignored from there, copy kept",
			whole, quoteValue(cand[next.start:])))
	case looksLikeURL(tok):
		return append(diags, newDiag(fieldMset, CodeInvalidCandidate,
			"mset reference candidate %s is invalid: a second URL %s (a missing comma?); ignored from there, copy kept",
			whole, quoteValue(cand[next.start:])))
	case isLinkType(tok):
		rel := strings.ToLower(tok)
		c.Rel = &rel
	default:
		diags = append(diags, newDiag(fieldMset, CodeInvalidLinkType,
			"mset copy link %s has link type %s, which is not a link type keyword (letters, then letters, digits, \"-\", \".\", \"_\", \":\"); copy kept without link type",
			quoteValue(u), quoteValue(tok)))
	}
	if extra, ok := nextToken(cand, next.end); ok {
		diags = append(diags, newDiag(fieldMset, CodeInvalidCandidate,
			"mset reference candidate %s is invalid: %s after the link type; ignored, copy kept",
			whole, quoteValue(cand[extra.start:])))
	}
	return diags
}
