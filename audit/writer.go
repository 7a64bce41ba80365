package audit

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// PageSaver is the part of Store a Writer needs.
type PageSaver interface {
	SavePages(ctx context.Context, runID int64, pages []*Page) error
}

// WriterOptions tunes a Writer. The zero value is useful: batches of 200
// pages or 500 ms, whichever comes first, and a queue of 1024 pages.
type WriterOptions struct {
	BatchSize     int
	FlushInterval time.Duration
	QueueSize     int
}

// Writer is the single writer of a run: producers hand it pages with Add and
// go on working; one goroutine commits them in batched transactions. It is
// safe for concurrent use.
type Writer struct {
	store PageSaver
	runID int64
	opts  WriterOptions
	in    chan *Page
	done  chan struct{}

	mu    sync.Mutex
	err   error
	saved int
	once  sync.Once
}

// NewWriter starts a Writer for runID. Close must be called to flush it.
// The context bounds every transaction; cancel it only to abandon writes.
func NewWriter(ctx context.Context, s PageSaver, runID int64, opts WriterOptions) *Writer {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 200
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 500 * time.Millisecond
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1024
	}
	w := &Writer{store: s, runID: runID, opts: opts, in: make(chan *Page, opts.QueueSize), done: make(chan struct{})}
	go w.loop(ctx)
	return w
}

// Add queues a page. It blocks only while the queue is full (back-pressure
// when the database is slower than the crawl).
func (w *Writer) Add(p *Page) { w.in <- p }

// Saved returns how many pages have been committed so far.
func (w *Writer) Saved() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.saved
}

// Err returns the first write error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close flushes queued pages, stops the writer and returns the first write
// error. Add must not be called after Close.
func (w *Writer) Close() error {
	w.once.Do(func() { close(w.in) })
	<-w.done
	return w.Err()
}

func (w *Writer) loop(ctx context.Context) {
	defer close(w.done)
	batch := make([]*Page, 0, w.opts.BatchSize)
	tick := time.NewTicker(w.opts.FlushInterval)
	defer tick.Stop()
	flush := func() {
		if len(batch) == 0 {
			return
		}
		err := w.store.SavePages(ctx, w.runID, batch)
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = fmt.Errorf("save %d pages: %w", len(batch), err)
		}
		if err == nil {
			w.saved += len(batch)
		}
		w.mu.Unlock()
		batch = make([]*Page, 0, w.opts.BatchSize)
	}
	for {
		select {
		case p, ok := <-w.in:
			if !ok {
				flush()
				return
			}
			batch = append(batch, p)
			if len(batch) >= w.opts.BatchSize {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}
