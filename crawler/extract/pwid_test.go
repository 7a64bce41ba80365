package extract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// fmtPWID renders the fields ParsePWID sets.
func fmtPWID(p audit.PWID) string {
	if p == (audit.PWID{}) {
		return "zero"
	}
	return fmt.Sprintf("raw=%s archive=%s datetime=%s spec=%q item=%s source=%q link=%d",
		p.Raw, p.ArchiveID, fmtTime(p.Datetime), p.ContentSpec, p.Item, p.Source, p.Link)
}

// pw renders an expected PWID like fmtPWID.
func pw(raw, archive, datetime, spec, item string) string {
	return fmt.Sprintf("raw=%s archive=%s datetime=%s spec=%q item=%s source=%q link=%d",
		raw, archive, datetime, spec, item, "", 0)
}

type pwidTest struct {
	name  string
	in    string
	want  string // pw(...), or "zero"
	ok    bool
	codes string
}

// pwidValid returns a test of a valid pwid that is its own Raw.
func pwidValid(name, in, archive, datetime, spec, item string) pwidTest {
	return pwidTest{name, in, pw(in, archive, datetime, spec, item), true, ""}
}

// pwidLenient returns a test of a lenient pwid that is its own Raw.
func pwidLenient(name, in, archive, datetime, spec, item, codes string) pwidTest {
	return pwidTest{name, in, pw(in, archive, datetime, spec, item), true, codes}
}

func pwidInvalid(name, in string) pwidTest {
	return pwidTest{name, in, "zero", false, "invalid-pwid"}
}

const dr = "https://www.dr.dk"

