package politeness

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDecideLong: the scope decision of a window longer than the cap, one
// row per rule.
func TestDecideLong(t *testing.T) {
	tests := []struct {
		name string
		e    longEvidence
		want longScope
	}{
		{"no resource named: the key", longEvidence{longRun: 1}, scopeKey},
		{"no resource named, even with scope evidence", longEvidence{perResource: true, longScoped: true, longRun: 1}, scopeKey},
		{"first long window: unknown", longEvidence{resource: true, longRun: 1}, scopeUnknown},
		{"the controller saw per-resource refusals", longEvidence{resource: true, perResource: true, longRun: 1}, scopeResource},
		{"an earlier long window covered its resource", longEvidence{resource: true, longScoped: true, longRun: 1}, scopeResource},
		{"second long window in a row: unknown again", longEvidence{resource: true, longScoped: true, longRun: 2}, scopeUnknown},
		{"second in a row despite per-resource refusals", longEvidence{resource: true, perResource: true, longRun: 3}, scopeUnknown},
		{"suspect, another resource after the pause: one more pause", longEvidence{resource: true, suspect: true, afterPause: true, longRun: 2}, scopeConfirm},
		{"suspect, a third resource after the pauses: the key", longEvidence{resource: true, suspect: true, afterPause: true, confirmed: true, longRun: 3}, scopeKey},
		{"suspect, another resource of the same wave", longEvidence{resource: true, suspect: true, longRun: 1}, scopeResource},
		{"suspect, the same resource again", longEvidence{resource: true, suspect: true, sameResource: true, afterPause: true, longRun: 2}, scopeResource},
		{"suspect beats earlier scope evidence", longEvidence{resource: true, suspect: true, afterPause: true, confirmed: true, perResource: true, longScoped: true, longRun: 3}, scopeKey},
	}
	for _, tt := range tests {
		if got := decideLong(tt.e); got != tt.want {
			t.Errorf("%s: decideLong(%+v) = %d, want %d", tt.name, tt.e, got, tt.want)
		}
	}
}

func refusedFor(res string, code int, kv ...string) Outcome {
	o := status(code, kv...)
	o.Resource = res
	return o
}

func okFor(res string) Outcome {
	o := status(200)
	o.Resource = res
	return o
}

// TestScheduler_LongWindowOneResource: a day-long Retry-After on one URL
// is that URL's window: the key pauses only as long as the cap allows,
// then one request at a time until an answer tells; a success makes
// further long windows per resource, and the key is never given up.
func TestScheduler_LongWindowOneResource(t *testing.T) {
	for _, tt := range []struct {
		name string
		out  Outcome
	}{
		{"429 Retry-After", refusedFor("http://h/a", 429, "Retry-After", "86400")},
		{"503 Retry-After date", refusedFor("http://h/a", 503, "Retry-After", time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC).Format("Mon, 02 Jan 2006 15:04:05 GMT"))},
		{"429 quota reset", refusedFor("http://h/a", 429, "RateLimit-Remaining", "0", "RateLimit-Reset", "86400")},
		{"200 quota exhausted", refusedFor("http://h/a", 200, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "86400")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newTest(Options{PerHost: 4, MaxRetryWait: time.Minute})
			start := c.Now()
			a := must(t, s, "h")
			b := must(t, s, "h") // in flight when a is refused
			a.Release(tt.out)
			if got := a.RetryNotBefore().Sub(start); got < 23*time.Hour {
				t.Errorf("RetryNotBefore +%v, want the day-long window", got)
			}
			if g := s.GivenUp("h"); g != "" {
				t.Fatalf("given up at the first long window: %s", g)
			}
			// The resource's own window, under its normalized name.
			if at := s.RetryAt(mustURL(t, "HTTP://H:80/a")); at.Sub(start) < 23*time.Hour {
				t.Errorf("RetryAt(/a) +%v, want the day", at.Sub(start))
			}
			if at := s.RetryAt(mustURL(t, "http://h/b")); !at.IsZero() {
				t.Errorf("RetryAt(/b) = %v, want none", at)
			}
			// The key pauses the cap, not the day.
			if nb := blocked(t, s, "h"); nb.Sub(start) != time.Minute {
				t.Errorf("key paused +%v, want +1m (the cap)", nb.Sub(start))
			}
			b.Release(okFor("http://h/b")) // started before: no evidence
			if st := s.State("h"); st.Suspect != "http://h/a" || st.LongScoped {
				t.Fatalf("a success of the same wave decided the scope: %+v", st)
			}
			c.Advance(time.Minute)
			// One request at a time until the answer tells.
			p := must(t, s, "h")
			if nb := blocked(t, s, "h"); !nb.IsZero() {
				t.Errorf("second request after the pause: notBefore %v, want to wait for the first", nb)
			}
			p.Release(okFor("http://h/c"))
			st := s.State("h")
			if st.Suspect != "" || !st.LongScoped || st.GivenUp != "" {
				t.Fatalf("after a success past the pause: %+v, want long windows per resource", st)
			}
			// Further long windows cover their resource only: the key
			// goes on at once.
			d := must(t, s, "h")
			d.Release(refusedFor("http://h/d", 429, "Retry-After", "86400"))
			if st := s.State("h"); !st.PausedUntil.IsZero() || st.GivenUp != "" {
				t.Errorf("second long window of another resource paused the key: %+v", st)
			}
			if at := s.RetryAt(mustURL(t, "http://h/d")); at.IsZero() {
				t.Error("/d has no window")
			}
		})
	}
}

