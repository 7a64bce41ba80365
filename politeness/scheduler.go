package politeness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of Options and Budget.
const (
	defaultPerHost      = 4
	DefaultMaxRetryWait = 60 * time.Second
	DefaultGiveUpStreak = 8
	// DefaultPause is how long a 429 without Retry-After pauses its key;
	// it doubles with each further 429 in a row, up to MaxRetryWait.
	DefaultPause = time.Second
	// defaultMargin is the fraction of a published limit a Budget keeps
	// unused.
	defaultMargin = 0.2
	// scopeEvidence is the least number of successes, answering requests
	// in flight when the key refused one, before refusals are taken to
	// cover single resources rather than the key (see the package doc).
	scopeEvidence = 8
)

// ErrGivenUp is wrapped by the error Acquire and TryAcquire return for a
// key that was given up.
var ErrGivenUp = errors.New("rate-limited: given up")

// errWindow is wrapped by the error of a request not made because its
// resource is inside a window its server announced (see WindowError).
var errWindow = errors.New("inside a window the server announced")

// WindowError is the error of a request not made because the server asked
// not to be asked for its resource before Until (a Retry-After, or a
// quota's reset, longer than MaxRetryWait).
type WindowError struct {
	URL   string
	Until time.Time
}

func (e *WindowError) Error() string {
	return fmt.Sprintf("%s: not requested inside the window its server announced; retry after %s", e.URL, e.Until.UTC().Format(time.RFC3339))
}

// Unwrap returns errWindow.
func (e *WindowError) Unwrap() error { return errWindow }

// Options configure a Scheduler. The zero value is useful.
type Options struct {
	// PerHost is the ceiling of concurrent requests per key (default 4).
	PerHost int
	// Delay is the least gap between two request starts to one key
	// (default 0).
	Delay time.Duration
	// Rules override PerHost (Concurrency) and Delay for matching hosts;
	// the first match wins (HostRuleFor). A key without a port
	// matches a rule for that host on port 80 or 443 too.
	Rules []HostRule
	// MaxRetryWait is the longest pause a key accepts: a Retry-After (or a
	// RateLimit reset with nothing remaining) longer than it gives the key
	// up (default 60s).
	MaxRetryWait time.Duration
	// GiveUpStreak is how many 429/503 answers in a row, with no success
	// in between and counting one per round trip, give a key up (default
	// 8).
	GiveUpStreak int
	// Clock is the time source (nil: real time).
	Clock Clock
	// ResourceID names the resource of a request for the windows a server
	// announces on one URL (Outcome.Resource, RetryAt): every user of one
	// Scheduler must name a URL alike, so that a window seen by the crawl
	// holds for the checks too. The pipeline passes the URL model's
	// normalization (urls.NormalizeURL); an error keeps the URL as given.
	// nil: the URL as net/url writes it, scheme and host lower-cased, the
	// scheme's default port, the fragment and the userinfo dropped.
	ResourceID func(raw string) (string, error)
}

// Budget is a token bucket for a key: at most Burst requests at once,
// refilled at PerMinute·(1−Margin) a minute.
type Budget struct {
	PerMinute float64
	// Burst is the bucket's size (at least 1).
	Burst int
	// Margin is the fraction of PerMinute kept unused (0: defaultMargin;
	// negative: none).
	Margin float64
}

// Outcome is what became of a request.
type Outcome struct {
	// Status is the HTTP status (0 when there was no response).
	Status int
	// Header is the response's header (nil without a response).
	Header http.Header
	// Err is the transport error, when there was no response.
	Err error
	// Resource is the URL the request asked for ("" when the caller does
	// not say). A window longer than MaxRetryWait on an answer that names
	// its resource is taken to cover that resource until the evidence says
	// it covers the key (see the package doc, "Long windows"); without a
	// resource it gives the key up at once.
	Resource string
}

// State is a key's current state, for logs, tests and summaries.
type State struct {
	Key string
	// Limit is the current concurrency limit, Ceiling its maximum.
	Limit, Ceiling int
	InFlight       int
	// Rate is the learned start rate (requests per second), 0 when none.
	Rate float64
	// PausedUntil is the end of the current pause (zero when none).
	PausedUntil time.Time
	// PerResource is true when the key's refusals are taken to cover
	// single resources (see the package doc).
	PerResource bool
	// LongScoped is true when a success after the pause of a long window
	// showed that such windows cover single resources of the key.
	LongScoped bool
	// Suspect is the resource whose long window awaits evidence of its
	// scope ("" when none).
	Suspect string
	// Kept is true for a key that is never given up (Keep).
	Kept bool
	// Waiting says why a kept key waits beyond MaxRetryWait ("" when it
	// does not).
	Waiting string
	// Windows is the number of resources of the key inside a window of
	// their own.
	Windows int
	// GivenUp is why the key was given up ("" when it was not).
	GivenUp string
	// Refusals counts 429 and 503 answers; Successes the other answers.
	Refusals, Successes int
}

