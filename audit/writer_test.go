package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeSaver records the batches a Writer commits. It keeps the slices it is
// given without copying them, so a Writer that reused a batch's backing array
// would show up as changed pages.
type fakeSaver struct {
	mu      sync.Mutex
	batches [][]*Page
	runIDs  []int64
	// errs[i] is returned by call i (0-based); missing or nil means success.
	errs []error
	// gate, when set, makes SavePages wait for a value before returning.
	gate chan struct{}
}

func (f *fakeSaver) SavePages(ctx context.Context, runID int64, pages []*Page) error {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	call := len(f.batches)
	f.batches = append(f.batches, pages)
	f.runIDs = append(f.runIDs, runID)
	if err := ctx.Err(); err != nil {
		return err
	}
	if call < len(f.errs) {
		return f.errs[call]
	}
	return nil
}

func (f *fakeSaver) sizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var s []int
	for _, b := range f.batches {
		s = append(s, len(b))
	}
	return s
}

func (f *fakeSaver) urls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var u []string
	for _, b := range f.batches {
		for _, p := range b {
			u = append(u, p.RequestURL)
		}
	}
	return u
}

func pages(prefix string, n int) []*Page {
	ps := make([]*Page, n)
	for i := range ps {
		ps[i] = &Page{RequestURL: fmt.Sprintf("%s%d", prefix, i)}
	}
	return ps
}

func pageURLs(ps []*Page) []string {
	u := make([]string, len(ps))
	for i, p := range ps {
		u[i] = p.RequestURL
	}
	return u
}

func TestWriterBatchesBySize(t *testing.T) {
	f := &fakeSaver{}
	// A long interval: only the size triggers flushes before Close.
	w := NewWriter(context.Background(), f, 42, WriterOptions{BatchSize: 3, FlushInterval: time.Hour})
	ps := pages("http://ex.org/", 7)
	for _, p := range ps {
		w.Add(p)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := f.sizes(); !slices.Equal(got, []int{3, 3, 1}) {
		t.Errorf("batch sizes = %v, want [3 3 1]", got)
	}
	if got, want := f.urls(), pageURLs(ps); !slices.Equal(got, want) {
		t.Errorf("pages saved = %v, want %v (in order)", got, want)
	}
	for _, id := range f.runIDs {
		if id != 42 {
			t.Errorf("SavePages got run ID %d, want 42", id)
		}
	}
	if w.Saved() != 7 || w.Err() != nil {
		t.Errorf("Saved() = %d, Err() = %v; want 7, nil", w.Saved(), w.Err())
	}
}

func TestWriterFlushesOnInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSaver{}
		w := NewWriter(context.Background(), f, 1, WriterOptions{BatchSize: 100, FlushInterval: 100 * time.Millisecond})
		w.Add(&Page{RequestURL: "a"})
		w.Add(&Page{RequestURL: "b"})
		synctest.Wait()
		if got := f.sizes(); got != nil {
			t.Fatalf("flushed before the interval: %v", got)
		}
		time.Sleep(150 * time.Millisecond)
		synctest.Wait()
		if got := f.sizes(); !slices.Equal(got, []int{2}) || w.Saved() != 2 {
			t.Fatalf("after one interval: batches %v, Saved() %d; want [2], 2", got, w.Saved())
		}
		w.Add(&Page{RequestURL: "c"})
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if got := f.sizes(); !slices.Equal(got, []int{2, 1}) {
			t.Fatalf("after two intervals: batches %v, want [2 1]", got)
		}
		// Idle ticks and Close commit nothing more.
		time.Sleep(time.Second)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := f.sizes(); !slices.Equal(got, []int{2, 1}) || w.Saved() != 3 {
			t.Errorf("after Close: batches %v, Saved() %d; want [2 1], 3", got, w.Saved())
		}
	})
}

func TestWriterDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSaver{}
		w := NewWriter(context.Background(), f, 1, WriterOptions{})
		if w.opts.BatchSize != 200 || w.opts.FlushInterval != 500*time.Millisecond || cap(w.in) != 1024 {
			t.Errorf("defaults: %+v, queue %d", w.opts, cap(w.in))
		}
		for _, p := range pages("p", 201) {
			w.Add(p)
		}
		synctest.Wait()
		if got := f.sizes(); !slices.Equal(got, []int{200}) {
			t.Errorf("before the interval: batches %v, want [200]", got)
		}
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if got := f.sizes(); !slices.Equal(got, []int{200, 1}) {
			t.Errorf("after the interval: batches %v, want [200 1]", got)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWriterFirstErrorWins(t *testing.T) {
	errFirst := errors.New("disk full")
	errSecond := errors.New("database is locked")
	f := &fakeSaver{errs: []error{nil, errFirst, errSecond, nil}}
	w := NewWriter(context.Background(), f, 1, WriterOptions{BatchSize: 3, FlushInterval: time.Hour})
	for _, p := range pages("p", 10) {
		w.Add(p)
	}
	err := w.Close()
	if !errors.Is(err, errFirst) || errors.Is(err, errSecond) {
		t.Fatalf("Close() = %v, want the first error (%v) only", err, errFirst)
	}
	if !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "3") {
		t.Errorf("Close() = %q, want the cause and the batch size in the message", err)
	}
	if w.Err() != err {
		t.Errorf("Err() = %v, want %v", w.Err(), err)
	}
	// Batches after a failure are still attempted; only committed pages
	// count: 3 (ok) + 3 (failed) + 3 (failed) + 1 (ok).
	if got := f.sizes(); !slices.Equal(got, []int{3, 3, 3, 1}) {
		t.Errorf("batches = %v, want [3 3 3 1]", got)
	}
	if w.Saved() != 4 {
		t.Errorf("Saved() = %d, want 4", w.Saved())
	}
}

func TestWriterErrBeforeClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errSave := errors.New("boom")
		f := &fakeSaver{errs: []error{errSave}}
		w := NewWriter(context.Background(), f, 1, WriterOptions{BatchSize: 1})
		if w.Err() != nil {
			t.Fatalf("Err() = %v before any write", w.Err())
		}
		w.Add(&Page{})
		synctest.Wait()
		if !errors.Is(w.Err(), errSave) || w.Saved() != 0 {
			t.Errorf("Err() = %v, Saved() = %d; want %v, 0", w.Err(), w.Saved(), errSave)
		}
		if err := w.Close(); !errors.Is(err, errSave) {
			t.Errorf("Close() = %v", err)
		}
	})
}

func TestWriterCloseTwice(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		f := &fakeSaver{}
		w := NewWriter(context.Background(), f, 1, WriterOptions{BatchSize: 2, FlushInterval: time.Hour})
		w.Add(&Page{})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("second Close() = %v", err)
		}
		if got := f.sizes(); !slices.Equal(got, []int{1}) {
			t.Errorf("batches = %v, want [1]", got)
		}
	})
	t.Run("after an error", func(t *testing.T) {
		errSave := errors.New("boom")
		f := &fakeSaver{errs: []error{errSave}}
		w := NewWriter(context.Background(), f, 1, WriterOptions{})
		w.Add(&Page{})
		first := w.Close()
		second := w.Close()
		if !errors.Is(first, errSave) || second != first {
			t.Errorf("Close() = %v, then %v; want %v twice", first, second, errSave)
		}
	})
	t.Run("nothing added", func(t *testing.T) {
		f := &fakeSaver{}
		w := NewWriter(context.Background(), f, 1, WriterOptions{})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := f.sizes(); got != nil {
			t.Errorf("SavePages called for an empty writer: %v", got)
		}
	})
	t.Run("concurrently", func(t *testing.T) {
		f := &fakeSaver{}
		w := NewWriter(context.Background(), f, 1, WriterOptions{})
		w.Add(&Page{})
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				if err := w.Close(); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if w.Saved() != 1 {
			t.Errorf("Saved() = %d, want 1", w.Saved())
		}
	})
}

