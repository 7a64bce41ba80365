package sqlstore

import "sync"

// The writer adds rows to two tables keyed by run, run_fragments and
// run_targets, once per key however many links of the run repeat it. A
// batch gathers its distinct keys while it writes the links and adds
// them in its transaction (INSERT … ON CONFLICT DO NOTHING), leaving out
// those a committed batch of the same run already wrote: committedSet
// remembers them, so that a documentation tree, which repeats its
// targets and #anchors on page after page, costs a few rows per batch and
// no question to the database.

// committable is a key committedSet can hold: held returns what to keep
// of it (a copy that shares no memory with a page) and what that costs
// in bytes, or ok false for a key not worth holding.
type committable[K any] interface {
	comparable
	held() (k K, cost int, ok bool)
}

// committedSetBytes bounds what a committedSet holds.
const committedSetBytes = 4 << 20

// committedSet is the DB's memory of the keys committed batches of one
// run wrote. It holds the keys of one run, at most committedSetBytes of
// them as held counts them, and forgets them all when full: a key it does
// not hold costs one conflicting row. Keys enter it only once their
// transaction has committed (saver.publish), so a rolled-back key is
// never skipped. Its zero value is empty and ready; it is safe for
// concurrent use.
type committedSet[K committable[K]] struct {
	mu    sync.Mutex
	runID int64
	keys  map[K]struct{}
	bytes int // what keys holds, as held counts it
}

// has reports whether a committed batch of run wrote k.
func (c *committedSet[K]) has(run int64, k K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.keys[k]
	return ok && c.runID == run
}

// add records the keys of a committed batch of run.
func (c *committedSet[K]) add(run int64, batch map[K]struct{}) {
	if len(batch) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil || c.runID != run {
		c.runID, c.keys, c.bytes = run, make(map[K]struct{}, len(batch)), 0
	}
	for k := range batch {
		if _, ok := c.keys[k]; ok {
			continue
		}
		k, cost, ok := k.held()
		if !ok {
			continue
		}
		if c.bytes+cost > committedSetBytes {
			clear(c.keys)
			c.bytes = 0
		}
		c.keys[k] = struct{}{}
		c.bytes += cost
	}
}

// forget drops what c holds of run.
func (c *committedSet[K]) forget(run int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runID == run {
		c.keys = nil
	}
}

// missing returns the keys of batch that no committed batch of run wrote,
// in no particular order.
func (c *committedSet[K]) missing(run int64, batch map[K]struct{}) []K {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]K, 0, len(batch))
	for k := range batch {
		if _, ok := c.keys[k]; !ok || c.runID != run {
			out = append(out, k)
		}
	}
	return out
}

// note adds k to batch, allocated on first use. (A link costs one map
// access: committed keys are left out per distinct key, by missing.)
func note[K comparable](batch *map[K]struct{}, k K) {
	if *batch == nil {
		*batch = make(map[K]struct{})
	}
	(*batch)[k] = struct{}{}
}