// Scheduler is the per-key budget of a run. It is safe for concurrent use.
type Scheduler struct {
	o     Options
	clock Clock

	mu      sync.Mutex
	keys    map[string]*key
	changed chan struct{} // closed and replaced when any key may admit more
}

// key is one budget. Its fields are guarded by Scheduler.mu.
type key struct {
	name     string
	ceiling  int
	delay    time.Duration
	crawl    time.Duration // robots.txt Crawl-delay
	limit    float64       // AIMD concurrency limit
	inFlight int
	seq      uint64 // starts so far
	last     time.Time
	okRun    int // successes since the limit last grew

	pausedUntil time.Time
	pause429    bool          // the pause came from a refusal (may be lifted by scope evidence)
	noRAPause   time.Duration // pause of the next 429 without Retry-After
	cutSeq      uint64        // k.seq at the last cut (0: none)
	streak      int
	streakSeq   uint64 // k.seq at the last counted refusal
	givenUp     string

	// rate: a learned start rate, rateAtCut + growth·(now−rateSince).
	rateAtCut, growth float64
	rateSince         time.Time
	okSinceCut        int
	cycleStart        time.Time
	// beforeCut is the controller as it was before the last cut, restored
	// when that cut's refusal turns out to have covered one resource.
	beforeCut controller

	// scope evidence
	refusalSeq           uint64 // k.seq when the last refusal arrived
	overlapOK, overlapNo int
	recentOK, recentNo   int
	perResource          bool

	budget       *bucket
	quotaLeft    int
	quotaUntil   time.Time
	quotaSeq     uint64
	refusals, ok int

	// long windows (see the package doc)
	kept       bool
	waiting    string     // why a kept key waits beyond MaxRetryWait
	suspect    *suspicion // a long window whose scope is not known yet
	longScoped bool       // long windows cover single resources
	longRun    int        // long windows in a row, one per round trip
	longSeq    uint64     // k.seq at the last counted long window
	windows    map[string]time.Time
}

// suspicion is a long window on one resource, taken to cover the whole key
// until an answer to a request started after its pause says otherwise.
type suspicion struct {
	resource string
	what     string        // the answer, for messages ("429 with Retry-After 24h0m0s")
	seq      uint64        // k.seq when it arrived
	pause    time.Duration // the pause it imposed (MaxRetryWait)
	// other is the first other resource refused with a long window after
	// the pause ("" while none), and otherWhat its answer: one such
	// refusal may be a second per-resource limit met by chance, two show
	// the limit covers the key.
	other, otherWhat string
}

// controller is what a cut changes.
type controller struct {
	limit, rateAtCut, growth float64
	rateSince                time.Time
}

type bucket struct {
	rate   float64 // tokens per second
	burst  float64
	tokens float64
	at     time.Time
}

// New returns a Scheduler with o, defaults filled in.
func New(o Options) *Scheduler {
	if o.PerHost <= 0 {
		o.PerHost = defaultPerHost
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = DefaultMaxRetryWait
	}
	if o.GiveUpStreak <= 0 {
		o.GiveUpStreak = DefaultGiveUpStreak
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Delay < 0 {
		o.Delay = 0
	}
	return &Scheduler{o: o, clock: o.Clock, keys: map[string]*key{}, changed: make(chan struct{})}
}

// Key is the key of a URL: its lower-cased host and port, the port left
// out when it is the scheme's default, exactly as urls.NormalizeURL
// writes hosts ("example.org", "example.org:8080", "[::1]:8080").
func Key(u *url.URL) string {
	host := strings.ToLower(u.Host)
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	port := ""
	if strings.HasPrefix(host, "[") {
		if i := strings.LastIndex(host, "]:"); i >= 0 {
			host, port = host[:i+1], host[i+2:]
		}
	} else if h, p, ok := strings.Cut(host, ":"); ok {
		host, port = h, p
	}
	scheme := strings.ToLower(u.Scheme)
	if port == "" || scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		return host
	}
	return host + ":" + port
}

// Options returns the options the Scheduler runs with, defaults filled in.
func (s *Scheduler) Options() Options { return s.o }

