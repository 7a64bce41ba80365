package check

import (
	"testing"
	"time"
)

// TestBackoff: the step doubles from base with each attempt up to the cap,
// and the wait is jittered within [step/2, step].
func TestBackoff(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name        string
		base, limit time.Duration
		attempt     int
		step        time.Duration // the un-jittered wait
	}{
		{"First", 500 * ms, time.Minute, 0, 500 * ms},
		{"Second", 500 * ms, time.Minute, 1, time.Second},
		{"Third", 500 * ms, time.Minute, 2, 2 * time.Second},
		{"Fifth", 500 * ms, time.Minute, 4, 8 * time.Second},
		{"ReachesCap", 500 * ms, 3 * time.Second, 3, 3 * time.Second},
		{"CappedLongAfter", 500 * ms, time.Minute, 1000, time.Minute}, // no overflow
		{"BaseAboveCap", 2 * time.Second, time.Second, 0, time.Second},
		{"Tiny", time.Millisecond, 100 * ms, 3, 8 * ms},
		{"OneNanosecond", 1, time.Second, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := tt.step/2, tt.step
			seen := map[time.Duration]bool{}
			minGot, maxGot := time.Duration(1<<62), time.Duration(0)
			for range 500 {
				d := backoff(tt.base, tt.attempt, tt.limit)
				if d < lo || d > hi {
					t.Fatalf("backoff(%v, %d, %v) = %v, want within [%v, %v]", tt.base, tt.attempt, tt.limit, d, lo, hi)
				}
				seen[d] = true
				minGot, maxGot = min(minGot, d), max(maxGot, d)
			}
			// Jitter: the waits spread over the interval rather than
			// repeating one value (when the interval has room).
			if hi-lo >= 1000 {
				if len(seen) < 100 {
					t.Errorf("only %d distinct waits in 500: no jitter", len(seen))
				}
				if spread := maxGot - minGot; spread < (hi-lo)/2 {
					t.Errorf("waits spread over %v of [%v, %v]", spread, lo, hi)
				}
			}
		})
	}
	// Growth: the step doubles with each attempt, up to the cap.
	for a := range 12 {
		d := backoff(100*ms, a, 10*time.Second)
		if step := min(100*ms<<a, 10*time.Second); d < step/2 || d > step {
			t.Errorf("attempt %d: %v outside [%v, %v]", a, d, step/2, step)
		}
	}
}
