package check

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
)

// chain is the outcome of following a URL's redirects.
type chain struct {
	redirects []audit.Redirect
	final     *url.URL  // URL of the last request
	last      *response // last response (or failed attempt)
	loop      bool      // a URL repeated
	tooMany   bool      // more than MaxRedirects
	stop      string    // why a redirect was not followed ("redirect without Location", ...)
	retryNote string    // why retrying stopped early
	condSent  bool      // the last request was conditional
	// known is set for a chain taken from the crawl (checkKnown): the
	// last response has no body, its fingerprint and challenge signal are
	// here. refetch is set by judgeOK when they cannot decide the verdict.
	known   *knownBody
	refetch bool
}

// validators of a conditional request, sent to the URL they belong to.
type validators struct {
	url          string
	etag         string
	lastModified string
}

// follow requests start and follows its redirects, up to MaxRedirects,
// recording each hop; every hop goes through the same guarded dialer, so
// the SSRF policy applies to each. retries is the retry budget per hop.
func (s *session) follow(ctx context.Context, start *url.URL, cond *validators, retries int) *chain {
	o := s.rs.o
	ch := &chain{}
	cur := start
	curStr := start.String()
	seen := map[string]int{curStr: s.cookies}
	for {
		var extra http.Header
		ch.condSent = false
		if cond != nil && curStr == cond.url {
			extra = http.Header{}
			if cond.etag != "" {
				extra.Set("If-None-Match", cond.etag)
			}
			if cond.lastModified != "" {
				extra.Set("If-Modified-Since", cond.lastModified)
			}
			ch.condSent = true
		}
		r, note := s.fetch(ctx, cur, extra, retries)
		ch.final, ch.last, ch.retryNote = cur, r, note
		if r.err != nil || r.bodyErr != nil || !isRedirect(r.status) {
			return ch
		}
		loc := r.header.Get("Location")
		if loc == "" {
			ch.stop = "redirect without Location"
			return ch
		}
		// Location is resolved by the URL parser of every other URL
		// (WHATWG, urls.Resolver): browsers follow "https:\\evil" and
		// a Location with a tab or newline the same way.
		next, err := resolveLocation(cur, loc)
		if err != nil {
			ch.stop = "invalid Location: " + truncate(err.Error(), 200)
			return ch
		}
		if sc := next.Scheme(); sc != "http" && sc != "https" {
			ch.stop = fmt.Sprintf("redirect to unsupported scheme %q", truncate(sc, 40))
			return ch
		}
		if next.Hostname() == "" {
			ch.stop = "redirect to a URL without host"
			return ch
		}
		// The hop is carried without its fragment and with its password
		// redacted (as a target is stored).
		nextStr := next.Key()
		if k, err := urls.ParseURL(nextStr); err == nil {
			next = k
		}
		ch.redirects = append(ch.redirects, audit.Redirect{From: curStr, To: nextStr, Status: r.status})
		if len(ch.redirects) > o.MaxRedirects {
			ch.tooMany = true
			return ch
		}
		// A URL seen before with the same cookies will redirect the same
		// way again. With new cookies it may not (login walls, consent
		// pages): MaxRedirects bounds those.
		if c, ok := seen[nextStr]; ok && c == s.cookies {
			ch.loop = true
			return ch
		}
		seen[nextStr] = s.cookies
		nu := next.NetURL()
		if why := s.rs.robotsSkip(ctx, nu); why != "" {
			ch.stop = "redirect not followed: " + why
			return ch
		}
		cur, curStr = nu, nextStr
	}
}