var pwidTests = []pwidTest{
	// pwid-uri ABNF, every production.
	pwidValid("underscore delimiter with dots", "pwid:archive.org:2016-01-22_11.20.29Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr),
	pwidValid("T delimiter with dots", "pwid:archive.org:2016-01-22T11.20.29Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr),
	pwidValid("underscore delimiter without dots", "pwid:archive.org:2016-01-22_112029Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr),
	pwidValid("T delimiter without dots", "pwid:archive.org:2016-01-22T112029Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr),
	pwidValid("first dot only", "pwid:archive.org:2016-01-22_11.2029Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr),
	pwidValid("second dot only", "pwid:archive.org:2016-01-22_1120.29Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr),
	pwidValid("content spec part", "pwid:archive.org:2016-01-22_11.20.29Z_part:"+dr, "archive.org", "2016-01-22T11:20:29Z", "part", dr),
	pwidValid("content spec coll", "pwid:archive.org:2016-01-22_11.20.29Z_coll:"+dr, "archive.org", "2016-01-22T11:20:29Z", "coll", dr),
	pwidValid("content spec snapshot", "pwid:archive.org:2016-01-22_11.20.29Z_snapshot:"+dr, "archive.org", "2016-01-22T11:20:29Z", "snapshot", dr),
	pwidValid("content spec rec", "pwid:archive.org:2016-01-22_11.20.29Z_rec:"+dr, "archive.org", "2016-01-22T11:20:29Z", "rec", dr),
	pwidValid("content spec other", "pwid:archive.org:2016-01-22_11.20.29Z_other:"+dr, "archive.org", "2016-01-22T11:20:29Z", "other", dr),
	pwidValid("no content spec", "pwid:archive.org:2016-01-22_11.20.29Z:"+dr, "archive.org", "2016-01-22T11:20:29Z", "", dr),
	pwidValid("archived-item-id", "pwid:netarkivet.dk:2016-01-22_11.20.29Z_part:abc-123_X~.v2", "netarkivet.dk", "2016-01-22T11:20:29Z", "part", "abc-123_X~.v2"),
	pwidValid("archive id with every unreserved class", "pwid:Web-Archive_2.org~x:2016-01-22_11.20.29Z:id", "Web-Archive_2.org~x", "2016-01-22T11:20:29Z", "", "id"),
	pwidValid("item with colons, query and fragment", "pwid:archive.org:2016-01-22_11.20.29Z_page:https://example.org:8080/a:b?x=1&y=2:3#frag", "archive.org", "2016-01-22T11:20:29Z", "page", "https://example.org:8080/a:b?x=1&y=2:3#frag"),
	pwidValid("item URI that is not http", "pwid:archive.org:2016-01-22_11.20.29Z:mailto:someone@example.org", "archive.org", "2016-01-22T11:20:29Z", "", "mailto:someone@example.org"),
	pwidValid("upper-case scheme", "PWID:archive.org:2016-01-22_11.20.29Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr),
	pwidValid("mixed-case scheme", "Pwid:archive.org:2016-01-22_11.20.29Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr),
	pwidValid("leap day", "pwid:archive.org:2016-02-29_00.00.00Z:"+dr, "archive.org", "2016-02-29T00:00:00Z", "", dr),
	{"surrounding whitespace is trimmed", " \npwid:archive.org:2016-01-22_11.20.29Z_page:" + dr + "\t",
		pw("pwid:archive.org:2016-01-22_11.20.29Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr), true, ""},

	// The urn:pwid: form.
	pwidValid("urn form", "urn:pwid:archive.org:2016-01-22T11:20:29Z:page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr),
	pwidValid("urn form, upper case", "URN:PWID:archive.org:2016-01-22T11:20:29Z:part:"+dr, "archive.org", "2016-01-22T11:20:29Z", "part", dr),
	pwidValid("urn form, item id", "urn:pwid:netarkivet.dk:2016-01-22T11:20:29Z:rec:abc123", "netarkivet.dk", "2016-01-22T11:20:29Z", "rec", "abc123"),
	pwidValid("urn form, item with colons", "urn:pwid:archive.org:2016-01-22T11:20:29Z:snapshot:https://a.example/x:y?q=1#f", "archive.org", "2016-01-22T11:20:29Z", "snapshot", "https://a.example/x:y?q=1#f"),

	// Lenient forms.
	pwidLenient("pwid with colons in the time", "pwid:archive.org:2016-01-22T11:20:29Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr, "lenient-pwid"),
	pwidLenient("pwid with the urn :page: segment", "pwid:archive.org:2016-01-22T11:20:29Z:page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr, "lenient-pwid"),
	pwidLenient("pwid with :page: segment and dotted time", "pwid:archive.org:2016-01-22_11.20.29Z:coll:"+dr, "archive.org", "2016-01-22T11:20:29Z", "coll", dr, "lenient-pwid"),
	pwidLenient("lower-case z", "pwid:archive.org:2016-01-22_11.20.29z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr, "lenient-pwid"),
	pwidLenient("lower-case t", "pwid:archive.org:2016-01-22t11.20.29Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr, "lenient-pwid"),
	pwidLenient("missing Z before content spec", "pwid:archive.org:2016-01-22_11.20.29_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr, "lenient-pwid"),
	pwidLenient("missing Z before item", "pwid:archive.org:2016-01-22_11.20.29:"+dr, "archive.org", "2016-01-22T11:20:29Z", "", dr, "lenient-pwid"),
	pwidLenient("upper-case content spec", "pwid:archive.org:2016-01-22_11.20.29Z_PAGE:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr, "lenient-pwid"),
	pwidLenient("percent-encoded archive id", "pwid:my%20archive:2016-01-22_11.20.29Z:"+dr, "my%20archive", "2016-01-22T11:20:29Z", "", dr, "lenient-pwid"),
	pwidLenient("item neither URI nor id", "pwid:archive.org:2016-01-22_11.20.29Z_page:www.dr.dk/nyheder", "archive.org", "2016-01-22T11:20:29Z", "page", "www.dr.dk/nyheder", "lenient-pwid"),
	pwidLenient("urn without content spec", "urn:pwid:archive.org:2016-01-22T11:20:29Z:"+dr, "archive.org", "2016-01-22T11:20:29Z", "", dr, "lenient-pwid"),
	pwidLenient("urn with unknown content spec", "urn:pwid:archive.org:2016-01-22T11:20:29Z:subsite:"+dr, "archive.org", "2016-01-22T11:20:29Z", "", dr, "lenient-pwid"),
	pwidLenient("urn with pwid-style date and spec", "urn:pwid:archive.org:2016-01-22_11.20.29Z_page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr, "lenient-pwid"),
	pwidLenient("urn with upper-case content spec", "urn:pwid:archive.org:2016-01-22T11:20:29Z:Page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr, "lenient-pwid"),
	pwidLenient("urn without colons in the time", "urn:pwid:archive.org:2016-01-22T112029Z:page:"+dr, "archive.org", "2016-01-22T11:20:29Z", "page", dr, "lenient-pwid"),
	pwidLenient("leap second", "pwid:archive.org:2016-12-31_23.59.60Z_page:"+dr, "archive.org", "2017-01-01T00:00:00Z", "page", dr, "leap-second"),

	// Invalid.
	pwidInvalid("impossible date", "pwid:archive.org:2016-02-30_11.20.29Z_page:"+dr),
	pwidInvalid("Feb 29 in a common year", "pwid:archive.org:2015-02-29_11.20.29Z:"+dr),
	pwidInvalid("hour 24", "pwid:archive.org:2016-01-22_24.00.00Z:"+dr),
	pwidInvalid("minute 60", "pwid:archive.org:2016-01-22_11.60.00Z:"+dr),
	pwidInvalid("second 60 not at 23:59", "pwid:archive.org:2016-01-22_11.20.60Z:"+dr),
	pwidInvalid("archive id with slash", "pwid:archive.org/web:2016-01-22_11.20.29Z:"+dr),
	pwidInvalid("archive id with at sign", "pwid:user@archive:2016-01-22_11.20.29Z:"+dr),
	pwidInvalid("archive id with non-ASCII", "pwid:arkivé:2016-01-22_11.20.29Z:"+dr),
	pwidInvalid("bad percent in archive id", "pwid:a%2g:2016-01-22_11.20.29Z:"+dr),
	pwidInvalid("scheme only", "pwid:"),
	pwidInvalid("archive id only", "pwid:archive.org"),
	pwidInvalid("empty archive id", "pwid::2016-01-22_11.20.29Z:"+dr),
	pwidInvalid("nothing after archive id", "pwid:archive.org:"),
	pwidInvalid("date without time", "pwid:archive.org:2016-01-22:"+dr),
	pwidInvalid("compact date", "pwid:archive.org:20160122_112029Z:"+dr),
	pwidInvalid("no item", "pwid:archive.org:2016-01-22_11.20.29Z_page"),
	pwidInvalid("empty item", "pwid:archive.org:2016-01-22_11.20.29Z_page:"),
	pwidInvalid("unknown content spec", "pwid:archive.org:2016-01-22_11.20.29Z_site:"+dr),
	pwidInvalid("junk after date", "pwid:archive.org:2016-01-22_11.20.29Z-page:"+dr),
	pwidInvalid("seconds missing", "pwid:archive.org:2016-01-22_11.20Z:"+dr),
	pwidInvalid("item with space", "pwid:archive.org:2016-01-22_11.20.29Z:https://a.example/a b"),
	pwidInvalid("item with bad escape", "pwid:archive.org:2016-01-22_11.20.29Z:https://a.example/%zz"),
	pwidInvalid("urn with scheme only", "urn:pwid:"),
	pwidInvalid("leap second, then no item", "pwid:archive.org:2016-12-31_23.59.60Z_page:"),
	pwidInvalid("urn with impossible date", "urn:pwid:archive.org:2016-13-01T11:20:29Z:page:"+dr),
	{"too long", "pwid:archive.org:2016-01-22_11.20.29Z:https://a.example/" + strings.Repeat("x", maxPWIDLen), "zero", false, "invalid-pwid"},

	// Not a pwid at all: no diagnostics.
	{"http URL", "https://example.org/", "zero", false, ""},
	{"empty", "", "zero", false, ""},
	{"other urn", "urn:isbn:0451450523", "zero", false, ""},
	{"pwid without colon", "pwid", "zero", false, ""},
	{"glued scheme", "xpwid:archive.org:2016-01-22_11.20.29Z:" + dr, "zero", false, ""},
}

func TestParsePWID(t *testing.T) {
	for _, tt := range pwidTests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags, ok := ParsePWID(tt.in)
			if g := fmtPWID(got); g != tt.want {
				t.Errorf("ParsePWID(%q)\n got %s\nwant %s", tt.in, g, tt.want)
			}
			if ok != tt.ok {
				t.Errorf("ParsePWID(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			}
			if g := diagCodes(diags); g != tt.codes {
				t.Errorf("ParsePWID(%q) codes = %q, want %q; diags %+v", tt.in, g, tt.codes, diags)
			}
			checkDiags(t, "pwid", diags)
		})
	}
}

// TestParsePWIDMessages pins messages: the lenient one lists every
// deviation, the invalid one says why and what is expected.
func TestParsePWIDMessages(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"lenient urn-style under pwid", "pwid:archive.org:2016-01-22T11:20:29Z:page:https://www.dr.dk",
			`lenient pwid "pwid:archive.org:2016-01-22T11:20:29Z:page:https://www.dr.dk": colons in the time (the urn:pwid: form), ":page:" segment (the urn:pwid: form) instead of "_page"; accepted, but expected ` + pwidForm},
		{"lenient missing Z", "pwid:archive.org:2016-01-22_11.20.29:x",
			`lenient pwid "pwid:archive.org:2016-01-22_11.20.29:x": no "Z" after the time (UTC assumed); accepted, but expected ` + pwidForm},
		{"invalid date", "pwid:archive.org:2016-02-30_11.20.29Z_page:https://www.dr.dk",
			`invalid pwid "pwid:archive.org:2016-02-30_11.20.29Z_page:https://www.dr.dk": archived date "2016-02-30_11.20.29Z": day 30 does not exist in February 2016; expected ` + pwidForm},
		{"invalid archive id", "pwid:a/b:2016-01-22_11.20.29Z:x",
			`invalid pwid "pwid:a/b:2016-01-22_11.20.29Z:x": archive id "a/b" contains "/" (only unreserved characters A-Z a-z 0-9 - . _ ~ are allowed); expected ` + pwidForm},
		{"invalid urn", "urn:pwid:archive.org",
			`invalid pwid "urn:pwid:archive.org": no archived date after the archive id; expected ` + urnForm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags, _ := ParsePWID(tt.in)
			if len(diags) != 1 {
				t.Fatalf("ParsePWID(%q) diags = %+v, want one", tt.in, diags)
			}
			if diags[0].Message != tt.want {
				t.Errorf("ParsePWID(%q) message\n got %s\nwant %s", tt.in, diags[0].Message, tt.want)
			}
		})
	}
}

const (
	textPWID = "pwid:archive.org:2016-01-22_11.20.29Z_page:https://www.dr.dk"
	textURN  = "urn:pwid:archive.org:2016-01-22T11:20:29Z:page:https://www.dr.dk"
)

var findPWIDsTests = []struct {
	name string
	in   string
	want []string
}{
	{"none", "no identifiers here", nil},
	{"alone", textPWID, []string{textPWID}},
	{"end of sentence", "See " + textPWID + ".", []string{textPWID}},
	{"comma and semicolon", textPWID + ", and " + textURN + ";", []string{textPWID, textURN}},
	{"in parentheses", "(cited as " + textPWID + ")", []string{textPWID}},
	{"in parentheses, then period", "(" + textPWID + ").", []string{textPWID}},
	{"in brackets", "[" + textPWID + "]", []string{textPWID}},
	{"balanced parentheses kept", "pwid:archive.org:2016-01-22_11.20.29Z:https://en.wikipedia.org/wiki/Pwid_(identifier)", []string{"pwid:archive.org:2016-01-22_11.20.29Z:https://en.wikipedia.org/wiki/Pwid_(identifier)"}},
	{"balanced parentheses in parentheses", "(pwid:archive.org:2016-01-22_11.20.29Z:https://en.wikipedia.org/wiki/X_(y))", []string{"pwid:archive.org:2016-01-22_11.20.29Z:https://en.wikipedia.org/wiki/X_(y)"}},
	{"double quotes", `"` + textPWID + `"`, []string{textPWID}},
	{"single quotes", "'" + textPWID + "'", []string{textPWID}},
	{"typographic quotes", "“" + textPWID + "”", []string{textPWID}},
	{"angle brackets", "<" + textPWID + ">", []string{textPWID}},
	{"exclamation and question marks", textPWID + "?! " + textURN + "!", []string{textPWID, textURN}},
	{"trailing colon", "the identifier " + textPWID + ": it", []string{textPWID}},
	{"upper-case scheme", "PWID:archive.org:2016-01-22_11.20.29Z:x and URN:PWID:a:2016-01-22T11:20:29Z:page:y", []string{"PWID:archive.org:2016-01-22_11.20.29Z:x", "URN:PWID:a:2016-01-22T11:20:29Z:page:y"}},
	{"newlines around", "line one\n" + textPWID + "\nline three", []string{textPWID}},
	{"non-ASCII item", "pwid:archive.org:2016-01-22_11.20.29Z:https://da.wikipedia.org/wiki/Ærø.", []string{"pwid:archive.org:2016-01-22_11.20.29Z:https://da.wikipedia.org/wiki/Ærø"}},
	{"no-break space ends it", textPWID + "\u00a0next", []string{textPWID}},
	{"scheme glued to a word", "xpwid:archive.org:2016-01-22_11.20.29Z:x", nil},
	{"urn glued to a word", "burn:pwid:a:b:c", nil},
	{"prose about the scheme", "The pwid: scheme and the urn:pwid: namespace.", nil},
	// Candidates that break the grammar are returned, for ParsePWID to
	// report (never dropped silently).
	{"no second colon", "pwid:archive.org", []string{"pwid:archive.org"}},
	{"nothing after the second colon", "pwid:archive.org:", []string{"pwid:archive.org"}},
	{"empty archive id", "pwid::2016-01-22_11.20.29Z:x", []string{"pwid::2016-01-22_11.20.29Z:x"}},
	{"candidate inside a URL", "https://resolver.example/pwid:a:2016-01-22_11.20.29Z:x", []string{"pwid:a:2016-01-22_11.20.29Z:x"}},
	{"invalid candidates are still returned", "pwid:a:b", []string{"pwid:a:b"}},
	{"adjacent candidates", textPWID + " " + textPWID, []string{textPWID, textPWID}},
	{"p and P noise", strings.Repeat("pPpwid pwi ", 50) + textPWID, []string{textPWID}},
}

func TestFindPWIDs(t *testing.T) {
	for _, tt := range findPWIDsTests {
		t.Run(tt.name, func(t *testing.T) {
			got := FindPWIDs(tt.in)
			if g, w := strings.Join(got, "\n"), strings.Join(tt.want, "\n"); g != w || len(got) != len(tt.want) {
				t.Errorf("FindPWIDs(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFindPWIDsBounds(t *testing.T) {
	t.Run("at most MaxValues", func(t *testing.T) {
		text := strings.Repeat(textPWID+" ", MaxValues+10)
		if got := FindPWIDs(text); len(got) != MaxValues {
			t.Errorf("got %d candidates, want %d", len(got), MaxValues)
		}
	})
	t.Run("overlong candidate skipped", func(t *testing.T) {
		long := "pwid:a:2016-01-22_11.20.29Z:https://a.example/" + strings.Repeat("x", maxPWIDCandidate)
		got := FindPWIDs(long + " " + textPWID)
		if len(got) != 1 || got[0] != textPWID {
			t.Errorf("got %d candidates %.80q, want only %q", len(got), got, textPWID)
		}
	})
	t.Run("huge text without candidates", func(t *testing.T) {
		if got := FindPWIDs(strings.Repeat("pwid pwid: p ", 1<<16)); got != nil {
			t.Errorf("got %q", got)
		}
	})
}
