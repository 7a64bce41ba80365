package textsim

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestMainText(t *testing.T) {
	tests := []struct {
		name, html, want string
	}{
		{"Empty", "", ""},
		{"Blocks", "<p>a</p><p>b</p>", "a b"},
		{"InlineJoins", "<p><b>foo</b>bar <em>baz</em></p>", "foobar baz"},
		{"Br", "a<br>b", "a b"},
		{"Whitespace", "<p>  a \n\t b\u00a0 c </p>", "a b c"},
		{"Entities", "<p>fish &amp; chips &lt;3</p>", "fish & chips <3"},
		{"SkipsCode", "<script>var x</script><style>p{}</style><noscript>js</noscript><template><p>t</p></template><p>text</p>", "text"},
		{"SkipsChrome", "<header>logo</header><nav>menu</nav><p>body</p><aside>ads</aside><footer>(c)</footer>", "body"},
		{"SkipsHeadTitle", "<title>Title</title><p>body</p>", "body"},
		{"PrefersMain", "<nav>x</nav><div>noise</div><main><h1>Title</h1><p>in</p></main><p>out</p>", "Title in"},
		{"ArticlesWithoutMain", "<div>noise</div><article>one</article><div>more noise</div><article>two <article>nested</article></article>", "one two nested"},
		{"MainBeatsArticle", "<article>a</article><main>m</main>", "m"},
		{"SmallFormSkipped", "<form><input name=q><button>Search</button></form><p>a long paragraph of content</p>", "a long paragraph of content"},
		// ASP.NET Web Forms wrap the whole page in a form.
		{"WrapperFormKept", "<form id=aspnetForm><p>all the content of the page</p><input></form><p>x</p>", "all the content of the page x"},
		{"Hidden", "<p hidden>secret</p><p>shown</p>", "shown"},
		{"SelectSkipped", "<p>pick</p><select><option>France<option>Spain</select>", "pick"},
		{"UnclosedTags", "<div><p>a<div>b", "a b"},
		{"InvalidUTF8", "<p>a\xffb</p>", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MainText([]byte(tt.html)); got != tt.want {
				t.Errorf("MainText(%q) = %q, want %q", tt.html, got, tt.want)
			}
		})
	}
}

