package study

import (
	"math"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

func mustAt(t *testing.T, s string) CitedAt {
	t.Helper()
	at, err := ParseCitedAt(s)
	if err != nil {
		t.Fatalf("ParseCitedAt(%q): %v", s, err)
	}
	return at
}

func day(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseCitedAt(t *testing.T) {
	for _, c := range []struct {
		in       string
		from, to string
		prec     Precision
		str      string
		bad      bool
	}{
		{in: "2014-05-03", from: "2014-05-03T00:00:00Z", to: "2014-05-04T00:00:00Z", prec: Day, str: "2014-05-03"},
		{in: " 2014-05-03 ", from: "2014-05-03T00:00:00Z", to: "2014-05-04T00:00:00Z", prec: Day, str: "2014-05-03"},
		{in: "2014-05-03T10:20:30+02:00", from: "2014-05-03T08:20:30Z", to: "2014-05-03T08:20:30Z", prec: Instant, str: "2014-05-03T08:20:30Z"},
		{in: "2014-05-03t10:20:30z", from: "2014-05-03T10:20:30Z", to: "2014-05-03T10:20:30Z", prec: Instant, str: "2014-05-03T10:20:30Z"},
		{in: "2014-02", from: "2014-02-01T00:00:00Z", to: "2014-03-01T00:00:00Z", prec: Month, str: "2014-02"},
		{in: "2014", from: "2014-01-01T00:00:00Z", to: "2015-01-01T00:00:00Z", prec: Year, str: "2014"},
		{in: "", bad: true},
		{in: "2014-13-01", bad: true},
		{in: "2014-02-30", bad: true},
		{in: "03/05/2014", bad: true},
		{in: "2014-5-3", bad: true},
		{in: "14", bad: true},
		{in: "0000", bad: true},
		{in: "2014-05-03T25:00:00Z", bad: true},
		{in: "yesterday", bad: true},
	} {
		at, err := ParseCitedAt(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("ParseCitedAt(%q) = %v, want an error", c.in, at)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseCitedAt(%q): %v", c.in, err)
			continue
		}
		if !at.From.Equal(day(c.from)) || !at.To.Equal(day(c.to)) || at.Precision != c.prec || at.String() != c.str {
			t.Errorf("ParseCitedAt(%q) = [%v, %v) %v %q, want [%s, %s) %v %q", c.in, at.From, at.To, at.Precision, at.String(), c.from, c.to, c.prec, c.str)
		}
	}
}

func TestDatePartsAt(t *testing.T) {
	for _, c := range []struct {
		y, m, d int
		str     string
		bad     bool
	}{
		{2014, 0, 0, "2014", false},
		{2014, 5, 0, "2014-05", false},
		{2014, 5, 3, "2014-05-03", false},
		{2014, 0, 3, "", true},
		{2014, 13, 0, "", true},
		{2014, 2, 29, "", true},
		{2016, 2, 29, "2016-02-29", false},
		{0, 0, 0, "", true},
	} {
		at, err := datePartsAt(c.y, c.m, c.d)
		if (err != nil) != c.bad || (!c.bad && at.String() != c.str) {
			t.Errorf("datePartsAt(%d, %d, %d) = %q, %v; want %q (error %v)", c.y, c.m, c.d, at.String(), err, c.str, c.bad)
		}
	}
}

func TestDistance(t *testing.T) {
	d := 24 * time.Hour
	for _, c := range []struct {
		at, m string
		want  time.Duration
	}{
		{"2014-05-03", "2014-05-03T12:00:00Z", 0},
		{"2014-05-03", "2014-05-03T00:00:00Z", 0},
		{"2014-05-03", "2014-05-02T00:00:00Z", -d},
		{"2014-05-03", "2014-05-10T23:00:00Z", 7*d - time.Hour + time.Nanosecond},
		{"2014-05-03", "2014-05-04T00:00:00Z", time.Nanosecond},
		{"2014-05-03T12:00:00Z", "2014-05-03T06:00:00Z", -6 * time.Hour},
		{"2014-05-03T12:00:00Z", "2014-05-04T12:00:00Z", d},
		{"2014-05-03T12:00:00Z", "2014-05-03T12:00:00Z", 0},
		{"2014", "2014-07-01T00:00:00Z", 0},
		{"2014", "2013-12-25T00:00:00Z", -7 * d},
		{"2014-05", "2014-06-08T00:00:00Z", 7*d + time.Nanosecond},
	} {
		if got := Distance(mustAt(t, c.at), day(c.m)); got != c.want {
			t.Errorf("Distance(%s, %s) = %v, want %v", c.at, c.m, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	ms := func(ds ...string) []Memento {
		var out []Memento
		for _, d := range ds {
			out = append(out, Memento{Datetime: day(d), URL: "https://archive.test/" + d})
		}
		return out
	}
	for _, c := range []struct {
		name string
		at   string
		ms   []Memento
		want int
	}{
		{"none", "2014-05-03", nil, -1},
		{"only zero datetimes", "2014-05-03", []Memento{{URL: "x"}}, -1},
		{"single far", "2014-05-03", ms("2010-01-01T00:00:00Z"), 0},
		{"nearest after", "2014-05-03", ms("2014-04-20T00:00:00Z", "2014-05-05T00:00:00Z"), 1},
		{"tie goes before", "2014-05-03T12:00:00Z", ms("2014-05-05T12:00:00Z", "2014-05-01T12:00:00Z"), 1},
		{"two inside the day: earlier", "2014-05-03", ms("2014-05-03T18:00:00Z", "2014-05-03T06:00:00Z"), 1},
		{"equal datetimes: first listed", "2014-05-03", ms("2014-05-01T00:00:00Z", "2014-05-01T00:00:00Z"), 0},
		{"inside a year beats near outside", "2014", ms("2013-12-31T23:00:00Z", "2014-12-01T00:00:00Z"), 1},
	} {
		if got := Nearest(mustAt(t, c.at), c.ms); got != c.want {
			t.Errorf("%s: Nearest = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestBroken(t *testing.T) {
	want := map[audit.Verdict]Tri{
		audit.VerdictOK: No, audit.VerdictRedirected: No, audit.VerdictMoved: No,
		audit.VerdictNotFound: Yes, audit.VerdictGone: Yes, audit.VerdictClientError: Yes,
		audit.VerdictBlocked: Unknown, audit.VerdictRateLimited: Unknown, audit.VerdictServerError: Yes,
		audit.VerdictTimeout: Unknown, audit.VerdictDNSError: Yes, audit.VerdictConnectionError: Yes,
		audit.VerdictTLSError: Yes, audit.VerdictTooManyRedirects: Yes, audit.VerdictRedirectLoop: Yes,
		audit.VerdictSoft404: Yes, audit.VerdictRedirectToRoot: Yes, audit.VerdictParked: Yes,
		audit.VerdictSkipped: Unknown, audit.VerdictFragmentMissing: Yes, audit.VerdictRefused: Unknown,
		audit.VerdictInvalidURL: Yes, "": Unknown,
	}
	for _, v := range append(audit.Verdicts, "") {
		w, ok := want[v]
		if !ok {
			t.Errorf("verdict %q has no expectation: decide whether it is rot", v)
			continue
		}
		if got := Broken(v); got != w {
			t.Errorf("Broken(%q) = %v, want %v", v, got, w)
		}
	}
}

func TestJudge(t *testing.T) {
	ref := Reference{URL: "https://example.test/a", CitedAt: mustAt(t, "2014-05-03")}
	w := Wave{Number: 2, CheckedAt: day("2024-01-01T00:00:00Z")}
	near := func(drift string) []Memento {
		return []Memento{{Datetime: day("2014-05-06T00:00:00Z"), URL: "https://archive.test/m", Drift: drift}}
	}
	far := []Memento{{Datetime: day("2014-06-06T00:00:00Z"), URL: "https://archive.test/far", Drift: audit.BandUnchanged}}
	for _, c := range []struct {
		name   string
		res    Result
		broken Tri
		rep    bool
		drift  string
		rot    Tri
	}{
		{"live unchanged", Result{Verdict: audit.VerdictOK, Status: 200, Mementos: near(audit.BandUnchanged)}, No, true, audit.BandUnchanged, No},
		{"live minor", Result{Verdict: audit.VerdictOK, Mementos: near(audit.BandMinor)}, No, true, audit.BandMinor, No},
		{"live major", Result{Verdict: audit.VerdictMoved, Mementos: near(audit.BandMajor)}, No, true, audit.BandMajor, Yes},
		{"live off-topic", Result{Verdict: audit.VerdictOK, Mementos: near(audit.BandOffTopic)}, No, true, audit.BandOffTopic, Yes},
		{"live, drift not compared", Result{Verdict: audit.VerdictOK, Mementos: near("")}, No, true, DriftUnmeasured, Unknown},
		{"live, memento outside window", Result{Verdict: audit.VerdictOK, Mementos: far}, No, false, DriftUnmeasured, Unknown},
		{"live, never archived", Result{Verdict: audit.VerdictOK}, No, false, DriftUnmeasured, Unknown},
		{"soft-404", Result{Verdict: audit.VerdictSoft404, Mementos: near(audit.BandOffTopic)}, Yes, true, DriftUnmeasured, Yes},
		{"parked, never archived", Result{Verdict: audit.VerdictParked}, Yes, false, DriftUnmeasured, Yes},
		{"timeout", Result{Verdict: audit.VerdictTimeout, Mementos: near(audit.BandMajor)}, Unknown, true, DriftUnmeasured, Unknown},
		{"not checked", Result{}, Unknown, false, DriftUnmeasured, Unknown},
	} {
		r := Judge(ref, w, c.res, Params{})
		if r.Broken != c.broken || r.Representative != c.rep || r.Drift != c.drift || r.ReferenceRot != c.rot || r.Wave != 2 {
			t.Errorf("%s: broken %v rep %v drift %q rot %v wave %d; want %v %v %q %v 2", c.name, r.Broken, r.Representative, r.Drift, r.ReferenceRot, r.Wave, c.broken, c.rep, c.drift, c.rot)
		}
	}
	// The window is a parameter, and its edge is inside.
	r := Judge(ref, w, Result{Verdict: audit.VerdictOK, Mementos: far}, Params{Window: 40 * 24 * time.Hour})
	if !r.Representative || r.Drift != audit.BandUnchanged {
		t.Errorf("40-day window: representative %v drift %q", r.Representative, r.Drift)
	}
	edge := []Memento{{Datetime: day("2014-04-26T00:00:00Z"), URL: "https://archive.test/edge", Drift: audit.BandUnchanged}}
	if r := Judge(ref, w, Result{Verdict: audit.VerdictOK, Mementos: edge}, Params{}); !r.Representative || r.DistanceDays() != -7 {
		t.Errorf("memento exactly 7 days before: representative %v distance %v", r.Representative, r.DistanceDays())
	}
	if r := Judge(ref, w, Result{}, Params{}); !math.IsNaN(r.DistanceDays()) {
		t.Errorf("no memento: DistanceDays = %v, want NaN", r.DistanceDays())
	}
}

func TestBuildSharesResultsInOrder(t *testing.T) {
	refs := []Reference{
		{URL: "https://a.test/", CitedAt: mustAt(t, "2010-01-01"), ID: "1"},
		{URL: "https://b.test/", CitedAt: mustAt(t, "2011-01-01"), ID: "2"},
		{URL: "https://a.test/", CitedAt: mustAt(t, "2012-01-01"), ID: "3"},
	}
	waves := []Wave{
		{Number: 1, Results: map[string]Result{"https://a.test/": {Verdict: audit.VerdictOK}, "https://b.test/": {Verdict: audit.VerdictGone}}},
		{Number: 2, Results: map[string]Result{"https://a.test/": {Verdict: audit.VerdictNotFound}}},
	}
	rows := Build(refs, waves, Params{})
	if got := ReferenceRecord(rows[3]); got[14] != "" || got[9] != "" || got[15] != DriftUnmeasured {
		t.Errorf("unchecked row %q", got)
	}
	for _, s := range Summarize(rows) {
		if s.Wave == 2 && s.Scope == ScopeOverall && (s.Represented.N != 2 || s.N != 3) {
			t.Errorf("wave 2: representative share over %d references of %d, want the 2 checked of 3", s.Represented.N, s.N)
		}
	}
	want := []struct {
		id     string
		wave   int
		broken Tri
	}{{"1", 1, No}, {"1", 2, Yes}, {"2", 1, Yes}, {"2", 2, Unknown}, {"3", 1, No}, {"3", 2, Yes}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		if rows[i].Checked != (i != 3) {
			t.Errorf("row %d: checked %v", i, rows[i].Checked)
		}
		if rows[i].Ref.ID != w.id || rows[i].Wave != w.wave || rows[i].Broken != w.broken {
			t.Errorf("row %d: id %s wave %d broken %v, want %+v", i, rows[i].Ref.ID, rows[i].Wave, rows[i].Broken, w)
		}
	}
}
