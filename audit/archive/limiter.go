package archive

import (
	"context"
	"sync"
	"time"
)

// Limiter is a token bucket of capacity one: requests start at least
// 1/rate apart, whichever goroutine makes them, so in any window of length
// W at most W·rate + 1 requests start. It never lets a burst through, the
// strictest reading of an archive's "N requests a minute". The spacing is
// measured from the moment each request was let go, not from a slot
// reserved in advance: callers woken late (a loaded machine) do not go
// together. It is safe for concurrent use.
type Limiter struct {
	interval time.Duration

	mu     sync.Mutex
	last   time.Time // when the last request was let go
	paused time.Time // no request starts before this (Retry-After)
}

// NewLimiter returns a Limiter for perMinute requests a minute (at least
// one a day).
func NewLimiter(perMinute float64) *Limiter {
	perMinute = max(perMinute, 1.0/(24*60))
	return &Limiter{interval: time.Duration(float64(time.Minute) / perMinute)}
}

// Interval returns the least time between two request starts.
func (l *Limiter) Interval() time.Duration { return l.interval }

// Wait blocks until the caller may start a request: one interval after
// the last request let go, and not before a pause (PauseUntil) ends, a
// pause that begins while the caller waits included. It returns
// ctx.Err() when ctx is done first. Waiting callers are let go one at a
// time, in no particular order.
func (l *Limiter) Wait(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l.mu.Lock()
		now := time.Now()
		at := now
		if !l.last.IsZero() {
			at = l.last.Add(l.interval)
		}
		if l.paused.After(at) {
			at = l.paused
		}
		if !now.Before(at) {
			l.last = now
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()

		t := time.NewTimer(time.Until(at))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// PauseUntil keeps every request from starting before t (a 429 or 503
// answer's Retry-After). An earlier t than a pause in force changes
// nothing.
func (l *Limiter) PauseUntil(t time.Time) {
	l.mu.Lock()
	if t.After(l.paused) {
		l.paused = t
	}
	l.mu.Unlock()
}

// PausedUntil returns the end of the pause in force (zero when none).
func (l *Limiter) PausedUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused.After(time.Now()) {
		return l.paused
	}
	return time.Time{}
}
