package archive

import (
	"context"
	"sync"
	"time"
)

// Limiter is a token bucket of capacity one: requests start at least
// 1/rate apart, whichever goroutine makes them, so in any window of length
// W at most W·rate + 1 requests start. It never lets a burst through, the
// strictest reading of an archive's "N requests a minute". It is safe for
// concurrent use.
type Limiter struct {
	interval time.Duration

	mu     sync.Mutex
	next   time.Time // earliest start of the next request
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

// Wait blocks until the caller may start a request, or until ctx is done
// (then it returns ctx.Err() and the slot it held is lost, never given to
// a request early). A pause (PauseUntil) that begins while a caller waits
// sends it back to the queue behind the pause.
func (l *Limiter) Wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		now := time.Now()
		slot := now
		if l.next.After(slot) {
			slot = l.next
		}
		if l.paused.After(slot) {
			slot = l.paused
		}
		l.next = slot.Add(l.interval)
		l.mu.Unlock()

		if d := time.Until(slot); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		l.mu.Lock()
		pausedLater := l.paused.After(slot)
		l.mu.Unlock()
		if !pausedLater {
			return nil
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
