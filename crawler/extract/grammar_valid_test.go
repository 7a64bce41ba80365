package extract

import (
	"reflect"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// grammarCase is one <a> tag extracted from a page at grammarPage: its
// attributes as written, the diagnostic codes wanted (none for a valid
// value), and what the parsers must have read.
type grammarCase struct {
	name  string
	attrs string
	codes []string
	// orig, date (RFC 3339 UTC, "" for none), snaps (snapshot URLs) and
	// mset (fmtMset) are checked when not empty.
	orig  string
	date  string
	snaps []string
	mset  string
}

const grammarPage = "https://site.example/dir/page.html"

// validGrammarCases are values every grammar allows, written in the
// quirky but valid ways HTML and the ABNFs permit: none may raise a
// diagnostic.
var validGrammarCases = []grammarCase{
	// HTML attribute syntax: names are case-insensitive, values may be
	// unquoted or single-quoted, "=" may have whitespace around it.
	{name: "upper-case attribute names",
		attrs: `HREF="https://x.example/" DATA-ORIGINALURL="https://x.example/" Data-VersionDate="2024-11-20" DATA-VERSIONURL="https://perma.cc/44TF-9JXB"`,
		orig:  "https://x.example/", date: "2024-11-20T12:00:00Z", snaps: []string{"https://perma.cc/44TF-9JXB"}},
	{name: "unquoted values",
		attrs: `href=https://x.example/ data-originalurl=https://x.example/ data-versiondate=20241120 data-versionurl=https://perma.cc/44TF-9JXB`,
		orig:  "https://x.example/", date: "2024-11-20T12:00:00Z", snaps: []string{"https://perma.cc/44TF-9JXB"}},
	{name: "single-quoted values, whitespace around =",
		attrs: "href = 'https://x.example/'  data-originalurl =\t'https://x.example/' data-versiondate\n=\n'2024-11-20T10:00:00Z' data-versionurl = 'https://perma.cc/44TF-9JXB'",
		orig:  "https://x.example/", date: "2024-11-20T10:00:00Z", snaps: []string{"https://perma.cc/44TF-9JXB"}},
	{name: "whitespace inside the values",
		attrs: "href=\"https://x.example/\" data-originalurl=\" https://x.example/\n\" data-versiondate=\"\n  2024-11-20 \" data-versionurl=\"\n https://perma.cc/44TF-9JXB  2024-11-20T16:43:33Z \n\t https://web.archive.org/web/20241121100333/https://www.w3.org/ 20241121100333\n\"",
		orig:  "https://x.example/", date: "2024-11-20T12:00:00Z",
		snaps: []string{"https://perma.cc/44TF-9JXB", "https://web.archive.org/web/20241121100333/https://www.w3.org/"}},
	{name: "entities in values",
		attrs: `href="https://x.example/?a=1&amp;b=2" data-originalurl="https://x.example/?a=1&amp;b=2" data-versiondate="2024&#45;11&#45;20" data-versionurl="https://perma.cc/x?a=1&amp;b=2"`,
		orig:  "https://x.example/?a=1&b=2", date: "2024-11-20T12:00:00Z", snaps: []string{"https://perma.cc/x?a=1&b=2"}},

	// data-versiondate: the four ABNF 6.1 productions, and "T"/"Z" in
	// either case (RFC 5234 2.3: ABNF strings are case-insensitive).
	{name: "versiondate iso8601-date", attrs: robustAttrs("2024-02-29"), date: "2024-02-29T12:00:00Z"},
	{name: "versiondate web-archive-date", attrs: robustAttrs("20240229"), date: "2024-02-29T12:00:00Z"},
	{name: "versiondate iso8601-datetime", attrs: robustAttrs("2024-11-21T16:22:07Z"), date: "2024-11-21T16:22:07Z"},
	{name: "versiondate iso8601-datetime lower-case t z", attrs: robustAttrs("2024-11-21t16:22:07z"), date: "2024-11-21T16:22:07Z"},
	{name: "versiondate web-archive-datetime", attrs: robustAttrs("20241121162207"), date: "2024-11-21T16:22:07Z"},
	{name: "versiondate midnight and last second", attrs: robustAttrs("2024-12-31T23:59:59Z"), date: "2024-12-31T23:59:59Z"},

	// data-versionurl (ABNF 6.2): snapshot URIs with optional datetimes
	// in any of the versiondate forms; URIs with ports, userinfo, IPv6,
	// queries and fragments; other schemes after the first.
	{name: "versionurl every datetime form",
		attrs: `href="https://x.example/" data-originalurl="https://x.example/" data-versiondate="2024-11-20" data-versionurl="https://a.example/1 2024-11-20 https://a.example/2 20241120 https://a.example/3 2024-11-20T10:00:00Z https://a.example/4 20241120100000 https://a.example/5 2024-11-20t10:00:00z https://a.example/6"`,
		snaps: []string{"https://a.example/1", "https://a.example/2", "https://a.example/3", "https://a.example/4", "https://a.example/5", "https://a.example/6"}},
	{name: "versionurl authority forms",
		attrs: `href="https://x.example/" data-originalurl="https://x.example/" data-versiondate="2024-11-20" data-versionurl="https://user@a.example:8443/p?q=1#f http://[2001:db8::1]:8080/x HTTPS://B.EXAMPLE/Y"`,
		snaps: []string{"https://user@a.example:8443/p?q=1#f", "http://[2001:db8::1]:8080/x", "https://b.example/Y"}},
	{name: "versionurl host without path", attrs: `href="https://x.example/" data-originalurl="https://x.example/" data-versiondate="2024-11-20" data-versionurl="https://perma.cc"`,
		snaps: []string{"https://perma.cc/"}},

	// data-originalurl: any absolute URI.
	{name: "originalurl with port, query, fragment, percent-encoding",
		attrs: `href="https://x.example/" data-originalurl="http://x.example:8080/a%20b/c?d=e&amp;f#g" data-versiondate="2024-11-20"`,
		orig:  "http://x.example:8080/a%20b/c?d=e&f#g"},
	{name: "originalurl other than href (example 4.1.3)",
		attrs: `href="https://obamawhitehouse.archives.gov" data-originalurl="https://whitehouse.gov" data-versiondate="2017-01-20T12:00:00Z" data-versionurl="https://web.archive.org/web/20170120160218/https://www.whitehouse.gov/ 2017-01-20T16:02:18Z https://perma.cc/39FJ-5K7L 2017-01-20T14:26:00Z"`,
		orig:  "https://whitehouse.gov/", date: "2017-01-20T12:00:00Z"},

	// mset (mset-attribute 3.1): every production of a reference
	// candidate, with zero or more spaces around each part.
	{name: "mset temporal reference", attrs: `href="https://x.example/" mset="2014-03-17"`,
		mset: wantMset([]string{"2014-03-17T12:00:00Z"})},
	{name: "mset temporal reference, local date and time", attrs: `href="https://x.example/" mset=" 2014-03-17T10:00 "`,
		mset: wantMset([]string{"2014-03-17T10:00:00Z"})},
	{name: "mset temporal reference, global with space and offset", attrs: `href="https://x.example/" mset="2014-03-17 10:00:00.123+0100"`,
		mset: wantMset([]string{"2014-03-17T09:00:00Z"})},
	{name: "mset two temporal references", attrs: `href="https://x.example/" mset="2014-03-17,2014-03-18"`,
		mset: wantMset([]string{"2014-03-17T12:00:00Z", "2014-03-18T12:00:00Z"})},
	{name: "mset copy link", attrs: `href="https://x.example/" mset="https://perma.cc/RL33-W794"`,
		mset: wantMset(nil, "https://perma.cc/RL33-W794")},
	{name: "mset copy link and datetime", attrs: `href="https://x.example/" mset="https://perma.cc/RL33-W794 2014-03-10T10:00Z"`,
		mset: wantMset(nil, cp("https://perma.cc/RL33-W794", "2014-03-10T10:00:00Z", false, "2014-03-10T10:00Z", ""))},
	{name: "mset copy link and link type", attrs: `href="https://x.example/" mset="https://perma.cc/RL33-W794 MEMENTO"`,
		mset: wantMset(nil, cp("https://perma.cc/RL33-W794", "", false, "", "memento"))},
	{name: "mset copy link, datetime and link type", attrs: "href=\"https://x.example/\" mset=\"\n\thttps://perma.cc/RL33-W794\n 2014-03-10 \n memento\n\"",
		mset: wantMset(nil, cp("https://perma.cc/RL33-W794", "2014-03-10T12:00:00Z", true, "2014-03-10", "memento"))},
	{name: "mset relative copy links", attrs: `href="https://x.example/" mset="/copies/a.html, copies/b.html 2014-03-10, //mirror.example/c memento, ?v=2, #section"`,
		mset: wantMset(nil, "https://site.example/copies/a.html",
			cp("https://site.example/dir/copies/b.html", "2014-03-10T12:00:00Z", true, "2014-03-10", ""),
			cp("https://mirror.example/c", "", false, "", "memento"),
			"https://site.example/dir/page.html?v=2", "https://site.example/dir/page.html#section")},
	{name: "mset all together, upper-case name", attrs: `href="https://x.example/" MSET="2014-03-17, https://web.archive.org/web/20140211110349/https://x.example/ 2014-02-14, https://perma.cc/RL33-W794 2014-03-10 memento"`,
		mset: wantMset([]string{"2014-03-17T12:00:00Z"},
			cp("https://web.archive.org/web/20140211110349/https://x.example/", "2014-02-14T12:00:00Z", true, "2014-02-14", ""),
			cp("https://perma.cc/RL33-W794", "2014-03-10T12:00:00Z", true, "2014-03-10", "memento"))},
}

// invalidGrammarCases sit beside the valid ones: each breaks exactly one
// rule, and gets exactly the diagnostic that names it.
var invalidGrammarCases = []grammarCase{
	{name: "versiondate year and month only", attrs: robustAttrs("2024-11"), codes: []string{CodeInvalidDatetime}},
	{name: "versiondate impossible date", attrs: robustAttrs("2023-02-29"), codes: []string{CodeInvalidDatetime}},
	{name: "versiondate no Z", attrs: robustAttrs("2024-11-21T16:22:07"), codes: []string{CodeLenientDatetime}, date: "2024-11-21T16:22:07Z"},
	{name: "versiondate space for T", attrs: robustAttrs("2024-11-21 16:22:07Z"), codes: []string{CodeLenientDatetime}, date: "2024-11-21T16:22:07Z"},
	{name: "versiondate web-archive with T and Z (spec 3.3 example)", attrs: robustAttrs("20241121T162207Z"), codes: []string{CodeLenientDatetime}, date: "2024-11-21T16:22:07Z"},
	{name: "versiondate offset", attrs: robustAttrs("2024-11-21T16:22:07+01:00"), codes: []string{CodeLenientDatetime}, date: "2024-11-21T15:22:07Z"},
	{name: "versiondate missing", attrs: `href="https://x.example/" data-originalurl="https://x.example/"`, codes: []string{CodeMissingVersionDate}},
	{name: "versionurl relative (3.4: absolute)", attrs: `href="https://x.example/" data-originalurl="https://x.example/" data-versiondate="2024-11-20" data-versionurl="/web/2024/https://x.example/"`,
		codes: []string{CodeRelativeURL}, snaps: []string{"https://site.example/web/2024/https://x.example/"}},
	{name: "versionurl two datetimes", attrs: `href="https://x.example/" data-originalurl="https://x.example/" data-versiondate="2024-11-20" data-versionurl="https://a.example/ 2024-11-20 2024-11-21"`,
		codes: []string{CodeExtraDatetime}, snaps: []string{"https://a.example/"}},
	{name: "versionurl datetime first", attrs: `href="https://x.example/" data-originalurl="https://x.example/" data-versiondate="2024-11-20" data-versionurl="2024-11-20 https://a.example/"`,
		codes: []string{CodeDatetimeWithoutURI}, snaps: []string{"https://a.example/"}},
	{name: "originalurl relative (3.2: absolute)", attrs: `href="https://x.example/" data-originalurl="/orig" data-versiondate="2024-11-20"`,
		codes: []string{CodeRelativeOriginalURL}, orig: "https://site.example/orig"},
	{name: "originalurl missing", attrs: `href="https://x.example/" data-versiondate="2024-11-20"`,
		codes: []string{CodeMissingOriginalURL}, orig: "https://x.example/"},
	{name: "mset lower-case t (HTML wants T)", attrs: `href="https://x.example/" mset="2014-03-17t10:00Z"`,
		codes: []string{CodeLenientDatetime}, mset: wantMset([]string{"2014-03-17T10:00:00Z"})},
	{name: "mset compact date", attrs: `href="https://x.example/" mset="20140317"`,
		codes: []string{CodeLenientDatetime}, mset: wantMset([]string{"2014-03-17T12:00:00Z"})},
	{name: "mset trailing comma", attrs: `href="https://x.example/" mset="2014-03-17,"`,
		codes: []string{CodeEmptyCandidate}, mset: wantMset([]string{"2014-03-17T12:00:00Z"})},
	{name: "mset temporal reference with more", attrs: `href="https://x.example/" mset="2014-03-17 memento"`,
		codes: []string{CodeInvalidCandidate}, mset: wantMset(nil)},
	{name: "mset missing comma", attrs: `href="https://x.example/" mset="https://a.example/ https://b.example/"`,
		codes: []string{CodeInvalidCandidate}, mset: wantMset(nil, "https://a.example/")},
	{name: "mset bad link type", attrs: `href="https://x.example/" mset="https://a.example/ 2014-03-10 mem/ento"`,
		codes: []string{CodeInvalidLinkType}, mset: wantMset(nil, cp("https://a.example/", "2014-03-10T12:00:00Z", true, "2014-03-10", ""))},
	{name: "mset without href", attrs: `mset="2014-03-17"`, codes: []string{CodeMsetWithoutHref}},
}

// robustAttrs is a complete Robust Link with data-versiondate date.
func robustAttrs(date string) string {
	return `href="https://x.example/" data-originalurl="https://x.example/" data-versiondate="` + date + `" data-versionurl="https://perma.cc/44TF-9JXB"`
}

// TestPage_GrammarValidForms: valid values, however quirkily written,
// raise no diagnostic; each invalid neighbour raises exactly its own.
func TestPage_GrammarValidForms(t *testing.T) {
	run := func(t *testing.T, tt grammarCase) {
		ex := extractString(t, grammarPage, "<p><a "+tt.attrs+">x</a>", nil)
		var diags []audit.Diagnostic
		diags = append(diags, ex.Diagnostics...)
		var l *audit.Link
		for i := range ex.Links {
			diags = append(diags, ex.Links[i].Diagnostics...)
			if l == nil {
				l = &ex.Links[i]
			}
		}
		want := tt.codes
		if want == nil {
			want = []string{}
		}
		if got := codes(diags); !reflect.DeepEqual(got, want) {
			t.Errorf("diagnostics %v, want %v:\n%+v", got, want, diags)
		}
		checkDiags(t, "", diags)
		if tt.orig == "" && tt.date == "" && tt.snaps == nil && tt.mset == "" {
			return
		}
		if l == nil {
			t.Fatalf("no link extracted")
		}
		if tt.orig != "" || tt.date != "" || tt.snaps != nil {
			if l.Robust == nil {
				t.Fatalf("no Robust Links attributes read")
			}
			if tt.orig != "" && l.Robust.OriginalURL != tt.orig {
				t.Errorf("originalurl %q, want %q", l.Robust.OriginalURL, tt.orig)
			}
			if tt.date != "" {
				if g, w := fmtTime(l.Robust.VersionDate), fmtTime(utcTime(t, tt.date)); g != w {
					t.Errorf("versiondate %s, want %s", g, w)
				}
			}
			if tt.snaps != nil {
				var got []string
				for _, s := range l.Robust.Snapshots {
					got = append(got, s.URL)
				}
				if strings.Join(got, " ") != strings.Join(tt.snaps, " ") {
					t.Errorf("snapshots %q, want %q", got, tt.snaps)
				}
			}
		}
		if tt.mset != "" {
			if g := fmtMset(l.Mset); g != tt.mset {
				t.Errorf("mset\n got %s\nwant %s", g, tt.mset)
			}
		}
	}
	for _, tt := range validGrammarCases {
		if tt.codes != nil {
			t.Fatalf("%s: a valid case wants diagnostics", tt.name)
		}
		t.Run("valid/"+tt.name, func(t *testing.T) { run(t, tt) })
	}
	for _, tt := range invalidGrammarCases {
		if len(tt.codes) == 0 {
			t.Fatalf("%s: an invalid case wants no diagnostic", tt.name)
		}
		t.Run("invalid/"+tt.name, func(t *testing.T) { run(t, tt) })
	}
}
