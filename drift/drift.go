package drift

import (
	"fmt"
	"math"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift/textsim"
)

// Thresholds split drift measures into bands. Distances are 1 - similarity,
// the form the Off-Topic Memento Toolkit uses; a measure crosses a
// threshold strictly, and by more than a rounding error (Epsilon): a
// cosine of exactly 0.12, or a Jaccard distance of exactly 0.96 however it
// was computed, is not off-topic.
//
// A zero field takes its default (DefaultThresholds), a convenience for
// callers that set only a few, unless Exact is set: then every field is
// used as it is and 0 means 0 (a command line that lets users set any
// threshold, 0 included, fills every field and sets Exact).
type Thresholds struct {
	// Off-topic: any one of these makes the live page off-topic, a
	// different page under the same URL. The similarity thresholds are
	// the Off-Topic Memento Toolkit's defaults (otmt/timemap_measures.py,
	// supported_timemap_measures); see OffTopicSimHash for the SimHash one.
	OffTopicCosine          float64 // cosine similarity below it (0.12)
	OffTopicJaccardDistance float64 // Jaccard distance above it (0.96)
	OffTopicDiceDistance    float64 // Sørensen–Dice distance above it (0.93)
	// OffTopicSimHash is the SimHash Hamming distance (of 64 bits) above
	// which the page is off-topic (38, the Toolkit's raw_simhash default).
	// linkrot's
	// SimHash is computed on the term frequencies of the words of the main
	// text (boilerplate removed), which is closer to the Toolkit's
	// tf_simhash (threshold 34): --drift-offtopic-simhash 34 selects it.
	OffTopicSimHash  int
	OffTopicWordDrop float64 // word count fell by more than this fraction (0.70)

	// Major: not off-topic, but any one of these makes the change major.
	// linkrot's own split, chosen so that a page keeps "minor" while most
	// of its vocabulary and its length survive:
	//   - MajorCosine 0.80: a fifth of the term-frequency direction gone;
	//   - MajorJaccardDistance 0.50: fewer than half the distinct content
	//     words (shingles) shared;
	//   - MajorSimHash 12: four times the k = 3 bits Manku, Jain and Das
	//     Sarma (WWW 2007) use for near-duplicate 64-bit SimHashes of whole
	//     pages, since main texts are short and one changed word moves
	//     several bits;
	//   - MajorWordChange 0.50: the text grew or shrank by more than half.
	MajorCosine          float64
	MajorJaccardDistance float64
	MajorSimHash         int
	MajorWordChange      float64

	// Exact uses every field as it is, 0 included (no defaults).
	Exact bool
}

// Default thresholds.
const (
	DefaultOffTopicCosine          = 0.12
	DefaultOffTopicJaccardDistance = 0.96
	DefaultOffTopicDiceDistance    = 0.93
	DefaultOffTopicSimHash         = 38
	DefaultOffTopicWordDrop        = 0.70
	DefaultMajorCosine             = 0.80
	DefaultMajorJaccardDistance    = 0.50
	DefaultMajorSimHash            = 12
	DefaultMajorWordChange         = 0.50
)

// Epsilon is how far past a threshold a similarity, distance or word
// change must be to cross it: less is rounding (1 - 0.96 is
// 0.040000000000000036 in float64, a Jaccard similarity of exactly 1/25
// is 0.04).
const Epsilon = 1e-9

// DefaultThresholds returns the default thresholds (Exact: every field
// set).
func DefaultThresholds() Thresholds {
	return Thresholds{
		OffTopicCosine:          DefaultOffTopicCosine,
		OffTopicJaccardDistance: DefaultOffTopicJaccardDistance,
		OffTopicDiceDistance:    DefaultOffTopicDiceDistance,
		OffTopicSimHash:         DefaultOffTopicSimHash,
		OffTopicWordDrop:        DefaultOffTopicWordDrop,
		MajorCosine:             DefaultMajorCosine,
		MajorJaccardDistance:    DefaultMajorJaccardDistance,
		MajorSimHash:            DefaultMajorSimHash,
		MajorWordChange:         DefaultMajorWordChange,
		Exact:                   true,
	}
}

// WithDefaults returns t with every zero field set to its default, or t
// itself when t.Exact.
func (t Thresholds) WithDefaults() Thresholds {
	if t.Exact {
		return t
	}
	d := DefaultThresholds()
	setF := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	setI := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setF(&t.OffTopicCosine, d.OffTopicCosine)
	setF(&t.OffTopicJaccardDistance, d.OffTopicJaccardDistance)
	setF(&t.OffTopicDiceDistance, d.OffTopicDiceDistance)
	setI(&t.OffTopicSimHash, d.OffTopicSimHash)
	setF(&t.OffTopicWordDrop, d.OffTopicWordDrop)
	setF(&t.MajorCosine, d.MajorCosine)
	setF(&t.MajorJaccardDistance, d.MajorJaccardDistance)
	setI(&t.MajorSimHash, d.MajorSimHash)
	setF(&t.MajorWordChange, d.MajorWordChange)
	t.Exact = true
	return t
}

