package memento

import (
	"context"
	"sync"
	"time"
)

// limiter is a token bucket of capacity one: requests start at least
// 1/rate apart, whichever goroutine makes them, so in any window of length
// W at most W·rate + 1 requests start. It never lets a burst through, the
// strictest reading of an archive's "N requests a minute". The spacing is
// measured from the moment each request was let go, not from a slot
// reserved in advance: callers woken late (a loaded machine) do not go
// together. It is safe for concurrent use.
//
// It is also the pool's rate controller (the rule of the live checker's
// politeness): Cut, called on a 429, halves the rate (down to a
// sixteenth of the budget); Success lets it grow back slowly, by a tenth
// of the budget per success once a full current interval has passed
// since the last cut or growth, never above the budget.
type limiter struct {
	base time.Duration // the budget's interval: never faster

	mu       sync.Mutex
	interval time.Duration // current interval (>= base)
	last     time.Time     // when the last request was let go
	paused   time.Time     // no request starts before this (Retry-After)
	changed  time.Time     // last Cut or growth
	cuts     int
}

// newLimiter returns a Limiter for perMinute requests a minute (at least
// one a day).
func newLimiter(perMinute float64) *limiter {
	perMinute = max(perMinute, 1.0/(24*60))
	iv := time.Duration(float64(time.Minute) / perMinute)
	return &limiter{base: iv, interval: iv}
}

// Interval returns the least time between two request starts now (the
// budget's, or longer after a Cut).
func (l *limiter) Interval() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.interval
}

// Budget returns the least interval the Limiter ever allows.
func (l *limiter) Budget() time.Duration { return l.base }

// Cut halves the rate (a 429 answer), down to a sixteenth of the budget.
func (l *limiter) Cut() {
	l.mu.Lock()
	l.interval = min(l.interval*2, l.base*16)
	l.changed = time.Now()
	l.cuts++
	l.mu.Unlock()
}

// Cuts returns how often Cut was called.
func (l *limiter) Cuts() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cuts
}

// Success records an answer that was no 429: after a cut, the rate grows
// back by a tenth of the budget, at most once per current interval.
func (l *limiter) Success() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.interval == l.base || time.Since(l.changed) < l.interval {
		return
	}
	rate := float64(time.Minute)/float64(l.interval) + 0.1*float64(time.Minute)/float64(l.base)
	l.interval = max(l.base, time.Duration(float64(time.Minute)/rate))
	l.changed = time.Now()
}

// Wait blocks until the caller may start a request: one interval after
// the last request let go, and not before a pause (PauseUntil) ends, a
// pause that begins while the caller waits included. It returns
// ctx.Err() when ctx is done first. Waiting callers are let go one at a
// time, in no particular order.
func (l *limiter) Wait(ctx context.Context) error {
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
func (l *limiter) PauseUntil(t time.Time) {
	l.mu.Lock()
	if t.After(l.paused) {
		l.paused = t
	}
	l.mu.Unlock()
}

// PausedUntil returns the end of the pause in force (zero when none).
func (l *limiter) PausedUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused.After(time.Now()) {
		return l.paused
	}
	return time.Time{}
}
