package extract

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// cp renders an expected copy: "URL", then " @ datetime" (with " (date)"
// and " raw=...") when a datetime was written, then " rel=..." when a link
// type was kept.
func cp(url, datetime string, dateOnly bool, raw, rel string) string {
	s := snap(url, datetime, dateOnly, raw)
	if rel != "" {
		s += " rel=" + rel
	}
	return s
}

func fmtMset(m *audit.Mset) string {
	if m == nil {
		return "nil"
	}
	var b strings.Builder
	b.WriteString("temporal:")
	for _, t := range m.Temporal {
		b.WriteString(" " + fmtTime(t))
	}
	for _, c := range m.Copies {
		dt := ""
		if !c.Datetime.IsZero() {
			dt = fmtTime(c.Datetime)
		}
		rel := ""
		if c.Rel != nil {
			rel = *c.Rel
			if rel == "" {
				rel = `""`
			}
		}
		b.WriteString("\ncopy: " + cp(c.URL, dt, c.DateOnly, c.DatetimeRaw, rel))
	}
	return b.String()
}

// wantMset renders expectations like fmtMset.
func wantMset(temporal []string, copies ...string) string {
	var b strings.Builder
	b.WriteString("temporal:")
	for _, t := range temporal {
		b.WriteString(" " + t)
	}
	for _, c := range copies {
		b.WriteString("\ncopy: " + c)
	}
	return b.String()
}

type msetTest struct {
	name  string
	in    string
	base  string
	want  string // wantMset(...), or "nil"
	codes string
}

const (
	msetWayback = "http://web.archive.org/web/20140211110349/http://www.w3.org/MarkUp/html-spec/html-spec_toc.html"
	msetPerma   = "http://perma.cc/RL33-W794"
)

