package study

import (
	"math"
	"testing"
)

// Published Wilson (score) intervals: Newcombe 1998, Statistics in
// Medicine 17: 857-872, Table II, method 3, to four decimals.
func TestWilsonPublished(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0, 0.1611},
		{1, 29, 0.0061, 0.1718},
	} {
		lo, hi := Wilson(c.k, c.n, Z95)
		if math.Abs(lo-c.lo) > 0.00005 || math.Abs(hi-c.hi) > 0.00005 {
			t.Errorf("Wilson(%d, %d) = (%.5f, %.5f), want (%.4f, %.4f)", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestWilsonEdges(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 0, 0, 1},
		{5, 5, 0.5655, 1},
		{0, 1, 0, 0.7935},
		{1, 1, 0.2065, 1},
		{50, 100, 0.4038, 0.5962},
	} {
		lo, hi := Wilson(c.k, c.n, Z95)
		if math.Abs(lo-c.lo) > 0.00005 || math.Abs(hi-c.hi) > 0.00005 {
			t.Errorf("Wilson(%d, %d) = (%.5f, %.5f), want (%.4f, %.4f)", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	// Symmetry: the interval of n-k is the mirror of that of k.
	for n := 1; n < 40; n++ {
		for k := 0; k <= n; k++ {
			lo, hi := Wilson(k, n, Z95)
			mlo, mhi := Wilson(n-k, n, Z95)
			if math.Abs(lo-(1-mhi)) > 1e-12 || math.Abs(hi-(1-mlo)) > 1e-12 || lo < 0 || hi > 1 || lo > float64(k)/float64(n) || hi < float64(k)/float64(n) {
				t.Fatalf("Wilson(%d, %d) = (%v, %v), mirror (%v, %v)", k, n, lo, hi, mlo, mhi)
			}
		}
	}
}
