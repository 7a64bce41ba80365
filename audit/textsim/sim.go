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
func fnv1a(s string) uint64 {
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
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			words = append(words, strings.ToLower(text[start:end]))
			start = -1
		}
	}
	for i, r := range text {
		if r < utf8.RuneSelf {
			// ASCII fast path.
			if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
				if start < 0 {
					start = i
				}
			} else {
				flush(i)
			}
			continue
		}
		switch {
		case r == utf8.RuneError:
			flush(i)
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			flush(i)
			words = append(words, text[i:i+utf8.RuneLen(r)])
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			if start < 0 {
				start = i
			}
		case unicode.IsMark(r):
			// A mark continues a word; a leading mark is dropped.
		default:
			flush(i)
		}
	}
	flush(len(text))
	return words
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
	if len(words) == 0 {
		return 0
	}
	counts := make(map[string]int, len(words))
	for _, w := range words {
		counts[w]++
	}
	var v [64]int
	for w, n := range counts {
		h := fnv1a(w)
		for i := range 64 {
			if h&(1<<i) != 0 {
				v[i] += n
			} else {
				v[i] -= n
			}
		}
	}
	var out uint64
	for i := range 64 {
		if v[i] > 0 {
			out |= 1 << i
		}
	}
	return out
}

// Hamming returns the number of bits in which a and b differ (0 to 64).
func Hamming(a, b uint64) int {
	return bits.OnesCount64(a ^ b)
}
