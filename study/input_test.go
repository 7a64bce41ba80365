package study

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

func refKey(r Reference) string {
	return strings.Join([]string{r.ID, r.URL, r.CitedAt.String(), r.Group, r.Title}, "|")
}

func checkInput(t *testing.T, in *Input, wantRefs []string, wantLines []int, wantErrLines []int) {
	t.Helper()
	var got []string
	var lines []int
	for _, r := range in.References {
		got = append(got, refKey(r))
		lines = append(lines, r.Line)
	}
	if !reflect.DeepEqual(got, wantRefs) {
		t.Errorf("references:\n got %q\nwant %q", got, wantRefs)
	}
	if wantLines != nil && !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("reference lines %v, want %v", lines, wantLines)
	}
	var errLines []int
	for _, e := range in.Errors {
		errLines = append(errLines, e.Line)
		if e.Reason == "" {
			t.Errorf("error at line %d has no reason", e.Line)
		}
	}
	if !reflect.DeepEqual(errLines, wantErrLines) {
		t.Errorf("error lines %v (%v), want %v", errLines, in.Errors, wantErrLines)
	}
}

func TestReadCSV(t *testing.T) {
	src := "\ufeffID,URL,Cited_At,Group,extra\n" +
		"doi:1,https://a.test/x,2014-05-03,J1,ignored\n" +
		"doi:2,ftp://a.test/x,2014-05-03,J1,\n" + // not http(s)
		"doi:3,https://b.test/,,J2,\n" + // no date
		"\"doi:4\nwrapped\",https://c.test/,2014-05-03T10:00:00Z,J2,\n" +
		"doi:5,https://d.test/,2014-99-01,J2,\n" + // bad date
		"doi:6,https://e.test/,2012\n" + // short row, year only
		"\n" +
		"doi:7,\"https://f.test/\"x,2013-01-01,J3,\n" + // bare quote
		"doi:8,javascript:alert(1),2013-01-01,J3,\n"
	in, err := Parse([]byte(src), "refs.csv", "")
	if err != nil {
		t.Fatal(err)
	}
	if in.Format != FormatCSV {
		t.Errorf("format %s", in.Format)
	}
	checkInput(t, in, []string{
		"doi:1|https://a.test/x|2014-05-03|J1|",
		"doi:4 wrapped|https://c.test/|2014-05-03T10:00:00Z|J2|",
		"doi:6|https://e.test/|2012||",
	}, []int{2, 5, 8}, []int{3, 4, 7, 10, 11})
}

func TestReadCSVDelimiters(t *testing.T) {
	for _, src := range []string{
		"url;cited_at;id\nhttps://a.test/?a=1,2;2014-05-03;x\n",
		"url\tcited_at\tid\nhttps://a.test/?a=1,2\t2014-05-03\tx\n",
		"url,cited_at,id\n\"https://a.test/?a=1,2\",2014-05-03,x\n",
	} {
		in, err := Parse([]byte(src), "refs.csv", "")
		if err != nil {
			t.Fatal(err)
		}
		checkInput(t, in, []string{"x|https://a.test/?a=1,2|2014-05-03||"}, []int{2}, nil)
	}
}

func TestReadCSVHeader(t *testing.T) {
	for _, src := range []string{"", "id,url\nx,https://a.test/\n", "\"unterminated\n"} {
		if _, err := Parse([]byte(src), "refs.csv", ""); err == nil {
			t.Errorf("Parse(%q): no error", src)
		}
	}
}

func TestReadJSONL(t *testing.T) {
	src := `{"URL": "https://a.test/x", "cited_at": "2014-05-03", "id": 10.5, "group": "J1", "title": "A"}
{"url": "https://b.test/", "cited_at": "2014-05-03", "id": 12345678901234567890}

not json
{"url": "https://c.test/", "cited_at": 2014}
{"url": "https://d.test/", "cited_at": "2014-05-03", "id": ["x"]}
{"url": "https://e.test/"}
[1, 2]
{"url": "https://f.test/", "cited_at": "2014-05", "other": {"deep": true}, "URL": "https://upper.test/"}
`
	in, err := Parse([]byte(src), "refs.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	checkInput(t, in, []string{
		"10.5|https://a.test/x|2014-05-03|J1|A",
		"12345678901234567890|https://b.test/|2014-05-03||",
		"|https://c.test/|2014||",
		"|https://f.test/|2014-05||",
	}, []int{1, 2, 5, 9}, []int{4, 6, 7, 8})
}

