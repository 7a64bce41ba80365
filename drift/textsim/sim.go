package textsim

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FNV-1a 64-bit parameters (Fowler, Noll, Vo; IETF draft-eastlake-fnv).
const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3
)

// fnv1a returns the 64-bit FNV-1a hash of s.
func fnv1a[T string | []byte](s T) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// Words splits text into lower-cased word tokens: maximal runs of Unicode
// letters and digits (combining marks stay with their letter). Every other
// rune separates words, so "don't" gives "don" and "t". Han, Hiragana and
// Katakana characters, which are written without spaces between words, are
// each a token of their own.
func Words(text string) []string {
	// About one word per 7 bytes of prose: one allocation for most texts
	// instead of a dozen as the slice grows.
	words := make([]string, 0, len(text)/7+1)
	EachWord(text, func(w string) { words = append(words, w) })
	if len(words) == 0 {
		return nil
	}
	return words
}

// EachWord calls yield with each word of text, in order: the words Words
// returns, without collecting them.
func EachWord(text string, yield func(string)) {
	eachWordSpan(text, func(start, end int, lower bool) {
		yield(wordAt(text, start, end, lower))
	})
}

// eachWordSpan calls yield with the offsets of each word of text, in
// order, and whether text[start:end] is already its own lower case (when
// false, it may be too). It is EachWord's scan, for strings and for byte
// slices (EachRawWordBytes).
func eachWordSpan[T string | []byte](text T, yield func(start, end int, lower bool)) {
	start := -1
	// lower: the word so far is ASCII without upper-case letters, so it is
	// its own lower case (what strings.ToLower would return).
	lower := true
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			// ASCII fast path.
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				if start < 0 {
					start = i
				}
			case 'A' <= c && c <= 'Z':
				if start < 0 {
					start = i
				}
				lower = false
			case start >= 0:
				yield(start, i, lower)
				start, lower = -1, true
			}
			i++
			continue
		}
		r, size := decodeRune(text, i)
		lower = false
		switch {
		case r == utf8.RuneError:
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			if start >= 0 {
				yield(start, i, false)
				start = -1
			}
			yield(i, i+size, true)
			lower = true
			i += size
			continue
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			if start < 0 {
				start = i
			}
			i += size
			continue
		case unicode.IsMark(r):
			// A mark continues a word; a leading mark is dropped.
			i += size
			continue
		}
		// Anything else ends the word.
		if start >= 0 {
			yield(start, i, false)
			start = -1
		}
		lower = true
		i += size
	}
	if start >= 0 {
		yield(start, len(text), lower)
	}
}

// decodeRune is utf8.DecodeRuneInString(text[i:]) (or DecodeRune): an
// invalid byte is utf8.RuneError of size 1, as a range over a string
// reads it.
func decodeRune[T string | []byte](text T, i int) (rune, int) {
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], text[i:])
	return utf8.DecodeRune(buf[:n])
}

// wordAt returns text[start:end] lower-cased; lower says it is already.
func wordAt(text string, start, end int, lower bool) string {
	if lower {
		return text[start:end]
	}
	return strings.ToLower(text[start:end])
}

// Shingles returns the set of hashed k-word shingles of words: the FNV-1a
// hash of every run of k consecutive words (joined by the byte 0xFF, which
// no UTF-8 text contains). A text of fewer than k (but at least one) words
// has one shingle, of all its words, so short texts still compare. k below
// 1 counts as 1. No words give an empty set.
func Shingles(words []string, k int) map[uint64]struct{} {
	if k < 1 {
		k = 1
	}
	if len(words) < k {
		k = len(words)
	}
	set := make(map[uint64]struct{}, len(words)-k+1)
	if k == 0 {
		return set
	}
	for i := 0; i+k <= len(words); i++ {
		h := uint64(fnvOffset64)
		for j := i; j < i+k; j++ {
			if j > i {
				h ^= 0xFF
				h *= fnvPrime64
			}
			w := words[j]
			for p := 0; p < len(w); p++ {
				h ^= uint64(w[p])
				h *= fnvPrime64
			}
		}
		set[h] = struct{}{}
	}
	return set
}

// Jaccard returns |a ∩ b| / |a ∪ b|, the Jaccard index of two sets: 1 for
// identical sets, 0 for disjoint ones. Two empty sets are identical (1);
// one empty set against a non-empty one gives 0.
func Jaccard(a, b map[uint64]struct{}) float64 {
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
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// SimHash returns the 64-bit Charikar SimHash of words. Each distinct word
// is a feature, hashed with FNV-1a 64 and weighted by its number of
// occurrences; bit i of the result is set when the weights of the features
// whose hash has bit i set outweigh those whose hash has it clear (strictly:
// a tie gives 0). So a single word's SimHash is its hash, and no words give
// 0. Near-identical texts get fingerprints a small Hamming distance apart.
func SimHash(words []string) uint64 {
	var h SimHasher
	for _, w := range words {
		h.Add(w)
	}
	return h.Sum()
}

// SimHasher computes a SimHash word by word: adding the words of a slice
// one by one and calling Sum gives SimHash of the slice. The zero value is
// ready to use (the SimHash of no words).
type SimHasher struct {
	// Bit i of the result is set when more occurrences of words have bit
	// i of their hash set than clear: count, per bit, the hashes that have
	// it set. The 64 counts are kept as vertical (bit-sliced) counters:
	// bit i of planes[j] is bit j of bit i's count, and adding a hash is a
	// binary increment of every counter whose bit is set in it, done for
	// all 64 at once. Summing per occurrence equals weighting each
	// distinct word by its number of occurrences.
	planes [64]uint64
	top    int    // planes in use
	n      uint64 // words added
}

// Add adds one occurrence of word w.
func (s *SimHasher) Add(w string) {
	s.add(fnv1a(w))
}

// AddBytes is Add of string(w).
func (s *SimHasher) AddBytes(w []byte) {
	s.add(fnv1a(w))
}

func (s *SimHasher) add(carry uint64) {
	j := 0
	for ; carry != 0; j++ {
		s.planes[j], carry = s.planes[j]^carry, s.planes[j]&carry
	}
	s.top = max(s.top, j)
	s.n++
}

// Sum returns the SimHash of the words added so far.
func (s *SimHasher) Sum() uint64 {
	var out uint64
	for i := range 64 {
		var ones uint64
		for j := range s.top {
			ones |= (s.planes[j] >> i & 1) << j
		}
		if 2*ones > s.n {
			out |= 1 << i
		}
	}
	return out
}

// Hamming returns the number of bits in which a and b differ (0 to 64).
func Hamming(a, b uint64) int {
	return bits.OnesCount64(a ^ b)
}
