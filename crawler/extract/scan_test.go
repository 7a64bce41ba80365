package extract

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
)

// tokenizerStartTags is the oracle of eachStartTag: the offsets of the
// start tags (self-closing ones included) golang.org/x/net/html's
// Tokenizer returns for src.
func tokenizerStartTags(src []byte) [][2]int {
	var out [][2]int
	z := html.NewTokenizer(bytes.NewReader(src))
	off := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		raw := z.Raw()
		if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
			out = append(out, [2]int{off, off + len(raw)})
		}
		off += len(raw)
	}
}

func scannedStartTags(src []byte) [][2]int {
	var out [][2]int
	eachStartTag(src, func(start, end int) { out = append(out, [2]int{start, end}) })
	return out
}

// compareStartTags checks eachStartTag against the tokenizer on src.
func compareStartTags(t *testing.T, src []byte) {
	t.Helper()
	want, got := tokenizerStartTags(src), scannedStartTags(src)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("start tags of %q:\n got %v\nwant %v", src, got, want)
	}
}

// scanCases are documents whose tokens are hard to split: raw text and
// RCDATA elements, the script data escape states, comments ended every
// way, doctypes, bogus comments, end tags with attributes, attribute
// values holding '>' and quotes, and tags cut off by the end.
var scanCases = []string{
	``, `<`, `<a`, `<a>`, `<a `, `<a href`, `<a href=`, `<a href="x`, `<a href='x'`, `<a href=x`, `<a href=x>`,
	`<a/>`, `<a/b>`, `<a =x>`, `<a ==x>`, `<a x= >`, `<a x=>`, `<a x='>'>`, `<a x=">" y=z>`, `<a x=y/>`,
	`<a	x=1
y=2>`, "<a\fx=1\ry=2>", `<a x y z>`, `<a x/ y>`, `<a x = "1" >`, `<a x=a"b'c>`, `<p<a>`, `<a<b>`,
	`</>`, `</`, `</a`, `</a>`, `</a x=">">`, `</ a>`, `</1>`, `</!x>`, `<?xml x?>`, `<?`, `<!`, `<!>`, `<!a>`,
	`<!->`, `<!--`, `<!-->`, `<!--->`, `<!---->`, `<!-- x -->`, `<!-- x --!>`, `<!-- x --!`, `<!-- x --! -->`,
	`<!-- x --!-->`, `<!-- x -- >`, `<!-- -><a> -->`, `<!--<a>-->`, `<!-- x ---->`, `<!-- x --!!>`, `<!DOCTYPE html>`,
	`<!doctype html><a>`, `<!DOCTYP`, `<!DOCTYPE`, `<!DOCTYPE `, `<![CDATA[<a>]]><b>`, `a < b <a> c <1 <`,
	`<script>x</script><a>`, `<script>x</scrip</script><a>`, `<script>x</script`, `<script>x</script `,
	`<SCRIPT>x</ScRiPt><a>`, `<script/>x</script><a>`, `<script><!-- <a> --></script><a>`,
	`<script><!--<script>x</script>--></script><a>`, `<script><!--<script>x</script>y</script><a>`,
	`<script><!--<script >x</script >y--></script><a>`, `<script><!--<scripts>x</script><a>`,
	`<script><!--<SCRIPT/>x</script>-></script><a>`, `<script><!--<scrip</script><a>`, `<script><!--<</script><a>`,
	`<script><!--<1</script><a>`, `<script><!-</script><a>`, `<script><!</script><a>`, `<script><!--`,
	`<script><!--->x</script><a>`, `<script><!--<script>--></script><a>`, `<script><!--<script>-<</script>x</script><a>`,
	`<script><!--<script>x--></script><a>`, `<script><!--<script>x-></script></script><a>`, `<script><!--<script`,
	`<script><!--<script>`, `<script><!--<script>x</`, `<script><!--<script>x</scr`, `<script><!-- x -`,
	`<script><!-- --><a></script><b>`, `<script><!-- -- ><a></script><b>`, `<script><!--<script>x</script/><a></script><b>`,
	`<style>a<b</style><a>`, `<style>x</styl</style ><a>`, `<style>x</style`, `<title><a></title><a>`,
	`<textarea><a></TEXTAREA><a>`, `<xmp><a></xmp><a>`, `<iframe><a></iframe><a>`, `<noembed><a></noembed><a>`,
	`<noframes><a></noframes><a>`, `<noscript><a></noscript><a>`, `<plaintext><a></plaintext><a>`,
	`<titles><a>`, `<title/><a></title><a>`, `<title x=">"><a></title><a>`, `<svg><title><a></title><a></svg>`,
	"<a href=\"\x00\">\x00<b>", "<a\u00e9>", "<\u00e9a>", "<a\u212a>", `<script>`, `<style>`, `<title>`,
}

