package cpuslot

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDo_BoundsConcurrency runs many more callers than slots and checks
// that no more than Size ran at once, that the slots were used (the bound
// was reached), and that a panicking f gives its slot back.
func TestDo_BoundsConcurrency(t *testing.T) {
	var in, peak atomic.Int64
	var wg sync.WaitGroup
	for range 8 * Size() {
		wg.Go(func() {
			Do(func() {
				n := in.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(5 * time.Millisecond)
				in.Add(-1)
			})
		})
	}
	wg.Wait()
	if p := peak.Load(); p > int64(Size()) {
		t.Errorf("%d ran at once, want at most %d", p, Size())
	}
	if p := peak.Load(); p != int64(Size()) {
		t.Errorf("at most %d ran at once with %d waiting, want the %d slots used", p, 8*Size(), Size())
	}
	for range Size() {
		func() {
			defer func() { recover() }()
			Do(func() { panic("f failed") })
		}()
	}
	done := make(chan struct{})
	go func() { Do(func() {}); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a slot was not given back after f panicked")
	}
}

// TestDoFirst_ServedBeforeWaiters holds every slot, queues Do callers,
// then a DoFirst: the first slot released goes to DoFirst, not to the
// Do callers that waited longer.
func TestDoFirst_ServedBeforeWaiters(t *testing.T) {
	s := &sem{size: 1, free: 1}
	s.acquire(false) // the only slot, held
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	waiting := func(n int) {
		deadline := time.Now().Add(5 * time.Second)
		for {
			s.mu.Lock()
			got := len(s.low) + len(s.high)
			s.mu.Unlock()
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d waiters queued, want %d", got, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	run := func(name string, high bool) {
		wg.Go(func() {
			s.acquire(high)
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			s.release()
		})
	}
	run("low1", false)
	waiting(1)
	run("low2", false)
	waiting(2)
	run("high", true)
	waiting(3)
	s.release()
	wg.Wait()
	want := []string{"high", "low1", "low2"}
	if len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Errorf("served %v, want %v", order, want)
	}
	if s.free != 1 {
		t.Errorf("%d slots free at the end, want 1", s.free)
	}
}