// get returns the key's state, made on first use. s.mu is held.
func (s *Scheduler) get(name string) *key {
	k := s.keys[name]
	if k == nil {
		ceiling, delay := s.o.PerHost, s.o.Delay
		if r, ok := s.rule(name); ok {
			ceiling, delay = cmp.Or(max(r.PerHost, 0), ceiling), cmp.Or(max(r.Delay, 0), delay)
		}
		k = &key{name: name, ceiling: ceiling, delay: delay, limit: float64(ceiling), noRAPause: DefaultPause}
		s.keys[name] = k
	}
	return k
}

// rule returns the first rule matching a key; a key without a port
// matches rules for its host on port 80 and 443 as well.
func (s *Scheduler) rule(name string) (HostRule, bool) {
	_, _, err := net.SplitHostPort(name)
	withPort := err == nil
	for _, r := range s.o.Rules {
		if r.MatchesHostPort(name) {
			return r, true
		}
		if !withPort {
			h := strings.Trim(name, "[]")
			if r.MatchesHostPort(net.JoinHostPort(h, "443")) || r.MatchesHostPort(net.JoinHostPort(h, "80")) {
				return r, true
			}
		}
	}
	return HostRule{}, false
}

// SetBudget gives a key (a host or an archive's pool) a token bucket. A
// Budget with PerMinute <= 0 removes it.
func (s *Scheduler) SetBudget(name string, b Budget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.get(name)
	if b.PerMinute <= 0 {
		k.budget = nil
		s.notify()
		return
	}
	margin := b.Margin
	switch {
	case margin == 0:
		margin = defaultMargin
	case margin < 0:
		margin = 0
	}
	margin = min(margin, 0.9)
	burst := float64(max(b.Burst, 1))
	k.budget = &bucket{rate: b.PerMinute * (1 - margin) / 60, burst: burst, tokens: burst, at: s.clock.Now()}
}

// SetCrawlDelay records a robots.txt Crawl-delay for a key: one request at
// a time, starts at least d apart. d <= 0 removes it.
//
// It is called as robots.txt is read, itself a request to the host: the
// next start waits d from now. With a Crawl-delay, spacing counts from the
// end of the previous request (its Release or a further answer within its
// slot), the conservative reading of "a delay between successive
// requests".
func (s *Scheduler) SetCrawlDelay(name string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.get(name)
	k.crawl = max(d, 0)
	if now := s.clock.Now(); d > 0 && now.After(k.last) {
		k.last = now
	}
	s.notify()
}

// Sent marks the moment the slot's request actually goes out, which may be
// later than the grant (a dispatcher hands the slot to a worker): spacing
// (Delay, Crawl-delay, the learned rate) counts from the later of the two.
// Call it again for each further request made within the slot.
func (sl *Slot) Sent() {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.done {
		return
	}
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.clock.Now(); now.After(sl.k.last) {
		sl.k.last = now
	}
}

// notify wakes everyone waiting for a key to admit more. s.mu is held.
func (s *Scheduler) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Changed returns a channel closed the next time a request finishes or a
// setting changes, so that a dispatcher holding no slot of a key can try
// it again (TryAcquire's zero notBefore).
func (s *Scheduler) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Slot is the permission for one request to start. Release it when the
// request is over.
type Slot struct {
	s       *Scheduler
	k       *key
	seq     uint64
	start   time.Time
	mu      sync.Mutex
	done    bool
	retryAt time.Time
}

// Key returns the slot's key.
func (sl *Slot) Key() string { return sl.k.name }

// Acquire blocks until a request to the key may start and returns its
// slot, or an error: ctx's, or one wrapping ErrGivenUp (with the reason)
// when the key was given up.
func (s *Scheduler) Acquire(ctx context.Context, name string) (*Slot, error) {
	for {
		s.mu.Lock()
		sl, notBefore, err := s.tryLocked(name)
		changed := s.changed
		s.mu.Unlock()
		if sl != nil || err != nil {
			return sl, err
		}
		var t Timer
		var tc <-chan time.Time
		if !notBefore.IsZero() {
			t = s.clock.NewTimer(notBefore.Sub(s.clock.Now()))
			tc = t.C()
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-changed:
		case <-tc:
		}
		if t != nil {
			t.Stop()
		}
		if err != nil {
			return nil, err
		}
	}
}

