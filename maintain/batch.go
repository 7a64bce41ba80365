package maintain

import (
	"context"
	"errors"
	"sync"

	"github.com/linkrot/linkrot/audit"
)

var errClosed = errors.New("inbox closed")

// batcher groups the notifications of concurrent requests into one write
// transaction (group commit): each request waits for the commit of its
// batch, so it is answered only once its row is on disk.
type batcher struct {
	inbox  Inbox
	in     chan *pending
	notify chan struct{}
	done   chan struct{}

	mu     sync.RWMutex
	closed bool
}

type pending struct {
	req *audit.WireRequest
	err chan error
}

const maxBatch = 256

func newBatcher(inbox Inbox) *batcher {
	b := &batcher{inbox: inbox, in: make(chan *pending, maxBatch), notify: make(chan struct{}, 1), done: make(chan struct{})}
	go b.loop()
	return b
}

func (b *batcher) submit(ctx context.Context, r *audit.WireRequest) error {
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return errClosed
	}
	p := &pending{req: r, err: make(chan error, 1)}
	select {
	case b.in <- p:
	case <-ctx.Done():
		b.mu.RUnlock()
		return ctx.Err()
	}
	b.mu.RUnlock()
	// The batch is written whatever ctx says: the row must not be half
	// there, and the caller learns the outcome.
	return <-p.err
}

func (b *batcher) loop() {
	defer close(b.done)
	for p := range b.in {
		batch := []*pending{p}
	fill:
		for len(batch) < maxBatch {
			select {
			case q, ok := <-b.in:
				if !ok {
					break fill
				}
				batch = append(batch, q)
			default:
				break fill
			}
		}
		reqs := make([]*audit.WireRequest, len(batch))
		for i, q := range batch {
			reqs[i] = q.req
		}
		err := b.inbox.EnqueueWire(context.Background(), reqs)
		for _, q := range batch {
			q.err <- err
		}
		if err == nil {
			select {
			case b.notify <- struct{}{}:
			default:
			}
		}
	}
}

func (b *batcher) close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.in)
	}
	b.mu.Unlock()
	<-b.done
}
