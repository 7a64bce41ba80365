package drift

import (
	"math"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

const eps = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) < eps }

// TestCompare checks the measures on known text pairs. Shingles are single
// words (w = 1) over content words (function words removed); every
// expected value but SimHash is computed by hand in the comments. SimHash
// distances depend on FNV-1a hashes of the words and cannot be done by
// hand: they are pinned from textsim.SimHash, so that a change in the
// measure shows here.
func TestCompare(t *testing.T) {
	tests := []struct {
		name      string
		ref, live string
		want      Measures
		band      string
	}{
		{
			// Same words in the same order: every similarity 1, SimHash 0.
			name: "Identical",
			ref:  "red green blue yellow", live: "red green blue yellow",
			want: Measures{Identical: true, TextMeasured: true, Jaccard: 1, Dice: 1, Cosine: 1, WordsReference: 4, WordsLive: 4},
			band: audit.BandUnchanged,
		},
		{
			// 10 distinct words, "juliet" replaced by "kilo".
			// A ∩ B = 9 words, A ∪ B = 11: Jaccard 9/11 = 0.8182.
			// Dice 2·9 / (10 + 10) = 0.9.
			// Term frequencies are all 1: cosine 9 / (√10·√10) = 0.9.
			// Word count unchanged: 0. Nothing crosses a major threshold
			// (cosine 0.9 ≥ 0.8, Jaccard distance 0.18 ≤ 0.5, SimHash 8 ≤ 12).
			name: "OneWordChanged",
			ref:  "alpha bravo charlie delta echo foxtrot golf hotel india juliet",
			live: "alpha bravo charlie delta echo foxtrot golf hotel india kilo",
			want: Measures{TextMeasured: true, SimHash: 8, Jaccard: 9.0 / 11, Dice: 0.9, Cosine: 0.9, WordsReference: 10, WordsLive: 10},
			band: audit.BandMinor,
		},
		{
			// Same topic, rewritten. Content words (into, for, to removed):
			// ref  {solar panels convert sunlight electricity homes} (6)
			// live {homes use solar panels turn sunlight power} (7)
			// shared {solar panels sunlight homes} = 4, union 6 + 7 - 4 = 9:
			// Jaccard 4/9 = 0.4444, Dice 2·4 / 13 = 0.6154,
			// cosine 4 / (√6·√7) = 4 / 6.4807 = 0.6172.
			// All words: 8 → 9, change +1/8 = 0.125.
			// Major: Jaccard distance 0.556 > 0.5 (and cosine < 0.8).
			name: "Rewritten",
			ref:  "solar panels convert sunlight into electricity for homes",
			live: "homes use solar panels to turn sunlight into power",
			want: Measures{TextMeasured: true, SimHash: 19, Jaccard: 4.0 / 9, Dice: 8.0 / 13, Cosine: 4 / math.Sqrt(42), WordsReference: 8, WordsLive: 9, WordChange: 0.125},
			band: audit.BandMajor,
		},
		{
			// Nothing shared (with, and removed): every similarity 0.
			// Words 8 → 7: -1/8 = -0.125. Off-topic: cosine 0 < 0.12.
			name: "Unrelated",
			ref:  "solar panels convert sunlight into electricity for homes",
			live: "chocolate cake recipe with butter and sugar",
			want: Measures{TextMeasured: true, SimHash: 35, WordsReference: 8, WordsLive: 7, WordChange: -0.125},
			band: audit.BandOffTopic,
		},
		{
			// Page emptied to 2 of its 10 words: Jaccard 2/10 = 0.2,
			// Dice 4/12 = 0.3333, cosine 2 / (√10·√2) = 0.4472, word
			// change (2 - 10)/10 = -0.8 < -0.70: off-topic.
			name: "WordCountDrop",
			ref:  "alpha bravo charlie delta echo foxtrot golf hotel india juliet",
			live: "alpha bravo",
			want: Measures{TextMeasured: true, SimHash: 12, Jaccard: 0.2, Dice: 1.0 / 3, Cosine: 2 / math.Sqrt(20), WordsReference: 10, WordsLive: 2, WordChange: -0.8},
			band: audit.BandOffTopic,
		},
		{
			// Both empty: identical by definition.
			name: "BothEmpty",
			want: Measures{Identical: true, TextMeasured: true, Jaccard: 1, Dice: 1, Cosine: 1},
			band: audit.BandUnchanged,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(tt.ref, tt.live, 1)
			w := tt.want
			if got.Identical != w.Identical || got.TextMeasured != w.TextMeasured || got.SimHash != w.SimHash ||
				!near(got.Jaccard, w.Jaccard) || !near(got.Dice, w.Dice) || !near(got.Cosine, w.Cosine) ||
				got.WordsReference != w.WordsReference || got.WordsLive != w.WordsLive || !near(got.WordChange, w.WordChange) {
				t.Errorf("Compare =\n %+v\nwant\n %+v", got, w)
			}
			if b := DefaultThresholds().Band(got); b != tt.band {
				t.Errorf("band = %s, want %s", b, tt.band)
			}
		})
	}
}