// TryAcquire is Acquire without waiting, for dispatchers that must not hold
// a worker while a key waits. When no slot is free it returns a nil slot
// and the earliest time worth trying again: zero when the key waits for a
// request in flight to finish (see Changed).
func (s *Scheduler) TryAcquire(name string) (slot *Slot, notBefore time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tryLocked(name)
}

func (s *Scheduler) tryLocked(name string) (*Slot, time.Time, error) {
	k := s.get(name)
	if k.givenUp != "" {
		return nil, time.Time{}, fmt.Errorf("%w: %s", ErrGivenUp, k.givenUp)
	}
	now := s.clock.Now()
	var notBefore time.Time
	later := func(t time.Time) {
		if t.After(now) && t.After(notBefore) {
			notBefore = t
		}
	}
	later(k.pausedUntil)
	if k.quotaLeft <= 0 && !k.quotaUntil.IsZero() {
		if now.Before(k.quotaUntil) {
			later(k.quotaUntil)
		} else {
			k.quotaUntil = time.Time{}
		}
	}
	if gap := k.gap(now); gap > 0 && !k.last.IsZero() {
		later(k.last.Add(gap))
	}
	if b := k.budget; b != nil {
		b.refill(now)
		if b.tokens < 1 {
			later(now.Add(time.Duration(math.Ceil((1 - b.tokens) / b.rate * float64(time.Second)))))
		}
	}
	if !notBefore.IsZero() {
		return nil, notBefore, nil
	}
	if k.inFlight >= k.cap() {
		return nil, time.Time{}, nil
	}
	k.inFlight++
	k.seq++
	k.last = now
	if k.cycleStart.IsZero() {
		k.cycleStart = now
	}
	if !k.quotaUntil.IsZero() {
		k.quotaLeft--
	}
	if k.budget != nil {
		k.budget.tokens--
	}
	return &Slot{s: s, k: k, seq: k.seq, start: now}, time.Time{}, nil
}

// cap is the key's concurrency limit now.
func (k *key) cap() int {
	if k.crawl > 0 || k.suspect != nil {
		return 1
	}
	return max(1, min(k.ceiling, int(k.limit)))
}

// gap is the least time between two starts now.
func (k *key) gap(now time.Time) time.Duration {
	g := max(k.delay, k.crawl)
	if r := k.rate(now); r > 0 {
		g = max(g, time.Duration(float64(time.Second)/r))
	}
	return g
}

// rate is the learned start rate now (0: none).
func (k *key) rate(now time.Time) float64 {
	if k.rateAtCut <= 0 {
		return 0
	}
	r := k.rateAtCut + k.growth*now.Sub(k.rateSince).Seconds()
	if r > 1e4 {
		k.rateAtCut = 0 // grown out of the way
		return 0
	}
	return r
}

func (b *bucket) refill(now time.Time) {
	if now.After(b.at) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.at).Seconds()*b.rate)
		b.at = now
	}
}

// RetryNotBefore returns, after Release, the earliest time the request
// may be tried again: the end of the Retry-After its answer carried
// (whether it paused the whole key or only this resource), zero when none.
func (sl *Slot) RetryNotBefore() time.Time {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return sl.retryAt
}

// Release ends the slot's request and feeds its outcome back. Calling it
// again does nothing.
func (sl *Slot) Release(o Outcome) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.done {
		return
	}
	sl.done = true
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.k.inFlight--
	if now := s.clock.Now(); sl.k.crawl > 0 && now.After(sl.k.last) {
		sl.k.last = now // Crawl-delay counts from the end of a request
	}
	if at := s.feed(sl, o); at.After(sl.retryAt) {
		sl.retryAt = at
	}
	s.notify()
}

