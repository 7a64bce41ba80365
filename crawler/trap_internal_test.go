package crawler

import (
	"net/url"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func TestRepeatedSegments(t *testing.T) {
	tests := []struct {
		path    string
		want    string // pattern, "" when the path passes
		comment string
	}{
		{"/more/more/", "", "twice in a row is allowed (Heritrix maxRepetitions 2)"},
		{"/more/more/more/", "/(more/){3,}", "three times is a trap"},
		{"/docs/more/more/more/more/x", "/docs/(more/){3,}", "the prefix before the run is kept"},
		{"/a/b/a/b/a/b/", "/(a/b/){3,}", "a pair of segments repeated"},
		{"/a/b/a/b/", "", "a pair twice is allowed"},
		{"/a/b/c/a/b/c/a/b/c/", "", "units of three segments are not looked for"},
		{"/a/a/b/b/c/c/", "", "each segment twice"},
		{"/x/x/x", "/(x/){3,}", "the last segment without its slash counts"},
		{"/", "", ""},
		{"", "", ""},
		{"/2024/01/01/01/", "", "three equal segments, not in a row... 01/01/01 is a run"},
	}
	// The last case: 01/01/01 is a run of three.
	tests[len(tests)-1].want = "/2024/(01/){3,}"
	for _, tt := range tests {
		got, _, _ := repeatedSegments(tt.path, 2)
		if got != tt.want {
			t.Errorf("repeatedSegments(%q) = %q, want %q (%s)", tt.path, got, tt.want, tt.comment)
		}
	}
}

func TestTraps_PathGuard(t *testing.T) {
	tr := newTraps(Options{}.trapLimits())
	long := "http://site.test/"
	for len(long) <= DefaultMaxURLLength {
		long += "abcdefghij"
	}
	deep := "http://site.test"
	for i := range 21 {
		deep += "/d" + string(rune('a'+i%26))
	}
	tests := []struct {
		url      string
		kind     audit.TrapKind
		pattern  string
		limit    int
		disabled Options
	}{
		{"http://site.test/ok/page.html", "", "", 0, Options{}},
		{long, audit.TrapURLTooLong, "http://site.test/abcdefghijabcdefghijabcdefghijabcdefghij…", DefaultMaxURLLength, Options{MaxURLLength: -1}},
		{"http://site.test/more/more/more/", audit.TrapRepeatedSegments, "http://site.test/(more/){3,}", 2, Options{MaxSegmentRepeats: -1}},
		{deep, audit.TrapTooDeep, "http://site.test/da/db/dc/…", 20, Options{MaxPathSegments: -1}},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		kind, pattern, _, limit := tr.pathGuard(u)
		if kind != tt.kind || pattern != tt.pattern || limit != tt.limit {
			t.Errorf("pathGuard(%.60s) = %q %q %d, want %q %q %d", tt.url, kind, pattern, limit, tt.kind, tt.pattern, tt.limit)
		}
		if tt.kind != "" {
			off := newTraps(tt.disabled.trapLimits())
			if kind, _, _, _ := off.pathGuard(u); kind != "" {
				t.Errorf("%.60s: guard %s still on when disabled", tt.url, kind)
			}
		}
	}
	// A deep path of 20 segments passes.
	u, _ := url.Parse("http://site.test/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20")
	if kind, _, _, _ := tr.pathGuard(u); kind != "" {
		t.Errorf("20 segments: %s, want none", kind)
	}
}

func TestTraps_StripSession(t *testing.T) {
	tr := newTraps(Options{}.trapLimits())
	tests := []struct {
		in, want, name string
	}{
		{"http://s.test/p?sid=0123456789abcdef0123456789abcdef", "http://s.test/p", "sid"},
		{"http://s.test/p?id=7&PHPSESSID=abc&x=1", "http://s.test/p?id=7&x=1", "phpsessid"},
		{"http://s.test/p;jsessionid=ABC123?x=1", "http://s.test/p?x=1", "jsessionid"},
		{"http://s.test/p?ASPSESSIONIDQADTDBQS=JKLMNOPQRSTUVWXYZABCDEFG", "http://s.test/p", "aspsessionidqadtdbqs"},
		{"http://s.test/p?CFID=123&CFTOKEN=456&page=2", "http://s.test/p?page=2", "cfid"},
		{"http://s.test/shop?zenid=x1&osCsid=y2", "http://s.test/shop", "zenid"},
		{"http://s.test/forum?s=0123456789abcdef0123456789abcdef&t=5", "http://s.test/forum?t=5", "s"},
		// Not session ids: a search term, a short numeric id.
		{"http://s.test/?s=linkrot", "http://s.test/?s=linkrot", ""},
		{"http://s.test/item?sid=42", "http://s.test/item?sid=42", ""},
		{"http://s.test/p?session=abc", "http://s.test/p?session=abc", ""},
	}
	for _, tt := range tests {
		u, _ := url.Parse(tt.in)
		got, name := tr.stripSession(u)
		if got.String() != tt.want || name != tt.name {
			t.Errorf("stripSession(%s) = %s, %q; want %s, %q", tt.in, got, name, tt.want, tt.name)
		}
	}
	off := newTraps(Options{KeepSessionIDs: true}.trapLimits())
	u, _ := url.Parse("http://s.test/p?PHPSESSID=abc")
	if got, name := off.stripSession(u); got != u || name != "" {
		t.Errorf("KeepSessionIDs: stripped to %s", got)
	}
}

func TestTraps_VariantsAndDelta(t *testing.T) {
	tr := newTraps(Options{MaxQueryVariants: 3}.trapLimits())
	cut := 0
	for i := range 10 {
		u, _ := url.Parse("http://s.test/calendar?m=" + string(rune('a'+i)))
		if pattern, start, ok := tr.variant(u); !ok {
			if start != "http://s.test/calendar?m=a" {
				t.Errorf("trap starts on %q, want the first variant", start)
			}
			tr.cut(audit.TrapQueryVariants, pattern, start, u, 3)
			cut++
		}
	}
	if cut != 7 {
		t.Errorf("cut %d of 10 variants, want 7", cut)
	}
	d := tr.delta()
	if len(d) != 1 || d[0].Cut != 7 || d[0].Pattern != "http://s.test/calendar?…" || d[0].Example != "http://s.test/calendar?m=d" {
		t.Fatalf("delta = %+v", d)
	}
	if d := tr.delta(); len(d) != 0 {
		t.Errorf("second delta = %+v, want nothing new", d)
	}
	u, _ := url.Parse("http://s.test/calendar?m=z")
	tr.cut(audit.TrapQueryVariants, "http://s.test/calendar?…", "http://s.test/", u, 3)
	if d := tr.delta(); len(d) != 1 || d[0].Cut != 1 {
		t.Errorf("delta after one more cut = %+v", d)
	}
	if l := tr.list(); len(l) != 1 || l[0].Cut != 8 {
		t.Errorf("list = %+v", l)
	}
}

// TestTraps_BoundedPatterns: a site generating endless distinct trap
// patterns cannot grow the trap list past maxTrapPatterns.
func TestTraps_BoundedPatterns(t *testing.T) {
	tr := newTraps(Options{}.trapLimits())
	for i := range maxTrapPatterns + 500 {
		seg := "s" + string(rune('a'+i%26)) + string(rune('a'+(i/26)%26)) + string(rune('a'+(i/676)%26))
		u, _ := url.Parse("http://s.test/" + seg + "/" + seg + "/" + seg + "/")
		kind, pattern, _, limit := tr.pathGuard(u)
		if kind == "" {
			t.Fatalf("%s passed", u)
		}
		tr.cut(kind, pattern, "", u, limit)
	}
	l := tr.list()
	if len(l) > maxTrapPatterns+1 {
		t.Errorf("%d traps kept, want at most %d", len(l), maxTrapPatterns+1)
	}
	var total int64
	for _, x := range l {
		total += x.Cut
	}
	if total != maxTrapPatterns+500 {
		t.Errorf("total cut %d, want %d", total, maxTrapPatterns+500)
	}
}

// FuzzTrapGuards: the guards never panic on hostile URLs, stripping
// session ids is idempotent, and a stripped URL has no session parameter
// left.
func FuzzTrapGuards(f *testing.F) {
	for _, s := range []string{
		"http://s.test/more/more/more/", "http://s.test/p;jsessionid=A?x=1&PHPSESSID=b", "http://s.test/?s=0123456789abcdef0123",
		"http://s.test/a/b/a/b/a/b", "http://s.test//////", "http://s.test/%2F%2F?%zz=1&&=&sid", "http://s.test/?ASPSESSIONIDX=1",
	} {
		f.Add(s)
	}
	tr := newTraps(Options{}.trapLimits())
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		tr.pathGuard(u)
		repeatedSegments(u.EscapedPath(), 2)
		s1, _ := tr.stripSession(u)
		s2, name := tr.stripSession(s1)
		if name != "" || s2.String() != s1.String() {
			t.Fatalf("stripSession not idempotent: %q → %q → %q (%s)", raw, s1, s2, name)
		}
		if p, _, ok := tr.variant(u); !ok && p == "" {
			t.Fatalf("variant cut without a pattern")
		}
	})
}

// TestTraps_StripSessionNoneAllocs: a URL without a session parameter
// (nearly every link) is returned as it is, without an allocation.
func TestTraps_StripSessionNoneAllocs(t *testing.T) {
	tr := newTraps(Options{}.trapLimits())
	u, err := url.Parse("http://site.test/Docs/b.html")
	if err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		if got, name := tr.stripSession(u); got != u || name != "" {
			t.Fatalf("stripSession(%s) = %s, %q", u, got, name)
		}
	}); allocs != 0 {
		t.Fatalf("%v allocations, want 0", allocs)
	}
}

// FuzzIndexLower: indexLower is strings.Index of the lower-cased string.
func FuzzIndexLower(f *testing.F) {
	for _, s := range []string{"/a;jsessionid=1", "/A;JSESSIONID=1", "/İ;JSessionID=x", ";jsessionid=", ";jsessionid", "", "/x;jsessionid=;jsessionid="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := indexLower(s, ";jsessionid="), strings.Index(strings.ToLower(s), ";jsessionid="); got != want {
			t.Fatalf("indexLower(%q) = %d, want %d", s, got, want)
		}
	})
}
