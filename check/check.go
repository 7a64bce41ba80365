package check

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// deferral says a check was cut short to be tried again: after a pause
// (at), or once the run is otherwise over, its host having been given up
// (givenUp is why).
type deferral struct {
	at      time.Time
	givenUp string
}

// check checks one target from start to verdict, within slot (the slot of
// its key, nil when the Known needs no request: one is acquired if a
// request turns out to be needed). The slot is released as soon as the
// last request is made, before parsing. A 429 (or a 503 with Retry-After)
// with retries left, or a host given up, ends the check with a deferral
// instead of a verdict; t.attempts and t.deferrals then carry over.
func (rs *runState) check(ctx context.Context, t *Target, slot *politeness.Slot) (audit.Check, *deferral) {
	u, reason := rs.c.precheck(t.URL)
	if reason != "" {
		return skipped(*t, reason), nil
	}
	s := &session{rs: rs, t: t, key: politeness.Key(u), slot: slot}
	defer s.release()
	if c, ok := rs.checkKnown(ctx, s, *t, u); ok {
		return c, nil // judged from the crawl's response (known.go)
	}
	if s.deferred != nil {
		t.attempts += s.attempts
		return audit.Check{}, s.deferred
	}
	c := audit.Check{TargetID: t.ID, URL: t.URL, CheckedAt: time.Now().UTC()}
	ch := s.follow(ctx, u, conditional(*t), rs.o.Retries)
	if s.deferred != nil {
		t.attempts += s.attempts
		return audit.Check{}, s.deferred
	}
	c.Attempts = t.attempts + s.attempts
	rs.judge(ctx, &c, *t, u, ch, s)
	if s.deferred != nil { // the soft-404 probe met a pause
		t.attempts += s.attempts
		return audit.Check{}, s.deferred
	}
	return c, nil
}

// conditional returns the validators to send for t, or nil. They are sent
// only for a previous verdict that is not transient and not one that had
// no response, and never when anchors are wanted (a 304 has no body).
func conditional(t Target) *validators {
	p := t.Previous
	if p == nil || t.WantAnchors || p.Verdict.Transient() || (p.ETag == "" && p.LastModified == "") {
		return nil
	}
	switch p.Verdict {
	case audit.VerdictSkipped, audit.VerdictRefused, "":
		return nil
	}
	u := p.FinalURL
	if u == "" {
		u = t.URL
	}
	return &validators{url: u, etag: p.ETag, lastModified: p.LastModified}
}