// TestCompare_Shingles: with 2-word shingles word order counts.
// "a b c d" has shingles {ab, bc, cd}; "c d a b" has {cd, da, ab}: shared
// {ab, cd} = 2, union 4, Jaccard 0.5, Dice 4/6.
func TestCompare_Shingles(t *testing.T) {
	m := Compare("apple banana cherry damson", "cherry damson apple banana", 2)
	if !near(m.Jaccard, 0.5) || !near(m.Dice, 2.0/3) || !near(m.Cosine, 1) || m.Identical {
		t.Errorf("Compare w=2 = %+v", m)
	}
}

func TestCompareFingerprints(t *testing.T) {
	m := CompareFingerprints(0b1011, 100, 0b0110, 20)
	// 1011 ^ 0110 = 1101: 3 bits. Words 100 → 20: -0.8.
	if m.SimHash != 3 || !near(m.WordChange, -0.8) || m.TextMeasured || m.Identical {
		t.Errorf("CompareFingerprints = %+v", m)
	}
	if b := DefaultThresholds().Band(m); b != audit.BandOffTopic {
		t.Errorf("band = %s", b)
	}
	same := CompareFingerprints(42, 7, 42, 7)
	if !same.Identical || DefaultThresholds().Band(same) != audit.BandUnchanged {
		t.Errorf("same fingerprint = %+v", same)
	}
}

// TestBand_Thresholds checks each threshold at its value (not crossed:
// comparisons are strict) and just past it.
func TestBand_Thresholds(t *testing.T) {
	th := DefaultThresholds()
	base := Measures{TextMeasured: true, Jaccard: 1, Dice: 1, Cosine: 1, WordsReference: 100, WordsLive: 100}
	// Past a threshold is further than Epsilon; within it is rounding.
	below := func(x float64) float64 { return x - 1e-6 }
	above := func(x float64) float64 { return x + 1e-6 }
	ulpBelow := func(x float64) float64 { return math.Nextafter(x, math.Inf(-1)) }
	tests := []struct {
		name string
		set  func(m *Measures)
		want string
	}{
		{"Neutral", func(m *Measures) {}, audit.BandMinor},
		{"OffTopicCosineAt", func(m *Measures) { m.Cosine = th.OffTopicCosine; m.Jaccard, m.Dice = 0.9, 0.9 }, audit.BandMajor},
		{"OffTopicCosineBelow", func(m *Measures) { m.Cosine = below(th.OffTopicCosine) }, audit.BandOffTopic},
		{"OffTopicCosineUlpBelow", func(m *Measures) { m.Cosine = ulpBelow(th.OffTopicCosine); m.Jaccard, m.Dice = 0.9, 0.9 }, audit.BandMajor},
		{"OffTopicJaccardAt", func(m *Measures) { m.Jaccard = 1 - th.OffTopicJaccardDistance }, audit.BandMajor},
		{"OffTopicJaccardPast", func(m *Measures) { m.Jaccard = below(1 - th.OffTopicJaccardDistance) }, audit.BandOffTopic},
		{"OffTopicJaccardExact", func(m *Measures) { m.Jaccard = 0.04 }, audit.BandMajor},
		{"OffTopicDiceAt", func(m *Measures) { m.Dice = 1 - th.OffTopicDiceDistance }, audit.BandMinor},
		{"OffTopicDiceExact", func(m *Measures) { m.Dice = 0.07 }, audit.BandMinor},
		{"OffTopicDicePast", func(m *Measures) { m.Dice = below(1 - th.OffTopicDiceDistance) }, audit.BandOffTopic},
		{"OffTopicSimHashAt", func(m *Measures) { m.SimHash = th.OffTopicSimHash }, audit.BandMajor},
		{"OffTopicSimHashPast", func(m *Measures) { m.SimHash = th.OffTopicSimHash + 1 }, audit.BandOffTopic},
		{"OffTopicWordDropAt", func(m *Measures) { m.WordChange = -th.OffTopicWordDrop }, audit.BandMajor},
		{"OffTopicWordDropPast", func(m *Measures) { m.WordChange = below(-th.OffTopicWordDrop) }, audit.BandOffTopic},
		{"MajorCosineAt", func(m *Measures) { m.Cosine = th.MajorCosine }, audit.BandMinor},
		{"MajorCosineBelow", func(m *Measures) { m.Cosine = below(th.MajorCosine) }, audit.BandMajor},
		{"MajorJaccardAt", func(m *Measures) { m.Jaccard = 1 - th.MajorJaccardDistance }, audit.BandMinor},
		{"MajorJaccardPast", func(m *Measures) { m.Jaccard = below(1 - th.MajorJaccardDistance) }, audit.BandMajor},
		{"MajorSimHashAt", func(m *Measures) { m.SimHash = 12 }, audit.BandMinor},
		{"MajorSimHashPast", func(m *Measures) { m.SimHash = 13 }, audit.BandMajor},
		{"MajorGrowthAt", func(m *Measures) { m.WordChange = th.MajorWordChange }, audit.BandMinor},
		{"MajorGrowthPast", func(m *Measures) { m.WordChange = above(th.MajorWordChange) }, audit.BandMajor},
		{"MajorShrinkAt", func(m *Measures) { m.WordChange = -th.MajorWordChange }, audit.BandMinor},
		{"MajorShrinkPast", func(m *Measures) { m.WordChange = below(-th.MajorWordChange) }, audit.BandMajor},
		// Fingerprint comparisons have no text measures: zero similarities
		// must not count.
		{"NoTextMeasures", func(m *Measures) { m.TextMeasured, m.Jaccard, m.Dice, m.Cosine = false, 0, 0, 0 }, audit.BandMinor},
		{"IdenticalWins", func(m *Measures) { m.Identical, m.Cosine = true, 0 }, audit.BandUnchanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base
			tt.set(&m)
			if got := th.Band(m); got != tt.want {
				t.Errorf("Band(%+v) = %s, want %s", m, got, tt.want)
			}
		})
	}
}

