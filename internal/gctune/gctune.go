// Package gctune gives the Go collector a floor: while the live heap is
// small, the heap may grow to a fixed size before it is collected again,
// instead of to twice what is live (GOGC=100, the default). Once the live
// heap is big enough, the collector works as by default.
//
// Why: an audit allocates fast and keeps little. A page's tree, its links
// and its response live until the writer has them, then are garbage, so
// the live heap stays small and the default collector runs after every
// small amount allocated. The cost of the collector is in proportion to
// how often it runs, so letting the heap reach a floor (cmd/linkrot sets
// one) cuts that cost for a bounded, known amount of memory; the runtime's
// memory limit (debug.SetMemoryLimit) still bounds the biggest runs.
//
// The Go runtime has no minimum heap size; this package adjusts GOGC after
// every collection from the live heap it measured (runtime/metrics), the
// way GOGC tuners do. A collection ends with the finalizer of a sentinel
// object running: that is when the heap goal for the next cycle is set.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// MaxPercent caps the GOGC this package sets (the collector still runs
// when the heap reaches floor; a cap keeps a near-empty heap from asking
// for an absurd goal).
const MaxPercent = 10000

// Percent is the GOGC under which a heap whose live part is live bytes
// is next collected at floor bytes, or as with GOGC=base if that is
// later: never below base. roots are the bytes of goroutine stacks and
// globals the collector scans: since Go 1.18 the heap goal is live +
// (live+roots)*GOGC/100.
func Percent(live, roots, floor uint64, base int) int {
	if live+roots == 0 {
		return MaxPercent
	}
	if live >= floor {
		return base
	}
	p := (floor - live) * 100 / (live + roots) // goal = live + (live+roots)*p/100 = floor
	if p > MaxPercent {
		return MaxPercent
	}
	if int(p) < base {
		return base
	}
	return int(p)
}

// initialGoal is the heap goal of the first cycle at GOGC=100 (the
// runtime's minimum heap, 4 MiB, scaled by GOGC/100).
const initialGoal = 4 << 20

// Tuner adjusts GOGC after every collection. Stop ends it and restores
// the GOGC it found.
type Tuner struct {
	floor uint64
	base  int
	prev  int
	// onTune (tests), when not nil, is called with the
	// live heap and the GOGC set after each collection.
	onTune func(live uint64, percent int)

	mu      sync.Mutex
	stopped bool
	sample  []metrics.Sample
}

// sentinel is the object whose finalizer marks the end of a collection.
// It holds a pointer so that it is not a tiny allocation (the runtime may
// never finalize those).
type sentinel struct {
	t *Tuner
}

// Start sets GOGC so that the heap is next collected at floor bytes, and
// keeps adjusting it after every collection: the goal is max(floor,
// live*(1+base/100)). base is the GOGC to fall back to for big heaps (100
// is Go's default).
func Start(floor uint64, base int) *Tuner {
	return start(floor, base, nil)
}

func start(floor uint64, base int, onTune func(uint64, int)) *Tuner {
	t := &Tuner{floor: floor, base: base, onTune: onTune,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
	first := int(floor * 100 / initialGoal)
	if first < base {
		first = base
	}
	t.prev = debug.SetGCPercent(min(first, MaxPercent))
	t.arm()
	return t
}

// arm allocates a new sentinel that the next collection finds garbage.
func (t *Tuner) arm() {
	s := &sentinel{t: t}
	runtime.SetFinalizer(s, func(s *sentinel) { s.t.tune() })
}

// tune runs on the finalizer goroutine after a collection.
func (t *Tuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	metrics.Read(t.sample)
	var v [3]uint64
	for i, s := range t.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	live := v[0]
	p := Percent(live, v[1]+v[2], t.floor, t.base)
	debug.SetGCPercent(p)
	if t.onTune != nil {
		t.onTune(live, p)
	}
	t.arm()
}

// Stop ends the tuning and restores the GOGC that was in force before
// Start.
func (t *Tuner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.stopped = true
	debug.SetGCPercent(t.prev)
}