// feed applies an outcome to the slot's key and returns when the request
// may be retried. s.mu is held.
func (s *Scheduler) feed(sl *Slot, o Outcome) time.Time {
	k := sl.k
	now := s.clock.Now()
	if o.Err != nil || o.Status == 0 {
		// No answer: says nothing about the server's limits.
		return time.Time{}
	}
	// A window longer than the cap: a quota exhausted until a distant
	// reset, or a refusal's Retry-After (the longer of the two).
	var long time.Duration
	var what string
	if q, ok := ParseRateLimit(o.Header, now); ok && sl.seq >= k.quotaSeq {
		if q.Remaining <= 0 && q.Reset > s.o.MaxRetryWait {
			long, what = q.Reset, fmt.Sprintf("%d with its quota exhausted for %s", o.Status, q.Reset.Round(time.Second))
		} else {
			k.quotaSeq = sl.seq
			k.quotaLeft = q.Remaining - int(k.seq-sl.seq) // starts since this one
			k.quotaUntil = now.Add(q.Reset)
			if until := now.Add(q.Reset); q.Remaining <= 0 && until.After(k.pausedUntil) {
				k.pausedUntil, k.pause429 = until, false
			}
		}
	}
	refused := o.Status == http.StatusTooManyRequests || o.Status == http.StatusServiceUnavailable
	var ra time.Duration
	var hasRA bool
	if refused {
		ra, hasRA = ParseRetryAfter(o.Header.Get("Retry-After"), now)
		if hasRA && ra > s.o.MaxRetryWait && ra >= long {
			long, what = ra, fmt.Sprintf("%d with Retry-After %s", o.Status, ra.Round(time.Second))
		}
	}
	res := ""
	if o.Resource != "" {
		res = s.resourceID(o.Resource)
	}
	inFlightAtRefusal := sl.seq <= k.refusalSeq
	if !refused {
		k.ok++
		k.recentOK++
		k.okSinceCut++
		if inFlightAtRefusal {
			k.overlapOK++
		}
		k.decay()
		k.streak = 0
		k.noRAPause = DefaultPause
		if k.okRun++; float64(k.okRun) >= k.limit {
			k.okRun = 0
			if k.limit < float64(k.ceiling) {
				k.limit++
			}
		}
		k.updateScope()
		if long == 0 {
			k.longRun = 0
			k.waiting = ""
			if k.suspect != nil && sl.seq > k.suspect.seq {
				// Answered after the pause: the long window covered
				// its resource, not the key.
				k.suspect = nil
				k.longScoped = true
			}
			return time.Time{}
		}
		return s.longWindow(k, sl, false, res, long, what, now)
	}

	k.refusals++
	k.recentNo++
	if inFlightAtRefusal {
		k.overlapNo++
	}
	k.decay()
	k.refusalSeq = k.seq
	k.okRun = 0
	k.updateScope()
	if long > 0 {
		return s.longWindow(k, sl, true, res, long, what, now)
	}
	// One signal per round trip: a refusal to a request started before the
	// previous counted one was answered is part of the same wave. A 503
	// without Retry-After cuts (the server is struggling) but does not
	// count towards giving up: it is as likely a broken site as a limit,
	// and a broken site must be reported as such, not as "not checked".
	if sl.seq > k.streakSeq && (o.Status == http.StatusTooManyRequests || hasRA) {
		k.streak++
		k.streakSeq = k.seq
		if k.streak >= s.o.GiveUpStreak {
			why := fmt.Sprintf("key %s answered %d refusals (429/503) in a row", k.name, k.streak)
			if k.kept {
				// Never given up: it waits the longest pause accepted,
				// and one more refusal after it waits again.
				k.streak = s.o.GiveUpStreak - 1
				k.waiting = why
				if until := now.Add(s.o.MaxRetryWait); until.After(k.pausedUntil) {
					k.pausedUntil, k.pause429 = until, false
				}
			} else {
				s.giveUp(k, why)
			}
		}
	}
	var wait time.Duration
	switch {
	case hasRA:
		wait = ra
	case o.Status == http.StatusTooManyRequests:
		wait = min(k.noRAPause, s.o.MaxRetryWait)
		k.noRAPause = min(2*k.noRAPause, s.o.MaxRetryWait)
	}
	retryAt := time.Time{}
	if wait > 0 {
		retryAt = now.Add(wait)
		if res != "" {
			// The resource's own window outlives a pause of the key
			// that scope evidence may lift.
			s.setWindow(k, res, retryAt, now)
		}
	}
	if k.perResource {
		return retryAt // the resource waits, the key goes on
	}
	if retryAt.After(k.pausedUntil) {
		k.pausedUntil, k.pause429 = retryAt, true
	}
	if sl.seq > k.cutSeq {
		s.cut(k, now)
	}
	return retryAt
}

