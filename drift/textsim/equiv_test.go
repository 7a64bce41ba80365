package textsim

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The one-pass collapse and Words must give exactly what the plain
// definitions give: main texts and their words feed fingerprints stored
// and compared across runs.

func collapseRef(s string) string {
	return strings.ToValidUTF8(strings.Join(strings.Fields(s), " "), "\uFFFD")
}

func wordsRef(text string) []string {
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			words = append(words, strings.ToLower(text[start:end]))
			start = -1
		}
	}
	for i, r := range text {
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'):
			if start < 0 {
				start = i
			}
		case r < utf8.RuneSelf, r == utf8.RuneError:
			flush(i)
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			flush(i)
			words = append(words, text[i:i+utf8.RuneLen(r)])
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			if start < 0 {
				start = i
			}
		case unicode.IsMark(r):
		default:
			flush(i)
		}
	}
	flush(len(text))
	return words
}

// randomText mixes ASCII, white space of every kind, letters with case,
// marks, Han, U+FFFD and invalid bytes.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", "Z", "q", "7", " ", "  ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0",
		"\u2003", "\u3000", "É", "ß", "İ", "Σ", "\u0301", "漢", "か", "-", "'", ".", "\uFFFD",
		"\xff", "\xe2\x82", "\xc3", "\x80", "Ǆ", "ǅ", "ﬁ", "٣", "Ⅻ", "\x00"}
	var b strings.Builder
	for range r.IntN(60) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func TestCollapseAndWords_SameAsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 30000 {
		s := randomText(r)
		if got, want := collapse(s), collapseRef(s); got != want {
			t.Fatalf("collapse(%q) = %q, want %q", s, got, want)
		}
		if got, want := Words(s), wordsRef(s); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q, want %q", s, got, want)
		}
		// The one pass's raw main text is split before collapse.
		if got, want := Words(s), Words(collapse(s)); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q, but Words of it collapsed = %q", s, got, want)
		}
	}
}

// TestEachRawWordBytes_RawText: the words of a tree's raw main text
// (what the one pass gathers, before collapse) are those of its collapsed
// main text.
func TestEachRawWordBytes_RawText(t *testing.T) {
	for _, page := range []string{
		"<main><p>Hello,\u00a0<b>WORLD</b>s</p>\xff\xfe<p>caf\u00e9 \u6f22\u5b57</p></main>",
		"<body><nav>menu</nav><article>One two</article><article> three\u3000four</article>",
		"",
	} {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		EachRawWordBytes([]byte(rawMainText(doc)), func(w []byte) { got = append(got, string(w)) })
		if want := Words(MainTextOf(doc)); !slices.Equal(got, want) {
			t.Errorf("%q: EachRawWordBytes of the raw text %q, Words(MainTextOf) %q", page, got, want)
		}
	}
}

func FuzzCollapseAndWords(f *testing.F) {
	f.Add("  Hello,\u00a0WORLD\xff\xfe caf\u00e9 \u6f22\u5b57 ")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := collapse(s), collapseRef(s); got != want {
			t.Fatalf("collapse(%q) = %q, want %q", s, got, want)
		}
		if got, want := Words(s), wordsRef(s); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q, want %q", s, got, want)
		}
		if got, want := Words(s), Words(collapse(s)); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q, but Words of it collapsed = %q", s, got, want)
		}
	})
}

// writeTextRef is writeText as it was before it counted the root's text
// only as far as a <form> needs: the oracle of TestMainText_FormsSameAsReference.
// With keepForms, no form is skipped.
func writeTextRef(b *strings.Builder, root *html.Node, keepForms bool) {
	rootLen := -1
	type frame struct {
		n    *html.Node
		exit bool
	}
	stack := []frame{{n: root}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := f.n
		if f.exit {
			b.WriteByte(' ')
			continue
		}
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			continue
		case html.ElementNode:
			if n != root {
				if skipAlways(n.DataAtom) || skipBoilerplate(n.DataAtom) || hidden(n) {
					continue
				}
				if n.DataAtom == atom.Form && !keepForms {
					if rootLen < 0 {
						rootLen = textLen(root, -1)
					}
					if 2*textLen(n, -1) <= rootLen {
						continue
					}
				}
			}
			if n.DataAtom == atom.Br {
				b.WriteByte(' ')
				continue
			}
			if !inline(n.DataAtom) {
				b.WriteByte(' ')
				stack = append(stack, frame{n: n, exit: true})
			}
		case html.DocumentNode:
		default:
			continue
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, frame{n: c})
		}
	}
}

func mainTextRef(doc *html.Node, keepForms bool) string {
	var b strings.Builder
	for _, r := range contentRoots(doc) {
		writeTextRef(&b, r, keepForms)
		b.WriteByte(' ')
	}
	return collapse(b.String())
}

// TestMainText_FormsSameAsReference: pages with forms of every size
// beside other text, nested and in sequence, give the main text of the
// reference.
func TestMainText_FormsSameAsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"<form>", "</form>", "<form id=f>", "<p>", "</p>", "<div>", "</div>", "<main>", "</main>",
		"<article>", "</article>", "<script>x y z</script>", "<nav>menu</nav>", "<input name=q>",
		"word ", "two words ", "a much longer run of several words ", "  ", "<b>", "</b>", "<br>"}
	kept, skipped := 0, 0
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(25) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		page := sb.String()
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		got, want := MainTextOf(doc), mainTextRef(doc, false)
		if got != want {
			t.Fatalf("%q: MainTextOf %q, reference %q", page, got, want)
		}
		if strings.Contains(page, "<form") {
			if mainTextRef(doc, true) == want {
				kept++
			} else {
				skipped++
			}
		}
	}
	if kept == 0 || skipped == 0 {
		t.Fatalf("forms kept %d times, skipped %d: the pages do not test both", kept, skipped)
	}
}

// mainWordsBytes collects EachRawWordBytes's words of doc's collapsed
// main text, as the checker takes them (copied: each is valid only during
// its call).
func mainWordsBytes(doc *html.Node) []string {
	var out []string
	EachRawWordBytes([]byte(MainTextOf(doc)), func(w []byte) { out = append(out, string(w)) })
	return out
}

// TestEachRawWordBytes_SameAsWords: the words lower-cased in place or in
// a scratch buffer are those of Words (strings.ToLower of each), on pages
// of random text in every case and script, one after the other.
func TestEachRawWordBytes_SameAsWords(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	tags := []string{"<p>", "</p>", "<b>", "</b>", "<main>", "<article>", "<nav>", "</nav>", "<br>", "<span>", "</span>"}
	changed := 0
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(12) {
			if r.IntN(2) == 0 {
				sb.WriteString(tags[r.IntN(len(tags))])
			} else {
				sb.WriteString(randomText(r))
			}
		}
		page := sb.String()
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		want := Words(MainTextOf(doc))
		if got := mainWordsBytes(doc); !slices.Equal(got, want) {
			t.Fatalf("%q: EachRawWordBytes %q, Words %q", page, got, want)
		}
		if mt := MainTextOf(doc); strings.ToLower(mt) != mt {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no page had upper-case words: the test does not lower-case any")
	}
}

func TestSimHasherAddBytes(t *testing.T) {
	var a, b SimHasher
	for _, w := range Words("The quick brown fox jumps over the lazy dog; caf\u00e9 \u6f22") {
		a.Add(w)
		b.AddBytes([]byte(w))
	}
	if a.Sum() != b.Sum() || a.Sum() == 0 {
		t.Fatalf("Add %#x, AddBytes %#x", a.Sum(), b.Sum())
	}
}
