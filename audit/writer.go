package audit

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// PageSaver is the part of Store a page Writer needs.
type PageSaver interface {
	SavePages(ctx context.Context, runID int64, pages []*Page) error
}

// WriterOptions tunes a Batcher. The zero value is useful: batches of 200
// items or 500 ms, whichever comes first, and a queue of 1024 items.
type WriterOptions struct {
	BatchSize     int
	FlushInterval time.Duration
	QueueSize     int
}

// Batcher is the single writer of a run: producers hand it items with Add
// and go on working; one goroutine commits them in batched transactions
// through its save function. It is safe for concurrent use.
type Batcher[T any] struct {
	save func(context.Context, []T) error
	opts WriterOptions
	in   chan T
	done chan struct{}
	// flush holds a pending Flush request (at most one: they coalesce).
	flushReq chan struct{}

	mu    sync.Mutex
	err   error
	saved int
	once  sync.Once
}

// Writer is the Batcher of pages.
type Writer = Batcher[*Page]

// NewWriter starts a page Writer for runID. Close must be called to flush it.
// The context bounds every transaction; cancel it only to abandon writes.
func NewWriter(ctx context.Context, s PageSaver, runID int64, opts WriterOptions) *Writer {
	return NewBatcher(ctx, func(ctx context.Context, pages []*Page) error {
		return s.SavePages(ctx, runID, pages)
	}, opts)
}

// NewBatcher starts a Batcher that commits items with save. Close must be
// called to flush it.
func NewBatcher[T any](ctx context.Context, save func(context.Context, []T) error, opts WriterOptions) *Batcher[T] {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 200
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 500 * time.Millisecond
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1024
	}
	w := &Batcher[T]{save: save, opts: opts, in: make(chan T, opts.QueueSize), done: make(chan struct{}), flushReq: make(chan struct{}, 1)}
	go w.loop(ctx)
	return w
}

// Add queues an item. It blocks only while the queue is full (back-pressure
// when the database is slower than the producers).
func (w *Batcher[T]) Add(item T) { w.in <- item }

// Flush asks the writer to save everything added so far (by Add calls
// that returned before it) now, without waiting for the batch to fill or
// for the flush interval: a caller that waits for an item to be stored
// calls it after adding the item. It does not block.
func (w *Batcher[T]) Flush() {
	select {
	case w.flushReq <- struct{}{}:
	default: // a request is pending: it will take this caller's items too
	}
}

// Saved returns how many items have been committed so far.
func (w *Batcher[T]) Saved() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.saved
}

// Err returns the first write error, if any.
func (w *Batcher[T]) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close flushes queued items, stops the writer and returns the first write
// error. Add must not be called after Close; Close may be called again.
func (w *Batcher[T]) Close() error {
	w.once.Do(func() { close(w.in) })
	<-w.done
	return w.Err()
}

func (w *Batcher[T]) loop(ctx context.Context) {
	defer close(w.done)
	batch := make([]T, 0, w.opts.BatchSize)
	tick := time.NewTicker(w.opts.FlushInterval)
	defer tick.Stop()
	flush := func() {
		if len(batch) == 0 {
			return
		}
		err := w.save(ctx, batch)
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = fmt.Errorf("save batch of %d: %w", len(batch), err)
		}
		if err == nil {
			w.saved += len(batch)
		}
		w.mu.Unlock()
		batch = make([]T, 0, w.opts.BatchSize)
	}
	// take queues an item received from w.in; false when w.in is closed
	// (everything is then saved).
	take := func(item T, ok bool) bool {
		if !ok {
			flush()
			return false
		}
		batch = append(batch, item)
		if len(batch) >= w.opts.BatchSize {
			flush()
		}
		return true
	}
	for {
		select {
		case item, ok := <-w.in:
			if !take(item, ok) {
				return
			}
		case <-tick.C:
			flush()
		case <-w.flushReq:
			// Everything added before the request is in the queue:
			// take it all, then save.
		drain:
			for {
				select {
				case item, ok := <-w.in:
					if !take(item, ok) {
						return
					}
				default:
					break drain
				}
			}
			flush()
		}
	}
}