var msetTests = []msetTest{
	// mset-attribute.txt section 1.2, every example exactly as written.
	{"spec 1.2 temporal reference only", "2014-03-17", testBase,
		wantMset([]string{"2014-03-17T12:00:00Z"}), ""},
	{"spec 1.2 copy only", msetWayback, testBase,
		wantMset(nil, msetWayback), ""},
	{"spec 1.2 temporal and copy", "2014-03-17,\n    " + msetWayback, testBase,
		wantMset([]string{"2014-03-17T12:00:00Z"}, msetWayback), ""},
	{"spec 1.2 two copies", msetWayback + ",\n    " + msetPerma, testBase,
		wantMset(nil, msetWayback, msetPerma), ""},
	{"spec 1.2 copies with datetimes", msetWayback + " 2014-02-14,\n  " + msetPerma + " 2014-03-10", testBase,
		wantMset(nil,
			cp(msetWayback, "2014-02-14T12:00:00Z", true, "2014-02-14", ""),
			cp(msetPerma, "2014-03-10T12:00:00Z", true, "2014-03-10", "")), ""},
	{"spec 1.2 temporal and copies with datetimes", "2014-03-17,\n  " + msetWayback + " 2014-02-14,\n  " + msetPerma + " 2014-03-10", testBase,
		wantMset([]string{"2014-03-17T12:00:00Z"},
			cp(msetWayback, "2014-02-14T12:00:00Z", true, "2014-02-14", ""),
			cp(msetPerma, "2014-03-10T12:00:00Z", true, "2014-03-10", "")), ""},
	{"spec 1.2 link type", msetPerma + " memento", testBase,
		wantMset(nil, cp(msetPerma, "", false, "", "memento")), ""},
	{"spec 1.2 datetime and link type", msetPerma + " 2014-03-10 memento", testBase,
		wantMset(nil, cp(msetPerma, "2014-03-10T12:00:00Z", true, "2014-03-10", "memento")), ""},

	// HTML datetime values.
	{"global date and time", "2014-03-17T10:00Z", testBase,
		wantMset([]string{"2014-03-17T10:00:00Z"}), ""},
	{"global with offset", "2014-03-17T10:00:00+01:00", testBase,
		wantMset([]string{"2014-03-17T09:00:00Z"}), ""},
	{"global with space separator", "2014-03-17 10:00Z", testBase,
		wantMset([]string{"2014-03-17T10:00:00Z"}), ""},
	{"copy with space-separated datetime and link type", msetPerma + " 2014-03-17 10:00Z memento", testBase,
		wantMset(nil, cp(msetPerma, "2014-03-17T10:00:00Z", false, "2014-03-17 10:00Z", "memento")), ""},
	{"Robust Links date", "20140317", testBase,
		wantMset([]string{"2014-03-17T12:00:00Z"}), "lenient-datetime"},
	{"Robust Links datetime on a copy", msetPerma + " 20140310101010", testBase,
		wantMset(nil, cp(msetPerma, "2014-03-10T10:10:10Z", false, "20140310101010", "")), "lenient-datetime"},
	{"Robust Links iso8601-datetime is HTML too", msetPerma + " 2014-03-10T10:10:10Z", testBase,
		wantMset(nil, cp(msetPerma, "2014-03-10T10:10:10Z", false, "2014-03-10T10:10:10Z", "")), ""},

	// Whitespace and separators.
	{"whitespace everywhere", " \n\t" + msetPerma + " \n 2014-03-10\t\tmemento \r\n, \n 2014-03-17 \n", testBase,
		wantMset([]string{"2014-03-17T12:00:00Z"}, cp(msetPerma, "2014-03-10T12:00:00Z", true, "2014-03-10", "memento")), ""},
	{"trailing comma", "2014-03-17,", testBase,
		wantMset([]string{"2014-03-17T12:00:00Z"}), "empty-candidate"},
	{"leading and doubled commas", ", " + msetPerma + ",,2014-03-17", testBase,
		wantMset([]string{"2014-03-17T12:00:00Z"}, msetPerma), "empty-candidate,empty-candidate"},
	{"only commas", ",", testBase,
		wantMset(nil), "empty-candidate,empty-candidate"},

	// Link types.
	{"link type is lower-cased", msetPerma + " Memento", testBase,
		wantMset(nil, cp(msetPerma, "", false, "", "memento")), ""},
	{"extension link types", msetPerma + " first-memento, " + msetWayback + " schema:copy", testBase,
		wantMset(nil, cp(msetPerma, "", false, "", "first-memento"), cp(msetWayback, "", false, "", "schema:copy")), ""},
	{"invalid link type", msetPerma + " mem/ento", testBase,
		wantMset(nil, msetPerma), "invalid-link-type"},
	{"non-ASCII link type", msetPerma + " mémento", testBase,
		wantMset(nil, msetPerma), "invalid-link-type"},
	{"tokens after the link type", msetPerma + " memento original", testBase,
		wantMset(nil, cp(msetPerma, "", false, "", "memento")), "invalid-candidate"},
	{"invalid link type and more tokens", msetPerma + " 2014-03-10 #x y", testBase,
		wantMset(nil, cp(msetPerma, "2014-03-10T12:00:00Z", true, "2014-03-10", "")), "invalid-link-type,invalid-candidate"},

	// Invalid candidates.
	{"URL and two datetimes", msetPerma + " 2014-03-10 2014-03-11", testBase,
		wantMset(nil, cp(msetPerma, "2014-03-10T12:00:00Z", true, "2014-03-10", "")), "invalid-candidate"},
	{"two URLs without comma", msetPerma + " " + msetWayback, testBase,
		wantMset(nil, msetPerma), "invalid-candidate"},
	{"datetime followed by a link type", "2014-03-17 memento", testBase,
		wantMset(nil), "invalid-candidate"},
	{"datetime followed by a URL", "2014-03-17 " + msetPerma, testBase,
		wantMset(nil), "invalid-candidate"},
	{"date and time with two spaces", "2014-03-17  10:00Z", testBase,
		wantMset(nil), "invalid-candidate"},
	{"garbage markup", "<b>copy</b>", testBase,
		wantMset(nil), "invalid-url"},
	{"garbage host", "http://[::1", testBase,
		wantMset(nil), "invalid-url"},
	{"invalid temporal datetime", "2014-02-29", testBase,
		wantMset(nil), "invalid-datetime"},
	{"copy with invalid datetime keeps raw", msetPerma + " 2014-02-30 memento", testBase,
		wantMset(nil, cp(msetPerma, "", false, "2014-02-30", "memento")), "invalid-datetime"},
	// Any candidate may be a temporal reference: the grammar sets no limit.
	{"two temporal references", "2014-03-17, 2014-03-18", testBase,
		wantMset([]string{"2014-03-17T12:00:00Z", "2014-03-18T12:00:00Z"}), ""},

	// URLs.
	// A copy link is a valid non-empty URL (HTML), which may be relative.
	{"relative copy resolved", "/copies/page.html 2014-03-10", testBase,
		wantMset(nil, cp("https://example.org/copies/page.html", "2014-03-10T12:00:00Z", true, "2014-03-10", "")), ""},
	{"relative copy without base", "/copies/page.html, 2014-03-17", "",
		wantMset([]string{"2014-03-17T12:00:00Z"}), "invalid-url"},
	{"pwid copy accepted", "pwid:archive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk 2016-01-22 memento", testBase,
		wantMset(nil, cp("pwid:archive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk", "2016-01-22T12:00:00Z", true, "2016-01-22", "memento")), ""},
	{"urn:pwid copy accepted", "urn:pwid:archive.org:2016-01-22T11:20:29Z:page:https://www.dr.dk", testBase,
		wantMset(nil, "urn:pwid:archive.org:2016-01-22T11:20:29Z:page:https://www.dr.dk"), ""},
	{"pwid after a copy is a missing comma", msetPerma + " pwid:archive.org:2016-01-22_11.20.29Z:x", testBase,
		wantMset(nil, msetPerma), "invalid-candidate"},
	{"unexpected scheme", "ftp://ftp.example.org/copy", testBase,
		wantMset(nil, "ftp://ftp.example.org/copy"), "unexpected-scheme"},
	{"no host", "http:copy", testBase,
		wantMset(nil), "invalid-url"},

	// Empty attribute.
	{"empty", "", testBase, "nil", "empty-value"},
	{"whitespace only", " \n\t ", testBase, "nil", "empty-value"},
}

