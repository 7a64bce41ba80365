package extract

import (
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// The fuzz targets check invariants that hold for every input: no panic,
// UTC second-precision times inside years 1-9999, absolute URLs, no
// "invalid-*" diagnostic on a value that was kept, complete and bounded
// diagnostics. Their seeds are every row of the table tests (so every spec
// example) plus edge cases.

// edgeSeeds are inputs for every target besides the table rows.
var edgeSeeds = []string{
	// WHATWG URL cases, leap seconds, invalid pwid candidates.
	"https://www.w3.org/\nstandards/", "https://example.com/tab\tinside", `https:\\example.com\backslash\path`,
	"http://0x7f.1/", "https://bücher.example/", `http://127.0.0.1:6666\@1.1.1.1`, "https://user:s3cr3t@host/",
	"2016-12-31T23:59:60Z", "pwid:archive.org:2016-12-31_23.59.60Z_page:https://www.dr.dk",
	"pwid:archive.org:2016-02-30_11.20.29Z_page:https://www.dr.dk", "pwid::2016-01-22_11.20.29Z_page:x",
	"pwid:archive.org:2016-01-22_11.20.29Z_page:", "pwid:archive.org:2016-01-22_11.20.29Z_site:x",
	"pwid:arch%zzive.org:2016-01-22_11.20.29Z:x", "pwid:archive.org",
	"", " ", "\x00", "\xff\xfe", ",", ",,,", ":", "::", "T", "Z",
	"0000-00-00", "9999-12-31T23:59:59Z", "99991231235960", "0001-01-01T00:00:00Z",
	"2024-11-21T23:59:60-23:59", "2024-11-21T00:00:00+23:59",
	"2024-11-21T16:22:07.", "2024-11-21T16:22:07.5+", "2024-11-21T16:22:07.5+0",
	"2024-11-21 ", " 2024-11-21 16:22Z", "2024-11-21\t16:22Z",
	"https://a.example/x 2024-11-21,2024-11-21 https://b.example/y",
	"https:// 2024", "http://[::1]/ 20241121", "//", "///", "?", "#",
	"pwid:a:2016-01-22_11.20.29Z_page:pwid:b:2016-01-22_11.20.29Z:c",
	"urn:pwid:a:2016-01-22T11:20:29Z:page:page:x",
	"pwid:a:2016-01-22T23:59:60Z:x", "pwid:a:2016-01-22_11.20.29Z_",
	"pwid:a:2016-01-22_11.20.29Z_:x", "pwid:a:2016-01-22_11.20.29Z::",
	"urn:pwid:a:2016-01-22T11:20:29Z:page:", "urn:pwid:a:2016-01-22T11:20:29Z:page://x",
	"pwid:pwid:pwid:", "urn:urn:pwid:pwid:a:b", "(pwid:a:b:c)).]]\"'",
	"http://a.example/ 2014-03-17 10:00Z memento extra, 2014-03-17 10:00Z",
	"http://a.example/ 2014-03-17 10:", "2014-03-17 10:", "2014-03-17 1",
	strings.Repeat("a,", 50), strings.Repeat("2024-11-21 ", 30),
	"ftp:x", "mailto:a@b", "javascript:alert(1)", "data:text/html,<b>",
	"HTTP://A.EXAMPLE", "https://exa mple.org", "https://a.example/\u00e6\u00f8\u00e5",
}

// fuzzSeeds returns every table input plus the edge seeds.
func fuzzSeeds() []string {
	var seeds []string
	for _, tt := range versionDateTests {
		seeds = append(seeds, tt.in)
	}
	for _, tt := range htmlDatetimeTests {
		seeds = append(seeds, tt.in)
	}
	for _, tt := range versionURLTests {
		seeds = append(seeds, tt.in)
	}
	for _, tt := range msetTests {
		seeds = append(seeds, tt.in)
	}
	for _, tt := range pwidTests {
		seeds = append(seeds, tt.in)
	}
	for _, tt := range findPWIDsTests {
		seeds = append(seeds, tt.in)
	}
	return append(seeds, edgeSeeds...)
}

// checkTime reports a non-zero Time that is not UTC, has sub-second
// digits, or is outside years 1-9999.
func checkTime(t *testing.T, what string, v audit.Time) {
	t.Helper()
	if v.IsZero() {
		return
	}
	if v.Location() != time.UTC {
		t.Errorf("%s %v is not UTC", what, v.Time)
	}
	if v.Nanosecond() != 0 {
		t.Errorf("%s %v has sub-second digits", what, v.Time)
	}
	if y := v.Year(); y < 1 || y > 9999 {
		t.Errorf("%s %v is outside years 1-9999", what, v.Time)
	}
}

// hasCode reports whether ds holds a diagnostic with code.
func hasCode(ds []audit.Diagnostic, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

// hasInvalid reports whether ds holds an "invalid-*" diagnostic.
func hasInvalid(ds []audit.Diagnostic) bool {
	for _, d := range ds {
		if strings.HasPrefix(d.Code, "invalid-") {
			return true
		}
	}
	return false
}

// checkAbsolute reports a URL that is not a pwid and not an absolute URL.
func checkAbsolute(t *testing.T, what, s string) {
	t.Helper()
	if isPWIDRef(s) {
		return
	}
	// The one URL parser judges (urls.ParseURL takes absolute URLs
	// only), and the value is its own serialisation.
	u, err := urls.ParseURL(s)
	if err != nil || u.String() != s {
		t.Errorf("%s %q is not an absolute URL in its serialised form (%q, err %v)", what, s, u, err)
	}
}

func FuzzParseVersionDate(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, dateOnly, diags := ParseVersionDate("data-versiondate", s)
		checkDiags(t, "data-versiondate", diags)
		checkTime(t, "time", got)
		if got.IsZero() {
			if dateOnly {
				t.Errorf("zero time with dateOnly")
			}
			if len(diags) != 1 || (diags[0].Code != CodeInvalidDatetime && diags[0].Code != CodeEmptyValue) {
				t.Errorf("zero time, diags %+v, want one invalid-datetime or empty-value", diags)
			}
			return
		}
		if hasInvalid(diags) || hasCode(diags, CodeEmptyValue) {
			t.Errorf("time %v returned with diags %+v", got.Time, diags)
		}
		if dateOnly && (got.Hour() != 12 || got.Minute() != 0 || got.Second() != 0) {
			t.Errorf("date-only time %v is not noon", got.Time)
		}
		// The canonical form of the result is valid and means the same.
		canon := got.Format("2006-01-02T15:04:05Z")
		if dateOnly {
			canon = got.Format("2006-01-02")
		}
		again, againDateOnly, againDiags := ParseVersionDate("data-versiondate", canon)
		if !again.Equal(got.Time) || againDateOnly != dateOnly || len(againDiags) != 0 {
			t.Errorf("canonical %q of %q parses to %v, %v, %+v; want %v, %v, no diagnostics",
				canon, s, again.Time, againDateOnly, againDiags, got.Time, dateOnly)
		}
		// So are its lower-case form (ABNF strings are case-insensitive)
		// and the value wrapped in HTML whitespace.
		for _, v := range []string{strings.ToLower(canon), "\n\t " + canon + " \r\n"} {
			again, againDateOnly, againDiags = ParseVersionDate("data-versiondate", v)
			if !again.Equal(got.Time) || againDateOnly != dateOnly || len(againDiags) != 0 {
				t.Errorf("valid %q of %q parses to %v, %v, %+v; want %v, %v, no diagnostics",
					v, s, again.Time, againDateOnly, againDiags, got.Time, dateOnly)
			}
		}
		// The web-archive form too.
		compact := got.Format("20060102150405")
		if dateOnly {
			compact = got.Format("20060102")
		}
		again, _, againDiags = ParseVersionDate("data-versiondate", compact)
		if !again.Equal(got.Time) || len(againDiags) != 0 {
			t.Errorf("compact %q of %q parses to %v, %+v", compact, s, again.Time, againDiags)
		}
		// The HTML grammar agrees on the instant.
		h, hDateOnly, _ := parseDatetimeToken("mset", trimHTMLSpace(s), dtHTML)
		if !h.IsZero() && (!h.Equal(got.Time) || hDateOnly != dateOnly) {
			t.Errorf("HTML grammar reads %q as %v (date %v), Robust Links as %v (date %v)", s, h.Time, hDateOnly, got.Time, dateOnly)
		}
	})
}