// TestScheduler_LongWindowHostWide: every URL refused with a day-long
// Retry-After. The first pauses the key for the cap; the request after it
// is refused too, which may be a second limited resource met by chance:
// the key pauses once more; the request after that is refused as well:
// the key is given up, with a message naming the three answers, and no
// reprieve inside the window.
func TestScheduler_LongWindowHostWide(t *testing.T) {
	s, c := newTest(Options{PerHost: 4, MaxRetryWait: time.Minute})
	var wave []*Slot
	for range 4 {
		wave = append(wave, must(t, s, "h"))
	}
	for i, sl := range wave {
		sl.Release(refusedFor(fmt.Sprintf("http://h/%d", i), 429, "Retry-After", "86400"))
	}
	if g := s.GivenUp("h"); g != "" {
		t.Fatalf("one wave (requests in flight together) gave the key up: %s", g)
	}
	c.Advance(time.Minute)
	must(t, s, "h").Release(refusedFor("http://h/8", 429, "Retry-After", "86400"))
	if g := s.GivenUp("h"); g != "" {
		t.Fatalf("a second limited resource after the pause gave the key up: %s", g)
	}
	if sl, _, err := s.TryAcquire("h"); sl != nil || err != nil {
		t.Errorf("TryAcquire = %v, %v: want no slot (a second pause) after the second limited resource", sl, err)
	}
	c.Advance(time.Minute)
	must(t, s, "h").Release(refusedFor("http://h/9", 429, "Retry-After", "86400"))
	why := s.GivenUp("h")
	for _, want := range []string{"http://h/0", "http://h/8", "http://h/9", "after 1m0s pauses", "covers the host", "wait cap"} {
		if !strings.Contains(why, want) {
			t.Errorf("reason %q lacks %q", why, want)
		}
	}
	if _, _, err := s.TryAcquire("h"); !errors.Is(err, ErrGivenUp) {
		t.Errorf("TryAcquire: %v, want ErrGivenUp", err)
	}
	if s.Reprieve("h") {
		t.Error("reprieved inside the day-long window")
	}
}

// TestScheduler_LongWindowKept: the site's own key is never given up: a
// host-wide day-long window pauses it for the whole day instead, and
// State.Waiting says why; a refusal streak pauses it for the cap.
func TestScheduler_LongWindowKept(t *testing.T) {
	s, c := newTest(Options{PerHost: 4, MaxRetryWait: time.Minute, GiveUpStreak: 3})
	s.Keep("h")
	start := c.Now()
	must(t, s, "h").Release(refusedFor("http://h/a", 429, "Retry-After", "86400"))
	c.Advance(time.Minute)
	must(t, s, "h").Release(refusedFor("http://h/b", 429, "Retry-After", "86400"))
	c.Advance(time.Minute)
	must(t, s, "h").Release(refusedFor("http://h/b2", 429, "Retry-After", "86400"))
	st := s.State("h")
	if st.GivenUp != "" || !st.Kept {
		t.Fatalf("kept key: %+v", st)
	}
	if got := st.PausedUntil.Sub(start); got < 24*time.Hour {
		t.Errorf("paused until +%v, want the whole window (a day after the third refusal)", got)
	}
	if !strings.Contains(st.Waiting, "covers the host") {
		t.Errorf("Waiting %q", st.Waiting)
	}
	if w := s.Waiting(); len(w) != 1 || w[0].Key != "h" {
		t.Errorf("Waiting() = %+v", w)
	}
	c.Advance(25 * time.Hour)
	must(t, s, "h").Release(okFor("http://h/c"))
	if st := s.State("h"); st.Waiting != "" || len(s.Waiting()) != 0 {
		t.Errorf("after a success: %+v", st)
	}

	// Streak: paused for the cap instead of given up, again after one
	// more refusal.
	for range 3 {
		c.Advance(time.Hour)
		must(t, s, "h").Release(refusedFor("http://h/s", 429, "Retry-After", "1"))
	}
	st = s.State("h")
	if st.GivenUp != "" || st.PausedUntil.Sub(c.Now()) != time.Minute || !strings.Contains(st.Waiting, "in a row") {
		t.Fatalf("kept key after the streak: %+v", st)
	}
	c.Advance(time.Minute)
	must(t, s, "h").Release(refusedFor("http://h/s2", 429, "Retry-After", "1"))
	if st := s.State("h"); st.PausedUntil.Sub(c.Now()) != time.Minute || st.GivenUp != "" {
		t.Errorf("one more refusal: %+v, want another 1m pause", st)
	}
}

// TestScheduler_ResourceWindowsBounded: the windows remembered per key are
// bounded; expired ones make room.
func TestScheduler_ResourceWindowsBounded(t *testing.T) {
	s, c := newTest(Options{PerHost: 4, MaxRetryWait: time.Minute})
	s.mu.Lock()
	k := s.get("h")
	now := c.Now()
	for i := range maxWindows {
		if !s.setWindow(k, fmt.Sprint("r", i), now.Add(time.Second), now) {
			t.Fatalf("no room at %d", i)
		}
	}
	full := s.setWindow(k, "extra", now.Add(time.Hour), now)
	later := now.Add(2 * time.Second)
	room := s.setWindow(k, "extra", later.Add(time.Hour), later)
	s.mu.Unlock()
	if full {
		t.Error("a window past the bound was kept")
	}
	if !room {
		t.Error("expired windows did not make room")
	}
	if st := s.State("h"); st.Windows != 1 {
		t.Errorf("%d windows after pruning, want 1", st.Windows)
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