// longWindow applies a window longer than MaxRetryWait (a Retry-After, or
// a quota exhausted until its reset) announced by an answer to a request
// for res, per the scope decision (decideLong), and returns its end.
// s.mu is held.
func (s *Scheduler) longWindow(k *key, sl *Slot, refused bool, res string, wait time.Duration, what string, now time.Time) time.Time {
	until := now.Add(wait)
	if res != "" && !s.setWindow(k, res, until, now) {
		res = "" // no room to remember it: only the key can honour it
	}
	if sl.seq > k.longSeq {
		k.longRun++
		k.longSeq = k.seq
	}
	ev := longEvidence{
		resource:    res != "",
		perResource: k.perResource,
		longScoped:  k.longScoped,
		longRun:     k.longRun,
	}
	if sp := k.suspect; sp != nil {
		ev.suspect = true
		ev.sameResource = sp.resource == res
		ev.afterPause = sl.seq > sp.seq
		ev.confirmed = sp.other != "" && sp.other != res
	}
	switch decideLong(ev) {
	case scopeResource:
		return until
	case scopeConfirm:
		// A second resource refused after the pause: pause once more and
		// let one more request tell.
		k.suspect.other, k.suspect.otherWhat, k.suspect.seq = res, what, k.seq
		if p := now.Add(s.o.MaxRetryWait); p.After(k.pausedUntil) {
			k.pausedUntil, k.pause429 = p, true
		}
		if refused && sl.seq > k.cutSeq {
			s.cut(k, now)
		}
		return until
	case scopeUnknown:
		k.suspect = &suspicion{resource: res, what: what, seq: k.seq, pause: s.o.MaxRetryWait}
		k.longScoped = false
		if p := now.Add(s.o.MaxRetryWait); p.After(k.pausedUntil) {
			k.pausedUntil, k.pause429 = p, true
		}
		if refused && sl.seq > k.cutSeq {
			s.cut(k, now)
		}
		return until
	}
	why := fmt.Sprintf("key %s answered %s, which exceeds the %s wait cap", k.name, what, s.o.MaxRetryWait)
	if sp := k.suspect; sp != nil && res != "" {
		why = fmt.Sprintf("key %s answered %s for %s and, after %s pauses, %s for %s and %s for %s too: the limit covers the host and exceeds the %s wait cap",
			k.name, sp.what, sp.resource, sp.pause, sp.otherWhat, sp.other, what, res, s.o.MaxRetryWait)
	}
	k.suspect = nil
	if until.After(k.pausedUntil) {
		k.pausedUntil, k.pause429 = until, false
	}
	if k.kept {
		k.waiting = why
	} else {
		s.giveUp(k, why)
	}
	return until
}

// longScope is what a window longer than MaxRetryWait covers.
type longScope int

const (
	// scopeResource: the resource asked for; the key goes on.
	scopeResource longScope = iota + 1
	// scopeConfirm: a first other resource refused after the pause. It
	// covers its resource; the key pauses MaxRetryWait once more, then
	// one more request tells.
	scopeConfirm
	// scopeUnknown: not known yet. The key pauses MaxRetryWait, then
	// takes one request at a time until an answer tells.
	scopeUnknown
	// scopeKey: the whole key. It is given up (or, kept, waits the
	// window out).
	scopeKey
)

// longEvidence is what the scope decision of a long window looks at.
type longEvidence struct {
	// resource: the answer named the resource it was for.
	resource bool
	// perResource: the controller's scope evidence (answers around
	// refusals were successes).
	perResource bool
	// longScoped: an answer after the pause of an earlier long window was
	// a success.
	longScoped bool
	// longRun: long windows in a row with no success in between, this
	// one included, one per round trip.
	longRun int
	// suspect: an earlier long window's scope is still unknown;
	// sameResource: it was this resource's; afterPause: this request
	// started after that window's pause began; confirmed: another
	// resource was already refused after a pause, and this is a third.
	suspect, sameResource, afterPause, confirmed bool
}

// decideLong decides what a long window covers, from the evidence:
//
//   - An answer that does not name its resource can only be read as
//     covering the key.
//   - While an earlier long window's scope is unknown, long windows on
//     two other resources, each asked for after a pause, show the limit
//     covers the key (a site may limit a few resources of its own, and
//     the request after the pause may meet one of them by chance: the
//     first is its resource's, and the key pauses once more); one asked
//     for before (in flight when it
//     arrived), or on the same resource, covers its resource: the request
//     after the pause decides.
//   - When answers have shown that refusals (or long windows) cover single
//     resources, a long window covers its resource, unless it is the
//     second in a row with no success between: the server may have
//     changed its mind, and the scope is unknown again.
//   - Otherwise the scope is unknown: the key pauses as long as the cap
//     allows, and one request then tells.
func decideLong(e longEvidence) longScope {
	switch {
	case !e.resource:
		return scopeKey
	case e.suspect && e.sameResource:
		return scopeResource
	case e.suspect && e.afterPause && e.confirmed:
		return scopeKey
	case e.suspect && e.afterPause:
		return scopeConfirm
	case e.suspect:
		return scopeResource
	case (e.perResource || e.longScoped) && e.longRun < 2:
		return scopeResource
	}
	return scopeUnknown
}