func TestWriterConcurrentAdd(t *testing.T) {
	const producers, perProducer = 50, 40
	f := &fakeSaver{}
	// A tiny queue forces back-pressure; a short interval mixes time and
	// size flushes.
	w := NewWriter(context.Background(), f, 1, WriterOptions{BatchSize: 7, FlushInterval: time.Millisecond, QueueSize: 4})
	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			for _, p := range pages(fmt.Sprintf("g%d/", g), perProducer) {
				w.Add(p)
			}
		})
	}
	done := make(chan struct{})
	go func() { // readers race with the writer goroutine
		for {
			select {
			case <-done:
				return
			default:
				_, _ = w.Saved(), w.Err()
			}
		}
	}()
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	close(done)

	total := producers * perProducer
	if w.Saved() != total {
		t.Errorf("Saved() = %d, want %d", w.Saved(), total)
	}
	for _, n := range f.sizes() {
		if n < 1 || n > 7 {
			t.Errorf("batch of %d pages, want 1..7", n)
		}
	}
	seen := map[string]int{}
	for _, u := range f.urls() {
		seen[u]++
	}
	if len(seen) != total {
		t.Errorf("%d distinct pages saved, want %d", len(seen), total)
	}
	for u, n := range seen {
		if n != 1 {
			t.Errorf("page %s saved %d times", u, n)
		}
	}
	// Each producer's pages arrive in the order it added them.
	next := map[string]int{}
	for _, u := range f.urls() {
		g, i, _ := strings.Cut(u, "/")
		if want := fmt.Sprint(next[g]); i != want {
			t.Fatalf("producer %s: page %s saved out of order (want %s)", g, i, want)
		}
		next[g]++
	}
}

func TestWriterBackPressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSaver{gate: make(chan struct{})}
		w := NewWriter(context.Background(), f, 1, WriterOptions{BatchSize: 1, QueueSize: 1})
		w.Add(&Page{RequestURL: "1"}) // taken by the writer, which blocks in SavePages
		synctest.Wait()
		w.Add(&Page{RequestURL: "2"}) // fills the queue
		added := make(chan struct{})
		go func() {
			w.Add(&Page{RequestURL: "3"}) // must wait for room
			close(added)
		}()
		synctest.Wait()
		select {
		case <-added:
			t.Fatal("Add did not block on a full queue")
		default:
		}
		f.gate <- struct{}{} // commit page 1; the writer takes page 2
		synctest.Wait()
		select {
		case <-added:
		default:
			t.Fatal("Add still blocked after the queue drained")
		}
		close(f.gate)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := f.urls(); !slices.Equal(got, []string{"1", "2", "3"}) {
			t.Errorf("saved %v, want [1 2 3]", got)
		}
	})
}

func TestWriterCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeSaver{}
	w := NewWriter(ctx, f, 1, WriterOptions{BatchSize: 2, FlushInterval: time.Hour})
	for _, p := range pages("p", 3) {
		w.Add(p)
	}
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close() = %v, want context.Canceled", err)
	}
	if w.Saved() != 0 {
		t.Errorf("Saved() = %d, want 0", w.Saved())
	}
}

// TestBatcherFlush: Flush saves what was added at once, not at the next
// interval or full batch.
func TestBatcherFlush(t *testing.T) {
	saved := make(chan []int, 4)
	b := NewBatcher(context.Background(), func(_ context.Context, items []int) error {
		saved <- append([]int(nil), items...)
		return nil
	}, WriterOptions{BatchSize: 1000, FlushInterval: time.Hour})
	defer b.Close()
	for i := range 3 {
		b.Add(i)
	}
	b.Flush()
	select {
	case got := <-saved:
		if len(got) != 3 || got[0] != 0 || got[2] != 2 {
			t.Fatalf("saved %v, want [0 1 2]", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Flush did not save the batch")
	}
}
