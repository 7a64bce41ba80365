package extract

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

const testBase = "https://example.org/articles/page.html"

// snap renders an expected snapshot: "URL", or "URL @ RFC3339" with
// " (date)" for DateOnly and " raw=..." for DatetimeRaw.
func snap(url, datetime string, dateOnly bool, raw string) string {
	s := url
	if raw != "" || datetime != "" {
		if datetime == "" {
			datetime = "zero"
		}
		s += " @ " + datetime
		if dateOnly {
			s += " (date)"
		}
		s += " raw=" + raw
	}
	return s
}

func fmtSnapshots(ss []audit.Snapshot) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		dt := ""
		if !s.Datetime.IsZero() {
			dt = fmtTime(s.Datetime)
		}
		out[i] = snap(s.URL, dt, s.DateOnly, s.DatetimeRaw)
	}
	return strings.Join(out, "\n")
}

type versionURLTest struct {
	name  string
	in    string
	base  string // "" for a nil base
	want  []string
	codes string
}

// The spec examples, exactly as written in robust-links.txt, newlines and
// indentation included.
const (
	spec411 = "https://perma.cc/44TF-9JXB 2024-11-20T16:43:33Z \n                    https://web.archive.org/web/20241121100333/https://www.w3.org/ 2024-11-21T10:03:33Z"
	spec413 = "https://web.archive.org/web/20170120160218/https://www.whitehouse.gov/ 2017-01-20T16:02:18Z\n                    https://perma.cc/39FJ-5K7L 2017-01-20T14:26:00Z"
)