func TestReadBibTeX(t *testing.T) {
	src := `% exported by Zotero
@string{ jr = "Journal of " # {Rot} }
Text between entries is a comment.
@article{klein2014,
  title = {Scholarly {Context} Not Found},
  url = {https://doi.org/10.1371/journal.pone.0115253},
  urldate = {2014-12-26},
  group = jr,
  year = 2014,
}
@misc{noUrl, title = {x}, year = {2014}}
@misc(paren, url = "https://a.test/a\_b", year = "2013", month = mar)
@comment{ @misc{ignored, url = {https://ignored.test/}, year = 2000} }
@online{broken, url = {https://b.test/, urldate = {2014-01-01}}
@online{yearonly,
  url = {\url{https://c.test/x\%20y}},
  year = {2012}
}
@online{badyear, url = {https://d.test/}, year = {20xx}}
@online{undefined, url = {https://e.test/}, year = nomacro}
@preamble{ "\newcommand{\noop}[1]{}" }
@online{bibdate, url = {https://f.test/}, date = {2011-02-03}, title = "Say {"}hi{"}"}
@
@online{last, url={https://g.test/}, urldate={2010-10-10}}
`
	in, err := Parse([]byte(src), "refs.bib", "")
	if err != nil {
		t.Fatal(err)
	}
	if in.Format != FormatBibTeX {
		t.Errorf("format %s", in.Format)
	}
	var got []string
	for _, r := range in.References {
		got = append(got, refKey(r))
	}
	t.Logf("refs %q errors %v", got, in.Errors)
	want := []string{
		"klein2014|https://doi.org/10.1371/journal.pone.0115253|2014-12-26|Journal of Rot|Scholarly Context Not Found",
		"paren|https://a.test/a_b|2013-03||",
		"yearonly|https://c.test/x%20y|2012||",
		`bibdate|https://f.test/|2011-02-03||Say "hi"`,
		"last|https://g.test/|2010-10-10||",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("references %q, want %q", got, want)
	}
	errAt := map[int]bool{}
	for _, e := range in.Errors {
		errAt[e.Line] = true
	}
	for _, l := range []int{11, 14, 19, 20, 23} {
		if !errAt[l] {
			t.Errorf("no error at line %d: %v", l, in.Errors)
		}
	}
}

func TestReadCSLJSON(t *testing.T) {
	src := `[
  {"id": "a", "URL": "https://a.test/", "accessed": {"date-parts": [[2014, 5, 3]]}, "issued": {"date-parts": [[1999]]}, "title": "A <b>"},
  {"id": 2, "URL": "https://b.test/", "issued": {"date-parts": [["2012", "4"]]}},
  {"id": "c", "URL": "https://c.test/", "issued": {"raw": "2011-02-03"}},
  {"id": "d", "URL": "https://d.test/", "issued": {"literal": "2010"}},
  {"id": "e", "URL": "https://e.test/"},
  {"id": "f", "URL": "mailto:x@y", "issued": {"date-parts": [[2010]]}},
  {"id": "g", "URL": "https://g.test/", "accessed": {"date-parts": [[2010, 2, 31]]}},
  "not an object",
  {"id": "h", "URL": "https://h.test/", "issued": {"date-parts": [[2009, 1, 2]]}, "group": "G"},
  {"id": "i", "URL": "https://i.test/", "issued": {"date-parts": [[2009, 1, 2]]}
`
	in, err := Parse([]byte(src), "refs.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if in.Format != FormatCSLJSON {
		t.Errorf("format %s", in.Format)
	}
	checkInput(t, in, []string{
		"a|https://a.test/|2014-05-03||A <b>",
		"2|https://b.test/|2012-04||",
		"c|https://c.test/|2011-02-03||",
		"d|https://d.test/|2010||",
		"h|https://h.test/|2009-01-02|G|",
	}, []int{2, 3, 4, 5, 10}, []int{6, 7, 8, 9, 11})
}

func TestDetectFormat(t *testing.T) {
	for _, c := range []struct {
		name, content string
		want          Format
	}{
		{"refs.csv", "[", FormatCSV},
		{"refs.TSV", "", FormatCSV},
		{"refs.jsonl", "[", FormatJSONL},
		{"refs.ndjson", "", FormatJSONL},
		{"refs.bib", "url", FormatBibTeX},
		{"refs.json", "  [{}]", FormatCSLJSON},
		{"refs.json", "{\"url\": 1}\n", FormatJSONL},
		{"refs", "\ufeff@article{", FormatBibTeX},
		{"refs", "% comment\n@misc{", FormatBibTeX},
		{"refs.txt", "url,cited_at\n", FormatCSV},
		{"refs", "", FormatCSV},
	} {
		if got := DetectFormat(c.name, []byte(c.content)); got != c.want {
			t.Errorf("DetectFormat(%q, %q) = %s, want %s", c.name, c.content, got, c.want)
		}
	}
}

func TestDigest(t *testing.T) {
	src := []byte("url,cited_at\n")
	in, err := Parse(src, "x.csv", "")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	if in.Digest != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %q", in.Digest)
	}
}
