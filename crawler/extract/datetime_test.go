package extract

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// utcTime parses an RFC 3339 instant for expectations; "" is the zero Time.
func utcTime(t testing.TB, s string) audit.Time {
	t.Helper()
	if s == "" {
		return audit.Time{}
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("bad expectation %q: %v", s, err)
	}
	return audit.NewTime(v)
}

// fmtTime renders a Time for comparisons: RFC 3339 in UTC, "zero", or a
// marker when the location is not UTC or there are sub-second digits.
func fmtTime(t audit.Time) string {
	if t.IsZero() {
		return "zero"
	}
	s := t.Time.Format(time.RFC3339Nano)
	if t.Location() != time.UTC {
		s += " (location " + t.Location().String() + ")"
	}
	return s
}

// diagCodes joins the codes of ds with ",".
func diagCodes(ds []audit.Diagnostic) string {
	codes := make([]string, len(ds))
	for i, d := range ds {
		codes[i] = d.Code
	}
	return strings.Join(codes, ",")
}

// allCodes is every code declared in diag.go.
var allCodes = map[string]bool{
	CodeInvalidDatetime: true, CodeLenientDatetime: true, CodeLeapSecond: true,
	CodeRelativeURL: true, CodeInvalidURL: true, CodeUnexpectedScheme: true,
	CodeDatetimeWithoutURI: true, CodeExtraDatetime: true, CodeEmptyValue: true,
	CodeEmptyCandidate: true, CodeInvalidCandidate: true, CodeInvalidLinkType: true,
	CodeInvalidPWID: true, CodeLenientPWID: true, CodeTooManyValues: true,
	CodeMissingOriginalURL: true, CodeMissingVersionDate: true, CodeMsetWithoutHref: true,
	CodeMultipleIdentifiers: true, CodeInvalidLinkHeader: true, CodeRelativeOriginalURL: true,
	CodePWIDInHref: true, CodeAnchoredLink: true, CodeLenientURL: true, CodeCredentialsInURL: true,
	CodeIgnoredBase: true,
}

// maxMessageLen bounds diagnostic messages: a few quoted values of at most
// maxQuoted characters plus prose.
const maxMessageLen = 1200

// checkDiags reports diagnostics with an empty field, code or message, an
// unknown code, a different field than field (unless field is ""), or an
// unbounded message.
func checkDiags(t testing.TB, field string, ds []audit.Diagnostic) {
	t.Helper()
	for _, d := range ds {
		if d.Field == "" || d.Code == "" || d.Message == "" {
			t.Errorf("incomplete diagnostic %+v", d)
		}
		if !allCodes[d.Code] {
			t.Errorf("unknown code in %+v", d)
		}
		if field != "" && d.Field != field {
			t.Errorf("diagnostic field = %q, want %q: %+v", d.Field, field, d)
		}
		if len(d.Message) > maxMessageLen {
			t.Errorf("message of %d bytes: %.200q", len(d.Message), d.Message)
		}
	}
}

type versionDateTest struct {
	name     string
	in       string
	want     string // RFC 3339 UTC, "" for zero
	dateOnly bool
	codes    string // diagnostic codes, comma-separated
}