// maxWindows bounds the resources of one key remembered inside a window
// of their own.
const maxWindows = 1 << 14

// setWindow remembers that res may not be asked for before until. It
// reports false when the key has no room left for it. s.mu is held.
func (s *Scheduler) setWindow(k *key, res string, until, now time.Time) bool {
	if cur, ok := k.windows[res]; ok {
		if until.After(cur) {
			k.windows[res] = until
		}
		return true
	}
	if k.windows == nil {
		k.windows = map[string]time.Time{}
	}
	if len(k.windows) >= maxWindows {
		for r, t := range k.windows {
			if !t.After(now) {
				delete(k.windows, r)
			}
		}
		if len(k.windows) >= maxWindows {
			return false
		}
	}
	k.windows[res] = until
	return true
}

// resourceID is the form resources are remembered in (Options.ResourceID).
func (s *Scheduler) resourceID(raw string) string {
	if s.o.ResourceID != nil {
		if n, err := s.o.ResourceID(raw); err == nil {
			return n
		}
		return raw
	}
	return plainResourceID(raw)
}

// plainResourceID is the default resource name: net/url's serialization
// with the scheme and host lower-cased, the scheme's default port, the
// fragment and the userinfo dropped, and an empty path written "/".
func plainResourceID(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	c := *u
	c.Scheme = strings.ToLower(c.Scheme)
	c.User = nil
	c.Fragment, c.RawFragment = "", ""
	c.Host = Key(&c)
	if c.Path == "" && c.RawPath == "" && !c.ForceQuery {
		c.Path = "/"
	}
	return c.String()
}

// RetryAt returns the end of the window a server announced for the
// resource u (a refusal's Retry-After, or a quota exhausted until its
// reset, on an answer to a request for u), zero when none is open. A
// caller asks before requesting u: inside the window, the request is the
// very thing the server asked not to receive. A window that covers the
// whole key is a pause of the key instead (Paused, Acquire).
func (s *Scheduler) RetryAt(u *url.URL) time.Time {
	name := Key(u)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[name]
	if k == nil || len(k.windows) == 0 {
		return time.Time{}
	}
	res := s.resourceID(u.String())
	until, ok := k.windows[res]
	if !ok {
		return time.Time{}
	}
	if !until.After(s.clock.Now()) {
		delete(k.windows, res)
		return time.Time{}
	}
	return until
}

// Keep marks a key whose requests must all be made: the audited site's
// own. It is never given up: a limit that would give another key up
// (GiveUpStreak refusals in a row, a window longer than MaxRetryWait that
// covers the key) pauses it instead, for MaxRetryWait or as long as the
// window runs, and its requests wait (State.Waiting says why).
func (s *Scheduler) Keep(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.get(name).kept = true
}

