// Package cpuslot bounds how many goroutines do CPU-heavy work at once:
// as many as the process has processors (GOMAXPROCS when first used).
//
// Why: a run has hundreds of goroutines waiting on the network (the
// crawl's threads, the checker's workers) and one that everything waits
// for, the single database writer. When a wave of responses arrives, every
// thread would parse its page at once; Go's scheduler gives each runnable
// goroutine its turn, so the writer would wait behind dozens of parsers
// while every crawl thread queues behind the writer. With the parsing
// bounded to the processors, the writer is one of a few runnable
// goroutines, the trees of fewer pages are alive at once, and the network
// waits still overlap.
//
// The writer itself takes a slot with DoFirst, which is served before any
// waiting Do: while it writes, the parsers have one processor less, so
// that the goroutine everything waits for is not the one that waits.
//
// Slots do not nest: code holding one must not ask for another (it would
// deadlock once every slot is held by such code), and should not block on
// anything but the CPU and the disk (a lock, a channel, the network)
// while holding it.
package cpuslot

import (
	"runtime"
	"sync"
)

// sem is a counting semaphore with two queues: a released slot goes to the
// first waiter of the high queue, then of the low one (each FIFO).
type sem struct {
	mu        sync.Mutex
	size      int
	free      int
	high, low []chan struct{}
}

var (
	once   sync.Once
	global *sem
)

func get() *sem {
	once.Do(func() {
		n := max(1, runtime.GOMAXPROCS(0))
		global = &sem{size: n, free: n}
	})
	return global
}

func (s *sem) acquire(high bool) {
	s.mu.Lock()
	if s.free > 0 && (high || len(s.high) == 0) {
		s.free--
		s.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	if high {
		s.high = append(s.high, ch)
	} else {
		s.low = append(s.low, ch)
	}
	s.mu.Unlock()
	<-ch // the releaser handed its slot over
}

func (s *sem) release() {
	s.mu.Lock()
	var next chan struct{}
	switch {
	case len(s.high) > 0:
		next, s.high = s.high[0], s.high[1:]
	case len(s.low) > 0:
		next, s.low = s.low[0], s.low[1:]
	default:
		s.free++
	}
	s.mu.Unlock()
	if next != nil {
		close(next)
	}
}

// Do runs f holding a slot: at most Size calls of f (from any callers of
// Do and DoFirst) run at once.
func Do(f func()) { do(false, f) }

// DoFirst is Do for the goroutine others wait for: it gets the next free
// slot before every waiting Do.
func DoFirst(f func()) { do(true, f) }

func do(high bool, f func()) {
	s := get()
	s.acquire(high)
	defer s.release()
	f()
}

// Size is the number of slots.
func Size() int { return get().size }
