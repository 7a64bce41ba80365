package check

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// hostQueue holds the targets of one host waiting for a slot. It belongs
// to the dispatcher goroutine.
type hostQueue struct {
	key     string
	pending []Target
	active  int       // targets of this host being checked
	next    time.Time // earliest start of the next target (HostDelay, slowdown)
	queued  bool      // in the ready list
	timed   bool      // in the timer heap
	index   int       // heap index
}

type job struct {
	t Target
	q *hostQueue
}

// dispatch hands targets to workers, a host's target only while the host
// has a free slot and its delay has passed, round-robin over the ready
// hosts. It returns nil when n targets have finished, or ctx.Err().
func (rs *runState) dispatch(ctx context.Context, hosts []*hostQueue, n int, work chan<- job, finished <-chan *hostQueue) error {
	var ready []*hostQueue
	var timed hostHeap
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	// place puts h where it belongs: in the ready list, in the timer heap
	// (only its delay keeps it), or nowhere (no work or no free slot; a
	// finishing target places it again).
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
	now := time.Now()
	for _, h := range hosts {
		place(h, now)
	}

	for remaining := n; remaining > 0; {
		var head *hostQueue
		for len(ready) > 0 {
			h := ready[0]
			if limit, _ := rs.hosts.policy(h.key); h.active < limit && len(h.pending) > 0 {
				head = h
				break
			}
			// Its limit shrank (slowdown) since it was placed.
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
			remaining--
			h.active--
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

// hostHeap orders waiting hosts by their next start.
type hostHeap []*hostQueue

func (h hostHeap) Len() int           { return len(h) }
func (h hostHeap) Less(i, j int) bool { return h[i].next.Before(h[j].next) }
func (h hostHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *hostHeap) Push(x any) {
	q := x.(*hostQueue)
	q.index = len(*h)
	*h = append(*h, q)
}
func (h *hostHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return q
}

// hostTable keeps what a run learned about hosts that changes how they are
// scheduled: a host that answered 429 is slowed for the rest of the run,
// and a host that goes on answering 429 is given up (see slowDown). It is
// shared by the dispatcher and the workers.
type hostTable struct {
	o  *Options
	mu sync.Mutex
	m  map[string]*hostPenalty
}

// giveUpAfter429s is how many 429 answers in a row, to requests made
// after the host was slowed, make linkrot give a host up for the rest of
// the run (see hostTable.slowDown).
const giveUpAfter429s = 3

type hostPenalty struct {
	delay  time.Duration
	since  time.Time // the first 429: the host is slowed from then on
	streak int       // 429s in a row to requests started after since
	gaveUp bool      // the host's targets are no longer fetched
}

func newHostTable(o *Options) *hostTable {
	return &hostTable{o: o, m: map[string]*hostPenalty{}}
}

// policy returns the host's slot limit and the least delay between two of
// its target starts.
func (t *hostTable) policy(key string) (limit int, delay time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit, delay = t.o.PerHost, t.o.HostDelay
	if r, ok := audit.HostRuleFor(t.o.Hosts, key); ok {
		limit, delay = cmp.Or(r.PerHost, limit), cmp.Or(r.Delay, delay)
	}
	p := t.m[key]
	if p == nil || p.gaveUp {
		// A host given up is not asked again: its targets pass through
		// the workers at once (rs.check answers them without a request).
		return limit, delay
	}
	return 1, max(delay, p.delay)
}

// slowDown records a 429 from the host to a request started at started:
// from now on one target at a time, at least hint (its Retry-After) apart,
// the delay doubling with every further 429, up to MaxRetryWait.
//
// The host is given up for the rest of the run when, counting only
// requests made after it was slowed (the first wave of concurrent
// requests is one answer, not several), it answers 429 to giveUpAfter429s
// requests in a row, or answers 429 once more when already slowed to
// MaxRetryWait; or at once when its Retry-After (hint) exceeds
// MaxRetryWait. Then requests in progress are not retried and its
// remaining targets are not fetched (verdict rate-limited, "not fetched"),
// so the time a rate-limiting host costs is bounded by a few
// MaxRetryWait, whatever the number of its targets.
func (t *hostTable) slowDown(key string, hint time.Duration, started time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.m[key]
	switch {
	case p == nil:
		p = &hostPenalty{since: time.Now(), delay: min(max(t.o.RetryBase, hint), t.o.MaxRetryWait)}
		t.m[key] = p
	case !started.Before(p.since):
		p.streak++
		if p.delay >= t.o.MaxRetryWait {
			p.gaveUp = true
		}
		p.delay = min(max(2*p.delay, t.o.RetryBase, hint), t.o.MaxRetryWait)
	default:
		// Sent before the host was slowed (the concurrent first wave):
		// the same answer as the first 429, not a further one.
		p.delay = max(p.delay, min(hint, t.o.MaxRetryWait))
	}
	if p.streak >= giveUpAfter429s || hint > t.o.MaxRetryWait {
		p.gaveUp = true
	}
	return p.delay
}

// answered records an answer other than 429 from the host to a request
// started at started: a slowed host's streak of 429s is broken.
func (t *hostTable) answered(key string, started time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.m[key]; p != nil && !started.Before(p.since) {
		p.streak = 0
	}
}

// givenUp reports whether the host was given up (see slowDown) and, if so,
// why.
func (t *hostTable) givenUp(key string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.m[key]
	if p == nil || !p.gaveUp {
		return "", false
	}
	return fmt.Sprintf("host %s kept answering 429 (slowed to %s between requests); given up for the rest of the run", key, p.delay), true
}

// delay returns the slowdown delay of the host (0 when it was never slowed).
func (t *hostTable) delay(key string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.m[key]; p != nil {
		return p.delay
	}
	return 0
}
