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