// resolveLocation resolves a Location field value against the URL of the
// response that carried it.
func resolveLocation(cur *url.URL, loc string) (urls.URL, error) {
	res, err := urls.NewResolver(cur.String())
	if err != nil {
		return urls.URL{}, err
	}
	next, _, err := res.Resolve(loc)
	return next, err
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

func isPermanent(status int) bool {
	return status == http.StatusMovedPermanently || status == http.StatusPermanentRedirect
}

// fetch makes attempts at u until one is not transient or the retry budget
// is spent. Transient are timeouts, connection errors, 429 and 5xx (bot
// challenges excepted). A 429, or a 503 with Retry-After, is a refusal:
// the Scheduler has paused the host (or the resource) and the check is
// deferred (s.deferred) to be tried again after the pause, without a
// worker waiting, while the target has retries left; a host given up
// defers it to the end of the run. Other transient failures wait here,
// with exponential backoff and jitter from RetryBase.
func (s *session) fetch(ctx context.Context, u *url.URL, extra http.Header, retries int) (*response, string) {
	o := s.rs.o
	key := politeness.Key(u)
	for attempt := 0; ; attempt++ {
		r := s.attempt(ctx, u, extra)
		if s.deferred != nil || errors.As(r.err, new(*politeness.WindowError)) {
			return r, ""
		}
		transient := false
		switch {
		case r.err != nil || r.bodyErr != nil:
			err := r.err
			if err == nil {
				err = r.bodyErr
			}
			v, _ := classifyErr(err, r.tlsErr)
			transient = v.Transient() && ctx.Err() == nil
		case r.status == http.StatusTooManyRequests || r.status >= 500 && r.status <= 599:
			if challenge(r.status, r.header, r.body) != "" {
				break
			}
			transient = true
			ra, hasRA := politeness.ParseRetryAfter(r.header.Get("Retry-After"), time.Now())
			if r.status != http.StatusTooManyRequests && !(r.status == http.StatusServiceUnavailable && hasRA) {
				break // a server error: retried here after a backoff
			}
			var note string
			if hasRA && ra > o.MaxRetryWait {
				note = fmt.Sprintf("Retry-After %s exceeds the %s cap", ra.Round(time.Second), o.MaxRetryWait)
			}
			if announced(r.header, o.MaxRetryWait) && time.Until(s.retryAt) > o.MaxRetryWait {
				// The answer's own window (its Retry-After, or a quota's
				// reset) runs past the cap: nobody waits for it. The
				// target is rate-limited, with the time to retry.
				r.notBefore = s.retryAt
				if note == "" {
					note = fmt.Sprintf("window of %s exceeds the %s cap", time.Until(s.retryAt).Round(time.Second), o.MaxRetryWait)
				}
				return r, joinReason(note, "retry after "+s.retryAt.UTC().Format(time.RFC3339))
			}
			if why := s.rs.sched.GivenUp(key); why != "" {
				if s.t == nil || s.t.last {
					return r, joinReason(note, "host given up: "+why+"; tried again at the end of the run")
				}
				s.deferred = &deferral{givenUp: why}
				return r, ""
			}
			if s.t == nil || s.t.deferrals >= retries {
				return r, note
			}
			s.t.deferrals++
			at := s.retryAt
			if until, _ := s.rs.sched.Paused(key); until.After(at) {
				at = until
			}
			s.deferred = &deferral{at: at}
			s.rs.c.log.Debug("refused: retried after the pause", "url", u.String(), "status", r.status, "at", at)
			return r, ""
		}
		if !transient || attempt >= retries {
			return r, ""
		}
		wait := backoff(o.RetryBase, attempt, o.MaxRetryWait)
		s.rs.c.log.Debug("retry", "url", u.String(), "status", r.status, "err", r.err, "wait", wait)
		if !sleep(ctx, wait) {
			return r, ""
		}
	}
}

// announced reports whether an answer names a window longer than max: a
// Retry-After, or a quota with nothing remaining until its reset.
func announced(h http.Header, max time.Duration) bool {
	now := time.Now()
	if ra, ok := politeness.ParseRetryAfter(h.Get("Retry-After"), now); ok && ra > max {
		return true
	}
	q, ok := politeness.ParseRateLimit(h, now)
	return ok && q.Remaining <= 0 && q.Reset > max
}

// backoff returns the wait before retry number attempt+1: base·2^attempt,
// jittered to between half and all of it, capped at limit.
func backoff(base time.Duration, attempt int, limit time.Duration) time.Duration {
	d := base
	for range attempt {
		if d >= limit {
			break
		}
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return half + rand.N(d-half+1)
}

// sleep waits d or until ctx is done; it reports whether the wait ran out.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