var versionDateTests = []versionDateTest{
	// robust-links.txt section 1 and 3.3 (every data-versiondate example).
	{"spec 1 iso8601-date", "2024-11-21", "2024-11-21T12:00:00Z", true, ""},
	{"spec 3.3 iso8601-date", "2024-11-21", "2024-11-21T12:00:00Z", true, ""},
	{"spec 3.3 web-archive-date", "20241121", "2024-11-21T12:00:00Z", true, ""},
	{"spec 3.3 example with T and Z breaks the ABNF", "20241121T162207Z", "2024-11-21T16:22:07Z", false, "lenient-datetime"},
	{"spec 3.3 web-archive-datetime", "20241121162207", "2024-11-21T16:22:07Z", false, ""},
	// robust-links.txt section 4 (every data-versiondate example).
	{"spec 4.1.1", "2024-11-20", "2024-11-20T12:00:00Z", true, ""},
	{"spec 4.1.2", "2024-11-20", "2024-11-20T12:00:00Z", true, ""},
	{"spec 4.1.3 iso8601-datetime", "2017-01-20T12:00:00Z", "2017-01-20T12:00:00Z", false, ""},
	{"spec 4.1.4", "19991015", "1999-10-15T12:00:00Z", true, ""},
	{"spec 4.1.5", "20150101", "2015-01-01T12:00:00Z", true, ""},
	{"spec 4.2.1", "2024-11-21", "2024-11-21T12:00:00Z", true, ""},
	{"spec 4.2.2", "2024-11-22", "2024-11-22T12:00:00Z", true, ""},
	{"spec 4.2.3", "2012-04-10", "2012-04-10T12:00:00Z", true, ""},
	{"spec 4.3.1", "2024-12-09", "2024-12-09T12:00:00Z", true, ""},
	{"spec 4.3.1 versionurl datetime with colons", "20241121T10:03:33Z", "2024-11-21T10:03:33Z", false, "lenient-datetime"},

	// The four ABNF forms at their limits.
	{"iso8601-date leap day", "2024-02-29", "2024-02-29T12:00:00Z", true, ""},
	{"web-archive-date leap day 2000", "20000229", "2000-02-29T12:00:00Z", true, ""},
	{"iso8601-datetime midnight", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", false, ""},
	{"iso8601-datetime last second", "2024-12-31T23:59:59Z", "2024-12-31T23:59:59Z", false, ""},
	{"web-archive-datetime midnight", "20240101000000", "2024-01-01T00:00:00Z", false, ""},
	{"year 0001", "0001-01-01", "0001-01-01T12:00:00Z", true, ""},
	{"year 9999", "99991231235959", "9999-12-31T23:59:59Z", false, ""},
	// ABNF quoted strings are case-insensitive (RFC 5234 2.3): "t" and
	// "z" match "T" and "Z" of iso8601-datetime.
	{"iso8601-datetime lower-case t and z", "2024-11-21t16:22:07z", "2024-11-21T16:22:07Z", false, ""},
	{"iso8601-datetime lower-case t", "2024-11-21t16:22:07Z", "2024-11-21T16:22:07Z", false, ""},
	{"iso8601-datetime lower-case z", "2024-11-21T16:22:07z", "2024-11-21T16:22:07Z", false, ""},
	// HTML whitespace around the value is not part of it.
	{"surrounding whitespace", " \t2024-11-21\n", "2024-11-21T12:00:00Z", true, ""},
	{"surrounding whitespace, web-archive-datetime", "\r\n20241121162207 \f", "2024-11-21T16:22:07Z", false, ""},

	// Impossible calendar values are never rolled over.
	{"Feb 29 in a common year", "2023-02-29", "", false, "invalid-datetime"},
	{"Feb 29 in 1900", "19000229", "", false, "invalid-datetime"},
	{"Feb 30", "2024-02-30", "", false, "invalid-datetime"},
	{"Apr 31", "2024-04-31", "", false, "invalid-datetime"},
	{"month 13", "2024-13-01", "", false, "invalid-datetime"},
	{"month 13 compact", "20241301", "", false, "invalid-datetime"},
	{"month 00", "2024-00-10", "", false, "invalid-datetime"},
	{"day 00", "20240100", "", false, "invalid-datetime"},
	{"day 32", "2024-01-32", "", false, "invalid-datetime"},
	{"hour 24", "2024-11-21T24:00:00Z", "", false, "invalid-datetime"},
	{"hour 24 compact", "20241121240000", "", false, "invalid-datetime"},
	{"minute 60", "2024-11-21T10:60:00Z", "", false, "invalid-datetime"},
	{"second 61", "2024-11-21T23:59:61Z", "", false, "invalid-datetime"},
	{"year 0000", "0000-01-01", "", false, "invalid-datetime"},
	{"the zero instant", "00010101000000", "", false, "invalid-datetime"},
	{"before year 1 after offset", "0001-01-01T00:30:00+01:00", "", false, "invalid-datetime"},
	{"after year 9999 after offset", "9999-12-31T23:00:00-02:00", "", false, "invalid-datetime"},

	// Leap seconds: only 23:59:60 UTC, recorded as 23:59:59.
	{"leap second iso", "2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z", false, "leap-second"},
	{"leap second compact", "20161231235960", "2017-01-01T00:00:00Z", false, "leap-second"},
	{"leap second with offset", "2017-01-01T00:59:60+01:00", "2017-01-01T00:00:00Z", false, "lenient-datetime,leap-second"},
	// RFC 3339 5.7: a leap second is valid; it is never read as :59.
	{"leap second mid-year", "2015-06-30T23:59:60Z", "2015-07-01T00:00:00Z", false, "leap-second"},
	{"leap second at the end of the range", "9999-12-31T23:59:60Z", "", false, "invalid-datetime"},
	{"second 60 not at 23:59 UTC", "2016-12-31T22:59:60Z", "", false, "invalid-datetime"},
	{"second 61", "2016-12-31T23:59:61Z", "", false, "invalid-datetime"},
	{"second 60 not at 23:59", "2016-12-31T12:00:60Z", "", false, "invalid-datetime"},
	{"second 60 at 23:59 local, not UTC", "2016-12-31T23:59:60+01:00", "", false, "invalid-datetime"},

	// Lenient forms.
	{"offset converted to UTC", "2024-11-21T16:22:07+02:00", "2024-11-21T14:22:07Z", false, "lenient-datetime"},
	{"negative offset crossing midnight", "2024-11-21T22:30:00-05:30", "2024-11-22T04:00:00Z", false, "lenient-datetime"},
	{"offset crossing back a day", "2024-11-21T00:30:00+01:00", "2024-11-20T23:30:00Z", false, "lenient-datetime"},
	{"offset without colon", "2024-11-21T16:22:07+0200", "2024-11-21T14:22:07Z", false, "lenient-datetime"},
	{"offset hours only", "2024-11-21T16:22:07+02", "2024-11-21T14:22:07Z", false, "lenient-datetime"},
	{"no Z", "2024-11-21T16:22:07", "2024-11-21T16:22:07Z", false, "lenient-datetime"},
	{"space instead of T, lower-case z", "2024-11-21 16:22:07z", "2024-11-21T16:22:07Z", false, "lenient-datetime"},
	{"fractional seconds dropped", "2024-11-21T16:22:07.987654Z", "2024-11-21T16:22:07Z", false, "lenient-datetime"},
	{"fractional seconds with comma", "2024-11-21T16:22:07,5Z", "2024-11-21T16:22:07Z", false, "lenient-datetime"},
	{"no seconds", "2024-11-21T16:22Z", "2024-11-21T16:22:00Z", false, "lenient-datetime"},
	{"space instead of T", "2024-11-21 16:22:07Z", "2024-11-21T16:22:07Z", false, "lenient-datetime"},
	{"iso date, compact time", "2024-11-21T162207Z", "2024-11-21T16:22:07Z", false, "lenient-datetime"},
	{"compact with T, no Z", "20241121T162207", "2024-11-21T16:22:07Z", false, "lenient-datetime"},
	{"compact with Z only", "20241121162207Z", "2024-11-21T16:22:07Z", false, "lenient-datetime"},
	{"compact with fraction", "20241121162207.5", "2024-11-21T16:22:07Z", false, "lenient-datetime"},

	// Unusable values.
	{"empty", "", "", false, "empty-value"},
	{"whitespace only", " \n\t ", "", false, "empty-value"},
	{"year only", "2024", "", false, "invalid-datetime"},
	{"year and month", "2024-11", "", false, "invalid-datetime"},
	{"unpadded", "2024-1-5", "", false, "invalid-datetime"},
	{"slashes", "21/11/2024", "", false, "invalid-datetime"},
	{"prose", "November 21, 2024", "", false, "invalid-datetime"},
	{"T and nothing", "2024-11-21T", "", false, "invalid-datetime"},
	{"hour only", "2024-11-21T16", "", false, "invalid-datetime"},
	{"hour only with Z", "2024-11-21T16Z", "", false, "invalid-datetime"},
	{"trailing junk", "2024-11-21T16:22:07Zjunk", "", false, "invalid-datetime"},
	{"12-digit web archive timestamp", "202411211622", "", false, "invalid-datetime"},
	{"13 digits", "2024112116220", "", false, "invalid-datetime"},
	{"15 digits", "202411211622070", "", false, "invalid-datetime"},
	{"iso date glued to digits", "2024-11-2116:22:07Z", "", false, "invalid-datetime"},
	{"compact date with colon time and no separator", "2024112116:22:07", "", false, "invalid-datetime"},
	{"sign before year", "+2024-11-21", "", false, "invalid-datetime"},
	{"point without fraction", "2024-11-21T16:22:07.Z", "", false, "invalid-datetime"},
	{"offset hour 24", "2024-11-21T16:22:07+24:00", "", false, "invalid-datetime"},
	{"offset minute 60", "2024-11-21T16:22:07+01:60", "", false, "invalid-datetime"},
	{"offset without digits", "2024-11-21T16:22:07+", "", false, "invalid-datetime"},
	{"fullwidth digits", "２０２４-11-21", "", false, "invalid-datetime"},
	{"internal double space", "2024-11-21  16:22:07Z", "", false, "invalid-datetime"},
	{"too long", "2024-11-21T16:22:07." + strings.Repeat("0", 100) + "Z", "", false, "invalid-datetime"},
	{"NUL byte", "2024-11-21\x00", "", false, "invalid-datetime"},
}

func TestParseVersionDate(t *testing.T) {
	for _, tt := range versionDateTests {
		t.Run(tt.name, func(t *testing.T) {
			got, dateOnly, diags := ParseVersionDate("data-versiondate", tt.in)
			if g, w := fmtTime(got), fmtTime(utcTime(t, tt.want)); g != w {
				t.Errorf("ParseVersionDate(%q) time = %s, want %s", tt.in, g, w)
			}
			if dateOnly != tt.dateOnly {
				t.Errorf("ParseVersionDate(%q) dateOnly = %v, want %v", tt.in, dateOnly, tt.dateOnly)
			}
			if g := diagCodes(diags); g != tt.codes {
				t.Errorf("ParseVersionDate(%q) codes = %q, want %q; diags %+v", tt.in, g, tt.codes, diags)
			}
			checkDiags(t, "data-versiondate", diags)
			for _, d := range diags {
				if !strings.Contains(d.Message, quoteValue(tt.in)) {
					t.Errorf("message %q does not quote the value %s", d.Message, quoteValue(tt.in))
				}
			}
		})
	}
}

// TestParseVersionDateMessages pins the wording of one message of each
// kind: what was wrong, the value, and the form expected.
func TestParseVersionDateMessages(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"lenient spec 3.3", "20241121T162207Z",
			`lenient datetime "20241121T162207Z": "T" between date and time, a "Z" suffix; accepted as 2024-11-21T16:22:07Z, but the Robust Links ABNF (6.1) expects web-archive-datetime YYYYMMDDhhmmss (or iso8601-datetime YYYY-MM-DDThh:mm:ssZ)`},
		{"lenient spec 4.3.1", "20241121T10:03:33Z",
			`lenient datetime "20241121T10:03:33Z": "T" between date and time, colons in the time, a "Z" suffix; accepted as 2024-11-21T10:03:33Z, but the Robust Links ABNF (6.1) expects web-archive-datetime YYYYMMDDhhmmss (or iso8601-datetime YYYY-MM-DDThh:mm:ssZ)`},
		{"lenient offset", "2024-11-21T16:22:07+02:00",
			`lenient datetime "2024-11-21T16:22:07+02:00": offset +02:00 converted to UTC; accepted as 2024-11-21T14:22:07Z, but the Robust Links ABNF (6.1) expects iso8601-datetime YYYY-MM-DDThh:mm:ssZ (or web-archive-datetime YYYYMMDDhhmmss)`},
		{"lenient with whitespace around", " 2024-11-21T16:22:07 ",
			`lenient datetime " 2024-11-21T16:22:07 ": no "Z" (UTC assumed); accepted as 2024-11-21T16:22:07Z, but the Robust Links ABNF (6.1) expects iso8601-datetime YYYY-MM-DDThh:mm:ssZ (or web-archive-datetime YYYYMMDDhhmmss)`},
		{"invalid calendar", "2023-02-29",
			`invalid datetime "2023-02-29": day 29 does not exist in February 2023; the Robust Links ABNF (6.1) expects YYYY-MM-DD, YYYYMMDD, YYYY-MM-DDThh:mm:ssZ or YYYYMMDDhhmmss`},
		{"invalid shape", "21/11/2024",
			`invalid datetime "21/11/2024": it does not start with a date (YYYY-MM-DD or YYYYMMDD); the Robust Links ABNF (6.1) expects YYYY-MM-DD, YYYYMMDD, YYYY-MM-DDThh:mm:ssZ or YYYYMMDDhhmmss`},
		{"leap second", "2016-12-31T23:59:60Z",
			`leap second in "2016-12-31T23:59:60Z" (2016-12-31T23:59:60Z): valid (RFC 3339); kept as written and recorded as the next second, 2017-01-01T00:00:00Z, with leap_second set`},
		{"leap second on a day without one", "2024-03-05T23:59:60Z",
			`leap second in "2024-03-05T23:59:60Z" (2024-03-05T23:59:60Z): valid (RFC 3339); kept as written and recorded as the next second, 2024-03-06T00:00:00Z, with leap_second set; note that no leap second was inserted at the end of 2024-03-05 (IERS)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, diags := ParseVersionDate("data-versiondate", tt.in)
			if len(diags) != 1 {
				t.Fatalf("ParseVersionDate(%q) diags = %+v, want one", tt.in, diags)
			}
			if diags[0].Message != tt.want {
				t.Errorf("ParseVersionDate(%q) message\n got %s\nwant %s", tt.in, diags[0].Message, tt.want)
			}
		})
	}
}

// TestParseVersionDateHostile checks that a megabyte attribute gives a
// bounded message.
func TestParseVersionDateHostile(t *testing.T) {
	in := strings.Repeat("2024-11-21", 100000)
	got, _, diags := ParseVersionDate("data-versiondate", in)
	if !got.IsZero() || diagCodes(diags) != CodeInvalidDatetime {
		t.Fatalf("got %s, %+v", fmtTime(got), diags)
	}
	if n := len(diags[0].Message); n > 400 {
		t.Errorf("message is %d bytes", n)
	}
	if !strings.Contains(diags[0].Message, "(1000000 bytes)") {
		t.Errorf("message %q does not say the value was cut", diags[0].Message)
	}
}

type htmlDatetimeTest struct {
	name     string
	in       string
	want     string
	dateOnly bool
	codes    string
}

// htmlDatetimeTests exercise the mset grammar (HTML datetime values).
var htmlDatetimeTests = []htmlDatetimeTest{
	{"date", "2014-03-17", "2014-03-17T12:00:00Z", true, ""},
	{"global, minutes, Z", "2014-03-17T10:00Z", "2014-03-17T10:00:00Z", false, ""},
	{"global, seconds, offset", "2014-03-17T10:00:00+01:00", "2014-03-17T09:00:00Z", false, ""},
	{"global, space separator", "2014-03-17 10:00Z", "2014-03-17T10:00:00Z", false, ""},
	{"global, offset without colon", "2014-03-17T10:00-0130", "2014-03-17T11:30:00Z", false, ""},
	{"global, milliseconds", "2014-03-17T10:00:00.123Z", "2014-03-17T10:00:00Z", false, ""},
	{"Robust Links iso8601-datetime", "2014-03-17T10:00:00Z", "2014-03-17T10:00:00Z", false, ""},
	{"Robust Links web-archive-date", "20140317", "2014-03-17T12:00:00Z", true, "lenient-datetime"},
	{"Robust Links web-archive-datetime", "20140317100000", "2014-03-17T10:00:00Z", false, "lenient-datetime"},
	// A valid local date and time string is a datetime value; read as UTC.
	{"local date and time", "2014-03-17T10:00", "2014-03-17T10:00:00Z", false, ""},
	{"local date and time, seconds, fraction", "2014-03-17T10:00:30.5", "2014-03-17T10:00:30Z", false, ""},
	{"global, one fraction digit", "2014-03-17T10:00:00.1Z", "2014-03-17T10:00:00Z", false, ""},
	{"global, negative offset", "2014-03-17T10:00-05:00", "2014-03-17T15:00:00Z", false, ""},
	{"fraction after a comma", "2014-03-17T10:00:00,5Z", "2014-03-17T10:00:00Z", false, "lenient-datetime"},
	{"lower-case t", "2014-03-17t10:00Z", "2014-03-17T10:00:00Z", false, "lenient-datetime"},
	{"lower-case z", "2014-03-17T10:00z", "2014-03-17T10:00:00Z", false, "lenient-datetime"},
	{"four fraction digits", "2014-03-17T10:00:00.1234Z", "2014-03-17T10:00:00Z", false, "lenient-datetime"},
	{"offset hours only", "2014-03-17T10:00+01", "2014-03-17T09:00:00Z", false, "lenient-datetime"},
	{"time without colons", "2014-03-17T1000Z", "2014-03-17T10:00:00Z", false, "lenient-datetime"},
	{"leap second", "2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z", false, "leap-second"},
	{"invalid date", "2014-02-29", "", false, "invalid-datetime"},
	{"invalid shape", "17.03.2014", "", false, "invalid-datetime"},
}

func TestParseDatetimeHTML(t *testing.T) {
	for _, tt := range htmlDatetimeTests {
		t.Run(tt.name, func(t *testing.T) {
			got, dateOnly, diags := parseDatetimeToken("mset", tt.in, dtHTML)
			if g, w := fmtTime(got), fmtTime(utcTime(t, tt.want)); g != w {
				t.Errorf("parseDatetimeToken(%q) time = %s, want %s", tt.in, g, w)
			}
			if dateOnly != tt.dateOnly {
				t.Errorf("parseDatetimeToken(%q) dateOnly = %v, want %v", tt.in, dateOnly, tt.dateOnly)
			}
			if g := diagCodes(diags); g != tt.codes {
				t.Errorf("parseDatetimeToken(%q) codes = %q, want %q; diags %+v", tt.in, g, tt.codes, diags)
			}
			checkDiags(t, "mset", diags)
		})
	}
}

func TestQuoteValue(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "2024-11-21", `"2024-11-21"`},
		{"empty", "", `""`},
		{"quotes", `a"b'c`, `"a\"b'c"`},
		{"newline and tab", "a\nb\tc", `"a\nb\tc"`},
		{"invalid UTF-8", "a\xffb", `"a\xffb"`},
		{"non-ASCII kept", "Ø", `"Ø"`},
		{"long", strings.Repeat("x", 200), `"` + strings.Repeat("x", 120) + `"… (200 bytes)`},
		{"escapes count toward the bound", strings.Repeat("\x00", 100), `"` + strings.Repeat(`\x00`, 30) + `"… (100 bytes)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quoteValue(tt.in); got != tt.want {
				t.Errorf("quoteValue(%s) = %s, want %s", strconv.Quote(tt.in), got, tt.want)
			}
		})
	}
}
