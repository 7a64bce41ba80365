package check

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
)

const (
	// challengeBodyMax is how much of a 403, 429 or 503 body is read to
	// look for a bot challenge.
	challengeBodyMax = 32 << 10
	// drainMax and drainTime bound the reading of a body nobody needs,
	// done only so the connection can be reused.
	drainMax  = 32 << 10
	drainTime = 250 * time.Millisecond
)

// response is the outcome of one attempt: one request, one response.
type response struct {
	url       *url.URL
	err       error // the request failed: no response
	status    int
	header    http.Header
	html      bool
	body      []byte // decoded; nil when not read
	truncated bool   // the body went on past MaxBody
	bodyErr   error  // a network error or timeout cut the body short
	decodeErr error  // Content-Encoding could not be decoded
	tlsErr    bool   // the TLS handshake failed
	timings   audit.Timings
	// notBefore is the end of the answer's own window (a refusal's
	// Retry-After, or a quota's reset) when it runs past MaxRetryWait and
	// so was not waited for: when to retry.
	notBefore time.Time
}

// session is the state of one check (or probe): its cookies, so that
// "set a cookie and redirect" sites do not loop, and its attempt count.
type session struct {
	rs       *runState
	jar      *cookiejar.Jar
	cookies  int // Set-Cookie responses seen; a loop needs the same value
	attempts int

	// The target checked (nil for a probe), its key and the slot of that
	// key the check runs in (nil until one is needed).
	t    *Target
	key  string
	slot *politeness.Slot
	used bool // the slot's first request was made
	// deferred is set when the check must stop and be tried again later
	// (a 429, a pause met on the way, a host given up).
	deferred *deferral
	retryAt  time.Time // the latest answer's own retry time
}

// errDeferred marks an attempt not made: the session was deferred.
var errDeferred = errors.New("deferred: host paused or given up")

// release gives the slot back (the outcomes were fed as they came).
func (s *session) release() {
	if s.slot != nil {
		s.slot.Release(politeness.Outcome{})
	}
}

// gate decides whether a request to key may start now: not while the key
// is paused (a refusal may have arrived since the slot was granted), and
// a request of the target's own key made without a slot (a target judged
// from the crawl that must be fetched after all) acquires one first.
// Otherwise it sets s.deferred and reports false.
func (s *session) gate(ctx context.Context, key string) bool {
	sched := s.rs.sched
	if key == s.key && s.t != nil {
		if s.slot == nil {
			sl, err := sched.Acquire(ctx, key)
			if err != nil {
				if errors.Is(err, politeness.ErrGivenUp) {
					s.deferred = &deferral{givenUp: err.Error()}
				}
				return false
			}
			s.slot, s.used = sl, true
			return true
		}
		s.used = true
	}
	return s.open(key)
}

// open reports whether key is neither paused nor given up; otherwise it
// sets s.deferred.
func (s *session) open(key string) bool {
	until, err := s.rs.sched.Paused(key)
	switch {
	case err != nil:
		s.deferred = &deferral{givenUp: err.Error()}
		return false
	case !until.IsZero():
		s.deferred = &deferral{at: until}
		return false
	}
	return true
}

// observe feeds an answer back to the Scheduler and notes when the
// request may be retried.
func (s *session) observe(key string, u *url.URL, resp *http.Response) {
	o := politeness.Outcome{Status: resp.StatusCode, Header: resp.Header, Resource: u.String()}
	if s.slot != nil && key == s.key {
		s.slot.Observe(o)
		s.retryAt = s.slot.RetryNotBefore()
		return
	}
	s.retryAt = s.rs.sched.Observe(key, o)
}

// window reports whether u may be asked for now: not inside a window its
// server announced for it (politeness.Scheduler.RetryAt). A window that
// ends within MaxRetryWait defers the check to its end (s.deferred); a
// longer one is returned as the error of the attempt not made.
func (s *session) window(u *url.URL) (bool, error) {
	at := s.rs.sched.RetryAt(u)
	switch {
	case at.IsZero():
		return true, nil
	case time.Until(at) > s.rs.o.MaxRetryWait:
		return false, &politeness.WindowError{URL: u.String(), Until: at}
	}
	s.deferred = &deferral{at: at}
	return false, errDeferred
}