// Field is one threshold of Thresholds: its name, the command-line flag
// that sets it, what it means and its range. Exactly one of Float and Int
// points into the Thresholds that Fields was called on.
type Field struct {
	Name, Flag, Usage string
	Lo, Hi            float64
	Float             *float64
	Int               *int
}

// Value returns the field's current value.
func (f Field) Value() float64 {
	if f.Int != nil {
		return float64(*f.Int)
	}
	return *f.Float
}

// Fields returns the thresholds of t, in a fixed order: the one table of
// names, flags, meanings and ranges that validation and the command line
// share.
func (t *Thresholds) Fields() []Field {
	return []Field{
		{Name: "OffTopicCosine", Flag: "drift-offtopic-cosine", Usage: "off-topic when cosine similarity is below this", Hi: 1, Float: &t.OffTopicCosine},
		{Name: "OffTopicJaccardDistance", Flag: "drift-offtopic-jaccard", Usage: "off-topic when Jaccard distance is above this", Hi: 1, Float: &t.OffTopicJaccardDistance},
		{Name: "OffTopicDiceDistance", Flag: "drift-offtopic-sorensen", Usage: "off-topic when Sørensen–Dice distance is above this", Hi: 1, Float: &t.OffTopicDiceDistance},
		{Name: "OffTopicSimHash", Flag: "drift-offtopic-simhash", Usage: "off-topic when SimHash Hamming distance (of 64) is above this", Hi: 64, Int: &t.OffTopicSimHash},
		{Name: "OffTopicWordDrop", Flag: "drift-offtopic-wordcount", Usage: "off-topic when the word count fell by more than this fraction", Hi: 1, Float: &t.OffTopicWordDrop},
		{Name: "MajorCosine", Flag: "drift-major-cosine", Usage: "major drift when cosine similarity is below this", Hi: 1, Float: &t.MajorCosine},
		{Name: "MajorJaccardDistance", Flag: "drift-major-jaccard", Usage: "major drift when Jaccard distance is above this", Hi: 1, Float: &t.MajorJaccardDistance},
		{Name: "MajorSimHash", Flag: "drift-major-simhash", Usage: "major drift when SimHash Hamming distance is above this", Hi: 64, Int: &t.MajorSimHash},
		{Name: "MajorWordChange", Flag: "drift-major-wordcount", Usage: "major drift when the word count changed by more than this fraction", Hi: 1, Float: &t.MajorWordChange},
	}
}

// RangeError is a threshold out of its range.
type RangeError struct {
	Field Field
	Value float64
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("drift threshold %s = %v: want a value in [%v, %v]", e.Field.Name, e.Value, e.Field.Lo, e.Field.Hi)
}

// Validate reports the first threshold out of its range, if any, as a
// *RangeError (zero fields at their defaults unless Exact): similarities
// and distances in [0, 1], SimHash distances in [0, 64], word-count
// fractions in [0, 1].
func (t Thresholds) Validate() error {
	t = t.WithDefaults()
	for _, f := range t.Fields() {
		if v := f.Value(); !(v >= f.Lo && v <= f.Hi) { // NaN fails too
			return &RangeError{Field: f, Value: v}
		}
	}
	return nil
}

// Measures are the drift measures of a live text against a reference.
type Measures struct {
	// Identical reports the same main text: the same word sequence (for
	// fingerprints: the same SimHash and word count).
	Identical bool
	// TextMeasured reports that Jaccard, Dice and Cosine were computed:
	// both texts were at hand. Comparing stored fingerprints gives only
	// SimHash and word counts.
	TextMeasured bool
	SimHash      int     // Hamming distance of the SimHashes, 0 to 64
	Jaccard      float64 // Jaccard similarity of content-word shingle sets
	Dice         float64 // Sørensen–Dice similarity of the same sets
	Cosine       float64 // cosine similarity of content-word frequencies
	// WordsReference and WordsLive count all words; WordChange is
	// (live - reference) / reference (0 when both are empty, 1 when only
	// the reference is).
	WordsReference int
	WordsLive      int
	WordChange     float64
}

// Compare measures the live main text against the reference main text.
// shingle is the shingle size in words (below 1: 1).
func Compare(reference, live string, shingle int) Measures {
	rw, lw := textsim.Words(reference), textsim.Words(live)
	m := Measures{
		TextMeasured:   true,
		Identical:      equalWords(rw, lw),
		SimHash:        textsim.Hamming(textsim.SimHash(rw), textsim.SimHash(lw)),
		WordsReference: len(rw),
		WordsLive:      len(lw),
		WordChange:     WordChange(len(rw), len(lw)),
	}
	rc, lc := ContentWords(rw), ContentWords(lw)
	rs, ls := textsim.Shingles(rc, shingle), textsim.Shingles(lc, shingle)
	m.Jaccard = textsim.Jaccard(rs, ls)
	m.Dice = Dice(rs, ls)
	m.Cosine = Cosine(rc, lc)
	return m
}