func FuzzParseVersionURL(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	base, _ := url.Parse(testBase)
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range []*url.URL{base, nil} {
			snaps, diags := ParseVersionURL(s, b)
			checkDiags(t, "data-versionurl", diags)
			if len(snaps) > MaxValues {
				t.Errorf("%d snapshots", len(snaps))
			}
			if trimHTMLSpace(s) == "" && (len(snaps) != 0 || !hasCode(diags, CodeEmptyValue)) {
				t.Errorf("empty value: snapshots %v, diags %+v", snaps, diags)
			}
			for _, sn := range snaps {
				checkAbsolute(t, "snapshot", sn.URL)
				checkTime(t, "snapshot datetime", sn.Datetime)
				if sn.DatetimeRaw == "" && (!sn.Datetime.IsZero() || sn.DateOnly) {
					t.Errorf("snapshot %+v has a datetime but no raw datetime", sn)
				}
				if sn.DatetimeRaw != "" && sn.Datetime.IsZero() && !hasCode(diags, CodeInvalidDatetime) {
					t.Errorf("snapshot %+v has an unusable datetime but no invalid-datetime diagnostic", sn)
				}
				if strings.ContainsAny(sn.URL, " \t\n\f\r") || strings.ContainsAny(sn.DatetimeRaw, " \t\n\f\r") {
					t.Errorf("snapshot %+v holds whitespace", sn)
				}
				if sn.DatetimeRaw != "" {
					// A kept datetime reads the same on its own.
					dt, dateOnly, _ := ParseVersionDate("x", sn.DatetimeRaw)
					if !dt.Equal(sn.Datetime.Time) || dateOnly != sn.DateOnly {
						t.Errorf("snapshot %+v: its datetime alone parses to %v", sn, dt.Time)
					}
				}
			}
		}
	})
}

