package politeness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTest(o Options) (*Scheduler, *fakeClock) {
	c := newFakeClock()
	o.Clock = c
	return New(o), c
}

// must acquires a slot or fails.
func must(t *testing.T, s *Scheduler, key string) *Slot {
	t.Helper()
	sl, nb, err := s.TryAcquire(key)
	if sl == nil {
		t.Fatalf("TryAcquire(%s): no slot (notBefore %v, err %v, state %+v)", key, nb, err, s.State(key))
	}
	return sl
}

// blocked asserts no slot is free and returns notBefore.
func blocked(t *testing.T, s *Scheduler, key string) time.Time {
	t.Helper()
	sl, nb, err := s.TryAcquire(key)
	if sl != nil {
		sl.Release(Outcome{Status: 200})
		t.Fatalf("TryAcquire(%s): got a slot, want none (state %+v)", key, s.State(key))
	}
	if err != nil {
		t.Fatalf("TryAcquire(%s): %v", key, err)
	}
	return nb
}

func status(code int, kv ...string) Outcome {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return Outcome{Status: code, Header: h}
}

func TestKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://Example.ORG/a", "example.org"},
		{"http://example.org:80/", "example.org"},
		{"https://example.org:443/", "example.org"},
		{"http://example.org:443/", "example.org:443"},
		{"https://example.org:8443/x?y", "example.org:8443"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"http://[::1]/", "[::1]"},
		{"http://user:pw@Host:81/", "host:81"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Key(u); got != tt.want {
			t.Errorf("Key(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestScheduler_Rules(t *testing.T) {
	s, _ := newTest(Options{PerHost: 4, Rules: []HostRule{
		{Match: "slow.example:443", PerHost: 1, Delay: time.Second},
		{Match: "*.wide.example", PerHost: 8},
	}})
	if st := s.State("slow.example"); st.Ceiling != 1 {
		t.Errorf("portless key vs rule with :443: ceiling %d, want 1", st.Ceiling)
	}
	if st := s.State("a.wide.example:8080"); st.Ceiling != 8 {
		t.Errorf("glob rule: ceiling %d, want 8", st.Ceiling)
	}
	if st := s.State("other.example"); st.Ceiling != 4 {
		t.Errorf("no rule: ceiling %d, want 4", st.Ceiling)
	}
}

// TestScheduler_AIMD: a refusal halves the limit, floor 1; the refusals
// of one wave cut once; successes grow it back by one per limit
// successes, up to the ceiling.
func TestScheduler_AIMD(t *testing.T) {
	s, c := newTest(Options{PerHost: 8})
	const k = "h"
	var wave []*Slot
	for range 8 {
		wave = append(wave, must(t, s, k))
	}
	blocked(t, s, k)
	// All eight answer 429 (Retry-After 0: no pause): one wave, one cut.
	for _, sl := range wave {
		sl.Release(status(429, "Retry-After", "0"))
	}
	if got := s.State(k).Limit; got != 4 {
		t.Fatalf("after one wave of 429s: limit %d, want 4 (one cut per wave)", got)
	}
	// Next waves: each started after the cut, so each cuts: 4, 2, 1, 1.
	for _, want := range []int{2, 1, 1} {
		c.Advance(time.Hour) // past any learned rate gap
		sl := must(t, s, k)
		sl.Release(status(429, "Retry-After", "0"))
		if got := s.State(k).Limit; got != want {
			t.Fatalf("limit %d, want %d", got, want)
		}
	}
	// Additive increase: +1 after `limit` successes.
	for _, want := range []int{2, 3, 4, 5, 6, 7, 8, 8} {
		for range max(1, want-1) {
			c.Advance(time.Hour)
			must(t, s, k).Release(status(200))
		}
		if got := s.State(k).Limit; got != want {
			t.Fatalf("growing: limit %d, want %d", got, want)
		}
	}
}

// TestScheduler_RetryAfterPausesEveryone: a Retry-After pauses the key
// for every user, waiting Acquires included, until it has passed; other
// keys are not affected.
func TestScheduler_RetryAfterPausesEveryone(t *testing.T) {
	s, c := newTest(Options{PerHost: 4})
	start := c.Now()
	a := must(t, s, "h")
	b := must(t, s, "h")
	a.Release(status(429, "Retry-After", "5"))
	if got := a.RetryNotBefore(); !got.Equal(start.Add(5 * time.Second)) {
		t.Errorf("RetryNotBefore %v, want +5s", got.Sub(start))
	}
	if nb := blocked(t, s, "h"); !nb.Equal(start.Add(5 * time.Second)) {
		t.Errorf("notBefore %v, want +5s", nb.Sub(start))
	}
	must(t, s, "other").Release(status(200))

	// A queued Acquire waits out the pause.
	got := make(chan time.Time, 1)
	go func() {
		sl, err := s.Acquire(context.Background(), "h")
		if err != nil {
			t.Error(err)
			return
		}
		got <- c.Now()
		sl.Release(status(200))
	}()
	waitFor(t, func() bool { return c.waiters() == 1 })
	b.Release(status(200)) // a success does not lift the pause
	c.Advance(4 * time.Second)
	select {
	case at := <-got:
		t.Fatalf("Acquire returned inside the window, at +%v", at.Sub(start))
	case <-time.After(20 * time.Millisecond):
	}
	c.Advance(time.Second)
	select {
	case at := <-got:
		if at.Before(start.Add(5 * time.Second)) {
			t.Fatalf("started at +%v", at.Sub(start))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Acquire did not return after the pause")
	}
	if st := s.State("h"); !st.PausedUntil.IsZero() {
		t.Errorf("still paused: %+v", st)
	}
}

// TestScheduler_HTTPDateAnd503: Retry-After as an HTTP-date, and on 503.
func TestScheduler_HTTPDateAnd503(t *testing.T) {
	s, c := newTest(Options{})
	at := c.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat)
	must(t, s, "h").Release(status(503, "Retry-After", at))
	if nb := blocked(t, s, "h"); nb.Sub(c.Now()) != 10*time.Second {
		t.Errorf("paused %v, want 10s", nb.Sub(c.Now()))
	}
	// 503 without Retry-After: a cut, no pause.
	s2, _ := newTest(Options{PerHost: 4})
	must(t, s2, "h").Release(status(503))
	if st := s2.State("h"); !st.PausedUntil.IsZero() || st.Limit != 2 {
		t.Errorf("503 without Retry-After: %+v, want limit 2, no pause", st)
	}
}

// TestScheduler_429WithoutRetryAfter: DefaultPause, doubling with each
// 429 in a row, reset by a success.
func TestScheduler_429WithoutRetryAfter(t *testing.T) {
	s, c := newTest(Options{MaxRetryWait: 3 * time.Second, GiveUpStreak: 100})
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second} {
		c.Advance(time.Hour)
		must(t, s, "h").Release(status(429))
		if got := blocked(t, s, "h").Sub(c.Now()); got != want {
			t.Fatalf("pause %v, want %v", got, want)
		}
	}
	c.Advance(time.Hour)
	must(t, s, "h").Release(status(200))
	c.Advance(time.Hour)
	must(t, s, "h").Release(status(429))
	if got := blocked(t, s, "h").Sub(c.Now()); got != DefaultPause {
		t.Fatalf("after a success: pause %v, want %v", got, DefaultPause)
	}
}

func TestScheduler_GiveUp(t *testing.T) {
	t.Run("RetryAfterBeyondCap", func(t *testing.T) {
		s, _ := newTest(Options{MaxRetryWait: time.Minute})
		must(t, s, "h").Release(status(429, "Retry-After", "3600"))
		_, _, err := s.TryAcquire("h")
		if !errors.Is(err, ErrGivenUp) || !strings.Contains(err.Error(), "3600") && !strings.Contains(err.Error(), "1h0m0s") {
			t.Fatalf("err %v, want ErrGivenUp with the reason", err)
		}
		if _, err := s.Acquire(context.Background(), "h"); !errors.Is(err, ErrGivenUp) {
			t.Fatalf("Acquire: %v", err)
		}
		if s.State("h").GivenUp == "" || s.GivenUp("h") == "" {
			t.Error("State/GivenUp do not say why")
		}
		if sl := must(t, s, "other"); sl == nil {
			t.Error("another key given up")
		}
		// Its Retry-After still runs beyond MaxRetryWait: no reprieve.
		if s.Reprieve("h") {
			t.Error("reprieved inside an hour-long Retry-After")
		}
	})
	t.Run("Streak", func(t *testing.T) {
		s, c := newTest(Options{GiveUpStreak: 3, PerHost: 4})
		refuse := func() {
			c.Advance(time.Hour)
			must(t, s, "h").Release(status(429, "Retry-After", "1"))
		}
		refuse()
		refuse()
		c.Advance(time.Hour)
		must(t, s, "h").Release(status(200)) // breaks the streak
		refuse()
		refuse()
		if s.GivenUp("h") != "" {
			t.Fatal("given up although a success broke the streak")
		}
		refuse()
		if why := s.GivenUp("h"); !strings.Contains(why, "3 refusals") {
			t.Fatalf("not given up after 3 refusals in a row: %q", why)
		}
		// Reprieve: tried once more; one more refusal gives it up again.
		if !s.Reprieve("h") {
			t.Fatal("Reprieve refused")
		}
		c.Advance(time.Hour)
		sl, _, err := s.TryAcquire("h")
		if err != nil || sl == nil {
			t.Fatalf("after Reprieve: %v", err)
		}
		sl.Release(status(429, "Retry-After", "1"))
		if s.GivenUp("h") == "" {
			t.Fatal("one refusal after the reprieve did not give the key up again")
		}
	})
	t.Run("OneWaveCountsOnce", func(t *testing.T) {
		s, _ := newTest(Options{GiveUpStreak: 3, PerHost: 8})
		var wave []*Slot
		for range 8 {
			wave = append(wave, must(t, s, "h"))
		}
		for _, sl := range wave {
			sl.Release(status(429, "Retry-After", "1"))
		}
		if s.GivenUp("h") != "" {
			t.Fatal("eight concurrent refusals counted as eight")
		}
	})
}

// TestScheduler_Budget: a token bucket with its margin never lets more
// than Burst + rate·t starts through in any window.
func TestScheduler_Budget(t *testing.T) {
	s, c := newTest(Options{PerHost: 100})
	s.SetBudget("pool", Budget{PerMinute: 60, Burst: 5}) // 48 a minute after the 20% margin
	var starts []time.Time
	for range 600 { // 10 simulated minutes, 1s steps... in 100ms steps
		for {
			sl, _, _ := s.TryAcquire("pool")
			if sl == nil {
				break
			}
			starts = append(starts, c.Now())
			sl.Release(status(200))
		}
		c.Advance(100 * time.Millisecond)
	}
	// In 60 s: 5 (burst) + 48.
	if n := len(starts); n < 5+48-1 || n > 5+48+1 {
		t.Errorf("%d starts in a minute, want about %d", n, 5+48)
	}
	for i := range starts {
		j := i
		for j < len(starts) && starts[j].Sub(starts[i]) < time.Minute {
			j++
		}
		if j-i > 5+48 {
			t.Fatalf("%d starts in the minute from %v", j-i, starts[i])
		}
	}
	// Margin: explicit none.
	s.SetBudget("exact", Budget{PerMinute: 60, Burst: 1, Margin: -1})
	must(t, s, "exact").Release(status(200))
	if nb := blocked(t, s, "exact"); nb.Sub(c.Now()) != time.Second {
		t.Errorf("no margin: next token in %v, want 1s", nb.Sub(c.Now()))
	}
}

// TestScheduler_CrawlDelay: one request at a time, starts d apart,
// combined with Delay (the larger wins) and a budget.
func TestScheduler_CrawlDelay(t *testing.T) {
	s, c := newTest(Options{PerHost: 4, Delay: 500 * time.Millisecond})
	s.SetCrawlDelay("h", 2*time.Second)
	c.Advance(2 * time.Second) // from the robots.txt read
	a := must(t, s, "h")
	if nb := blocked(t, s, "h"); !nb.Equal(c.Now().Add(2 * time.Second)) {
		t.Errorf("second start at +%v, want +2s", nb.Sub(c.Now()))
	}
	c.Advance(2 * time.Second)
	if nb := blocked(t, s, "h"); !nb.IsZero() {
		t.Errorf("one at a time: notBefore %v, want zero (waits for a release)", nb)
	}
	a.Release(status(200))
	c.Advance(2 * time.Second) // from the end of the previous request
	must(t, s, "h").Release(status(200))
	// Delay alone on another key: 500ms apart, several at once.
	must(t, s, "d")
	if nb := blocked(t, s, "d"); nb.Sub(c.Now()) != 500*time.Millisecond {
		t.Errorf("Delay: %v", nb.Sub(c.Now()))
	}
	c.Advance(500 * time.Millisecond)
	must(t, s, "d")
}

// TestScheduler_RateLimitHeaders: a server's quota caps the starts until
// its reset, and remaining 0 pauses the key.
func TestScheduler_RateLimitHeaders(t *testing.T) {
	s, c := newTest(Options{PerHost: 10})
	must(t, s, "h").Release(status(200, "RateLimit", "limit=10, remaining=2, reset=30"))
	must(t, s, "h").Release(status(200))
	must(t, s, "h").Release(status(200))
	if nb := blocked(t, s, "h"); nb.Sub(c.Now()) != 30*time.Second {
		t.Fatalf("quota spent: notBefore +%v, want +30s", nb.Sub(c.Now()))
	}
	c.Advance(30 * time.Second)
	sl := must(t, s, "h")
	sl.Release(status(200, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", fmt.Sprint(c.Now().Unix()+7)))
	if nb := blocked(t, s, "h"); nb.Sub(c.Now()) != 7*time.Second {
		t.Fatalf("remaining 0: paused %v, want 7s", nb.Sub(c.Now()))
	}
	// A reset beyond MaxRetryWait with nothing left gives the key up.
	must(t, s, "g").Release(status(200, "RateLimit-Remaining", "0", "RateLimit-Reset", "7200"))
	if s.GivenUp("g") == "" {
		t.Error("quota exhausted for 2h: not given up")
	}
}

// TestScheduler_LearnsTokenBucket: against a simulated server with a token
// bucket (20/s, burst 10, 429 with Retry-After beyond it), no request
// ever lands inside a Retry-After window and the throughput converges
// near the server's rate.
func TestScheduler_LearnsTokenBucket(t *testing.T) {
	s, c := newTest(Options{PerHost: 4})
	const rate, burst = 20.0, 10.0
	tokens, at := burst, c.Now()
	var windowEnd time.Time
	served, violations, refused := 0, 0, 0
	start := c.Now()
	for c.Now().Sub(start) < 120*time.Second {
		for {
			sl, _, err := s.TryAcquire("h")
			if err != nil {
				t.Fatal(err)
			}
			if sl == nil {
				break
			}
			now := c.Now()
			if now.Before(windowEnd) {
				violations++
			}
			tokens = min(burst, tokens+now.Sub(at).Seconds()*rate)
			at = now
			if tokens >= 1 {
				tokens--
				served++
				sl.Release(status(200))
				continue
			}
			refused++
			wait := time.Duration((1 - tokens) / rate * float64(time.Second))
			secs := int((wait + time.Second - 1) / time.Second)
			windowEnd = now.Add(time.Duration(secs) * time.Second)
			sl.Release(status(429, "Retry-After", fmt.Sprint(secs)))
		}
		c.Advance(time.Millisecond)
	}
	if violations > 0 {
		t.Errorf("%d requests inside a Retry-After window", violations)
	}
	got := float64(served) / 120
	t.Logf("served %d (%.1f/s of 20/s), refused %d, state %+v", served, got, refused, s.State("h"))
	if got < rate/1.5 {
		t.Errorf("throughput %.1f/s, want at least %.1f/s (the 1.5x floor)", got, rate/1.5)
	}
	if s.GivenUp("h") != "" {
		t.Errorf("given up: %s", s.GivenUp("h"))
	}
}

// TestScheduler_PerResourceScope: a server that refuses single URLs while
// answering the requests around them is limiting resources: after the
// evidence, refusals pause only their request, and the key is not cut.
func TestScheduler_PerResourceScope(t *testing.T) {
	s, c := newTest(Options{PerHost: 16})
	// Wave: 16 in flight, the first refused, the other 15 answered after.
	for wave := 0; wave < 2; wave++ {
		c.Advance(time.Hour)
		var slots []*Slot
		for range 16 {
			if sl, _, _ := s.TryAcquire("h"); sl != nil {
				slots = append(slots, sl)
			}
		}
		c.Advance(time.Millisecond)
		slots[0].Release(status(429, "Retry-After", "1"))
		c.Advance(time.Millisecond)
		for _, sl := range slots[1:] {
			sl.Release(status(200))
		}
	}
	st := s.State("h")
	if !st.PerResource {
		t.Fatalf("not taken as per-resource: %+v", st)
	}
	if !st.PausedUntil.IsZero() {
		t.Errorf("key still paused: %+v", st)
	}
	// Now a refusal pauses only its request.
	limit := st.Limit
	sl := must(t, s, "h")
	sl.Release(status(429, "Retry-After", "1"))
	if got := sl.RetryNotBefore().Sub(c.Now()); got != time.Second {
		t.Errorf("RetryNotBefore +%v, want +1s", got)
	}
	must(t, s, "h").Release(status(200))
	if got := s.State("h").Limit; got < limit {
		t.Errorf("limit cut from %d to %d", limit, got)
	}

	// A token bucket: answers after a refusal are refusals too; the key
	// stays paused as a whole.
	s2, c2 := newTest(Options{PerHost: 16})
	for wave := 0; wave < 4; wave++ {
		c2.Advance(time.Hour)
		var slots []*Slot
		for range 16 {
			sl, _, _ := s2.TryAcquire("h")
			if sl != nil {
				slots = append(slots, sl)
			}
		}
		c2.Advance(time.Millisecond)
		for i, sl := range slots {
			if i < len(slots)/2 {
				sl.Release(status(200))
			} else {
				sl.Release(status(429, "Retry-After", "1"))
			}
		}
	}
	if s2.State("h").PerResource {
		t.Fatal("a host refusing everything after its bucket ran dry taken as per-resource")
	}
}

// TestScheduler_Concurrent: many goroutines on a few keys; the limit is
// never exceeded and nothing leaks (run with -race).
func TestScheduler_Concurrent(t *testing.T) {
	s := New(Options{PerHost: 3})
	var mu sync.Mutex
	inflight := map[string]int{}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			k := fmt.Sprint("k", i%4)
			for range 50 {
				sl, err := s.Acquire(context.Background(), k)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inflight[k]++
				if inflight[k] > 3 {
					t.Errorf("%s: %d in flight", k, inflight[k])
				}
				mu.Unlock()
				mu.Lock()
				inflight[k]--
				mu.Unlock()
				sl.Release(status(200))
				sl.Release(status(200)) // idempotent
			}
		})
	}
	wg.Wait()
	for i := range 4 {
		if st := s.State(fmt.Sprint("k", i)); st.InFlight != 0 {
			t.Errorf("%+v", st)
		}
	}
	// Cancellation ends a waiting Acquire.
	sl := must(t, New(Options{PerHost: 1}), "x")
	_ = sl
	s1 := New(Options{PerHost: 1})
	must(t, s1, "x")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := s1.Acquire(ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire on a full key with a deadline: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestScheduler_503WithoutRetryAfterNeverGivesUp: a site answering 503 to
// everything is broken, not busy: cut, never given up.
func TestScheduler_503WithoutRetryAfterNeverGivesUp(t *testing.T) {
	s, c := newTest(Options{GiveUpStreak: 3})
	for range 10 {
		c.Advance(time.Hour)
		must(t, s, "h").Release(status(503))
	}
	if st := s.State("h"); st.GivenUp != "" || st.Limit != 1 {
		t.Errorf("%+v, want limit 1, not given up", st)
	}
}

// TestScheduler_CrawlDelayFromEnd: with a Crawl-delay the next start waits
// the delay from the end of the previous request, and from the robots.txt
// read that set it; Sent moves the spacing to the actual send.
func TestScheduler_CrawlDelayFromEnd(t *testing.T) {
	s, c := newTest(Options{})
	s.SetCrawlDelay("h", time.Second)
	if nb := blocked(t, s, "h"); nb.Sub(c.Now()) != time.Second {
		t.Fatalf("first start %v after robots.txt, want 1s", nb.Sub(c.Now()))
	}
	c.Advance(time.Second)
	sl := must(t, s, "h")
	c.Advance(300 * time.Millisecond)
	sl.Release(status(200))
	if nb := blocked(t, s, "h"); nb.Sub(c.Now()) != time.Second {
		t.Errorf("next start %v after the end, want 1s", nb.Sub(c.Now()))
	}
	// Delay: from the send, not the grant.
	s2, c2 := newTest(Options{Delay: time.Second, PerHost: 4})
	a := must(t, s2, "d")
	c2.Advance(200 * time.Millisecond)
	a.Sent()
	if nb := blocked(t, s2, "d"); nb.Sub(c2.Now()) != time.Second {
		t.Errorf("next start %v after the send, want 1s", nb.Sub(c2.Now()))
	}
}

func TestPlainResourceID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"HTTP://Example.ORG:80/a?b#c", "http://example.org/a?b"},
		{"https://u:p@example.org:443", "https://example.org/"},
		{"https://example.org:8443/A%2fB", "https://example.org:8443/A%2fB"},
		{"http://[::1]:80/x", "http://[::1]/x"},
		{"not a url at all", "not a url at all"},
	}
	for _, tt := range tests {
		if got := plainResourceID(tt.in); got != tt.want {
			t.Errorf("plainResourceID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
