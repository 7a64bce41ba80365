package archives

import (
	"context"
	"sync"

	"github.com/linkrot/linkrot/archives/memento"
)

// prefetch asks the archives nearest-memento questions ahead of Run: the
// streamed part of the archives stage, fed while the live checks run.
// Each archive has a bounded queue and Options.Workers workers of its own,
// asking through the same Client (so the same budgets) as Run. Run then
// takes the answers from it (nearest), waits for those under way and
// asks the rest itself: a question is asked once.
type prefetch struct {
	s      *stage // the options; its sink and input are unused
	known  map[knownKey]struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	queues map[string]chan knownKey // by archive name

	mu      sync.Mutex
	entries map[knownKey]*entry
	closed  bool
}

// entry is one question of one archive.
type entry struct {
	w     want
	state int // queued, running, done (taken: Run asks it itself)
	done  chan struct{}
	res   lookup
}

const (
	entryQueued = iota
	entryRunning
	entryDone
	entryTaken
)

// newPrefetch starts the workers of each archive; queue bounds the
// questions waiting per archive.
func newPrefetch(ctx context.Context, s *stage, queue int) *prefetch {
	p := &prefetch{s: s, queues: map[string]chan knownKey{}, entries: map[knownKey]*entry{}, known: map[knownKey]struct{}{}}
	for k := range s.knownLookups() {
		p.known[k] = struct{}{}
	}
	p.ctx, p.cancel = context.WithCancel(ctx)
	for _, a := range s.o.Archives {
		q := make(chan knownKey, queue)
		p.queues[a.Name] = q
		for range s.o.Workers {
			p.wg.Go(func() { p.work(a, q) })
		}
	}
	return p
}

// ask queues question w for every archive that has no answer to it yet.
// It never blocks: a question finding an archive's queue full is left to
// runStage.
func (p *prefetch) ask(w want) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	for _, a := range p.s.o.Archives {
		k := knownKey{a.Name, w.uriR, w.at.Unix()}
		if _, ok := p.known[k]; ok {
			continue
		}
		if _, ok := p.entries[k]; ok {
			continue
		}
		select {
		case p.queues[a.Name] <- k:
			p.entries[k] = &entry{w: w, done: make(chan struct{})}
		default:
		}
	}
}

// work asks archive a the questions of its queue until the queue closes.
func (p *prefetch) work(a memento.Archive, q chan knownKey) {
	for k := range q {
		p.mu.Lock()
		e := p.entries[k]
		if e.state != entryQueued || p.ctx.Err() != nil {
			p.mu.Unlock()
			continue
		}
		e.state = entryRunning
		p.mu.Unlock()
		res := p.s.lookup(p.ctx, a, e.w)
		p.mu.Lock()
		e.res, e.state = res, entryDone
		p.mu.Unlock()
		close(e.done)
	}
}

// take returns the answer of archive a to w when it was asked ahead,
// waiting for a lookup under way; false when Run must ask it (a question
// still queued is taken from the queue).
func (p *prefetch) take(ctx context.Context, a memento.Archive, w want) (lookup, bool) {
	if p == nil {
		return lookup{}, false
	}
	k := knownKey{a.Name, w.uriR, w.at.Unix()}
	p.mu.Lock()
	e := p.entries[k]
	switch {
	case e == nil:
		p.mu.Unlock()
		return lookup{}, false
	case e.state == entryQueued || e.state == entryTaken:
		e.state = entryTaken
		p.mu.Unlock()
		return lookup{}, false
	}
	p.mu.Unlock()
	select {
	case <-e.done:
	case <-ctx.Done():
		return lookup{}, false
	}
	if p.ctx.Err() != nil {
		return lookup{}, false // cancelled: its answer may be the cancellation
	}
	res := e.res
	res.memento.Wanted, res.memento.WantedFrom = w.at.UTC(), w.from
	return res, true
}

// close stops the workers once the questions under way are answered
// (those still queued are dropped: Run asks them) and waits for them.
func (p *prefetch) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		for _, q := range p.queues {
			close(q)
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// stop cancels the lookups under way and waits for the workers.
func (p *prefetch) stop() {
	if p == nil {
		return
	}
	p.cancel()
	p.close()
}

// started counts the questions asked ahead (tests).
func (p *prefetch) started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, e := range p.entries {
		if e.state == entryRunning || e.state == entryDone {
			n++
		}
	}
	return n
}