// judge turns the redirect chain into the verdict and its evidence.
func (rs *runState) judge(ctx context.Context, c *audit.Check, t Target, start *url.URL, ch *chain, s *session) {
	r := ch.last
	c.Redirects = ch.redirects
	c.Timings = r.timings
	if r.err == nil {
		c.Status = r.status
		c.FinalURL = ch.final.String()
		c.Headers = evidenceHeaders(r.header)
		c.ContentType = truncate(r.header.Get("Content-Type"), 200)
		c.ETag = truncate(r.header.Get("ETag"), 200)
		c.LastModified = truncate(r.header.Get("Last-Modified"), 100)
		c.Truncated = r.truncated
	}
	switch {
	case ch.loop:
		c.Verdict = audit.VerdictRedirectLoop
		c.Reason = "redirect loop: " + truncate(ch.redirects[len(ch.redirects)-1].To, 300) + " was already requested"
		return
	case ch.tooMany:
		c.Verdict = audit.VerdictTooManyRedirects
		c.Reason = fmt.Sprintf("more than %d redirects", rs.o.MaxRedirects)
		return
	case errors.As(r.err, new(*politeness.WindowError)):
		c.Verdict = audit.VerdictRateLimited
		c.Reason = "not checked: " + truncate(r.err.Error(), 400)
		return
	case r.err != nil:
		c.Verdict, c.ErrorClass = classifyErr(r.err, r.tlsErr)
		c.Reason = truncate(r.err.Error(), 300)
		return
	case r.bodyErr != nil:
		c.Verdict, c.ErrorClass = classifyErr(r.bodyErr, false)
		c.Reason = "reading body: " + truncate(r.bodyErr.Error(), 300)
		return
	case ch.condSent && r.status == http.StatusNotModified:
		reuse(c, t.Previous, r.header)
		return
	}
	if sig := ch.challenge(); sig != "" {
		c.Verdict = audit.VerdictBlocked
		c.Reason = "bot challenge: " + sig
		return
	}
	status := r.status
	switch {
	case status >= 200 && status <= 299:
		rs.judgeOK(ctx, c, t, start, ch, s)
	case status == http.StatusNotFound:
		c.Verdict = audit.VerdictNotFound
	case status == http.StatusGone:
		c.Verdict = audit.VerdictGone
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		c.Verdict = audit.VerdictBlocked
		c.Reason = fmt.Sprintf("status %d: access denied to linkrot, not necessarily to readers", status)
	case status == 999:
		c.Verdict = audit.VerdictBlocked
		c.Reason = "status 999: bot wall (LinkedIn and others)"
	case status == http.StatusTooManyRequests,
		status == http.StatusServiceUnavailable && !r.notBefore.IsZero():
		// A 503 whose Retry-After was not waited for asked to be asked
		// later: not checked, not broken.
		c.Verdict = audit.VerdictRateLimited
		c.Reason = joinReason(fmt.Sprintf("status %d after %d attempts", status, c.Attempts), ch.retryNote)
	case status >= 400 && status <= 499:
		c.Verdict = audit.VerdictClientError
	case status >= 500 && status <= 599:
		c.Verdict = audit.VerdictServerError
		c.Reason = joinReason(fmt.Sprintf("status %d after %d attempts", status, c.Attempts), ch.retryNote)
	case status == http.StatusNotModified:
		c.Verdict = audit.VerdictOK
		c.Reason = "304 Not Modified to an unconditional request"
	case status == http.StatusMultipleChoices && ch.stop == "":
		c.Verdict = audit.VerdictOK
		c.Reason = "300 Multiple Choices"
	case ch.stop != "":
		c.Verdict = audit.VerdictClientError
		c.Reason = ch.stop
	default:
		c.Verdict = audit.VerdictClientError
		c.Reason = fmt.Sprintf("unexpected status %d", status)
	}
}

// judgeOK judges a chain ending in 2xx: ok without redirects; moved when
// the first hop is permanent (301, 308), with the URL after the leading
// run of permanent hops as replacement (a temporary hop after it is the
// new URL's business, not the link's); redirected when the first hop is
// temporary (302, 303, 307), whatever follows. Soft-404 detection may then
// overrule: redirect-to-root, or the soft-404 classifier's soft-404 or
// parked (soft404_classify.go).
func (rs *runState) judgeOK(ctx context.Context, c *audit.Check, t Target, start *url.URL, ch *chain, s *session) {
	r := ch.last
	switch {
	case len(ch.redirects) == 0:
		c.Verdict = audit.VerdictOK
	case isPermanent(ch.redirects[0].Status):
		c.Verdict = audit.VerdictMoved
		for _, h := range ch.redirects {
			if !isPermanent(h.Status) {
				break
			}
			c.Replacement = h.To
		}
		c.Reason = fmt.Sprintf("permanent redirect (%d) to %s", ch.redirects[0].Status, truncate(c.Replacement, 300))
	default:
		c.Verdict = audit.VerdictRedirected
		c.Reason = fmt.Sprintf("temporary redirect (%d)", ch.redirects[0].Status)
	}
	if r.decodeErr != nil {
		c.Reason = joinReason(c.Reason, "body not decoded: "+truncate(r.decodeErr.Error(), 200))
	}
	toRoot := !rs.o.DisableSoft404 && redirectToRoot(start, ch.final, ch.redirects)
	isPage := r.html && (r.body != nil || ch.known != nil)
	var (
		probe  *probeResult
		shared bool // the probe of another directory (see runState.probe)
	)
	if isPage && !toRoot && !rs.o.DisableSoft404 && !ch.offline() {
		probe, shared = rs.probe(ctx, start)
		if probe.deferred != nil {
			s.deferred = probe.deferred
			return
		}
	}
	if ch.known != nil && !ch.known.decides(probe, start, ch.final, rs.o.Soft404Threshold) {
		ch.refetch = true // the slot is kept for the fetch
		return
	}
	s.release() // no more requests

	var fp pageFingerprint
	if isPage {
		fp = ch.fingerprint(t.WantAnchors)
		c.SHA256, c.SimHash, c.Words = fp.sha256, fp.simhash, fp.count
		if t.WantAnchors {
			c.Anchors = fp.anchors
		}
	}
	switch {
	case toRoot:
		if isPage && rs.parkedRoot(c, t, start, ch, &fp) {
			break
		}
		c.Verdict = audit.VerdictRedirectToRoot
		c.Replacement = ""
		c.Reason = "deep URL redirected to the site's home " + truncate(ch.final.String(), 300)
	case isPage && !rs.o.DisableSoft404:
		rs.soft404(ctx, c, t, probe, shared, start, ch, &fp)
	}
}

