package extract

// The grammars of this package (Robust Links data-versiondate and
// data-versionurl, the mset attribute, pwid URIs) are hand-written on
// purpose. They are the heart of linkrot: an audit is only as good as its
// reading of these attributes, and every deviation from the ABNF must be
// reported precisely (what was wrong, the value, the form expected) instead
// of being silently normalised or rejected. No library implements these
// drafts, and general date parsers (time.Parse, RFC 3339 or ISO 8601
// libraries) either reject the forms the specs themselves use in their
// examples (20241121T162207Z) or accept far more than the grammars allow
// without saying so, and time.Date silently rolls impossible dates over
// (2024-02-30 becomes March 1st). The parsers below therefore scan bytes
// against the productions, validate the calendar themselves, classify each
// value as valid, lenient (accepted with a diagnostic) or invalid, and never
// do more than linear work on their input.

import (
	"fmt"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// dtMode selects the grammar a datetime is checked against.
type dtMode int

const (
	// dtRobust is the Robust Links grammar (ABNF 6.1): YYYY-MM-DD, YYYYMMDD,
	// YYYY-MM-DDThh:mm:ssZ, YYYYMMDDhhmmss.
	dtRobust dtMode = iota
	// dtHTML is the HTML "datetime value" of the mset attribute: a valid
	// date string (YYYY-MM-DD) or a valid global date and time string
	// (YYYY-MM-DD, "T" or a space, hh:mm, optional :ss with 1 to 3 fraction
	// digits, then "Z" or a ±hh:mm / ±hhmm offset).
	dtHTML
)

// maxDatetimeLen is longer than any datetime form accepted, even leniently
// (2024-11-21T16:22:07.123456789+02:00 is 35 bytes). Longer values are
// rejected before scanning.
const maxDatetimeLen = 64

// Expected-form texts quoted in messages.
const (
	robustForms = "the Robust Links ABNF (6.1) expects YYYY-MM-DD, YYYYMMDD, YYYY-MM-DDThh:mm:ssZ or YYYYMMDDhhmmss"
	htmlForms   = "mset expects an HTML date (YYYY-MM-DD), local date and time (YYYY-MM-DDThh:mm[:ss[.sss]]) or global date and time (the same with Z or a ±hh:mm offset)"
)

// dtFields is the syntax of a scanned datetime, before validation.
type dtFields struct {
	year, month, day  int
	hour, minute, sec int
	isoDate           bool // YYYY-MM-DD (else YYYYMMDD)
	hasTime           bool
	sep               byte // between date and time: 0 (digits follow), 'T', 't' or ' '
	timeColon         bool // hh:mm[:ss] (else hhmm[ss])
	hasSec            bool
	fracDigits        int
	fracComma         bool // the fraction follows "," (else ".")
	zone              byte // 0 (none), 'Z', 'z', '+' or '-'
	zoneText          string
	offHour, offMin   int
	offHasMin         bool
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digitsAt reads exactly n ASCII digits of s at i.
func digitsAt(s string, i, n int) (int, bool) {
	if i < 0 || i+n > len(s) {
		return 0, false
	}
	v := 0
	for k := i; k < i+n; k++ {
		if !isDigit(s[k]) {
			return 0, false
		}
		v = v*10 + int(s[k]-'0')
	}
	return v, true
}

// scanDatetime reads the syntax of s: a date (YYYY-MM-DD or YYYYMMDD),
// optionally followed by a separator ("T", "t", a space, or nothing after a
// compact date), a time (hh:mm[:ss] or hhmm[ss]), fraction digits after the
// seconds, and a zone ("Z", "z", ±hh[[:]mm]). It returns a non-empty reason
// when s does not have that shape.
func scanDatetime(s string) (f dtFields, reason string) {
	var ok bool
	i := 0
	switch {
	case len(s) >= 10 && s[4] == '-' && s[7] == '-':
		f.isoDate = true
		f.year, ok = digitsAt(s, 0, 4)
		if ok {
			f.month, ok = digitsAt(s, 5, 2)
		}
		if ok {
			f.day, ok = digitsAt(s, 8, 2)
		}
		i = 10
	case len(s) >= 8:
		f.year, ok = digitsAt(s, 0, 4)
		if ok {
			f.month, ok = digitsAt(s, 4, 2)
		}
		if ok {
			f.day, ok = digitsAt(s, 6, 2)
		}
		i = 8
	}
	if !ok {
		return f, "it does not start with a date (YYYY-MM-DD or YYYYMMDD)"
	}
	if i == len(s) {
		return f, ""
	}
	f.hasTime = true
	switch c := s[i]; {
	case c == 'T' || c == 't' || c == ' ':
		f.sep = c
		i++
	case isDigit(c) && !f.isoDate:
		// web-archive-datetime: the time follows the date directly.
	default:
		return f, fmt.Sprintf("unexpected %s after the date", quoteValue(s[i:i+1]))
	}
	if f.hour, ok = digitsAt(s, i, 2); !ok {
		return f, "the time does not start with two digits for the hour"
	}
	i += 2
	if i < len(s) && s[i] == ':' {
		f.timeColon = true
		i++
	}
	if f.minute, ok = digitsAt(s, i, 2); !ok {
		return f, "the time has no two-digit minute"
	}
	i += 2
	if f.timeColon {
		if i < len(s) && s[i] == ':' {
			if f.sec, ok = digitsAt(s, i+1, 2); !ok {
				return f, "the time has no two-digit second after the colon"
			}
			f.hasSec = true
			i += 3
		}
	} else if f.sec, ok = digitsAt(s, i, 2); ok {
		f.hasSec = true
		i += 2
	}
	if f.sep == 0 && (!f.hasSec || f.timeColon) {
		return f, "a date and time without separator must be YYYYMMDDhhmmss"
	}
	if f.hasSec && i < len(s) && (s[i] == '.' || s[i] == ',') {
		f.fracComma = s[i] == ','
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			f.fracDigits++
		}
		if f.fracDigits == 0 {
			return f, "no digits after the decimal point of the seconds"
		}
	}
	if i < len(s) {
		zs := i
		switch c := s[i]; c {
		case 'Z', 'z':
			f.zone = c
			i++
		case '+', '-':
			f.zone = c
			if f.offHour, ok = digitsAt(s, i+1, 2); !ok {
				return f, "the time-zone offset has no two-digit hour"
			}
			i += 3
			if i < len(s) && s[i] == ':' {
				if f.offMin, ok = digitsAt(s, i+1, 2); !ok {
					return f, "the time-zone offset has no two-digit minute after the colon"
				}
				f.offHasMin = true
				i += 3
			} else if f.offMin, ok = digitsAt(s, i, 2); ok {
				f.offHasMin = true
				i += 2
			}
		default:
			return f, fmt.Sprintf("unexpected %s after the time", quoteValue(s[i:i+1]))
		}
		f.zoneText = s[zs:i]
	}
	if i != len(s) {
		return f, fmt.Sprintf("unexpected %s after the time zone", quoteValue(s[i:]))
	}
	return f, ""
}

// daysIn returns the number of days of month m (1-12) of year y.
func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// minTime and maxTime bound the instants linkrot stores: four-digit UTC
// years, and never the zero time.Time, which audit.Time treats as "no
// datetime".
var (
	minTime = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// civilTime validates the calendar fields (date, and time when hasTime) and
// returns the UTC instant, never rolling an impossible date over. An offset
// (in seconds east of UTC) is applied.
//
// Second 60 is a leap second (RFC 3339 5.6, 5.7): it is valid only when
// the instant is 23:59:60 UTC, and returned with leap=true as the next
// second, 00:00:00 UTC of the next day: time.Time (and audit.Time) have no
// leap seconds, and the next second is the first instant that is not
// before the leap second, so ordering against other datetimes holds
// (23:59:59 < 23:59:60 -> 00:00:00). Callers keep the value as written
// (DatetimeRaw, VersionDateRaw, PWID.Raw) and raise CodeLeapSecond, so
// nothing is lost. The IERS table is consulted only for the message: a
// 23:59:60 on a day without a leap second is still accepted (see
// leapSecondDays).
func civilTime(year, month, day, hour, minute, sec int, offset int) (t time.Time, leap bool, reason string) {
	switch {
	case year == 0:
		return t, false, "year 0000 does not exist"
	case month < 1 || month > 12:
		return t, false, fmt.Sprintf("month %02d does not exist", month)
	case day < 1 || day > daysIn(year, month):
		return t, false, fmt.Sprintf("day %02d does not exist in %s %04d", day, time.Month(month), year)
	case hour > 23:
		return t, false, fmt.Sprintf("hour %02d is out of range 00-23", hour)
	case minute > 59:
		return t, false, fmt.Sprintf("minute %02d is out of range 00-59", minute)
	case sec > 60:
		return t, false, fmt.Sprintf("second %02d is out of range 00-60", sec)
	}
	s := sec
	if sec == 60 {
		s = 59
		leap = true
	}
	local := time.Date(year, time.Month(month), day, hour, minute, s, 0, time.FixedZone("", offset))
	// Round trip: the fields were range-checked above, but never trust
	// time.Date not to normalise.
	if local.Year() != year || int(local.Month()) != month || local.Day() != day ||
		local.Hour() != hour || local.Minute() != minute || local.Second() != s {
		return time.Time{}, false, "the date does not exist"
	}
	t = local.UTC()
	if leap {
		if t.Hour() != 23 || t.Minute() != 59 {
			return time.Time{}, false, "second 60 (a leap second) can only occur at 23:59:60 UTC"
		}
		t = t.Add(time.Second)
	}
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, false, "the instant is outside years 0001-9999 UTC"
	}
	return t, leap, ""
}

// leapSecondDays are the UTC days at whose end a leap second was inserted
// (IERS Bulletin C; RFC 3339 appendix D lists those up to 1998). None was
// inserted after 2016-12-31.
var leapSecondDays = map[string]bool{
	"1972-06-30": true, "1972-12-31": true, "1973-12-31": true, "1974-12-31": true,
	"1975-12-31": true, "1976-12-31": true, "1977-12-31": true, "1978-12-31": true,
	"1979-12-31": true, "1981-06-30": true, "1982-06-30": true, "1983-06-30": true,
	"1985-06-30": true, "1987-12-31": true, "1989-12-31": true, "1990-12-31": true,
	"1992-06-30": true, "1993-06-30": true, "1994-06-30": true, "1995-12-31": true,
	"1997-06-30": true, "1998-12-31": true, "2005-12-31": true, "2008-12-31": true,
	"2012-06-30": true, "2015-06-30": true, "2016-12-31": true,
}

// leapSecondMessage is the CodeLeapSecond message for raw, whose instant
// next is the second after the leap second.
func leapSecondMessage(raw string, next time.Time) string {
	day := next.Add(-time.Second).Format("2006-01-02")
	msg := fmt.Sprintf("leap second in %s (%sT23:59:60Z): valid (RFC 3339); kept as written and recorded as the next second, %s, with leap_second set",
		quoteValue(raw), day, next.Format(time.RFC3339))
	if !leapSecondDays[day] {
		msg += "; note that no leap second was inserted at the end of " + day + " (IERS)"
	}
	return msg
}

// dtResult is a datetime parsed under a mode.
type dtResult struct {
	t        time.Time // UTC; noon for dates
	dateOnly bool
	leap     bool
	lenient  []string // why the value is lenient; empty when valid
	invalid  string   // why the value is invalid; empty when usable
}

// parseDatetime parses s (a single token, no surrounding whitespace) under
// mode. Date-only values yield noon UTC of that date and dateOnly.
func parseDatetime(s string, mode dtMode) (r dtResult) {
	if len(s) > maxDatetimeLen {
		r.invalid = fmt.Sprintf("%d bytes is too long for a datetime", len(s))
		return r
	}
	f, reason := scanDatetime(s)
	if reason != "" {
		r.invalid = reason
		return r
	}
	if !f.hasTime {
		t, _, reason := civilTime(f.year, f.month, f.day, 12, 0, 0, 0)
		if reason != "" {
			r.invalid = reason
			return r
		}
		r.t, r.dateOnly = t, true
		if mode == dtHTML && !f.isoDate {
			r.lenient = append(r.lenient, "YYYYMMDD (a Robust Links web-archive-date; not an HTML date string)")
		}
		return r
	}
	offset := 0
	if f.zone == '+' || f.zone == '-' {
		if f.offHour > 23 || f.offMin > 59 {
			r.invalid = fmt.Sprintf("time-zone offset %s is out of range", quoteValue(f.zoneText))
			return r
		}
		offset = f.offHour*3600 + f.offMin*60
		if f.zone == '-' {
			offset = -offset
		}
	}
	t, leap, reason := civilTime(f.year, f.month, f.day, f.hour, f.minute, f.sec, offset)
	if reason != "" {
		r.invalid = reason
		return r
	}
	r.t, r.leap = t, leap
	r.lenient = datetimeDeviations(f, mode)
	return r
}

// datetimeDeviations lists how a syntactically understood date and time
// deviates from the grammar of mode; empty means valid.
func datetimeDeviations(f dtFields, mode dtMode) []string {
	var why []string
	add := func(s string) { why = append(why, s) }
	offsetNote := func() {
		if f.zone == '+' || f.zone == '-' {
			add(fmt.Sprintf("offset %s converted to UTC", f.zoneText))
		}
	}
	if mode == dtHTML && f.isoDate {
		// A valid local date and time string (no zone) is a datetime
		// value too; it names no zone, and linkrot reads it as UTC
		// without a diagnostic. HTML's "T" and "Z" are upper-case
		// letters (its parsing algorithm fails on "t").
		switch f.sep {
		case 't':
			add(`lower-case "t" between date and time`)
		}
		if !f.timeColon {
			add("time without colons")
		}
		if f.fracComma {
			add(`"," before the fraction of a second (HTML expects ".")`)
		}
		if f.fracDigits > 3 {
			add(fmt.Sprintf("%d fraction digits dropped (HTML allows 1 to 3)", f.fracDigits))
		}
		switch f.zone {
		case 'z':
			add(`lower-case "z"`)
		case '+', '-':
			if !f.offHasMin {
				add(fmt.Sprintf("offset %s without minutes (converted to UTC)", f.zoneText))
			}
		}
		return why
	}
	if mode == dtHTML {
		add("a compact YYYYMMDD date (a Robust Links form; not an HTML datetime value)")
	}
	if f.isoDate {
		// iso8601-datetime = YYYY-MM-DD "T" hh ":" mm ":" ss "Z". ABNF
		// quoted strings are case-insensitive (RFC 5234 2.3), so "t"
		// and "z" are as valid as "T" and "Z" (RFC 3339 5.6 says so of
		// its own, identical production).
		switch f.sep {
		case ' ':
			add(`a space instead of "T" between date and time`)
		}
		if !f.timeColon {
			add("time without colons")
		}
		if !f.hasSec {
			add("no seconds (:00 assumed)")
		}
		if f.fracDigits > 0 {
			add("fractional seconds dropped")
		}
		if f.zone == 0 {
			add(`no "Z" (UTC assumed)`)
		}
		offsetNote()
		return why
	}
	// web-archive-datetime = YYYYMMDD hhmmss, no separator, no zone.
	switch f.sep {
	case 'T', 't':
		add(fmt.Sprintf("%q between date and time", string(f.sep)))
	case ' ':
		add("a space between date and time")
	}
	if f.timeColon {
		add("colons in the time")
	}
	if !f.hasSec {
		add("no seconds (:00 assumed)")
	}
	if f.fracDigits > 0 {
		add("fractional seconds dropped")
	}
	switch f.zone {
	case 'Z', 'z':
		add(fmt.Sprintf("a %q suffix", string(f.zone)))
	}
	offsetNote()
	return why
}

// expectedForms names the forms of mode for messages; for lenient values
// the nearest ABNF production comes first.
func expectedForms(mode dtMode, value string) string {
	if mode == dtHTML {
		return htmlForms
	}
	f, _ := scanDatetime(value)
	switch {
	case !f.hasTime:
		return robustForms
	case f.isoDate:
		return "the Robust Links ABNF (6.1) expects iso8601-datetime YYYY-MM-DDThh:mm:ssZ (or web-archive-datetime YYYYMMDDhhmmss)"
	default:
		return "the Robust Links ABNF (6.1) expects web-archive-datetime YYYYMMDDhhmmss (or iso8601-datetime YYYY-MM-DDThh:mm:ssZ)"
	}
}

// datetimeDiags turns a result into diagnostics for field. raw is the value
// as written (quoted in messages); value is the token that was parsed.
func datetimeDiags(field, raw, value string, mode dtMode, r dtResult) []audit.Diagnostic {
	if r.invalid != "" {
		forms := robustForms
		if mode == dtHTML {
			forms = htmlForms
		}
		return []audit.Diagnostic{newDiag(field, CodeInvalidDatetime,
			"invalid datetime %s: %s; %s", quoteValue(raw), r.invalid, forms)}
	}
	var diags []audit.Diagnostic
	why := r.lenient
	if len(why) > 0 {
		diags = append(diags, newDiag(field, CodeLenientDatetime,
			"lenient datetime %s: %s; accepted as %s, but %s",
			quoteValue(raw), strings.Join(why, ", "), formatAccepted(r), expectedForms(mode, value)))
	}
	if r.leap {
		diags = append(diags, audit.Diagnostic{Field: field, Code: CodeLeapSecond, Message: leapSecondMessage(raw, r.t)})
	}
	return diags
}

// formatAccepted renders the interpretation of a value for messages.
func formatAccepted(r dtResult) string {
	if r.dateOnly {
		return r.t.Format("2006-01-02") + " (noon UTC)"
	}
	return r.t.Format(time.RFC3339)
}

// parseDatetimeToken parses one datetime token for field under mode and
// returns the instant (zero when unusable) and its diagnostics.
func parseDatetimeToken(field, tok string, mode dtMode) (audit.Time, bool, []audit.Diagnostic) {
	r := parseDatetime(tok, mode)
	diags := datetimeDiags(field, tok, tok, mode, r)
	if r.invalid != "" {
		return audit.Time{}, false, diags
	}
	return audit.NewTime(r.t), r.dateOnly, diags
}

// ParseVersionDate parses a Robust Links datetime (ABNF 6.1): the value of
// data-versiondate, and the datetimes inside data-versionurl. field is used
// as Diagnostic.Field.
//
// The four ABNF forms are valid without diagnostics:
//
//	YYYY-MM-DD            iso8601-date
//	YYYYMMDD              web-archive-date
//	YYYY-MM-DDThh:mm:ssZ  iso8601-datetime
//	YYYYMMDDhhmmss        web-archive-datetime
//
// Dates are noon UTC of that day with dateOnly=true (robust-links 3.3);
// datetimes are the exact UTC instant.
//
// ABNF quoted strings are case-insensitive (RFC 5234 2.3), so
// 2024-11-21t16:22:07z is valid as well, and so is any HTML whitespace
// around the value (dropped).
//
// Obvious variants are accepted with a CodeLenientDatetime diagnostic that
// quotes the value and names the expected form: 20241121T162207Z (the
// spec's own example in 3.3, which its ABNF does not produce),
// 20241121T10:03:33Z (example 4.3.1), an ISO datetime with a numeric
// offset (converted to UTC), without "Z" (UTC assumed) or without seconds,
// a space instead of "T", and fractional seconds (dropped).
//
// Second 60 is valid only as a leap second at 23:59:60 UTC: it is
// recorded as the next second (00:00:00 UTC of the next day) with a
// CodeLeapSecond diagnostic, and callers set the leap_second flag (see
// civilTime). Impossible dates and times
// (2023-02-29, month 13, hour 24, minute 60) are invalid and never rolled
// over.
//
// An empty (or all-whitespace) value yields a CodeEmptyValue diagnostic;
// anything else unusable yields a CodeInvalidDatetime diagnostic. Both
// return the zero Time.
func ParseVersionDate(field, s string) (t audit.Time, dateOnly bool, diags []audit.Diagnostic) {
	v := trimHTMLSpace(s)
	if v == "" {
		return audit.Time{}, false, []audit.Diagnostic{newDiag(field, CodeEmptyValue,
			"empty datetime %s; %s", quoteValue(s), robustForms)}
	}
	// Whitespace around the value is not part of it: HTML attribute
	// values are routinely written across lines, and the spec's own
	// data-versionurl example wraps its datetimes in line breaks and
	// indentation. It is dropped without a diagnostic.
	r := parseDatetime(v, dtRobust)
	diags = datetimeDiags(field, s, v, dtRobust, r)
	if r.invalid != "" {
		return audit.Time{}, false, diags
	}
	return audit.NewTime(r.t), r.dateOnly, diags
}

// looksLikeDatetime reports whether a token of data-versionurl or mset is
// to be read as a datetime rather than a URL. A URI scheme starts with a
// letter, so any token starting with a digit is a datetime (or an invalid
// one): a snapshot URI or copy link that starts with a digit could only be
// a relative reference, which these attributes do not allow anyway.
func looksLikeDatetime(tok string) bool {
	return tok != "" && isDigit(tok[0])
}

// hasLeapSecond reports whether diags hold a CodeLeapSecond diagnostic:
// the datetime they belong to was a leap second.
func hasLeapSecond(diags []audit.Diagnostic) bool {
	for _, d := range diags {
		if d.Code == CodeLeapSecond {
			return true
		}
	}
	return false
}
