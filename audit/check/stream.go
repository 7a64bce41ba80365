package check

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// Stream checks the targets that arrive on in as they arrive, under the
// same per-host rules as Run (PerHost, HostDelay, 429 slow-down), sharing
// one DNS cache, probe cache and connection pool among them. It returns
// when in is closed and every target received is done (nil), or when ctx
// is cancelled (ctx.Err()); results of checks cut short by the
// cancellation are not emitted. emit is called from worker goroutines as
// soon as a result is known: it must be safe for concurrent use.
//
// Unlike Run, Stream does not deduplicate: the caller sends each URL once
// (linkrot's pipeline deduplicates on first sight). A target that is
// never fetched (skipped scheme, Exclude match, unparsable URL) is
// emitted from the dispatching goroutine. Every goroutine Stream starts
// has exited when it returns.
func (c *Checker) Stream(ctx context.Context, in <-chan Target, emit func(audit.Check)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rs, done := c.newRun(ctx)
	defer done()

	workers := c.o.Workers
	work := make(chan job)
	finished := make(chan *hostQueue, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range work {
				released := false
				release := func() {
					if !released {
						released = true
						finished <- j.q
					}
				}
				res := rs.check(ctx, j.t, release)
				release()
				if ctx.Err() == nil {
					emit(res)
				}
			}
		})
	}
	err := rs.dispatchStream(ctx, in, emit, work, finished)
	close(work)
	go func() {
		wg.Wait()
		close(finished)
	}()
	for range finished {
	}
	return err
}

// dispatchStream is dispatch for an open-ended stream of targets: it adds
// each target received to its host's queue and hands targets to workers
// while their host has a free slot and its delay has passed. It returns
// nil once in is closed and every target has finished, or ctx.Err().
func (rs *runState) dispatchStream(ctx context.Context, in <-chan Target, emit func(audit.Check), work chan<- job, finished <-chan *hostQueue) error {
	byHost := map[string]*hostQueue{}
	var ready []*hostQueue
	var timed hostHeap
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	place := func(h *hostQueue, now time.Time) {
		if h.queued || h.timed || len(h.pending) == 0 {
			return
		}
		limit, _ := rs.hosts.policy(h.key)
		if h.active >= limit {
			return
		}
		if now.Before(h.next) {
			h.timed = true
			heap.Push(&timed, h)
			return
		}
		h.queued = true
		ready = append(ready, h)
	}
	// outstanding counts targets received and not finished; at most
	// maxOutstanding are taken from in at once, so that a caller producing
	// faster than the checks finish waits (memory stays bounded).
	outstanding := 0
	maxOutstanding := max(4*rs.o.Workers, 4096)
	for in != nil || outstanding > 0 {
		recv := in
		if outstanding >= maxOutstanding {
			recv = nil
		}
		var head *hostQueue
		for len(ready) > 0 {
			h := ready[0]
			if limit, _ := rs.hosts.policy(h.key); h.active < limit && len(h.pending) > 0 {
				head = h
				break
			}
			ready[0] = nil
			ready = ready[1:]
			h.queued = false
		}
		var out chan<- job
		var j job
		if head != nil {
			out = work
			j = job{t: head.pending[0], q: head}
		}
		var tick <-chan time.Time
		if timed.Len() > 0 {
			timer.Reset(time.Until(timed[0].next))
			tick = timer.C
		}
		select {
		case t, ok := <-recv:
			if !ok {
				in = nil
				continue
			}
			u, reason := rs.c.precheck(t.URL)
			if reason == "" {
				reason = rs.robotsSkip(ctx, u) // as Run: robots.txt binds the site's own URLs
			}
			if reason != "" {
				emit(skipped(t, reason))
				continue
			}
			key := hostKey(u)
			q := byHost[key]
			if q == nil {
				q = &hostQueue{key: key}
				byHost[key] = q
			}
			t.plan = rs.planKnown(t, u)
			q.pending = append(q.pending, t)
			outstanding++
			place(q, time.Now())
		case out <- j:
			now := time.Now()
			head.pending[0] = Target{}
			head.pending = head.pending[1:]
			head.active++
			ready[0] = nil
			ready = ready[1:]
			head.queued = false
			if _, delay := rs.hosts.policy(head.key); delay > 0 && !rs.free(j.t) {
				head.next = now.Add(delay)
			}
			place(head, now)
		case h := <-finished:
			outstanding--
			h.active--
			if h.active == 0 && len(h.pending) == 0 && !h.queued && !h.timed && h.next.Before(time.Now()) {
				delete(byHost, h.key) // idle: a new target makes a new queue
			}
			place(h, time.Now())
		case <-tick:
			now := time.Now()
			for timed.Len() > 0 && !timed[0].next.After(now) {
				h := heap.Pop(&timed).(*hostQueue)
				h.timed = false
				place(h, now)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