var versionURLTests = []versionURLTest{
	{"spec 1", "https://web.archive.org/web/20241121100333/https://www.w3.org/", testBase,
		[]string{"https://web.archive.org/web/20241121100333/https://www.w3.org/"}, ""},
	{"spec 3.4", "https://web.archive.org/web/20241121100333/https://www.w3.org/ https://perma.cc/44TF-9JXB 20241120164333", testBase,
		[]string{
			"https://web.archive.org/web/20241121100333/https://www.w3.org/",
			snap("https://perma.cc/44TF-9JXB", "2024-11-20T16:43:33Z", false, "20241120164333"),
		}, ""},
	{"spec 4.1.1 multi-line", spec411, testBase,
		[]string{
			snap("https://perma.cc/44TF-9JXB", "2024-11-20T16:43:33Z", false, "2024-11-20T16:43:33Z"),
			snap("https://web.archive.org/web/20241121100333/https://www.w3.org/", "2024-11-21T10:03:33Z", false, "2024-11-21T10:03:33Z"),
		}, ""},
	{"spec 4.1.3 multi-line", spec413, testBase,
		[]string{
			snap("https://web.archive.org/web/20170120160218/https://www.whitehouse.gov/", "2017-01-20T16:02:18Z", false, "2017-01-20T16:02:18Z"),
			snap("https://perma.cc/39FJ-5K7L", "2017-01-20T14:26:00Z", false, "2017-01-20T14:26:00Z"),
		}, ""},
	{"spec 4.1.5", "https://web.archive.org/web/19990220013212/http://dewey.rug.ac.be/barn/tex/max.html 19990220013212", testBase,
		[]string{snap("https://web.archive.org/web/19990220013212/http://dewey.rug.ac.be/barn/tex/max.html", "1999-02-20T01:32:12Z", false, "19990220013212")}, ""},
	{"spec 4.2.1", "https://perma.cc/44TF-9JXB 2024-11-20T16:43:33Z", testBase,
		[]string{snap("https://perma.cc/44TF-9JXB", "2024-11-20T16:43:33Z", false, "2024-11-20T16:43:33Z")}, ""},
	{"spec 4.3.1 lenient datetime", "https://archive.ph/T9xD2 20241121T10:03:33Z", testBase,
		[]string{snap("https://archive.ph/T9xD2", "2024-11-21T10:03:33Z", false, "20241121T10:03:33Z")}, "lenient-datetime"},

	// Lists with and without datetimes.
	{"iso8601-date is noon", "https://a.example/x 2024-11-21", testBase,
		[]string{snap("https://a.example/x", "2024-11-21T12:00:00Z", true, "2024-11-21")}, ""},
	{"web-archive-date is noon", "https://a.example/x 20241121", testBase,
		[]string{snap("https://a.example/x", "2024-11-21T12:00:00Z", true, "20241121")}, ""},
	{"no datetimes", "https://a.example/x https://b.example/y", testBase,
		[]string{"https://a.example/x", "https://b.example/y"}, ""},
	{"datetime on the second URI only", "https://a.example/x https://b.example/y 2024-11-21T10:00:00Z", testBase,
		[]string{"https://a.example/x", snap("https://b.example/y", "2024-11-21T10:00:00Z", false, "2024-11-21T10:00:00Z")}, ""},
	{"three with mixed forms", "https://a.example/x 20241121 https://b.example/y https://c.example/z 20241122101010", testBase,
		[]string{
			snap("https://a.example/x", "2024-11-21T12:00:00Z", true, "20241121"),
			"https://b.example/y",
			snap("https://c.example/z", "2024-11-22T10:10:10Z", false, "20241122101010"),
		}, ""},
	{"tabs, CRLF, runs of spaces, surrounding whitespace", "\r\n\t https://a.example/x\t\t2024-11-21\r\n\f   https://b.example/y  ", testBase,
		[]string{snap("https://a.example/x", "2024-11-21T12:00:00Z", true, "2024-11-21"), "https://b.example/y"}, ""},
	{"empty path is fine", "https://example.org 2024-11-21", testBase,
		[]string{snap("https://example.org/", "2024-11-21T12:00:00Z", true, "2024-11-21")}, ""},
	{"query and fragment", "https://a.example/x?y=1&z=2#frag", testBase,
		[]string{"https://a.example/x?y=1&z=2#frag"}, ""},
	// URLs are recorded in their WHATWG serialisation (the form the
	// checker fetches), not as written.
	{"upper-case scheme and host serialised", "HTTPS://A.EXAMPLE/x", testBase,
		[]string{"https://a.example/x"}, ""},
	{"backslashes read as browsers do", "https:\\\\a.example\\x\\y 2024-11-21", testBase,
		[]string{snap("https://a.example/x/y", "2024-11-21T12:00:00Z", true, "2024-11-21")}, "lenient-url"},
	{"password redacted later, reported here", "https://u:pw@a.example/x", testBase,
		[]string{"https://u:pw@a.example/x"}, "credentials-in-url"},
	{"leap second", "https://a.example/x 2016-12-31T23:59:60Z", testBase,
		[]string{snap("https://a.example/x", "2017-01-01T00:00:00Z", false, "2016-12-31T23:59:60Z")}, "leap-second"},

	// pwid tokens are snapshot URIs, verbatim, without "//".
	{"pwid", "pwid:archive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk 2016-01-22", testBase,
		[]string{snap("pwid:archive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk", "2016-01-22T12:00:00Z", true, "2016-01-22")}, ""},
	{"urn:pwid", "https://a.example/x urn:pwid:archive.org:2016-01-22T11:20:29Z:page:https://www.dr.dk", testBase,
		[]string{"https://a.example/x", "urn:pwid:archive.org:2016-01-22T11:20:29Z:page:https://www.dr.dk"}, ""},
	{"upper-case PWID", "PWID:archive.org:2016-01-22_112029Z:https://www.dr.dk", testBase,
		[]string{"PWID:archive.org:2016-01-22_112029Z:https://www.dr.dk"}, ""},

	// Diagnostics; the rest of the list is still returned.
	{"datetime first", "2024-11-21 https://a.example/x", testBase,
		[]string{"https://a.example/x"}, "datetime-without-uri"},
	{"only a datetime", "20241121", testBase, nil, "datetime-without-uri"},
	{"second datetime", "https://a.example/x 2024-11-21 2024-11-22 https://b.example/y", testBase,
		[]string{snap("https://a.example/x", "2024-11-21T12:00:00Z", true, "2024-11-21"), "https://b.example/y"}, "extra-datetime"},
	{"invalid datetime keeps raw", "https://a.example/x 2024-02-30 https://b.example/y", testBase,
		[]string{snap("https://a.example/x", "", false, "2024-02-30"), "https://b.example/y"}, "invalid-datetime"},
	{"invalid then extra datetime", "https://a.example/x 2024-02-30 2024-02-28", testBase,
		[]string{snap("https://a.example/x", "", false, "2024-02-30")}, "invalid-datetime,extra-datetime"},
	{"slash date is a bad datetime", "https://a.example/x 21/11/2024", testBase,
		[]string{snap("https://a.example/x", "", false, "21/11/2024")}, "invalid-datetime"},
	{"relative resolved against base", "/web/20241121100333/https://www.w3.org/ 2024-11-21", testBase,
		[]string{snap("https://example.org/web/20241121100333/https://www.w3.org/", "2024-11-21T12:00:00Z", true, "2024-11-21")}, "relative-url"},
	{"protocol-relative", "//perma.cc/44TF-9JXB", testBase,
		[]string{"https://perma.cc/44TF-9JXB"}, "relative-url"},
	{"relative that resolves to an unparsable URL (fuzz)", "//:: https://b.example/y", testBase,
		[]string{"https://b.example/y"}, "invalid-url"},
	{"bare host is a relative path", "perma.cc/44TF-9JXB", testBase,
		[]string{"https://example.org/articles/perma.cc/44TF-9JXB"}, "relative-url"},
	{"relative without base is dropped with its datetime", "/x 2024-11-21 https://b.example/y", "",
		[]string{"https://b.example/y"}, "invalid-url"},
	{"unparsable URI dropped with its datetime", "https://[::1 2024-11-21 https://b.example/y", testBase,
		[]string{"https://b.example/y"}, "invalid-url"},
	// A lone "%" is kept by WHATWG parsing, as browsers send it.
	{"bad percent escape", "https://a.example/%zz https://b.example/y", testBase,
		[]string{"https://a.example/%zz", "https://b.example/y"}, "lenient-url"},
	{"bad port", "https://a.example:99999/ https://b.example/y", testBase,
		[]string{"https://b.example/y"}, "invalid-url"},
	// "https:///baz" has its two slashes: WHATWG skips the third.
	{"http without host", "https:foo https:/bar https:///baz", testBase,
		[]string{"https://baz/"}, "invalid-url,invalid-url"},
	{"markup leaked in", `https://a.example/x"><script>alert(1)</script> https://b.example/y`, testBase,
		[]string{"https://b.example/y"}, "invalid-url"},
	{"datetime after dropped URI then a second one", "https:foo 2024-11-21 2024-11-22", testBase,
		nil, "invalid-url,extra-datetime"},
	{"unexpected scheme kept", "ftp://ftp.example.org/file 2024-11-21", testBase,
		[]string{snap("ftp://ftp.example.org/file", "2024-11-21T12:00:00Z", true, "2024-11-21")}, "unexpected-scheme"},
	{"urn other than pwid", "urn:isbn:0451450523", testBase,
		[]string{"urn:isbn:0451450523"}, "unexpected-scheme"},
	{"empty", "", testBase, nil, "empty-value"},
	{"whitespace only", " \n\t ", testBase, nil, "empty-value"},
}