// TestBand_JaccardExactlyAtThreshold: two real texts of 13 content words
// each sharing one ("night"): Jaccard 1/25 = 0.04, distance exactly 0.96,
// the Toolkit's threshold, which is not crossed (it must be exceeded).
// Dice 2/26, distance 0.923: below 0.93. Cosine 1/13 = 0.077 would be
// off-topic at 0.12, so the cosine threshold is lowered to 0.01, and the
// SimHash one raised to 64, to judge the set measures alone: the change is
// major (Jaccard distance 0.96 > 0.50), not off-topic. Comparing the
// similarity with 1 - 0.96 = 0.040000000000000036 instead would make it
// off-topic.
func TestBand_JaccardExactlyAtThreshold(t *testing.T) {
	ref := "Harbor lighthouse keeper, rotating lamp, beacon, fog horn: rocky coast ships and sailors at night."
	live := "Recipe: chocolate cake with butter, sugar, flour, eggs, oven, vanilla, frosting, sprinkles; dessert at night."
	m := Compare(ref, live, 1)
	if m.Jaccard != 1.0/25 || m.Dice != 2.0/26 || !near(m.Cosine, 1.0/13) || m.WordChange != 0 {
		t.Fatalf("Compare = %+v, want Jaccard 1/25, Dice 2/26, cosine 1/13", m)
	}
	th := DefaultThresholds()
	th.OffTopicCosine, th.OffTopicSimHash = 0.01, 64
	if b := th.Band(m); b != audit.BandMajor {
		t.Errorf("band = %s, want major (Jaccard distance exactly 0.96 is not past 0.96)", b)
	}
	th.OffTopicJaccardDistance = 0.95
	if b := th.Band(m); b != audit.BandOffTopic {
		t.Errorf("band at Jaccard distance threshold 0.95 = %s, want off-topic", b)
	}
}

