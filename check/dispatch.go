package check

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// hostQueue holds the targets of one key (politeness.Key) waiting for a
// slot. It belongs to the dispatcher goroutine.
type hostQueue struct {
	key     string
	pending []Target
	next    time.Time // earliest worth trying (a pause, a spacing)
	queued  bool      // in the ready list
	timed   bool      // in the timer heap
	blocked bool      // waits for a slot of the key to be released
	index   int       // heap index
}

// job is a target handed to a worker, with the slot of its key (nil for a
// target judged from the crawl's response without a request).
type job struct {
	t    Target
	q    *hostQueue
	slot *politeness.Slot
}

// result is what a worker hands back: a target done (its check emitted),
// or deferred to later.
type result struct {
	q      *hostQueue
	t      Target
	defer_ *deferral
}

// delayedTarget is a target whose own retry waits (a per-resource
// Retry-After).
type delayedTarget struct {
	at time.Time
	t  Target
	q  *hostQueue
}

// maxOutstanding bounds the targets a streaming run (Checker.Stream) has
// taken from its input and not finished: a producer faster than the checks
// waits, so memory stays bounded.
func maxOutstanding(workers int) int { return max(4*workers, 4096) }

// queues is the dispatcher's index of host queues by key.
type queues struct {
	byKey map[string]*hostQueue
	all   []*hostQueue // in order of first sight
}

func newQueues() *queues { return &queues{byKey: map[string]*hostQueue{}} }

// add queues t (already admitted, see runState.admit) on its key's queue.
func (qs *queues) add(key string, t Target) *hostQueue {
	q := qs.byKey[key]
	if q == nil {
		q = &hostQueue{key: key}
		qs.byKey[key] = q
		qs.all = append(qs.all, q)
	}
	q.pending = append(q.pending, t)
	return q
}

// admit decides whether t is fetched at all: it returns the target ready
// to queue (its Known plan set) and its key, or the check recording why it
// is not fetched (skipped scheme, Exclude match, robots.txt).
func (rs *runState) admit(ctx context.Context, t Target) (Target, string, *audit.Check) {
	u, reason := rs.c.precheck(t.URL)
	if reason == "" {
		reason = rs.robotsSkip(ctx, u) // robots.txt binds the site's own URLs
	}
	if reason != "" {
		c := skipped(t, reason)
		return t, "", &c
	}
	t.plan = rs.planKnown(t, u)
	return t, politeness.Key(u), nil
}

// runWorkers checks the n targets queued in qs, and with a non-nil in the
// targets that arrive on it until it is closed, on workers goroutines
// under one dispatcher (dispatch). It is the body of both Run and Stream.
// Every goroutine it starts has exited when it returns.
func (rs *runState) runWorkers(ctx context.Context, qs *queues, n int, in <-chan Target, workers int, emit func(audit.Check)) error {
	work := make(chan job, workers)
	results := make(chan result, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range work {
				t := j.t
				res, d := rs.check(ctx, &t, j.slot)
				if d == nil && ctx.Err() == nil {
					emit(res)
				}
				results <- result{q: j.q, t: t, defer_: d}
			}
		})
	}
	err := rs.dispatch(ctx, qs, n, in, workers, work, results, emit)
	close(work)
	for _, h := range qs.all {
		if st := rs.sched.State(h.key); st.GivenUp != "" || st.Refusals > 0 {
			rs.c.log.Info("host rate-limited", "host", h.key, "refusals", st.Refusals, "limit", st.Limit,
				"rate", st.Rate, "per_resource", st.PerResource, "given_up", st.GivenUp)
		}
	}
	// Workers may still report after the dispatcher stopped listening
	// (cancellation): drain until they are all gone.
	go func() {
		wg.Wait()
		close(results)
	}()
	for range results {
	}
	return err
}

