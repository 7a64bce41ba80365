package maintain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// Queue is the durable queue and result store of the Verifier
// (store.WireQueue).
type Queue = store.WireQueue

// Checker checks one target (check's Checker satisfies it).
type Checker interface {
	CheckOne(ctx context.Context, t check.Target) audit.Check
}

// VerifierOptions configure a Verifier. The zero value takes the
// defaults.
type VerifierOptions struct {
	// Workers is the most notifications processed at once (default 4).
	Workers int
	// HostDelay is the least time between two fetches of one host
	// (default 1s); one fetch per host at a time.
	HostDelay time.Duration
	// HostBudget is the most fetches of one host per hour (default 60):
	// beyond it, its notifications wait (so serve cannot be turned into
	// a flood against a third party).
	HostBudget int
	// MaxAttempts is how often a notification whose fetch failed
	// transiently is tried (default 3), RetryDelay the wait before the
	// next attempt (default 1m).
	MaxAttempts int
	RetryDelay  time.Duration
	// FetchTimeout bounds fetching a source (default 10s), MaxSourceBytes
	// the bytes read of it (default 1 MiB), MaxRedirects its redirects
	// (default 5).
	FetchTimeout   time.Duration
	MaxSourceBytes int64
	MaxRedirects   int
	// Poll is how often the queue is read when nothing wakes the
	// verifier (default 2s).
	Poll time.Duration
	// Transport fetches sources; nil: check's SSRF-guarded
	// transport (AllowPrivate as below).
	Transport http.RoundTripper
	// AllowPrivate lets sources on loopback and private addresses be
	// fetched (tests, intranets).
	AllowPrivate bool
	UserAgent    string
	Logger       *slog.Logger
	Now          func() time.Time
}

// Verifier works off the queued notifications: it fetches the source of
// a LINK or Webmention and stores the backlink when the source links to
// the target; removes a backlink on UNLINK; checks the target and
// replacement of an UNLINKR and records the claim with the verdicts;
// checks the target of a LINKMOD (or a dashboard re-check) and compares
// its fingerprint with the check before. Every result is stored in one
// transaction with its queue row, so a stopped Verifier leaves each
// notification either done or still queued.
type Verifier struct {
	q       Queue
	checker Checker
	o       VerifierOptions
	client  *http.Client
	closeTr func()
	log     *slog.Logger

	mu    sync.Mutex
	hosts map[string]*hostState
}

type hostState struct {
	busy    bool
	last    time.Time
	window  time.Time
	fetches int
}