func TestEachStartTagMatchesTokenizer(t *testing.T) {
	for _, c := range scanCases {
		// Every prefix: a tag or a token cut off by the end.
		for i := 0; i <= len(c); i++ {
			compareStartTags(t, []byte(c[:i]))
		}
		compareStartTags(t, []byte(c+"<a href=/after>"+c))
	}
	for _, doc := range locateDocuments(500) {
		compareStartTags(t, []byte(doc))
	}
	if t.Failed() {
		return
	}
	// The comparison can fail: tags are found.
	if got := scannedStartTags([]byte(`<!-- <a> --><a href=x><script><b></script><c/>`)); fmt.Sprint(got) != "[[12 22] [22 30] [42 46]]" {
		t.Errorf("start tags %v", got)
	}
}

// FuzzEachStartTag checks eachStartTag against the tokenizer on any
// document.
func FuzzEachStartTag(f *testing.F) {
	for _, c := range scanCases {
		f.Add(c)
	}
	for _, doc := range locateDocuments(30) {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		compareStartTags(t, []byte(doc))
	})
}

// refContainsFold is the oracle of containsFold: strings.EqualFold at
// every offset.
func refContainsFold(s, substr string) bool {
	for i := 0; i+len(substr) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(substr)], substr) {
			return true
		}
	}
	return false
}

func TestContainsFoldMatchesEqualFold(t *testing.T) {
	pieces := []string{"pwid:", "PWID:", "pWiD", ":", "p", "w", "I", "d", "\u212a", "\u017f", "\u0130", "\u0131", "é", "x", " ", "\xff", "urn:"}
	r := rand.New(rand.NewPCG(4, 5))
	found := 0
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(8) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := sb.String()
		for _, sub := range []string{"pwid:", "urn:pwid:", "wid", "p"} {
			want := refContainsFold(s, sub)
			if got := containsFold(s, sub); got != want {
				t.Fatalf("containsFold(%q, %q) = %v, want %v", s, sub, got, want)
			}
			if want {
				found++
			}
		}
	}
	if found == 0 {
		t.Fatal("no string contained a substring: the test compares nothing")
	}
}

func TestIsPWIDMatchesToLower(t *testing.T) {
	ref := func(s string) bool {
		l := strings.ToLower(s)
		return strings.HasPrefix(l, "pwid:") || strings.HasPrefix(l, "urn:pwid:")
	}
	pieces := []string{"pwid:", "PWID:", "urn:", "URN:", "p", "w", "I", "\u0130", "d", ":", "u", "r", "n", "\u212a", "é", "\xff", " ", "x"}
	r := rand.New(rand.NewPCG(6, 7))
	yes := 0
	for range 50000 {
		var sb strings.Builder
		for range r.IntN(6) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := sb.String()
		want := ref(s)
		if got := isPWID(s); got != want {
			t.Fatalf("isPWID(%q) = %v, want %v", s, got, want)
		}
		if want {
			yes++
		}
	}
	if yes == 0 || !isPWID("pw\u0130d:x") || isPWID("pwi") {
		t.Fatal("the comparison saw no pwid")
	}
}

// TestPageTextMeasure_SameAsBuiltText: the walk that only measures the
// page text (its length, whether it holds "pwid:") agrees with the text
// the textOnly walk builds, on documents that split "pwid:" across
// markup, hide it in scripts and cut it at MaxTextScan.
func TestPageTextMeasure_SameAsBuiltText(t *testing.T) {
	pieces := []string{"pwid:", "PW", "pw", "id:", "ID:", "p", "w", "i", "d", ":", "<em>", "</em>", "<p>", "</p>",
		"<script>pwid:</script>", "<div>", "</div>", " ", "urn:", "archive.org:2020-01-01T00:00:00Z:page:https://ex.org/",
		"<a href=/x>", "</a>", "<br>", "é", "<title>t</title>", "<noscript>pwid:</noscript>", "x"}
	r := rand.New(rand.NewPCG(10, 11))
	u := &url.URL{Scheme: "https", Host: "ex.org", Path: "/"}
	yes, no := 0, 0
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(14) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		doc, err := html.Parse(strings.NewReader(sb.String()))
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{MaxTextScan: 1 + r.IntN(40)}.withDefaults()
		measured := &extractor{opt: opt, ex: audit.Extraction{Links: []audit.Link{}}, pageURL: u, base: u}
		measured.docRes = resolverFor(u)
		measured.res = measured.docRes
		measured.walk(doc, nil, false)
		built := &extractor{opt: opt, textOnly: true}
		built.walk(doc, nil, false)
		text := built.pageText.String()
		if measured.textLen != len(text) || measured.pwidText != containsFold(text, "pwid:") {
			t.Fatalf("%q (MaxTextScan %d): measured %d bytes, pwid %v; built %q", sb.String(), opt.MaxTextScan,
				measured.textLen, measured.pwidText, text)
		}
		if measured.pwidText {
			yes++
		} else {
			no++
		}
	}
	if yes == 0 || no == 0 {
		t.Fatalf("pwid in %d texts, not in %d: the documents do not test both", yes, no)
	}
}