func FuzzParseMset(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	base, _ := url.Parse(testBase)
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range []*url.URL{base, nil} {
			m, diags := ParseMset(s, b)
			checkDiags(t, "mset", diags)
			if (m == nil) != (trimHTMLSpace(s) == "") {
				t.Fatalf("ParseMset(%q) = %v: nil must mean empty", s, m)
			}
			if m == nil {
				if diagCodes(diags) != CodeEmptyValue {
					t.Errorf("nil mset with diags %+v", diags)
				}
				continue
			}
			if m.Raw != s || m.Temporal == nil || m.Copies == nil {
				t.Errorf("mset %#v: Raw must be the value, slices non-nil", m)
			}
			if len(m.Temporal)+len(m.Copies) > MaxValues {
				t.Errorf("%d values", len(m.Temporal)+len(m.Copies))
			}
			for _, tm := range m.Temporal {
				if tm.IsZero() {
					t.Errorf("zero temporal reference")
				}
				checkTime(t, "temporal", tm)
			}
			for _, c := range m.Copies {
				checkAbsolute(t, "copy", c.URL)
				checkTime(t, "copy datetime", c.Datetime)
				if c.DatetimeRaw == "" && (!c.Datetime.IsZero() || c.DateOnly) {
					t.Errorf("copy %+v has a datetime but no raw datetime", c)
				}
				if c.DatetimeRaw != "" && c.Datetime.IsZero() && !hasCode(diags, CodeInvalidDatetime) {
					t.Errorf("copy %+v has an unusable datetime but no invalid-datetime diagnostic", c)
				}
				if c.Rel != nil && (!isLinkType(*c.Rel) || *c.Rel != strings.ToLower(*c.Rel)) {
					t.Errorf("copy %+v has link type %q", c, *c.Rel)
				}
				if strings.Contains(c.URL, ",") {
					t.Errorf("copy URL %q holds a comma", c.URL)
				}
			}
			if len(diags) == 0 && strings.Count(s, ",")+1 != len(m.Temporal)+len(m.Copies) {
				t.Errorf("no diagnostics but %d candidates gave %d values", strings.Count(s, ",")+1, len(m.Temporal)+len(m.Copies))
			}
		}
	})
}

