// Package cpuslot bounds how many goroutines do CPU-heavy work at once:
// as many as the process has processors (GOMAXPROCS when first used).
//
// Why: a run has hundreds of goroutines waiting on the network (the
// crawl's threads, the checker's workers) and one that everything waits
// for, the single database writer. When a wave of responses arrives, every
// thread parses its page at once; Go's scheduler gives each runnable
// goroutine its turn, so the writer waited behind dozens of parsers
// (runnable 3.3 s out of a 5.4 s crawl of a documentation tree, an
// execution trace showed) while every crawl thread queued behind the
// writer. With the parsing bounded to the processors, the writer is one of
// a few runnable goroutines, the trees of fewer pages are alive at once,
// and the network waits overlap as before.
//
// Slots do not nest: code holding one must not ask for another (it would
// deadlock once every slot is held by such code), nor block on anything
// but the CPU (a lock, a channel, the network) while holding it.
package cpuslot

import (
	"runtime"
	"sync"
)

var (
	once  sync.Once
	slots chan struct{}
)

func get() chan struct{} {
	once.Do(func() { slots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0))) })
	return slots
}

// Do runs f holding a slot: at most Size calls of f (from any callers of
// Do) run at once.
func Do(f func()) {
	s := get()
	s <- struct{}{}
	defer func() { <-s }()
	f()
}

// Size is the number of slots.
func Size() int { return cap(get()) }
