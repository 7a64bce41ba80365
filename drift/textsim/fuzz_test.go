package textsim

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

func FuzzMainText(f *testing.F) {
	for _, s := range []string{
		"",
		"<p>a</p><p>b</p>",
		"<main><article>x</article></main>",
		"<form><p>wrapped</p></form>",
		"<svg><title>icon</title></svg><select><option>o</select>",
		"<table><tr><td>cell<td>cell</table>",
		"<p>\x00 &#0; &#xD800; &#x110000; \xff</p>",
		"<math><mi>x</mi></math><template><p>t</template>",
		"<!DOCTYPE html><html><head><title>t</title></head><body><nav>n</nav><p hidden>h</p>日本語</body></html>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := MainText(b)
		if !utf8.ValidString(got) {
			t.Fatalf("MainText(%q) = %q: invalid UTF-8", b, got)
		}
		if got != strings.TrimSpace(got) || strings.Contains(got, "  ") {
			t.Fatalf("MainText(%q) = %q: white space not collapsed", b, got)
		}
		for _, w := range Words(got) {
			if w == "" {
				t.Fatalf("Words gave an empty word for %q", got)
			}
		}
		// The optimized walks give what the reference ones give.
		doc, err := html.Parse(bytes.NewReader(b))
		if err != nil {
			return
		}
		if got, want := MainTextOf(doc), mainTextRef(doc, false); got != want {
			t.Fatalf("MainTextOf(%q) = %q, reference %q", b, got, want)
		}
		if got, want := mainWordsBytes(doc), Words(MainTextOf(doc)); !slices.Equal(got, want) {
			t.Fatalf("EachRawWordBytes of MainTextOf(%q) = %q, Words %q", b, got, want)
		}
	})
}

func FuzzWordsShingles(f *testing.F) {
	f.Add("the quick brown fox", 3)
	f.Add("日本語 e\u0301 \xff", 2)
	f.Fuzz(func(t *testing.T, s string, k int) {
		k = k % 8
		words := Words(s)
		sh := Shingles(words, k)
		if j := Jaccard(sh, sh); j != 1 {
			t.Fatalf("Jaccard(x, x) = %v", j)
		}
		if len(words) > 0 && len(sh) == 0 {
			t.Fatalf("no shingles for %q", words)
		}
		if h := Hamming(SimHash(words), SimHash(words)); h != 0 {
			t.Fatalf("Hamming(x, x) = %d", h)
		}
	})
}