// CompareFingerprints measures a live page against a stored fingerprint
// (SimHash of all words and word count, as audit.Check keeps them). Only
// SimHash and word counts can be measured.
func CompareFingerprints(refHash uint64, refWords int, liveHash uint64, liveWords int) Measures {
	return Measures{
		Identical:      refHash == liveHash && refWords == liveWords,
		SimHash:        textsim.Hamming(refHash, liveHash),
		WordsReference: refWords,
		WordsLive:      liveWords,
		WordChange:     WordChange(refWords, liveWords),
	}
}

// Band classifies m with t (zero fields at their defaults unless Exact):
// unchanged for identical text; off-topic when any off-topic threshold is
// crossed; major when any major one is; minor otherwise. Measures that
// were not taken (TextMeasured false) cross nothing. Similarities are
// turned into distances (1 - similarity) and compared with the distance
// thresholds, each crossing by more than Epsilon.
func (t Thresholds) Band(m Measures) string {
	t = t.WithDefaults()
	if m.Identical {
		return audit.BandUnchanged
	}
	above := func(x, threshold float64) bool { return x > threshold+Epsilon }
	below := func(x, threshold float64) bool { return x < threshold-Epsilon }
	off := m.SimHash > t.OffTopicSimHash || below(m.WordChange, -t.OffTopicWordDrop)
	if m.TextMeasured {
		off = off || below(m.Cosine, t.OffTopicCosine) ||
			above(1-m.Jaccard, t.OffTopicJaccardDistance) ||
			above(1-m.Dice, t.OffTopicDiceDistance)
	}
	if off {
		return audit.BandOffTopic
	}
	major := m.SimHash > t.MajorSimHash || above(math.Abs(m.WordChange), t.MajorWordChange)
	if m.TextMeasured {
		major = major || below(m.Cosine, t.MajorCosine) || above(1-m.Jaccard, t.MajorJaccardDistance)
	}
	if major {
		return audit.BandMajor
	}
	return audit.BandMinor
}

// Dice returns the Sørensen–Dice index of two sets, 2|a ∩ b| / (|a| + |b|):
// 1 for identical sets, 0 for disjoint ones. Two empty sets are identical.
func Dice(a, b map[uint64]struct{}) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	inter := 0
	for h := range a {
		if _, ok := b[h]; ok {
			inter++
		}
	}
	return 2 * float64(inter) / float64(len(a)+len(b))
}

// Cosine returns the cosine similarity of the term-frequency vectors of two
// word lists: Σ aᵢbᵢ / (‖a‖ ‖b‖). Two empty lists are identical (1); one
// empty list against a non-empty one gives 0.
func Cosine(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	ta, tb := termFreq(a), termFreq(b)
	var dot, na, nb float64
	for w, x := range ta {
		na += float64(x * x)
		if y, ok := tb[w]; ok {
			dot += float64(x * y)
		}
	}
	for _, y := range tb {
		nb += float64(y * y)
	}
	c := dot / (math.Sqrt(na) * math.Sqrt(nb))
	return min(c, 1) // rounding can overshoot by an ulp
}

func termFreq(words []string) map[string]int {
	m := make(map[string]int, len(words))
	for _, w := range words {
		m[w]++
	}
	return m
}

// WordChange returns (live - ref) / ref: 0 when both are 0, 1 when only
// ref is 0.
func WordChange(ref, live int) float64 {
	switch {
	case ref == 0 && live == 0:
		return 0
	case ref == 0:
		return 1
	}
	return float64(live-ref) / float64(ref)
}

// ContentWords returns words without English function words (the, of,
// and, ...). The list is short on purpose: it removes the words that make
// any two English texts look alike, nothing that carries a topic. Words
// must be lower-cased (textsim.Words is).
func ContentWords(words []string) []string {
	out := make([]string, 0, len(words))
	for _, w := range words {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// stopWords are common English function words: articles, pronouns,
// auxiliaries, conjunctions and prepositions.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an the and or but nor so yet if then than that this these those
		is are was were be been being am do does did have has had having
		i me my we us our you your he him his she her it its they them their
		of in on at to for from by with about as into onto over under
		not no can could will would shall should may might must
		what which who whom whose when where why how all any each both
		there here up down out off again very just also too only own same
		s t`) {
		m[w] = true
	}
	return m
}()

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Excerpts returns short excerpts of two texts around the first word where
// they differ, at most n words each (default 25 for n < 1), for a human to
// see what changed. Identical texts give two empty strings.
func Excerpts(reference, live string, n int) (string, string) {
	if n < 1 {
		n = 25
	}
	rw, lw := strings.Fields(reference), strings.Fields(live)
	i := 0
	for i < len(rw) && i < len(lw) && strings.EqualFold(rw[i], lw[i]) {
		i++
	}
	if i == len(rw) && i == len(lw) {
		return "", ""
	}
	from := max(0, i-3)
	cut := func(ws []string) string {
		if from >= len(ws) {
			return ""
		}
		end := min(len(ws), from+n)
		s := strings.Join(ws[from:end], " ")
		if from > 0 {
			s = "… " + s
		}
		if end < len(ws) {
			s += " …"
		}
		return s
	}
	return cut(rw), cut(lw)
}
