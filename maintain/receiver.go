package maintain

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// Site is what the receiver reads of our own site (store.Site).
type Site = store.Site

// Inbox stores accepted notifications (store.Inbox).
type Inbox = store.Inbox

// ReceiverOptions configure a Receiver. The zero value is useful.
type ReceiverOptions struct {
	// NoLinkMod answers "LINK ... LINKMOD" with 207 No Linkmod (the link
	// is still recorded, without LINKMOD calls). Default: LINKMOD enabled
	// (linkrot notify sends them).
	NoLinkMod bool
	// SiteCache is how long the site's run and hosts are cached (default
	// 5s).
	SiteCache time.Duration
	// AllowPrivate accepts URLs to be fetched whose host is a loopback or
	// private address literal (tests, intranets). Link-local, unspecified
	// and multicast literals are refused regardless. Host names are judged
	// at connect time by the SSRF guard, on the resolved address.
	AllowPrivate bool
	// Now returns the time (default time.Now).
	Now func() time.Time
}

// Answer is the receiver's reply to one notification.
type Answer struct {
	Status int
	// Text explains the status in one line. It may quote the request's
	// URLs: whoever shows it must escape it.
	Text string
	// Queued is the ID of the queued notification (0 when none).
	Queued int64
}

// Receiver applies the draft's semantics (and Webmention's) to
// notifications of either framing: it validates them against our site and
// queues what is to be verified. It never fetches while the client waits.
// It is safe for concurrent use.
type Receiver struct {
	site  Site
	inbox *batcher
	o     ReceiverOptions

	mu       sync.Mutex
	cachedAt time.Time
	runID    int64
	hosts    map[string]bool
}

