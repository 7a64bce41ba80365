package study

import (
	"math"
	"sort"
	"strconv"
)

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Wilson returns the Wilson score interval of k successes in n trials at
// the normal quantile z (Wilson 1927, "Probable inference, the law of
// succession, and statistical inference", JASA 22: 209; Newcombe 1998,
// "Two-sided confidence intervals for the single proportion", Statistics
// in Medicine 17: 857, method 3):
//
//	centre    = (p + z²/2n) / (1 + z²/n)
//	halfwidth = z / (1 + z²/n) · √(p(1−p)/n + z²/4n²)
//
// with p = k/n. Unlike the Wald interval it stays inside [0, 1] and does
// not collapse to a point at k = 0 or k = n, which matters for the small
// per-year counts of a study. n = 0 gives (0, 0, 1): nothing is known.
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = centre-half, centre+half
	// Exact at the edges (rounding would leave 1e-17 outside).
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return math.Max(0, lo), math.Min(1, hi)
}

// Share is a proportion with its Wilson 95% interval.
type Share struct {
	K, N   int
	Lo, Hi float64
}

// P is the share, NaN when N is 0.
func (s Share) P() float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return float64(s.K) / float64(s.N)
}

func (s *Share) add(hit, counted bool) {
	if counted {
		s.N++
		if hit {
			s.K++
		}
	}
}

func (s *Share) close() { s.Lo, s.Hi = Wilson(s.K, s.N, Z95) }

// Summary scopes.
const (
	ScopeOverall = "overall"
	ScopeYear    = "year"
	ScopeGroup   = "group"
)

// SummaryRow is the shares of one scope in one wave. The denominators
// differ by share and are kept with it:
//   - Rot: broken references among those whose live check measured
//     something (Broken known);
//   - Drift: drifted (major, off-topic) among live references whose drift
//     was measured;
//   - ReferenceRot: among references whose reference rot is known;
//   - Representative: references with a representative memento among
//     those whose URL has a result in the wave (all, once the run is
//     complete);
//   - NewRot: the longitudinal share (Jones et al. 2016 re-checked their
//     references the same way): references broken in this wave among
//     those that were not broken in the previous wave and are measured in
//     this one; n is 0 in wave 1.
type SummaryRow struct {
	Scope string
	// Key is the citation year or the group ("" overall).
	Key  string
	Wave int
	// N is the number of references in the scope.
	N                                             int
	Rot, Drift, ReferenceRot, Represented, NewRot Share
}

type summaryKey struct {
	wave       int
	scope, key string
}

// Summarizer accumulates the summary one row at a time, so that a study
// of a million references need not hold its rows. Rows come in Build's
// order: a reference's waves next to each other, in order, which is how
// NewRot finds the previous wave of a reference.
type Summarizer struct {
	acc     map[summaryKey]*SummaryRow
	keys    []summaryKey
	prev    Row
	hasPrev bool
}

// Add counts one row.
func (z *Summarizer) Add(r Row) {
	if z.acc == nil {
		z.acc = map[summaryKey]*SummaryRow{}
	}
	var prev *Row
	if z.hasPrev && z.prev.Index == r.Index && z.prev.Wave == r.Wave-1 {
		prev = &z.prev
	}
	var ks [3]summaryKey
	n := 2
	ks[0] = summaryKey{r.Wave, ScopeOverall, ""}
	ks[1] = summaryKey{r.Wave, ScopeYear, strconv.Itoa(r.Ref.CitedAt.Year())}
	if r.Ref.Group != "" {
		ks[2] = summaryKey{r.Wave, ScopeGroup, r.Ref.Group}
		n = 3
	}
	for _, k := range ks[:n] {
		s, ok := z.acc[k]
		if !ok {
			s = &SummaryRow{Scope: k.scope, Key: k.key, Wave: k.wave}
			z.acc[k] = s
			z.keys = append(z.keys, k)
		}
		s.N++
		s.Rot.add(r.Broken == Yes, r.Broken != Unknown)
		s.Drift.add(Drifted(r.Drift), r.Broken == No && r.Drift != DriftUnmeasured)
		s.ReferenceRot.add(r.ReferenceRot == Yes, r.ReferenceRot != Unknown)
		s.Represented.add(r.Representative, r.Checked)
		s.NewRot.add(r.Broken == Yes, prev != nil && prev.Broken == No && r.Broken != Unknown)
	}
	z.prev, z.hasPrev = r, true
}

// Rows returns the summary: for each wave, overall, then every citation
// year (ascending), then every group (by name; references without a
// group are in no group row), with the Wilson intervals computed.
func (z *Summarizer) Rows() []SummaryRow {
	keys := append([]summaryKey(nil), z.keys...)
	scopeOrder := map[string]int{ScopeOverall: 0, ScopeYear: 1, ScopeGroup: 2}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.wave != b.wave {
			return a.wave < b.wave
		}
		if a.scope != b.scope {
			return scopeOrder[a.scope] < scopeOrder[b.scope]
		}
		if a.scope == ScopeYear {
			ya, _ := strconv.Atoi(a.key)
			yb, _ := strconv.Atoi(b.key)
			return ya < yb
		}
		return a.key < b.key
	})
	out := make([]SummaryRow, 0, len(keys))
	for _, k := range keys {
		s := *z.acc[k]
		for _, sh := range []*Share{&s.Rot, &s.Drift, &s.ReferenceRot, &s.Represented, &s.NewRot} {
			sh.close()
		}
		out = append(out, s)
	}
	return out
}

// Summarize computes the summary of rows in Build's order (Summarizer).
func Summarize(rows []Row) []SummaryRow {
	var z Summarizer
	for _, r := range rows {
		z.Add(r)
	}
	return z.Rows()
}
