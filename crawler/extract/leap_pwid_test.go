package extract

import (
	"strings"
	"testing"
)

// TestPage_LeapSecond: 2016-12-31T23:59:60Z is valid and never read as
// :59: the instant is the next second, the raw value is kept and the
// leap_second flag is set, in every attribute that holds datetimes.
func TestPage_LeapSecond(t *testing.T) {
	const leap, next = "2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z"
	doc := `<a href="https://a.example/" data-originalurl="https://a.example/" data-versiondate="` + leap + `"
	  data-versionurl="https://archive.example/x ` + leap + `" mset="https://copy.example/x ` + leap + `">x</a>
	  <p>pwid:archive.org:2016-12-31_23.59.60Z_page:https://www.dr.dk</p>`
	ex := extractString(t, "https://ex.org/", doc, nil)
	r := ex.Links[0].Robust
	if got := r.VersionDate.Format("2006-01-02T15:04:05Z"); got != next || !r.VersionDateLeapSecond || r.VersionDateRaw != leap {
		t.Errorf("versiondate = %s leap=%v raw=%q", got, r.VersionDateLeapSecond, r.VersionDateRaw)
	}
	s := r.Snapshots[0]
	if got := s.Datetime.Format("2006-01-02T15:04:05Z"); got != next || !s.LeapSecond || s.DatetimeRaw != leap {
		t.Errorf("snapshot = %s leap=%v raw=%q", got, s.LeapSecond, s.DatetimeRaw)
	}
	c := ex.Links[0].Mset.Copies[0]
	if got := c.Datetime.Format("2006-01-02T15:04:05Z"); got != next || !c.LeapSecond || c.DatetimeRaw != leap {
		t.Errorf("copy = %s leap=%v raw=%q", got, c.LeapSecond, c.DatetimeRaw)
	}
	if len(ex.PWIDs) != 1 || !ex.PWIDs[0].LeapSecond || ex.PWIDs[0].Datetime.Format("2006-01-02T15:04:05Z") != next {
		t.Errorf("pwids = %+v", ex.PWIDs)
	}
	n := 0
	for _, d := range append(ex.Links[0].Diagnostics, ex.Diagnostics...) {
		if d.Code == CodeLeapSecond {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d leap-second diagnostics, want 4", n)
	}
}

// TestPage_InvalidPWIDCandidates: every pwid: / urn:pwid: candidate that
// breaks the grammar is reported with a diagnostic (field, code, message),
// in page text, in href and in data-versionurl; none is dropped silently.
func TestPage_InvalidPWIDCandidates(t *testing.T) {
	tests := []struct {
		name, pwid, reason string
	}{
		{"impossible date", "pwid:archive.org:2016-02-30_11.20.29Z_page:https://www.dr.dk", "day 30 does not exist in February 2016"},
		{"month 13", "pwid:archive.org:2016-13-01_11.20.29Z_page:https://www.dr.dk", "month 13 does not exist"},
		{"hour 24", "urn:pwid:archive.org:2016-01-22T24:20:29Z:page:https://www.dr.dk", "hour 24"},
		{"empty archive id", "pwid::2016-01-22_11.20.29Z_page:https://www.dr.dk", "empty archive id"},
		{"empty archived item", "pwid:archive.org:2016-01-22_11.20.29Z_page:", "no archived item"},
		{"site coverage", "pwid:archive.org:2016-01-22_11.20.29Z_site:https://www.dr.dk", `unknown content spec "_site"`},
		{"bad precision", "pwid:archive.org:2016-01-22_11.20Z_page:https://www.dr.dk", "not hh.mm.ssZ"},
		{"bad percent-encoding in the archive id", "pwid:arch%zzive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk", "bad percent-encoding"},
		{"bad percent-encoding in the item", "pwid:archive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk/%zz", "bad percent-encoding"},
		{"invalid item URL", "pwid:archive.org:2016-01-22_11.20.29Z_page:https://[::1/", "not a valid URI"},
		{"no archived date", "pwid:archive.org", "no archived date"},
		{"archive id only, trailing colon", "pwid:archive.org:", "no archived date"},
		{"archive id with a slash", "pwid:archive/org:2016-01-22_11.20.29Z:x", "archive id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, where := range []struct{ name, doc, field string }{
				{"text", `<p>Cited as ` + tc.pwid + ` in 2017.</p>`, "text"},
				{"href", `<a href="` + tc.pwid + `">x</a>`, "href"},
				{"versionurl", `<a href="https://a.example/" data-originalurl="https://a.example/" data-versiondate="2024-01-01" data-versionurl="` + tc.pwid + `">x</a>`, "data-versionurl"},
			} {
				ex := extractString(t, "https://ex.org/", where.doc, nil)
				diags := ex.Diagnostics
				for _, l := range ex.Links {
					diags = append(diags, l.Diagnostics...)
				}
				found := false
				for _, d := range diags {
					if d.Code == CodeInvalidPWID && d.Field == where.field && strings.Contains(d.Message, tc.reason) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: no invalid-pwid diagnostic with %q in field %s: %+v", where.name, tc.reason, where.field, diags)
				}
				if len(ex.PWIDs) != 0 {
					t.Errorf("%s: invalid pwid recorded: %+v", where.name, ex.PWIDs)
				}
			}
		})
	}
	t.Run("too long in text", func(t *testing.T) {
		long := "pwid:archive.org:2016-01-22_11.20.29Z:https://a.example/" + strings.Repeat("x", maxPWIDCandidate)
		ex := extractString(t, "https://ex.org/", `<p>`+long+`</p>`, nil)
		if len(ex.Diagnostics) != 1 || ex.Diagnostics[0].Code != CodeInvalidPWID || !strings.Contains(ex.Diagnostics[0].Message, "too long") {
			t.Errorf("diagnostics = %+v", ex.Diagnostics)
		}
	})
}