// TestThresholds_Exact: with Exact, a 0 threshold is 0, not the default.
func TestThresholds_Exact(t *testing.T) {
	m := Measures{TextMeasured: true, Jaccard: 1, Dice: 1, Cosine: 1, SimHash: 1, WordsReference: 10, WordsLive: 10}
	th := DefaultThresholds()
	th.MajorSimHash = 0
	if b := th.Band(m); b != audit.BandMajor {
		t.Errorf("MajorSimHash 0 (exact): %s, want major", b)
	}
	th.Exact = false
	if b := th.Band(m); b != audit.BandMinor {
		t.Errorf("MajorSimHash 0 (not exact: default 12): %s, want minor", b)
	}
	// Cosine 0 with an off-topic cosine threshold of 0: never below it.
	zero := DefaultThresholds()
	zero.OffTopicCosine, zero.MajorCosine = 0, 0
	if b := zero.Band(Measures{TextMeasured: true, Jaccard: 0.9, Dice: 0.9, Cosine: 0, WordsReference: 1, WordsLive: 1}); b != audit.BandMinor {
		t.Errorf("cosine thresholds 0: %s, want minor", b)
	}
}

func TestThresholds_Validate(t *testing.T) {
	if err := DefaultThresholds().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := (Thresholds{}).Validate(); err != nil {
		t.Errorf("zero (defaults): %v", err)
	}
	zero := Thresholds{Exact: true}
	if err := zero.Validate(); err != nil {
		t.Errorf("all 0, exact: %v", err)
	}
	for name, set := range map[string]func(*Thresholds){
		"OffTopicCosine":          func(t *Thresholds) { t.OffTopicCosine = 1.5 },
		"OffTopicJaccardDistance": func(t *Thresholds) { t.OffTopicJaccardDistance = -0.1 },
		"OffTopicDiceDistance":    func(t *Thresholds) { t.OffTopicDiceDistance = math.NaN() },
		"OffTopicSimHash":         func(t *Thresholds) { t.OffTopicSimHash = 65 },
		"OffTopicWordDrop":        func(t *Thresholds) { t.OffTopicWordDrop = 2 },
		"MajorCosine":             func(t *Thresholds) { t.MajorCosine = -1 },
		"MajorJaccardDistance":    func(t *Thresholds) { t.MajorJaccardDistance = 1.01 },
		"MajorSimHash":            func(t *Thresholds) { t.MajorSimHash = -1 },
		"MajorWordChange":         func(t *Thresholds) { t.MajorWordChange = 1.5 },
	} {
		th := DefaultThresholds()
		set(&th)
		if err := th.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s out of range: %v", name, err)
		}
	}
}

func TestThresholds_Configurable(t *testing.T) {
	m := Measures{TextMeasured: true, Jaccard: 1, Dice: 1, Cosine: 0.5, WordsReference: 1, WordsLive: 1}
	if b := (Thresholds{}).Band(m); b != audit.BandMajor {
		t.Errorf("zero thresholds (defaults): %s", b)
	}
	if b := (Thresholds{OffTopicCosine: 0.6}).Band(m); b != audit.BandOffTopic {
		t.Errorf("OffTopicCosine 0.6: %s", b)
	}
	if b := (Thresholds{MajorCosine: 0.4}).Band(m); b != audit.BandMinor {
		t.Errorf("MajorCosine 0.4: %s", b)
	}
}

func TestDiceCosineEdges(t *testing.T) {
	empty := map[uint64]struct{}{}
	one := map[uint64]struct{}{1: {}}
	if Dice(empty, empty) != 1 || Dice(empty, one) != 0 || Dice(one, one) != 1 {
		t.Error("Dice edges")
	}
	if Cosine(nil, nil) != 1 || Cosine(nil, []string{"a"}) != 0 {
		t.Error("Cosine edges")
	}
	// a: (x:2, y:1); b: (x:1, y:2): 4 / 5 = 0.8.
	if c := Cosine([]string{"x", "x", "y"}, []string{"x", "y", "y"}); !near(c, 0.8) {
		t.Errorf("Cosine = %v, want 0.8", c)
	}
	if WordChange(0, 0) != 0 || WordChange(0, 5) != 1 || WordChange(4, 5) != 0.25 {
		t.Error("WordChange edges")
	}
}

func TestExcerpts(t *testing.T) {
	r, l := Excerpts("one two three four five six", "one two three four FIVE seven", 3)
	// First difference at index 5 ("six"/"seven"; "five"/"FIVE" compare
	// case-insensitively); excerpts start 3 words earlier.
	if r != "… three four five …" || l != "… three four FIVE …" {
		t.Errorf("excerpts %q, %q", r, l)
	}
	if a, b := Excerpts("same", "same", 5); a != "" || b != "" {
		t.Errorf("identical texts: %q %q", a, b)
	}
}