func FuzzParsePWID(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, diags, ok := ParsePWID(s)
		checkDiags(t, "pwid", diags)
		trimmed := trimHTMLSpace(s)
		if !ok {
			if p != (audit.PWID{}) {
				t.Errorf("not ok but PWID %+v", p)
			}
			if isPWIDRef(trimmed) != hasCode(diags, CodeInvalidPWID) {
				t.Errorf("not ok: diags %+v for %q", diags, s)
			}
			return
		}
		if hasInvalid(diags) {
			t.Errorf("ok with diags %+v", diags)
		}
		if p.Raw != trimmed || p.ArchiveID == "" || p.Item == "" || p.Datetime.IsZero() || p.Source != "" || p.Link != 0 {
			t.Errorf("incomplete PWID %+v", p)
		}
		checkTime(t, "pwid datetime", p.Datetime)
		if p.ContentSpec != "" {
			if _, exact, known := contentSpec(p.ContentSpec); !known || !exact {
				t.Errorf("content spec %q", p.ContentSpec)
			}
		}
		if !strings.HasSuffix(p.Raw, p.Item) {
			t.Errorf("item %q is not the end of %q", p.Item, p.Raw)
		}
		// The canonical pwid: form of the result parses to the same fields.
		if p.ContentSpec != "" {
			canon := "pwid:" + p.ArchiveID + ":" + p.Datetime.Format("2006-01-02_15.04.05Z") + "_" + p.ContentSpec + ":" + p.Item
			q, qd, qok := ParsePWID(canon)
			if !qok || q.ArchiveID != p.ArchiveID || !q.Datetime.Equal(p.Datetime.Time) || q.ContentSpec != p.ContentSpec || q.Item != p.Item {
				t.Errorf("canonical %q parses to %+v, %+v, %v; want the fields of %+v", canon, q, qd, qok, p)
			}
		}
	})
}

func FuzzFindPWIDs(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := FindPWIDs(s)
		if len(got) > MaxValues {
			t.Errorf("%d candidates", len(got))
		}
		rest := s
		for _, c := range got {
			if !isPWIDRef(c) {
				t.Errorf("candidate %q does not start with a pwid scheme", c)
			}
			if len(c) > maxPWIDCandidate {
				t.Errorf("candidate of %d bytes", len(c))
			}
			if strings.ContainsAny(c, " \t\n\f\r<>\"") || !utf8.ValidString(c) {
				t.Errorf("candidate %q holds white space, markup or invalid UTF-8", c)
			}
			if strings.ContainsAny(c[len(c)-1:], ".,;:!?'") {
				t.Errorf("candidate %q ends with punctuation", c)
			}
			// Candidates are substrings of s, in order, not overlapping.
			i := strings.Index(rest, c)
			if i < 0 {
				t.Fatalf("candidate %q is not in order in %q", c, s)
			}
			rest = rest[i+len(c):]
			// ParsePWID never panics on them and says why when not ok.
			if _, diags, ok := ParsePWID(c); !ok && !hasCode(diags, CodeInvalidPWID) {
				t.Errorf("ParsePWID(%q) not ok without invalid-pwid", c)
			}
		}
	})
}

// FuzzLocate checks that Offsets, Locate and LineIndex give the results
// of the reference implementation (position_ref_test.go) on any document.
func FuzzLocate(f *testing.F) {
	for _, doc := range locateDocuments(50) {
		f.Add(doc)
	}
	for _, frag := range locateFragments {
		f.Add(frag)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		compareLocate(t, []byte(doc))
	})
}