// NewReceiver returns a Receiver over site that queues into inbox. Close
// stops its batch writer.
func NewReceiver(site Site, inbox Inbox, o ReceiverOptions) *Receiver {
	if o.SiteCache <= 0 {
		o.SiteCache = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Receiver{site: site, inbox: newBatcher(inbox), o: o}
}

// Close flushes and stops the batch writer; notifications handled after
// Close fail with 503.
func (rc *Receiver) Close() { rc.inbox.close() }

// Queued reports a channel that receives a value after notifications were
// queued (the Verifier's wake-up).
func (rc *Receiver) Queued() <-chan struct{} { return rc.inbox.notify }

// siteState returns the site run and its hosts, cached.
func (rc *Receiver) siteState(ctx context.Context) (int64, map[string]bool, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.hosts != nil && rc.o.Now().Sub(rc.cachedAt) < rc.o.SiteCache {
		return rc.runID, rc.hosts, nil
	}
	run, err := rc.site.SiteRun(ctx)
	if err != nil {
		return 0, nil, err
	}
	hs, err := rc.site.SiteHosts(ctx, run.ID)
	if err != nil {
		return 0, nil, err
	}
	hosts := make(map[string]bool, len(hs))
	for _, h := range hs {
		hosts[h] = true
	}
	rc.runID, rc.hosts, rc.cachedAt = run.ID, hosts, rc.o.Now()
	return rc.runID, rc.hosts, nil
}

// ours reports whether u is on a host of our site.
func ours(hosts map[string]bool, u *url.URL) bool {
	n, err := urls.NormalizeURL(u.String())
	if err != nil {
		return false
	}
	nu, err := url.Parse(n)
	return err == nil && hosts[nu.Host]
}

func answer(status int, format string, args ...any) Answer {
	return Answer{Status: status, Text: fmt.Sprintf(format, args...)}
}

// Handle answers one draft request (either framing) from client. The
// statuses follow the draft's section 11 table: 416 Invalid source URI
// and 417 Invalid target URI for a URL that is malformed or is not what
// the method needs (for UNLINKR and LINKMOD, whose receiver is the source
// end: 416 when Source-URL is not on our site, 417 when our page has no
// link to Target-URL), 404 when a URL of our site names no page of the
// site's run, 207 No Linkmod for LINK ... LINKMOD when LINKMOD calls are
// disabled, 500 when the store fails. 200 means accepted: a LINK counts
// as a backlink only once its source was fetched and found to link.
func (rc *Receiver) Handle(ctx context.Context, r Request, framing, client string) Answer {
	src, err := ValidateURL("source", r.Source)
	if err != nil {
		return answer(StatusInvalidSource, "%v", err)
	}
	tgt, err := ValidateURL("target", r.Target)
	if err != nil {
		return answer(StatusInvalidTarget, "%v", err)
	}
	if r.Repl != "" {
		field := "replacement target"
		if r.Method == MethodUnlink {
			field = "replacement source"
		}
		if _, err := ValidateURL(field, r.Repl); err != nil {
			if r.Method == MethodUnlink {
				return answer(StatusInvalidSource, "%v", err)
			}
			return answer(StatusInvalidTarget, "%v", err)
		}
	}
	// Refuse at once what would be fetched from an address the SSRF
	// policy never reaches: the LINK's source (and UNLINK's replacement
	// source), the target and replacement an UNLINKR or LINKMOD has us
	// check.
	switch r.Method {
	case MethodLink, MethodUnlink:
		if why := rc.literalRefused(src); why != "" {
			return answer(StatusInvalidSource, "source: %s", why)
		}
		if r.Repl != "" {
			if u, _ := url.Parse(r.Repl); rc.literalRefused(u) != "" {
				return answer(StatusInvalidSource, "replacement source: %s", rc.literalRefused(u))
			}
		}
	case MethodUnlinkR, MethodLinkMod:
		if why := rc.literalRefused(tgt); why != "" {
			return answer(StatusInvalidTarget, "target: %s", why)
		}
		if r.Repl != "" {
			if u, _ := url.Parse(r.Repl); rc.literalRefused(u) != "" {
				return answer(StatusInvalidTarget, "replacement target: %s", rc.literalRefused(u))
			}
		}
	}
	runID, hosts, err := rc.siteState(ctx)
	if errors.Is(err, audit.ErrNotFound) {
		return answer(StatusNotFound, "no run of the site yet")
	}
	if err != nil {
		return answer(StatusInternalError, "store unavailable")
	}
	w := &audit.WireRequest{Framing: framing, Method: r.Method, Source: r.Source, Target: r.Target, Repl: r.Repl, Client: client}
	status := StatusOK
	switch r.Method {
	case MethodLink:
		if !ours(hosts, tgt) {
			return answer(StatusInvalidTarget, "target is not on this site")
		}
		if sameURL(r.Source, r.Target) {
			return answer(StatusInvalidSource, "source and target are the same URL")
		}
		if a, ok := rc.pageKnown(ctx, runID, r.Target); !ok {
			return a
		}
		w.LinkMod = r.LinkMod && !rc.o.NoLinkMod
		if r.LinkMod && rc.o.NoLinkMod {
			status = StatusNoLinkmod
		}
	case MethodUnlink:
		if !ours(hosts, tgt) {
			return answer(StatusInvalidTarget, "target is not on this site")
		}
		has, err := rc.site.HasBacklink(ctx, r.Source, r.Target)
		if err == nil && !has {
			has, err = rc.site.HasPendingLink(ctx, r.Source, r.Target)
		}
		if err != nil {
			return answer(StatusInternalError, "store unavailable")
		}
		if !has {
			return answer(StatusInvalidSource, "no link from this source to this target is known")
		}
	case MethodUnlinkR, MethodLinkMod:
		if !ours(hosts, src) {
			return answer(StatusInvalidSource, "source is not on this site")
		}
		if a, ok := rc.pageKnown(ctx, runID, r.Source); !ok {
			return a
		}
		links, err := rc.site.PageLinksTo(ctx, runID, r.Source, r.Target)
		if err != nil {
			return answer(StatusInternalError, "store unavailable")
		}
		if !links {
			return answer(StatusInvalidTarget, "the source page has no link to this target")
		}
	default:
		return answer(StatusBadRequest, "unknown method")
	}
	return rc.enqueue(ctx, w, status)
}

// HandleWebmention answers a Webmention (W3C Recommendation 2017, 3.2):
// source and target must be http(s) URLs, different, and target a page of
// our site; else 400. An accepted one is queued for asynchronous
// verification: 202.
func (rc *Receiver) HandleWebmention(ctx context.Context, source, target, client string) Answer {
	su, err := ValidateURL("source", source)
	if err != nil {
		return answer(400, "%v", err)
	}
	if why := rc.literalRefused(su); why != "" {
		return answer(400, "source: %s", why)
	}
	tgt, err := ValidateURL("target", target)
	if err != nil {
		return answer(400, "%v", err)
	}
	if sameURL(source, target) {
		return answer(400, "source and target are the same URL")
	}
	runID, hosts, err := rc.siteState(ctx)
	if errors.Is(err, audit.ErrNotFound) {
		return answer(400, "target is not a page of this site (no run yet)")
	}
	if err != nil {
		return answer(500, "store unavailable")
	}
	if !ours(hosts, tgt) {
		return answer(400, "target is not on this site")
	}
	if a, ok := rc.pageKnown(ctx, runID, target); !ok {
		if a.Status == StatusNotFound {
			a.Status = 400
		}
		return a
	}
	w := &audit.WireRequest{Framing: audit.FramingWebmention, Method: audit.WireWebmention, Source: source, Target: target, Client: client}
	return rc.enqueue(ctx, w, 202)
}

// Recheck queues a re-check of target, asked for by the dashboard.
func (rc *Receiver) Recheck(ctx context.Context, target, client string) Answer {
	u, err := ValidateURL("target", target)
	if err != nil {
		return answer(400, "%v", err)
	}
	if why := rc.literalRefused(u); why != "" {
		return answer(400, "target: %s", why)
	}
	w := &audit.WireRequest{Framing: audit.FramingDashboard, Method: audit.WireRecheck, Target: target, Client: client}
	return rc.enqueue(ctx, w, 202)
}

func (rc *Receiver) pageKnown(ctx context.Context, runID int64, u string) (Answer, bool) {
	ok, err := rc.site.PageInRun(ctx, runID, u)
	if err != nil {
		return answer(StatusInternalError, "store unavailable"), false
	}
	if !ok {
		return answer(StatusNotFound, "no such page on this site"), false
	}
	return Answer{}, true
}

func (rc *Receiver) enqueue(ctx context.Context, w *audit.WireRequest, status int) Answer {
	w.ReceivedAt = rc.o.Now().UTC()
	if err := rc.inbox.submit(ctx, w); err != nil {
		if errors.Is(err, errClosed) {
			return answer(StatusUnavailable, "shutting down")
		}
		return answer(StatusInternalError, "could not queue the notification")
	}
	a := answer(status, "accepted for verification")
	if status == StatusNoLinkmod {
		a.Text = "accepted for verification; LINKMOD calls are not enabled here"
	}
	a.Queued = w.ID
	return a
}

func sameURL(a, b string) bool {
	na, err1 := urls.NormalizeURL(a)
	nb, err2 := urls.NormalizeURL(b)
	return a == b || err1 == nil && err2 == nil && na == nb
}

// literalRefused says why u's host, when it is an IP address literal, is
// never fetched ("" when it may be, or when it is a name: the SSRF guard
// decides on the resolved address at connect time).
func (rc *Receiver) literalRefused(u *url.URL) string {
	if u == nil {
		return "not a URL"
	}
	a, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return ""
	}
	a = a.WithZone("").Unmap()
	if a.IsLoopback() || check.IsPrivateAddr(a) {
		if rc.o.AllowPrivate {
			return ""
		}
		return "loopback or private address"
	}
	if !a.IsGlobalUnicast() {
		return "an address linkrot never connects to"
	}
	return ""
}