func TestParseVersionURL(t *testing.T) {
	for _, tt := range versionURLTests {
		t.Run(tt.name, func(t *testing.T) {
			var base *url.URL
			if tt.base != "" {
				base = mustURL(t, tt.base)
			}
			got, diags := ParseVersionURL(tt.in, base)
			if g, w := fmtSnapshots(got), strings.Join(tt.want, "\n"); g != w {
				t.Errorf("ParseVersionURL(%q) snapshots\n got %s\nwant %s", tt.in, g, w)
			}
			if g := diagCodes(diags); g != tt.codes {
				t.Errorf("ParseVersionURL(%q) codes = %q, want %q; diags %+v", tt.in, g, tt.codes, diags)
			}
			checkDiags(t, "data-versionurl", diags)
		})
	}
}

// TestParseVersionURLMessages pins one message per list-level code.
func TestParseVersionURLMessages(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"datetime without URI", "2024-11-21 https://a.example/x",
			`datetime "2024-11-21" has no snapshot URI before it; ignored`},
		{"extra datetime", "https://a.example/x 2024-11-21 20241122",
			`second datetime "20241122" after one snapshot URI; only one is allowed, ignored`},
		{"relative", "/x",
			`relative snapshot URI "/x" must be absolute (robust-links 3.4: URIs must be absolute, not relative); resolved to "https://example.org/x"`},
		{"no host", "https:foo",
			`invalid snapshot URI "https:foo": no host (expected scheme://host/path)`},
		{"unexpected scheme", "ftp://f.example/x",
			`snapshot URI "ftp://f.example/x" has scheme "ftp"; expected http, https or pwid`},
		{"unparsable", "https://a.example:99999/",
			`invalid snapshot URI "https://a.example:99999/": not a URL ("The input's port is outside the range [0-65535]")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := ParseVersionURL(tt.in, mustURL(t, testBase))
			if len(diags) != 1 {
				t.Fatalf("ParseVersionURL(%q) diags = %+v, want one", tt.in, diags)
			}
			if diags[0].Message != tt.want {
				t.Errorf("ParseVersionURL(%q) message\n got %s\nwant %s", tt.in, diags[0].Message, tt.want)
			}
		})
	}
}

func TestParseVersionURLTooMany(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxValues+5; i++ {
		fmt.Fprintf(&b, "https://a.example/%d ", i)
	}
	got, diags := ParseVersionURL(b.String(), nil)
	if len(got) != MaxValues {
		t.Errorf("got %d snapshots, want %d", len(got), MaxValues)
	}
	if g := diagCodes(diags); g != CodeTooManyValues {
		t.Errorf("codes = %q, want %q", g, CodeTooManyValues)
	}
	if len(got) > 0 && got[len(got)-1].URL != fmt.Sprintf("https://a.example/%d", MaxValues-1) {
		t.Errorf("last snapshot = %q", got[len(got)-1].URL)
	}
	checkDiags(t, "data-versionurl", diags)
}
