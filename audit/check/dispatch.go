package check

import (
	"cmp"
	"container/heap"
	"context"
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
			if _, delay := rs.hosts.policy(head.key); delay > 0 {
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
// scheduled: a host that answered 429 is slowed for the rest of the run.
// It is shared by the dispatcher and the workers.
type hostTable struct {
	o  *Options
	mu sync.Mutex
	m  map[string]*hostPenalty
}

type hostPenalty struct {
	delay time.Duration
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
		limit, delay = cmp.Or(r.Concurrency, limit), cmp.Or(r.Delay, delay)
	}
	p := t.m[key]
	if p == nil {
		return limit, delay
	}
	return 1, max(delay, p.delay)
}

// slowDown records a 429 from the host: from now on one target at a time,
// at least hint (its Retry-After) apart, the delay doubling with every
// further 429, up to MaxRetryWait.
func (t *hostTable) slowDown(key string, hint time.Duration) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.m[key]
	if p == nil {
		p = &hostPenalty{}
		t.m[key] = p
	}
	p.delay = min(max(2*p.delay, t.o.RetryBase, hint), t.o.MaxRetryWait)
	return p.delay
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
