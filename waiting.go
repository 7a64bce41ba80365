package linkrot

import (
	"fmt"
	"strings"
	"time"

	"github.com/linkrot/linkrot/politeness"
)

// WaitingError is the error of a run stopped (by --max-time or a signal)
// while hosts of the audited site were paused by their servers: the site's
// pages are never given up, they wait (politeness.Scheduler.Keep), and a
// run that cannot finish them in time says which hosts it waited for and
// until when. The run is recorded interrupted with that message (its
// Error), and resuming it later finishes the pages.
type WaitingError struct {
	// Err is the run's stop error (wrapping context.Canceled).
	Err error
	// Hosts are the kept keys that were paused when the run stopped.
	Hosts []politeness.State
}

func (e *WaitingError) Error() string { return e.Err.Error() + "; " + e.Reason() }

// Unwrap returns the stop error.
func (e *WaitingError) Unwrap() error { return e.Err }

// Reason says which of the site's hosts the run was waiting for, until
// when, and why.
func (e *WaitingError) Reason() string {
	parts := make([]string, 0, len(e.Hosts))
	for _, h := range e.Hosts {
		s := fmt.Sprintf("the site's host %s was paused by its server until %s", h.Key, h.PausedUntil.UTC().Format(time.RFC3339))
		if h.Waiting != "" {
			s += " (" + h.Waiting + ")"
		}
		parts = append(parts, s)
	}
	return "pages not finished: " + strings.Join(parts, "; ")
}

// waiting wraps a stopped run's error in a *WaitingError when hosts of the
// audited site were paused by their servers (nil sched, or none: err).
func waiting(err error, sched *politeness.Scheduler) error {
	if sched == nil {
		return err
	}
	if hs := sched.Waiting(); len(hs) > 0 {
		return &WaitingError{Err: err, Hosts: hs}
	}
	return err
}