// reuse makes c the previous check confirmed by a 304 Not Modified.
func reuse(c *audit.Check, prev *audit.Check, h http.Header) {
	out := *prev
	out.RunID = 0
	out.TargetID, out.URL = c.TargetID, c.URL
	out.Attempts, out.Timings, out.CheckedAt = c.Attempts, c.Timings, c.CheckedAt
	out.ErrorClass = ""
	out.Reused = true
	out.ReusedFrom = prev.RunID
	out.Redirects = slices.Clone(prev.Redirects)
	out.Headers = maps.Clone(prev.Headers)
	out.Anchors = nil
	if prev.Soft404 != nil {
		e := *prev.Soft404
		e.Signals = slices.Clone(e.Signals)
		out.Soft404 = &e
	}
	if et := h.Get("ETag"); et != "" {
		out.ETag = truncate(et, 200)
	}
	out.Reason = joinReason(fmt.Sprintf("304 Not Modified: verdict of run %d reused", prev.RunID), prev.Reason)
	*c = out
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// evidenceFields are the response header fields kept in Check.Headers.
var evidenceFields = []string{
	"Content-Type", "Content-Length", "Content-Encoding", "Location", "Retry-After",
	"Server", "ETag", "Last-Modified", "Link", "Memento-Datetime", "Cache-Control",
	"Cf-Mitigated", "X-Amzn-Waf-Action", "X-Vercel-Mitigated",
}

func evidenceHeaders(h http.Header) map[string]string {
	var m map[string]string
	for _, k := range evidenceFields {
		if v := h.Values(k); len(v) > 0 {
			if m == nil {
				m = map[string]string{}
			}
			m[k] = truncate(strings.Join(v, ", "), 512)
		}
	}
	return m
}

// redirectToRoot reports whether a redirected target is a deep URL that
// landed on a site's home or a shallow index: a likely soft 404 (a removed
// page sent to the front page). Deep: the path has a segment that is
// neither an index file name nor a locale code ("/blog/post", "/about").
// Home or shallow index: "/", "/index.html", "/en/", "/en-us/index.php"
// on any host. "/en" to "/en/" or "/index.html" to "/" is not flagged.
func redirectToRoot(start, final *url.URL, redirects []audit.Redirect) bool {
	if len(redirects) == 0 {
		return false
	}
	deep := false
	for _, s := range segments(start.Path) {
		if !isIndexName(s) && !isLocale(s) {
			deep = true
			break
		}
	}
	if !deep {
		return false
	}
	return isHome(final.Path)
}

// isHome reports whether an URL path is a home page or a shallow index:
// "/", "/index.html", "/en/", "/en-us/index.php".
func isHome(path string) bool {
	segs := segments(path)
	switch len(segs) {
	case 0:
		return true
	case 1:
		return isIndexName(segs[0]) || isLocale(segs[0])
	case 2:
		return isLocale(segs[0]) && isIndexName(segs[1])
	}
	return false
}

func segments(p string) []string {
	var out []string
	for s := range strings.SplitSeq(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func isIndexName(s string) bool {
	switch strings.ToLower(s) {
	case "index.html", "index.htm", "index.php", "index.asp", "index.aspx", "index.jsp",
		"index.shtml", "index.cfm", "default.asp", "default.aspx", "default.htm",
		"default.html", "home", "home.html", "home.htm", "home.php", "start", "welcome":
		return true
	}
	return false
}