// attempt makes one GET request to u within Timeout and reads what the
// verdict needs of the body.
func (s *session) attempt(ctx context.Context, u *url.URL, extra http.Header) *response {
	o := s.rs.o
	r := &response{url: u}
	key := politeness.Key(u)
	if ok, err := s.window(u); !ok {
		r.err = err
		return r
	}
	if !s.gate(ctx, key) {
		r.err = errDeferred
		if s.deferred == nil {
			r.err = ctx.Err()
		}
		return r
	}
	s.attempts++
	actx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	rec := &timingRec{start: time.Now()}
	actx = context.WithValue(actx, timingsKey{}, rec)
	actx = httptrace.WithClientTrace(actx, rec.trace())
	defer func() { r.timings, r.tlsErr = rec.result() }()

	// The request target is the one a browser sends for the URL
	// (urls.RequestURL): net/url alone would rewrite "/a%zz" or "/a|b".
	req, err := http.NewRequestWithContext(actx, http.MethodGet, "/", nil)
	if err != nil {
		r.err = err
		return r
	}
	req.URL = urls.RequestURL(u)
	req.Host = req.URL.Host
	req.Header.Set("User-Agent", o.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	req.Header.Set("Accept-Language", "en-US,en;q=0.9,*;q=0.5")
	for k, v := range extra {
		req.Header[k] = v
	}
	if r, ok := politeness.HostRuleFor(o.Hosts, hostKey(u)); ok {
		for k, v := range r.Headers {
			req.Header.Set(k, v)
		}
	}
	if s.jar != nil {
		for _, c := range s.jar.Cookies(u) {
			req.AddCookie(c)
		}
	}
	// Once more, as late as can be: a refusal may have paused the key
	// (or opened a window on u) while the request was being built.
	if !s.open(key) {
		s.attempts--
		r.err = errDeferred
		return r
	}
	if ok, err := s.window(u); !ok {
		s.attempts--
		r.err = err
		return r
	}
	if s.slot != nil && key == s.key {
		s.slot.Sent()
	}
	resp, err := s.rs.rt.RoundTrip(req)
	if err != nil {
		r.err = err
		return r
	}
	defer resp.Body.Close()
	s.observe(key, u, resp)
	r.status = resp.StatusCode
	r.header = resp.Header
	if cs := resp.Cookies(); len(cs) > 0 {
		if s.jar == nil {
			s.jar, _ = cookiejar.New(nil)
		}
		s.jar.SetCookies(u, cs)
		s.cookies++
	}

	limit := int64(0)
	switch {
	case r.status >= 200 && r.status < 300:
		limit = o.MaxBody
	case r.status == 403 || r.status == 429 || r.status == 503:
		limit = min(o.MaxBody, challengeBodyMax)
	}
	mediaType := httpx.MediaType(resp.Header.Get("Content-Type"))
	if limit > 0 && (mediaType == "" || httpx.IsHTMLType(mediaType)) {
		raw := &errRecorder{r: resp.Body}
		dec, decErr := httpx.Decoder(resp, raw)
		if decErr != nil {
			r.decodeErr = decErr
		} else {
			br := bufio.NewReaderSize(dec, 512)
			if mediaType == "" {
				// No Content-Type: sniff (net/http's algorithm).
				peek, _ := br.Peek(512)
				mediaType = httpx.MediaType(http.DetectContentType(peek))
			}
			if httpx.IsHTMLType(mediaType) {
				r.html = true
				r.body, r.truncated, err = httpx.ReadCapped(br, limit, resp.ContentLength)
				if err != nil {
					if raw.err != nil && raw.err != io.EOF {
						r.bodyErr = raw.err
					} else {
						// A partly decoded body is no fingerprint.
						r.decodeErr = err
					}
					r.body, r.html = nil, false
				}
			}
		}
	}
	if r.bodyErr == nil && !r.truncated {
		drain(resp, cancel)
	}
	return r
}

// drain reads a little of what is left of a body, so an HTTP/1.1
// connection goes back to the pool instead of being closed. It gives up
// after drainMax bytes or drainTime (by cancelling the attempt).
func drain(resp *http.Response, cancel context.CancelFunc) {
	if resp.ContentLength > drainMax {
		return
	}
	t := time.AfterFunc(drainTime, cancel)
	defer t.Stop()
	io.CopyN(io.Discard, resp.Body, drainMax)
}

// errRecorder remembers the error of the raw body, telling a network
// failure apart from a decoding one.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

// timingRec collects the phases of one attempt from httptrace hooks (and
// from the guard's DNS lookup). Hooks of a dial the Transport finishes
// after the request gave up can run late, hence the lock.
type timingRec struct {
	mu                  sync.Mutex
	start               time.Time
	dns, connect, tlsHS time.Duration
	firstByte           time.Duration
	connStart, tlsStart time.Time
	tlsErr              bool
}

type timingsKey struct{}

func (t *timingRec) setDNS(d time.Duration) {
	t.mu.Lock()
	t.dns += d
	t.mu.Unlock()
}

func (t *timingRec) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		ConnectStart: func(string, string) {
			t.mu.Lock()
			if t.connStart.IsZero() {
				t.connStart = time.Now()
			}
			t.mu.Unlock()
		},
		ConnectDone: func(string, string, error) {
			t.mu.Lock()
			if !t.connStart.IsZero() {
				t.connect = time.Since(t.connStart)
			}
			t.mu.Unlock()
		},
		TLSHandshakeStart: func() {
			t.mu.Lock()
			t.tlsStart = time.Now()
			t.mu.Unlock()
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			t.mu.Lock()
			if !t.tlsStart.IsZero() {
				t.tlsHS = time.Since(t.tlsStart)
			}
			if err != nil {
				t.tlsErr = true
			}
			t.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			t.mu.Lock()
			t.firstByte = time.Since(t.start)
			t.mu.Unlock()
		},
	}
}

func (t *timingRec) result() (audit.Timings, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return audit.Timings{
		DNS:       t.dns,
		Connect:   t.connect,
		TLS:       t.tlsHS,
		FirstByte: t.firstByte,
		Total:     time.Since(t.start),
	}, t.tlsErr
}