// dispatch hands targets to workers: a key's target only when the
// Scheduler grants a slot (concurrency, spacing, pauses, budgets), round
// robin over the ready keys, so a waiting key holds no worker. Targets
// deferred by a 429 come back when their pause is over; the targets of a
// key given up wait for the end of the run, are tried once more when
// everything else is done, and are then recorded rate-limited.
//
// It starts with the n targets queued in qs. With a non-nil in (Stream),
// it also admits and queues each target received, at most
// maxOutstanding(workers) unfinished at once, and the run ends only once
// in is closed: the end-of-run pass for keys given up comes after the
// last target received. It returns nil when every target has finished,
// or ctx.Err().
func (rs *runState) dispatch(ctx context.Context, qs *queues, n int, in <-chan Target, workers int, work chan<- job, results <-chan result, emit func(audit.Check)) error {
	sched := rs.sched
	hosts := qs.all
	var ready, blocked []*hostQueue
	var timed hostHeap
	var delayed delayHeap
	gaveUp := map[*hostQueue][]Target{}
	var gaveUpOrder []*hostQueue
	final := false // the end-of-run pass for keys given up
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	place := func(h *hostQueue, now time.Time) {
		if h.queued || h.timed || h.blocked || len(h.pending) == 0 {
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
	park := func(h *hostQueue, ts ...Target) {
		if _, ok := gaveUp[h]; !ok {
			gaveUpOrder = append(gaveUpOrder, h)
		}
		gaveUp[h] = append(gaveUp[h], ts...)
	}
	// notChecked records a target of a key given up for good.
	notChecked := func(t Target, why string) {
		c := audit.Check{TargetID: t.ID, URL: t.URL, Verdict: audit.VerdictRateLimited,
			Reason: "not checked: " + why, Attempts: t.attempts, CheckedAt: time.Now().UTC()}
		if ctx.Err() == nil {
			emit(c)
		}
	}
	now := time.Now()
	for _, h := range hosts {
		place(h, now)
	}

	idle := workers
	remaining := n
	limit := maxOutstanding(workers)
	for {
		if remaining == 0 && in == nil {
			if final || len(gaveUpOrder) == 0 {
				return nil
			}
			// Everything else is done: the end-of-run pass for keys
			// given up.
			final = true
			now := time.Now()
			for _, h := range gaveUpOrder {
				ts := gaveUp[h]
				if !sched.Reprieve(h.key) {
					why := "key given up"
					if _, _, err := sched.TryAcquire(h.key); err != nil {
						why = err.Error()
					}
					for _, t := range ts {
						notChecked(t, why)
					}
					continue
				}
				remaining += len(ts)
				for i := range ts {
					ts[i].last = true
				}
				h.pending = append(h.pending, ts...)
				place(h, now)
			}
			continue
		}
		// Taken before any TryAcquire: a release after it closes it.
		changed := sched.Changed()

		// Hand out work while workers are idle.
		for idle > 0 && len(ready) > 0 {
			h := ready[0]
			ready[0] = nil
			ready = ready[1:]
			h.queued = false
			if len(h.pending) == 0 {
				continue
			}
			t := h.pending[0]
			var slot *politeness.Slot
			if !rs.free(t) {
				sl, notBefore, err := sched.TryAcquire(h.key)
				switch {
				case errors.Is(err, politeness.ErrGivenUp):
					if final {
						for _, t := range h.pending {
							notChecked(t, err.Error())
						}
					} else {
						park(h, h.pending...)
					}
					remaining -= len(h.pending)
					h.pending = nil
					continue
				case sl == nil && notBefore.IsZero():
					h.blocked = true
					blocked = append(blocked, h)
					continue
				case sl == nil:
					h.next = notBefore
					place(h, time.Now())
					continue
				}
				slot = sl
			}
			h.pending[0] = Target{}
			h.pending = h.pending[1:]
			idle--
			work <- job{t: t, q: h, slot: slot} // buffered for every worker
			place(h, time.Now())
		}
		if remaining == 0 && in == nil {
			continue
		}
		recv := in
		if remaining >= limit {
			recv = nil // back-pressure: finish some first
		}

		var tick <-chan time.Time
		var wake time.Time
		if timed.Len() > 0 {
			wake = timed[0].next
		}
		if delayed.Len() > 0 && (wake.IsZero() || delayed[0].at.Before(wake)) {
			wake = delayed[0].at
		}
		if !wake.IsZero() {
			timer.Reset(time.Until(wake))
			tick = timer.C
		}
		if len(blocked) == 0 {
			changed = nil
		}

		select {
		case t, ok := <-recv:
			if !ok {
				in = nil
				break
			}
			t, key, skip := rs.admit(ctx, t)
			switch {
			case skip == nil:
				remaining++
				place(qs.add(key, t), time.Now())
			case ctx.Err() == nil:
				emit(*skip)
			}
		case r := <-results:
			idle++
			switch d := r.defer_; {
			case d == nil:
				remaining--
			case d.givenUp != "" && final:
				notChecked(r.t, d.givenUp)
				remaining--
			case d.givenUp != "":
				park(r.q, r.t)
				remaining--
			case !d.at.After(time.Now()):
				r.q.pending = append([]Target{r.t}, r.q.pending...)
			default:
				heap.Push(&delayed, delayedTarget{at: d.at, t: r.t, q: r.q})
			}
			place(r.q, time.Now())
		case <-tick:
			now := time.Now()
			for timed.Len() > 0 && !timed[0].next.After(now) {
				h := heap.Pop(&timed).(*hostQueue)
				h.timed = false
				place(h, now)
			}
			for delayed.Len() > 0 && !delayed[0].at.After(now) {
				d := heap.Pop(&delayed).(delayedTarget)
				// A retry goes first among its key's targets.
				d.q.pending = append([]Target{d.t}, d.q.pending...)
				place(d.q, now)
			}
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
		// A slot may have been released meanwhile: blocked keys try again.
		now := time.Now()
		for _, h := range blocked {
			h.blocked = false
			place(h, now)
		}
		blocked = blocked[:0]
	}
}

// hostHeap orders waiting keys by their next start.
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

// delayHeap orders deferred targets by their retry time.
type delayHeap []delayedTarget

func (h delayHeap) Len() int           { return len(h) }
func (h delayHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h delayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)        { *h = append(*h, x.(delayedTarget)) }
func (h *delayHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}