// NewVerifier returns a Verifier over q, checking with checker.
func NewVerifier(q Queue, checker Checker, o VerifierOptions) *Verifier {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.HostDelay == 0 {
		o.HostDelay = time.Second
	}
	if o.HostBudget <= 0 {
		o.HostBudget = 60
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = time.Minute
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 10 * time.Second
	}
	if o.MaxSourceBytes <= 0 {
		o.MaxSourceBytes = 1 << 20
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 5
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.UserAgent == "" {
		o.UserAgent = check.DefaultUserAgent
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	v := &Verifier{q: q, checker: checker, o: o, hosts: map[string]*hostState{}, log: o.Logger}
	if v.log == nil {
		v.log = slog.New(slog.DiscardHandler)
	}
	tr := o.Transport
	v.closeTr = func() {}
	if tr == nil {
		gt, closeFn := httpx.NewGuardedTransport(httpx.Options{AllowPrivate: o.AllowPrivate, PerHost: 2}, nil)
		tr, v.closeTr = gt, closeFn
	}
	v.client = &http.Client{
		Transport: tr,
		Timeout:   o.FetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > o.MaxRedirects {
				return fmt.Errorf("more than %d redirects", o.MaxRedirects)
			}
			if _, err := ValidateURL("redirect", req.URL.String()); err != nil {
				return err
			}
			return nil
		},
	}
	return v
}

// Run processes the queue until ctx is done, then waits up to drain for
// the notifications in progress (their results are stored); what is
// still in progress after drain is abandoned and stays queued for the next
// start. wake, when not nil, wakes Run early (Receiver.Queued).
func (v *Verifier) Run(ctx context.Context, wake <-chan struct{}, drain time.Duration) error {
	defer v.closeTr()
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	var wg sync.WaitGroup
	var busyMu sync.Mutex
	busy := map[int64]bool{}
	slots := make(chan struct{}, v.o.Workers)
	done := make(chan struct{}, v.o.Workers)
	tick := time.NewTicker(v.o.Poll)
	defer tick.Stop()
	for {
		free := v.o.Workers - len(slots)
		if free > 0 {
			busyMu.Lock()
			b := make(map[int64]bool, len(busy))
			for id := range busy {
				b[id] = true
			}
			busyMu.Unlock()
			reqs, err := v.q.QueuedWire(ctx, v.o.Now(), free+256, b) // look past notifications of busy hosts
			if err != nil && ctx.Err() == nil {
				v.log.Warn("read queue", "err", err)
			}
			for _, r := range reqs {
				if len(slots) == cap(slots) {
					break
				}
				host := fetchHost(r)
				wait, ok := v.takeHost(host)
				if !ok {
					if wait > 0 {
						// Budget spent: wait in the queue, not in memory.
						v.q.DeferWire(ctx, r.ID, v.o.Now().Add(wait), false, "per-host budget: waiting")
					}
					continue
				}
				slots <- struct{}{}
				busyMu.Lock()
				busy[r.ID] = true
				busyMu.Unlock()
				wg.Add(1)
				go func(r *audit.WireRequest) {
					defer wg.Done()
					v.process(workCtx, r)
					v.releaseHost(host)
					busyMu.Lock()
					delete(busy, r.ID)
					busyMu.Unlock()
					<-slots
					select {
					case done <- struct{}{}:
					default:
					}
				}(r)
			}
		}
		select {
		case <-ctx.Done():
			finished := make(chan struct{})
			go func() { wg.Wait(); close(finished) }()
			select {
			case <-finished:
			case <-time.After(drain):
				cancelWork()
				<-finished
			}
			return nil
		case <-wake:
		case <-done:
		case <-tick.C:
		}
	}
}

func fetchHost(r *audit.WireRequest) string {
	u := r.Target
	if r.Method == audit.WireLINK || r.Method == audit.WireWebmention {
		u = r.Source
	}
	if r.Method == audit.WireUNLINK && r.Repl != "" {
		u = r.Repl
	}
	if p, err := url.Parse(u); err == nil {
		return strings.ToLower(p.Host)
	}
	return u
}

// takeHost reserves host for one fetch: false while it is busy or its
// delay has not passed (wait 0), or when its hourly budget is spent (wait:
// until the budget renews).
func (v *Verifier) takeHost(host string) (time.Duration, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.o.Now()
	h := v.hosts[host]
	if h == nil {
		h = &hostState{window: now}
		v.hosts[host] = h
	}
	if now.Sub(h.window) >= time.Hour {
		h.window, h.fetches = now, 0
	}
	if h.busy || now.Sub(h.last) < v.o.HostDelay {
		return 0, false
	}
	if h.fetches >= v.o.HostBudget {
		return h.window.Add(time.Hour).Sub(now), false
	}
	h.busy, h.fetches = true, h.fetches+1
	return 0, true
}

func (v *Verifier) releaseHost(host string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if h := v.hosts[host]; h != nil {
		h.busy, h.last = false, v.o.Now()
	}
}

// process handles one notification and stores its result, unless ctx
// was cancelled meanwhile (then it stays queued).
func (v *Verifier) process(ctx context.Context, r *audit.WireRequest) {
	state, result, eff, retry := v.work(ctx, r)
	if ctx.Err() != nil {
		return // abandoned at shutdown: still queued
	}
	store := context.WithoutCancel(ctx)
	if retry && r.Attempts+1 < v.o.MaxAttempts {
		if err := v.q.DeferWire(store, r.ID, v.o.Now().Add(v.o.RetryDelay), true, result); err != nil {
			v.log.Warn("defer notification", "id", r.ID, "err", err)
		}
		return
	}
	if err := v.q.FinishWire(store, r.ID, state, result, eff, v.o.Now()); err != nil {
		v.log.Warn("store notification result", "id", r.ID, "err", err)
	}
}

// work returns the outcome of r; retry is set for a transient failure.
func (v *Verifier) work(ctx context.Context, r *audit.WireRequest) (state, result string, eff store.WireEffect, retry bool) {
	now := v.o.Now().UTC()
	switch r.Method {
	case audit.WireLINK, audit.WireWebmention:
		res := v.VerifySource(ctx, r.Source, r.Target)
		switch {
		case res.Links:
			via := "link"
			if r.Method == audit.WireWebmention {
				via = "webmention"
			}
			eff.UpsertBacklink = &audit.Backlink{Source: r.Source, Target: r.Target, Via: via, LinkMod: r.LinkMod,
				Draft: r.Framing == audit.FramingDraft, Client: r.Client, VerifiedAt: now}
			return audit.WireDone, "verified: the source links to the target", eff, false
		case res.Transient:
			return audit.WireFailed, res.Reason, eff, true
		default:
			// Webmention 3.2.2: a source that no longer links (or is
			// gone) deletes what an earlier mention stored.
			eff.DeleteBacklinks = [][2]string{{r.Source, r.Target}}
			return audit.WireRejected, res.Reason, eff, false
		}
	case audit.WireUNLINK:
		eff.DeleteBacklinks = [][2]string{{r.Source, r.Target}}
		if r.Repl == "" {
			return audit.WireDone, "backlink removed", eff, false
		}
		res := v.VerifySource(ctx, r.Repl, r.Target)
		if res.Transient {
			return audit.WireFailed, "replacement source: " + res.Reason, eff, true
		}
		if !res.Links {
			return audit.WireDone, "backlink removed; replacement source not stored: " + res.Reason, eff, false
		}
		eff.UpsertBacklink = &audit.Backlink{Source: r.Repl, Target: r.Target, Via: "link", Draft: r.Framing == audit.FramingDraft,
			Client: r.Client, VerifiedAt: now}
		return audit.WireDone, "backlink moved to the replacement source (verified)", eff, false
	case audit.WireUNLINKR:
		return v.unlinkr(ctx, r, now)
	case audit.WireLINKMOD, audit.WireRecheck:
		reason := audit.LiveLinkmod
		if r.Method == audit.WireRecheck {
			reason = audit.LiveRecheck
		}
		lc := v.liveCheck(ctx, reason, r.Target, now)
		v.compare(ctx, &lc)
		eff.LiveChecks = []audit.LiveCheck{lc}
		if lc.Verdict.Transient() {
			return audit.WireFailed, fmt.Sprintf("check: %s", lc.Verdict), eff, true
		}
		res := fmt.Sprintf("checked: %s (%d)", lc.Verdict, lc.Status)
		if lc.Band != "" {
			res += ", drift " + lc.Band
		}
		return audit.WireDone, res, eff, false
	}
	return audit.WireRejected, "unknown method", eff, false
}

// unlinkr checks the claim of an UNLINKR: never applied blindly.
func (v *Verifier) unlinkr(ctx context.Context, r *audit.WireRequest, now time.Time) (string, string, store.WireEffect, bool) {
	var eff store.WireEffect
	run, err := v.q.SiteRun(ctx)
	if err != nil {
		return audit.WireFailed, "no site run", eff, true
	}
	if ok, err := v.q.PageLinksTo(ctx, run.ID, r.Source, r.Target); err != nil || !ok {
		return audit.WireRejected, "the page no longer links to the target", eff, false
	}
	tc := v.liveCheck(ctx, audit.LiveUnlinkrTarget, r.Target, now)
	eff.LiveChecks = append(eff.LiveChecks, tc)
	claim := &audit.Claim{RunID: run.ID, Source: r.Source, Target: r.Target, Claimant: r.Client, ClaimedAt: r.ReceivedAt,
		Replacement: r.Repl, TargetVerdict: tc.Verdict, TargetStatus: tc.Status}
	if tc.Verdict.Transient() {
		return audit.WireFailed, fmt.Sprintf("target check: %s", tc.Verdict), eff, true
	}
	targetGone := tc.Verdict.Broken() || tc.Verdict == audit.VerdictMoved ||
		(tc.Verdict == audit.VerdictRedirected && r.Repl != "" && sameURL(tc.FinalURL, r.Repl))
	replOK := true
	if r.Repl != "" {
		rc := v.liveCheck(ctx, audit.LiveUnlinkrReplacement, r.Repl, now)
		eff.LiveChecks = append(eff.LiveChecks, rc)
		claim.ReplacementVerdict = rc.Verdict
		replOK = rc.Verdict == audit.VerdictOK || rc.Verdict == audit.VerdictRedirected || rc.Verdict == audit.VerdictMoved
	}
	switch {
	case !targetGone:
		claim.Note = fmt.Sprintf("not borne out: the target answers %s (%d)", tc.Verdict, tc.Status)
	case !replOK:
		claim.Note = fmt.Sprintf("target %s (%d), but the replacement is %s: not proposed", tc.Verdict, tc.Status, claim.ReplacementVerdict)
	default:
		claim.Confirmed = true
		claim.Note = fmt.Sprintf("confirmed: target %s (%d)", tc.Verdict, tc.Status)
		if r.Repl != "" {
			claim.Note += fmt.Sprintf(", replacement %s", claim.ReplacementVerdict)
		}
	}
	eff.Claim = claim
	return audit.WireDone, claim.Note, eff, false
}

func (v *Verifier) liveCheck(ctx context.Context, reason, u string, now time.Time) audit.LiveCheck {
	c := v.checker.CheckOne(ctx, check.Target{URL: normalizedOr(u)})
	return audit.LiveCheck{Reason: reason, URL: normalizedOr(u), Verdict: c.Verdict, Status: c.Status, FinalURL: c.FinalURL,
		Detail: c.Reason, SHA256: c.SHA256, SimHash: c.SimHash, Words: c.Words, CheckedAt: now}
}

// compare sets the drift band of lc against the check before it (serve's
// last live check with a fingerprint, else the latest run's).
func (v *Verifier) compare(ctx context.Context, lc *audit.LiveCheck) {
	if lc.SHA256 == "" {
		return
	}
	var prevSHA string
	var prevHash uint64
	var prevWords int
	if lcs, err := v.q.LiveChecks(ctx, lc.URL, 20); err == nil {
		for _, p := range lcs {
			if p.SHA256 != "" {
				prevSHA, prevHash, prevWords = p.SHA256, p.SimHash, p.Words
				break
			}
		}
	}
	if prevSHA == "" {
		if c, err := v.q.CheckBefore(ctx, 0, lc.URL); err == nil {
			prevSHA, prevHash, prevWords = c.SHA256, c.SimHash, c.Words
		}
	}
	if prevSHA == "" {
		return
	}
	lc.PrevSHA256 = prevSHA
	if prevSHA == lc.SHA256 {
		lc.Band = audit.BandUnchanged
		return
	}
	m := drift.CompareFingerprints(prevHash, prevWords, lc.SimHash, lc.Words)
	m.Identical = false // the bytes differ
	lc.Band = drift.Thresholds{}.Band(m)
}

// SourceResult is what fetching a source said.
type SourceResult struct {
	Links     bool   // the source links to the target
	Transient bool   // could not tell now (timeout, 5xx, 429): try again later
	Status    int    // the source's status, 0 without an answer
	Reason    string // one line
}

// VerifySource fetches source (SSRF-guarded, bounded in time, bytes and
// redirects) and reports whether it links to target, as Webmention 3.2.2
// asks: an HTML source must hold the exact target URL in an attribute
// that links (href, src, cite, ...), resolved against the document; other
// text must contain it.
func (v *Verifier) VerifySource(ctx context.Context, source, target string) SourceResult {
	if _, err := ValidateURL("source", source); err != nil {
		return SourceResult{Reason: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, v.o.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
	if err != nil {
		return SourceResult{Reason: "bad source URL"}
	}
	req.Header.Set("User-Agent", v.o.UserAgent)
	req.Header.Set("Accept", "text/html, application/xhtml+xml;q=0.9, text/plain;q=0.5, */*;q=0.1")
	resp, err := v.client.Do(req)
	if err != nil {
		var refused *check.RefusedError
		if errors.As(err, &refused) {
			return SourceResult{Reason: "source refused: " + refused.Reason}
		}
		var ue *URLError
		if errors.As(err, &ue) {
			return SourceResult{Reason: ue.Error()}
		}
		return SourceResult{Transient: true, Reason: "fetch source: " + classify(err)}
	}
	defer resp.Body.Close()
	res := SourceResult{Status: resp.StatusCode}
	switch {
	case resp.StatusCode == 429 || resp.StatusCode >= 500:
		res.Transient, res.Reason = true, fmt.Sprintf("source answered %d", resp.StatusCode)
		return res
	case resp.StatusCode >= 300:
		res.Reason = fmt.Sprintf("source answered %d", resp.StatusCode)
		return res
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, v.o.MaxSourceBytes))
	if err != nil {
		res.Transient, res.Reason = true, "read source: "+classify(err)
		return res
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/html" || ct == "application/xhtml+xml" || ct == "" && bytes.Contains(bytes.ToLower(body[:min(len(body), 1024)]), []byte("<html")) {
		res.Links = htmlLinksTo(body, resp.Request.URL, target)
	} else {
		res.Links = bytes.Contains(body, []byte(target))
	}
	if res.Links {
		res.Reason = "the source links to the target"
	} else {
		res.Reason = "the source does not link to the target"
	}
	return res
}

func classify(err error) string {
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return "connection failed"
}

// linkAttrs are the attributes whose URL makes a link for Webmention.
var linkAttrs = map[string]bool{"href": true, "src": true, "cite": true, "data": true, "poster": true, "action": true}

// htmlLinksTo reports whether the HTML body (fetched from base) has an
// element whose linking attribute, resolved against the document's base,
// is target (exactly, or equal after normalization).
func htmlLinksTo(body []byte, base *url.URL, target string) bool {
	want := normalizedOr(target)
	z := html.NewTokenizer(bytes.NewReader(body))
	baseSet := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			for hasAttr {
				var k, val []byte
				k, val, hasAttr = z.TagAttr()
				key := string(k)
				if string(name) == "base" && key == "href" && !baseSet {
					if b, err := base.Parse(strings.TrimSpace(string(val))); err == nil {
						base, baseSet = b, true
					}
					continue
				}
				if !linkAttrs[key] {
					continue
				}
				raw := strings.TrimSpace(string(val))
				if raw == target {
					return true
				}
				if u, err := base.Parse(raw); err == nil {
					if s := u.String(); s == target || normalizedOr(s) == want {
						return true
					}
				}
			}
		}
	}
}

func normalizedOr(raw string) string {
	if n, err := urls.NormalizeURL(raw); err == nil {
		return n
	}
	return raw
}