// Waiting returns the state of each kept key (Keep) that is paused now,
// for a run that must say why it could not finish.
func (s *Scheduler) Waiting() []State {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	var out []State
	for _, k := range s.keys {
		if k.kept && k.pausedUntil.After(now) {
			out = append(out, s.stateLocked(k, now))
		}
	}
	slices.SortFunc(out, func(a, b State) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// cut is the multiplicative decrease: the concurrency limit halves (floor
// 1) and the start rate becomes what the server accepted since the last
// cut, or half the current one.
func (s *Scheduler) cut(k *key, now time.Time) {
	k.beforeCut = controller{limit: k.limit, rateAtCut: k.rateAtCut, growth: k.growth, rateSince: k.rateSince}
	k.limit = max(1, math.Floor(k.limit/2))
	cur := k.rate(now)
	elapsed := now.Sub(k.cycleStart).Seconds()
	var next float64
	if k.okSinceCut >= 2 && elapsed > 0 {
		next = float64(k.okSinceCut) / elapsed
		if cur > 0 {
			next = min(next, cur)
		}
	} else if cur > 0 {
		next = cur / 2
	}
	if next > 0 {
		k.rateAtCut = max(next, 1.0/60)
		k.growth = max(k.rateAtCut/10, 0.05)
		k.rateSince = now
	}
	k.cutSeq = k.seq
	k.cycleStart = now
	k.okSinceCut = 0
}

// decay keeps the scope counters recent and bounded.
func (k *key) decay() {
	if k.overlapOK+k.overlapNo > 256 {
		k.overlapOK /= 2
		k.overlapNo /= 2
	}
	if k.recentOK+k.recentNo > 1024 {
		k.recentOK /= 2
		k.recentNo /= 2
	}
}

// updateScope decides whether refusals cover single resources (see the
// package doc) and lifts a pause one of them imposed on the whole key.
func (k *key) updateScope() {
	was := k.perResource
	k.perResource = k.overlapOK >= scopeEvidence && k.overlapNo*8 <= k.overlapOK && k.recentNo*8 <= k.recentOK+k.recentNo
	if k.perResource && !was {
		// The refusals that paused and cut the key covered resources:
		// undo the pause and the last cut.
		if k.pause429 {
			k.pausedUntil, k.pause429 = time.Time{}, false
		}
		if b := k.beforeCut; b.limit > 0 {
			k.limit, k.rateAtCut, k.growth, k.rateSince = max(k.limit, b.limit), b.rateAtCut, b.growth, b.rateSince
			k.beforeCut = controller{}
		}
	}
}

func (s *Scheduler) giveUp(k *key, why string) {
	if k.givenUp == "" {
		k.givenUp = why
	}
}

// Reprieve lets a key that was given up be tried once more (callers do so
// at the end of their run): the reason is cleared and one more refusal
// gives the key up again. It reports false, and leaves the key given up,
// when its pause (a Retry-After or a quota reset) still runs longer than
// MaxRetryWait: trying inside that window would be the very thing the
// server asked not to do.
func (s *Scheduler) Reprieve(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.get(name)
	if k.givenUp == "" {
		return true
	}
	lim := s.clock.Now().Add(s.o.MaxRetryWait)
	if k.pausedUntil.After(lim) || k.quotaLeft <= 0 && k.quotaUntil.After(lim) {
		return false
	}
	k.givenUp = ""
	k.streak = s.o.GiveUpStreak - 1
	k.streakSeq = k.seq
	s.notify()
	return true
}

// GivenUp returns why the key was given up, or "".
func (s *Scheduler) GivenUp(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.keys[name]; k != nil {
		return k.givenUp
	}
	return ""
}

// State returns the key's current state.
func (s *Scheduler) State(name string) State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateLocked(s.get(name), s.clock.Now())
}

// stateLocked is State. s.mu is held.
func (s *Scheduler) stateLocked(k *key, now time.Time) State {
	st := State{
		Key: k.name, Limit: k.cap(), Ceiling: k.ceiling, InFlight: k.inFlight,
		Rate: k.rate(now), PerResource: k.perResource, LongScoped: k.longScoped,
		Kept: k.kept, Waiting: k.waiting, Windows: len(k.windows), GivenUp: k.givenUp,
		Refusals: k.refusals, Successes: k.ok,
	}
	if k.suspect != nil {
		st.Suspect = k.suspect.resource
	}
	if k.pausedUntil.After(now) {
		st.PausedUntil = k.pausedUntil
	}
	return st
}

// Keys returns the keys the Scheduler knows, for summaries.
func (s *Scheduler) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.keys))
	for n := range s.keys {
		out = append(out, n)
	}
	return out
}

// Observe feeds back the answer to a further request made within the slot
// (a redirect hop or a probe on the same key) without releasing it.
// RetryNotBefore then covers it too. After Release it does nothing.
func (sl *Slot) Observe(o Outcome) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.done {
		return
	}
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.clock.Now(); sl.k.crawl > 0 && now.After(sl.k.last) {
		sl.k.last = now
	}
	if at := s.feed(sl, o); at.After(sl.retryAt) {
		sl.retryAt = at
	}
	s.notify()
}

// Observe feeds back the answer to a request to a key made without a slot
// of that key (a redirect hop to another host made within the slot of the
// first). It counts as part of the key's latest wave. It returns when the
// request may be retried (zero when nothing says).
func (s *Scheduler) Observe(name string, o Outcome) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.get(name)
	at := s.feed(&Slot{s: s, k: k, seq: k.seq, start: s.clock.Now()}, o)
	s.notify()
	return at
}

// Paused returns the end of the key's pause (a Retry-After, or a quota
// with nothing remaining; zero when it is not paused), or an error
// wrapping ErrGivenUp. Callers ask before a request made without a slot of
// the key (a redirect hop), and before using a slot granted a while ago: a
// refusal may have paused the key in between.
func (s *Scheduler) Paused(name string) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.get(name)
	if k.givenUp != "" {
		return time.Time{}, fmt.Errorf("%w: %s", ErrGivenUp, k.givenUp)
	}
	if now := s.clock.Now(); k.pausedUntil.After(now) {
		return k.pausedUntil, nil
	}
	return time.Time{}, nil
}