func TestMainText_DeepNesting(t *testing.T) {
	// A hostile page nests elements deeply; the walk is iterative.
	b := make([]byte, 0, 600000)
	for range 100000 {
		b = append(b, "<div>"...)
	}
	b = append(b, "deep"...)
	if got := MainText(b); got != "deep" { // via the token scan
		t.Errorf("MainText(deep) = %q, want %q", got, "deep")
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"Empty", "", nil},
		{"Spaces", " \t\n", nil},
		{"Punctuation", "Hello, World!", []string{"hello", "world"}},
		{"Apostrophe", "don't", []string{"don", "t"}},
		{"Digits", "abc123 x-y 4.5", []string{"abc123", "x", "y", "4", "5"}},
		{"Unicode", "Ünïcode STRASSE straße", []string{"ünïcode", "strasse", "straße"}},
		{"CombiningMark", "e\u0301cole", []string{"e\u0301cole"}},
		{"Ideographs", "日本語テキスト ok", []string{"日", "本", "語", "テ", "キ", "ス", "ト", "ok"}},
		{"Greek", "ΛΌΓΟΣ", []string{"λόγοσ"}},
		{"ReplacementChar", "a\uFFFDb", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Words(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Words(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestFNV1a(t *testing.T) {
	// Test vectors of the FNV reference implementation.
	tests := []struct {
		in   string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"b", 0xaf63df4c8601f1a5},
		{"c", 0xaf63de4c8601eff2},
		{"foobar", 0x85944171f73967e8},
	}
	for _, tt := range tests {
		if got := fnv1a(tt.in); got != tt.want {
			t.Errorf("fnv1a(%q) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}

func TestShingles(t *testing.T) {
	w := func(s string) []string { return Words(s) }
	tests := []struct {
		name  string
		words []string
		k     int
		want  int // set size
	}{
		{"Empty", nil, 3, 0},
		{"FewerThanK", w("page not"), 3, 1},
		{"Exact", w("a b c"), 3, 1},
		{"Sliding", w("a b c d e"), 3, 3},
		{"Repeats", w("a a a a"), 2, 1},
		{"ZeroK", w("a b a"), 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(Shingles(tt.words, tt.k)); got != tt.want {
				t.Errorf("len(Shingles(%q, %d)) = %d, want %d", tt.words, tt.k, got, tt.want)
			}
		})
	}
	// A one-word shingle is the word's hash.
	if _, ok := Shingles([]string{"a"}, 1)[0xaf63dc4c8601ec8c]; !ok {
		t.Errorf("Shingles([a], 1) lacks fnv1a(a)")
	}
	// The separator keeps ["a b"] apart from ["a", "b"].
	if Jaccard(Shingles([]string{"a b"}, 1), Shingles([]string{"a", "b"}, 2)) != 0 {
		t.Errorf("shingle of [a b] collides with [a, b]")
	}
}

func TestJaccard(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		k    int
		want float64
	}{
		{"Identical", "the quick brown fox jumps", "the quick brown fox jumps", 3, 1},
		// {a b c d e} vs {a b x d e}: 4 shared of 6.
		{"OneWordChangedK1", "a b c d e", "a b x d e", 1, 4.0 / 6},
		// {ab bc cd de} vs {ab bx xd de}: 2 shared of 6.
		{"OneWordChangedK2", "a b c d e", "a b x d e", 2, 2.0 / 6},
		// {abc bcd cde} vs {abx bxd xde}: none shared.
		{"OneWordChangedK3", "a b c d e", "a b x d e", 3, 0},
		// Ten words, the last changed: 7 of 8 3-shingles shared, union 9.
		{"LastWordChanged", "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10", "w1 w2 w3 w4 w5 w6 w7 w8 w9 x", 3, 7.0 / 9},
		{"Unrelated", "page not found", "welcome to our shop", 3, 0},
		{"BothEmpty", "", "", 3, 1},
		{"OneEmpty", "", "something here", 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Jaccard(Shingles(Words(tt.a), tt.k), Shingles(Words(tt.b), tt.k))
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Jaccard(%q, %q, k=%d) = %v, want %v", tt.a, tt.b, tt.k, got, tt.want)
			}
			if rev := Jaccard(Shingles(Words(tt.b), tt.k), Shingles(Words(tt.a), tt.k)); rev != got {
				t.Errorf("Jaccard not symmetric: %v vs %v", got, rev)
			}
		})
	}
}

func TestSimHash(t *testing.T) {
	const (
		ha = 0xaf63dc4c8601ec8c // fnv1a("a")
		hb = 0xaf63df4c8601f1a5 // fnv1a("b")
		hc = 0xaf63de4c8601eff2 // fnv1a("c")
	)
	tests := []struct {
		name  string
		words []string
		want  uint64
	}{
		{"Empty", nil, 0},
		{"OneWord", []string{"a"}, ha},
		{"RepeatsWeigh", []string{"a", "a", "b"}, ha},
		// Equal weights: a bit survives only where both hashes have it
		// (ties give 0): the AND, worked out digit by digit.
		{"TwoWordsTie", []string{"a", "b"}, 0xaf63dc4c8601e084},
		// Three words: the bitwise majority of the three hashes.
		{"ThreeWordsMajority", []string{"a", "b", "c"}, 0xaf63de4c8601eda4},
		{"OrderIrrelevant", []string{"c", "b", "a"}, 0xaf63de4c8601eda4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SimHash(tt.words); got != tt.want {
				t.Errorf("SimHash(%q) = %#x, want %#x", tt.words, got, tt.want)
			}
		})
	}
	if got, want := uint64(ha&hb), uint64(0xaf63dc4c8601e084); got != want {
		t.Errorf("hand-computed AND: %#x, want %#x", got, want)
	}
	if got, want := uint64(ha&hb|ha&hc|hb&hc), uint64(0xaf63de4c8601eda4); got != want {
		t.Errorf("hand-computed majority: %#x, want %#x", got, want)
	}
}

func TestSimHash_Near(t *testing.T) {
	base := Words("linkrot audits the links of a site and reports which of them rot over time so that the owner can repair them before readers notice the damage done")
	changed := slices.Clone(base)
	changed[3] = "anchors"
	other := Words("a completely different page about cooking pasta with tomatoes garlic olive oil and fresh basil from the garden in summer evenings")
	if d := Hamming(SimHash(base), SimHash(base)); d != 0 {
		t.Errorf("identical: distance %d, want 0", d)
	}
	near := Hamming(SimHash(base), SimHash(changed))
	far := Hamming(SimHash(base), SimHash(other))
	if near >= far {
		t.Errorf("one word changed: distance %d, unrelated: %d; want near < far", near, far)
	}
}

func TestHamming(t *testing.T) {
	tests := []struct {
		a, b uint64
		want int
	}{
		{0, 0, 0},
		{0, ^uint64(0), 64},
		{0b1011, 0b0110, 3},
		{1 << 63, 1, 2},
	}
	for _, tt := range tests {
		if got := Hamming(tt.a, tt.b); got != tt.want {
			t.Errorf("Hamming(%#x, %#x) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestMainText_TooDeepFallback(t *testing.T) {
	// Over 512 open elements html.Parse gives up; the token scan still
	// skips what MainText skips.
	deep := strings.Repeat("<div>", 600)
	tests := []struct{ name, html, want string }{
		{"Text", deep + "<p>a</p><p>b</p>", "a b"},
		{"Skips", deep + "<script>x</script><nav>n<nav>m</nav>k</nav><p hidden>h<p>still hidden</p></p><input hidden><b>v</b>isible", "visible"},
		{"Unclosed", deep + "<style>p{}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MainText([]byte(tt.html)); got != tt.want {
				t.Errorf("MainText = %q, want %q", got, tt.want)
			}
		})
	}
}
