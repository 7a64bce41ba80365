package gctune

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name        string
		live, roots uint64
		floor       uint64
		base, want  int
	}{
		{"empty heap: the cap", 0, 0, 96 * mib, 100, MaxPercent},
		{"tiny heap: the cap", 1024, 0, 96 * mib, 100, MaxPercent},
		{"a quarter of the floor: grow to the floor", 24 * mib, 0, 96 * mib, 100, 300},
		{"a third of the floor", 32 * mib, 0, 96 * mib, 100, 200},
		{"half the floor: the base already reaches it", 48 * mib, 0, 96 * mib, 100, 100},
		{"more than half: the base", 60 * mib, 0, 96 * mib, 100, 100},
		{"the floor: the base", 96 * mib, 0, 96 * mib, 100, 100},
		{"beyond the floor: the base", 500 * mib, 0, 96 * mib, 100, 100},
		{"another base", 500 * mib, 0, 96 * mib, 50, 50},
		{"the floor over live with base 50", 40 * mib, 0, 96 * mib, 50, 140},
		{"stacks and globals count toward the goal", 24 * mib, 8 * mib, 96 * mib, 100, 225},
		{"roots alone", 0, 8 * mib, 96 * mib, 100, 1200},
	} {
		if got := Percent(c.live, c.roots, c.floor, c.base); got != c.want {
			t.Errorf("%s: Percent(%d, %d, %d, %d) = %d, want %d", c.name, c.live, c.roots, c.floor, c.base, got, c.want)
		}
	}
}

// TestTuner_SetsGOGCAfterCollections checks the mechanism: after each
// collection the tuner reads the live heap and sets the GOGC of
// Percent, again and again (the sentinel is re-armed), and Stop restores
// the GOGC it found.
func TestTuner_SetsGOGCAfterCollections(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	var (
		mu    sync.Mutex
		calls []int
		lives []uint64
	)
	const floor = 64 << 20
	tu := start(floor, 100, func(live uint64, p int) {
		mu.Lock()
		calls = append(calls, p)
		lives = append(lives, live)
		mu.Unlock()
	})
	if got := debug.SetGCPercent(-1); got != floor*100/initialGoal {
		t.Errorf("GOGC after Start = %d, want %d (the floor as the first goal)", got, floor*100/initialGoal)
	}
	debug.SetGCPercent(floor * 100 / initialGoal)

	keep := make([]byte, 16<<20) // a live heap of about 16 MiB
	for i := 0; i < 3; i++ {
		runtime.GC()
		// The finalizer runs on its own goroutine after the collection.
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			n := len(calls)
			mu.Unlock()
			if n > i || time.Now().After(deadline) {
				break
			}
			runtime.Gosched()
			time.Sleep(time.Millisecond)
		}
	}
	runtime.KeepAlive(keep)
	mu.Lock()
	got, live := append([]int(nil), calls...), append([]uint64(nil), lives...)
	mu.Unlock()
	if len(got) < 3 {
		t.Fatalf("tuned %d times after 3 collections, want at least 3", len(got))
	}
	last := len(got) - 1
	if live[last] < 16<<20 {
		t.Errorf("live heap read as %d bytes, want at least the 16 MiB kept", live[last])
	}
	if got[last] <= 100 || got[last] >= MaxPercent {
		t.Errorf("GOGC set %d for ~16 MiB live under a 64 MiB floor, want between 100 and %d (about 300)", got[last], MaxPercent)
	}
	if cur := debug.SetGCPercent(-1); cur != got[last] {
		t.Errorf("GOGC in force %d, want the %d the tuner set", cur, got[last])
	}
	debug.SetGCPercent(got[last])

	tu.Stop()
	if cur := debug.SetGCPercent(-1); cur != 100 {
		t.Errorf("GOGC after Stop = %d, want the 100 found at Start", cur)
	}
	debug.SetGCPercent(100)
	mu.Lock()
	n := len(calls)
	mu.Unlock()
	runtime.GC()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != n {
		t.Errorf("tuned %d times after Stop, want none", len(calls)-n)
	}
}