func TestParseMset(t *testing.T) {
	for _, tt := range msetTests {
		t.Run(tt.name, func(t *testing.T) {
			var base *url.URL
			if tt.base != "" {
				base = mustURL(t, tt.base)
			}
			got, diags := ParseMset(tt.in, base)
			if g := fmtMset(got); g != tt.want {
				t.Errorf("ParseMset(%q)\n got %s\nwant %s", tt.in, g, tt.want)
			}
			if g := diagCodes(diags); g != tt.codes {
				t.Errorf("ParseMset(%q) codes = %q, want %q; diags %+v", tt.in, g, tt.codes, diags)
			}
			if got != nil {
				if got.Raw != tt.in {
					t.Errorf("Raw = %q, want %q", got.Raw, tt.in)
				}
				if got.Temporal == nil || got.Copies == nil {
					t.Errorf("Temporal or Copies is nil: %#v", got)
				}
			}
			checkDiags(t, "mset", diags)
		})
	}
}

// TestParseMsetMessages pins one message per candidate-level code.
func TestParseMsetMessages(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty candidate", "2014-03-17,",
			`mset reference candidate 2 is empty (a leading, trailing or doubled comma?)`},
		{"temporal with extra tokens", "2014-03-17 memento",
			`mset reference candidate "2014-03-17 memento" is invalid: a temporal reference is a datetime alone, but "memento" follows it; candidate ignored`},
		{"second datetime", "http://a.example/ 2014-03-10 2014-03-11",
			`mset reference candidate "http://a.example/ 2014-03-10 2014-03-11" is invalid: a second datetime "2014-03-11"; a copy link has at most one datetime; ignored from there, copy kept`},
		{"second URL", "http://a.example/ http://b.example/",
			`mset reference candidate "http://a.example/ http://b.example/" is invalid: a second URL "http://b.example/" (a missing comma?); ignored from there, copy kept`},
		{"after link type", "http://a.example/ memento x",
			`mset reference candidate "http://a.example/ memento x" is invalid: "x" after the link type; ignored, copy kept`},
		{"invalid link type", "http://a.example/ 2014-03-10 <memento>",
			`mset copy link "http://a.example/" has link type "<memento>", which is not a link type keyword (letters, then letters, digits, "-", ".", "_", ":"); copy kept without link type`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := ParseMset(tt.in, mustURL(t, testBase))
			if len(diags) != 1 {
				t.Fatalf("ParseMset(%q) diags = %+v, want one", tt.in, diags)
			}
			if diags[0].Message != tt.want {
				t.Errorf("ParseMset(%q) message\n got %s\nwant %s", tt.in, diags[0].Message, tt.want)
			}
		})
	}
}

func TestParseMsetTooMany(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxValues+3; i++ {
		fmt.Fprintf(&b, "https://a.example/%d,", i)
	}
	got, diags := ParseMset(b.String(), nil)
	if got == nil || len(got.Copies) != MaxValues {
		t.Fatalf("got %s", fmtMset(got))
	}
	if g := diagCodes(diags); g != CodeTooManyValues {
		t.Errorf("codes = %q, want %q", g, CodeTooManyValues)
	}
}

func TestIsLinkType(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"memento", true},
		{"first-memento", true},
		{"Memento", true},
		{"schema:copy", true},
		{"x.y_z", true},
		{"h2", true},
		{"", false},
		{"2x", false},
		{"-x", false},
		{"a/b", false},
		{"a b", false},
		{"mémento", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := isLinkType(tt.in); got != tt.want {
				t.Errorf("isLinkType(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
