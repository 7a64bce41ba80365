package politeness

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// transportRetries is how often Transport retries a GET or HEAD request
// refused with 429, or 503 with Retry-After (after the pause).
const transportRetries = 2

// Transport returns a RoundTripper that runs every round trip of next
// within a slot of its key (keyOf(req); nil keyOf: Key(req.URL)). The slot
// is released when the response body is closed or read to its end (or at
// once when the round trip fails), with the outcome fed back (the request's
// URL as its Resource). A GET or HEAD without a body refused with 429, or
// 503 with Retry-After, is retried up to twice, each retry waiting for the
// key's pause and the answer's Retry-After; the last refusal is returned as
// the answer, and so is a refusal whose window runs longer than
// MaxRetryWait (nobody waits for it). A request for a resource inside a
// window of its own (RetryAt) waits for its end, or, when that is further
// than MaxRetryWait, fails with a *WindowError. A key given up fails the
// round trip with an error wrapping ErrGivenUp.
func (s *Scheduler) Transport(next http.RoundTripper, keyOf func(*http.Request) string) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if keyOf == nil {
		keyOf = func(r *http.Request) string { return Key(r.URL) }
	}
	return &transport{s: s, next: next, keyOf: keyOf}
}

type transport struct {
	s     *Scheduler
	next  http.RoundTripper
	keyOf func(*http.Request) string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	name := t.keyOf(req)
	retriable := (req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == "") &&
		(req.Body == nil || req.Body == http.NoBody)
	for attempt := 0; ; attempt++ {
		sl, err := t.acquire(req, name)
		if err != nil {
			return nil, err
		}
		sl.Sent()
		resp, err := t.next.RoundTrip(req)
		if err != nil {
			sl.Release(Outcome{Err: err})
			return nil, err
		}
		_, hasRA := ParseRetryAfter(resp.Header.Get("Retry-After"), t.s.clock.Now())
		refused := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable && hasRA
		o := Outcome{Status: resp.StatusCode, Header: resp.Header, Resource: req.URL.String()}
		if refused && retriable && attempt < transportRetries {
			sl.Release(o)
			at := sl.RetryNotBefore()
			if t.s.GivenUp(name) == "" && at.Sub(t.s.clock.Now()) <= t.s.o.MaxRetryWait {
				io.CopyN(io.Discard, resp.Body, 4<<10)
				resp.Body.Close()
				if !t.wait(req.Context(), at) {
					return nil, req.Context().Err()
				}
				continue
			}
			// Given up, or a window longer than the cap: the refusal is
			// the answer (its slot is released).
		}
		resp.Body = OnDone(resp.Body, func() { sl.Release(o) })
		return resp, nil
	}
}

// acquire waits for the end of a window the request's resource is inside
// (failing with a *WindowError when it ends beyond MaxRetryWait), then for
// a slot of its key. A window opened meanwhile (another user's answer) is
// waited for in turn, without holding the slot.
func (t *transport) acquire(req *http.Request, name string) (*Slot, error) {
	for {
		if at := t.s.RetryAt(req.URL); !at.IsZero() {
			if at.Sub(t.s.clock.Now()) > t.s.o.MaxRetryWait {
				return nil, &WindowError{URL: req.URL.String(), Until: at}
			}
			if !t.wait(req.Context(), at) {
				return nil, req.Context().Err()
			}
		}
		sl, err := t.s.Acquire(req.Context(), name)
		if err != nil {
			return nil, err
		}
		if t.s.RetryAt(req.URL).IsZero() {
			return sl, nil
		}
		sl.Release(Outcome{})
	}
}

// wait sleeps until at (on the Scheduler's clock) or ctx is done; it
// reports whether the time came.
func (t *transport) wait(ctx context.Context, at time.Time) bool {
	d := at.Sub(t.s.clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := t.s.clock.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// OnDone returns a body that reads rc and calls done once, when the body
// is read to its end, a read fails, or it is closed, whichever comes
// first. The scheduler's transport releases a request's slot this way;
// other gates that hold something for the length of a response (the
// robots.txt pacing of crawl and checks) use it too.
func OnDone(rc io.ReadCloser, done func()) io.ReadCloser {
	return &doneBody{rc: rc, done: done}
}

type doneBody struct {
	rc   io.ReadCloser
	done func()
	once sync.Once
}

func (b *doneBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.once.Do(b.done)
	}
	return n, err
}

func (b *doneBody) Close() error {
	err := b.rc.Close()
	b.once.Do(b.done)
	return err
}
