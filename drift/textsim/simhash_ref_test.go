package textsim

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// simHashRef is the textbook SimHash: one weight per distinct word, a ±
// vote per bit. SimHash must give exactly the same fingerprints (they are
// stored and compared across runs).
func simHashRef(words []string) uint64 {
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

func TestSimHash_SameAsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		vocab := 1 + r.IntN(50)
		n := r.IntN(2000)
		if trial%100 == 0 {
			n = 70000 // counts past 2^16
		}
		words := make([]string, n)
		for i := range words {
			words[i] = fmt.Sprintf("w%d", r.IntN(vocab))
		}
		if got, want := SimHash(words), simHashRef(words); got != want {
			t.Fatalf("trial %d (%d words, vocabulary %d): SimHash %#x, reference %#x", trial, n, vocab, got, want)
		}
	}
	// Ties (as many set as clear) give 0, as in the reference.
	for _, words := range [][]string{{"a", "b"}, {"a", "a", "b", "b"}, {"x"}, {"x", "x", "x"}} {
		if got, want := SimHash(words), simHashRef(words); got != want {
			t.Errorf("%q: SimHash %#x, reference %#x", words, got, want)
		}
	}
}

func BenchmarkSimHash(b *testing.B) {
	words := Words("the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat near the old fireplace")
	for len(words) < 600 {
		words = append(words, words...)
	}
	b.Run("bitsliced", func(b *testing.B) {
		for b.Loop() {
			SimHash(words)
		}
	})
	b.Run("reference", func(b *testing.B) {
		for b.Loop() {
			simHashRef(words)
		}
	})
}
