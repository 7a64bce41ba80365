package maintain

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/store"
)

// NotifyStore is what the Notifier reads and records (store.Notifications).
type NotifyStore = store.Notifications

// Framings a Notifier may use (NotifierOptions.Framing).
const (
	FramingAuto  = "auto"
	FramingDraft = "draft"
	FramingHTTP  = "http"
)

// NotifierOptions configure a Notifier. The zero value takes the
// defaults.
type NotifierOptions struct {
	// Framing is auto (default): the draft's own framing only to a
	// receiver known to accept it (it sent us its LINK in that framing, or
	// answered an earlier draft notification), else the HTTP/1.1 framing;
	// or draft, or http, for every receiver.
	Framing string
	// HostDelay is the least time between two notifications to one host
	// (default 1s; negative: none); one at a time per host.
	HostDelay time.Duration
	// Timeout bounds one notification: connect, send, answer (default
	// 10s).
	Timeout time.Duration
	// MaxAttempts is how often a notification without an answer (network
	// error, 5xx, 429) is tried over successive runs of notify (default 3).
	MaxAttempts int
	// Hosts is the most hosts notified at once (default 4).
	Hosts int
	// DryRun lists what would be sent without sending or recording.
	DryRun bool
	// AllowPrivate lets notifications go to loopback and private
	// addresses (tests, intranets); link-local and the like never.
	AllowPrivate bool
	UserAgent    string
	Now          func() time.Time
}

// Notifier tells the registered sources of our backlinks when one of our
// pages moved (UNLINKR with the replacement, from the site run's verdict
// moved; UNLINKR without one for gone) or changed (LINKMOD, to sources
// that asked for it, when the page's fingerprint drifted since the check
// before). Each notification is recorded with its answer and never sent
// twice.
type Notifier struct {
	st NotifyStore
	o  NotifierOptions
}

// NewNotifier returns a Notifier over st.
func NewNotifier(st NotifyStore, o NotifierOptions) *Notifier {
	if o.Framing == "" {
		o.Framing = FramingAuto
	}
	if o.HostDelay == 0 {
		o.HostDelay = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.Hosts <= 0 {
		o.Hosts = 4
	}
	if o.UserAgent == "" {
		o.UserAgent = check.DefaultUserAgent
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Notifier{st: st, o: o}
}

// NotifyResult is what one Run did.
type NotifyResult struct {
	// Sent are the notifications sent in this run (or, with DryRun, that
	// would be), with their answers.
	Sent []audit.Notification
	// AlreadySent counts notifications due that an earlier run sent.
	AlreadySent int
	// GaveUp counts notifications that failed MaxAttempts times.
	GaveUp int
}

// Due returns the notifications the site run calls for, before looking
// at what was sent already.
func (n *Notifier) Due(ctx context.Context) ([]audit.Notification, []audit.Backlink, error) {
	run, err := n.st.SiteRun(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("notify: site run: %w", err)
	}
	bls, err := n.st.Backlinks(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("notify: %w", err)
	}
	var due []audit.Notification
	var from []audit.Backlink
	for _, b := range bls {
		c, err := n.st.CheckOfURL(ctx, run.ID, b.Target)
		if errors.Is(err, audit.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("notify: %w", err)
		}
		switch {
		case c.Verdict == audit.VerdictMoved && c.Replacement != "":
			due = append(due, audit.Notification{Method: MethodUnlinkR, Source: b.Source, Target: b.Target, Repl: c.Replacement, RunID: run.ID})
			from = append(from, b)
			continue
		case c.Verdict == audit.VerdictGone:
			due = append(due, audit.Notification{Method: MethodUnlinkR, Source: b.Source, Target: b.Target, RunID: run.ID})
			from = append(from, b)
			continue
		}
		if !b.LinkMod || c.SHA256 == "" {
			continue
		}
		prev, err := n.st.CheckBefore(ctx, run.ID, b.Target)
		if errors.Is(err, audit.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("notify: %w", err)
		}
		if prev.SHA256 == c.SHA256 {
			continue
		}
		m := drift.CompareFingerprints(prev.SimHash, prev.Words, c.SimHash, c.Words)
		m.Identical = false
		band := drift.Thresholds{}.Band(m)
		due = append(due, audit.Notification{Method: MethodLinkMod, Source: b.Source, Target: b.Target,
			ChangeKey: c.SHA256, RunID: run.ID, Answer: "drift " + band})
		from = append(from, b)
	}
	return due, from, nil
}

// Run sends what is due and not sent yet, per host one at a time with
// HostDelay between, and records each answer.
func (n *Notifier) Run(ctx context.Context) (NotifyResult, error) {
	var res NotifyResult
	due, from, err := n.Due(ctx)
	if err != nil {
		return res, err
	}
	draftHosts, err := n.draftHosts(ctx, from)
	if err != nil {
		return res, err
	}
	byHost := map[string][]audit.Notification{}
	var hosts []string
	for _, d := range due {
		prev, err := n.st.Notification(ctx, &d)
		switch {
		case errors.Is(err, audit.ErrNotFound):
		case err != nil:
			return res, fmt.Errorf("notify: %w", err)
		case prev.Done:
			res.AlreadySent++
			continue
		case prev.Attempts >= n.o.MaxAttempts:
			res.GaveUp++
			continue
		}
		h := hostOf(d.Source)
		if _, ok := byHost[h]; !ok {
			hosts = append(hosts, h)
		}
		byHost[h] = append(byHost[h], d)
	}
	sort.Strings(hosts)
	tr, closeTr := httpx.NewGuardedTransport(httpx.Options{AllowPrivate: n.o.AllowPrivate, ConnectTimeout: n.o.Timeout, PerHost: 1}, nil)
	defer closeTr()
	client := &http.Client{Transport: tr, Timeout: n.o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, n.o.Hosts)
	var firstErr error
	for _, h := range hosts {
		wg.Add(1)
		sem <- struct{}{}
		go func(h string, list []audit.Notification) {
			defer wg.Done()
			defer func() { <-sem }()
			for i := range list {
				if ctx.Err() != nil {
					return
				}
				if i > 0 && n.o.HostDelay > 0 {
					select {
					case <-time.After(n.o.HostDelay):
					case <-ctx.Done():
						return
					}
				}
				d := list[i]
				d.Framing = FramingHTTP
				if n.o.Framing == FramingDraft || n.o.Framing == FramingAuto && draftHosts[h] {
					d.Framing = FramingDraft
				}
				if !n.o.DryRun {
					n.send(ctx, client, tr, &d)
					if ctx.Err() != nil {
						return // interrupted: not recorded, sent again next time
					}
					if err := n.st.SaveNotification(context.WithoutCancel(ctx), &d); err != nil {
						mu.Lock()
						firstErr = errors.Join(firstErr, err)
						mu.Unlock()
					}
				}
				mu.Lock()
				res.Sent = append(res.Sent, d)
				mu.Unlock()
			}
		}(h, byHost[h])
	}
	wg.Wait()
	sort.Slice(res.Sent, func(i, j int) bool {
		a, b := res.Sent[i], res.Sent[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		return a.Method+a.Target < b.Method+b.Target
	})
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, firstErr
}

// draftHosts returns the hosts known to accept the draft framing: a
// backlink's source that spoke it to us, or a host that answered an
// earlier draft notification with a status of the draft other than 400.
func (n *Notifier) draftHosts(ctx context.Context, from []audit.Backlink) (map[string]bool, error) {
	m := map[string]bool{}
	for _, b := range from {
		if b.Draft {
			m[hostOf(b.Source)] = true
		}
	}
	prev, err := n.st.Notifications(ctx)
	if err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	for _, p := range prev {
		if p.Framing == FramingDraft && p.Status != 0 && p.Status != 400 && p.Status < 500 {
			m[hostOf(p.Source)] = true
		}
	}
	return m, nil
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Host)
}

// send makes one notification and fills in its answer.
func (n *Notifier) send(ctx context.Context, client *http.Client, tr *http.Transport, d *audit.Notification) {
	d.SentAt = n.o.Now().UTC()
	d.Attempts++
	req := Request{Method: d.Method, Source: d.Source, Target: d.Target, Repl: d.Repl}
	var status int
	var line string
	var err error
	if d.Framing == FramingDraft {
		status, line, err = n.sendDraft(ctx, tr, req)
	} else {
		status, line, err = n.sendHTTP(ctx, client, req)
	}
	var ns *notStatusError
	switch {
	case errors.As(err, &ns):
		// Answered, but not with a status line: a receiver that does not
		// speak the protocol. Asking again will not change that.
		d.Status, d.Answer, d.Done = 0, sanitizeLine("answered without a status line: "+ns.Error()), true
		return
	case err != nil:
		d.Status, d.Answer = 0, sanitizeLine("no answer: "+err.Error())
	default:
		d.Status, d.Answer = status, sanitizeLine(line)
	}
	d.Done = d.Status != 0 && d.Status < 500 && d.Status != 429
}

// notStatusError is an answer that is not a status line.
type notStatusError struct{ got string }

func (e *notStatusError) Error() string { return fmt.Sprintf("%q", truncate(e.got, 80)) }

func (n *Notifier) sendHTTP(ctx context.Context, client *http.Client, r Request) (int, string, error) {
	u, err := ValidateURL("source", r.Source)
	if err != nil {
		return 0, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, n.o.Timeout)
	defer cancel()
	// The request target is the Source-URL in absolute form: Opaque is
	// sent as it is.
	target := &url.URL{Scheme: u.Scheme, Host: u.Host, Opaque: r.Source}
	req, err := http.NewRequestWithContext(ctx, r.Method, "http://placeholder/", nil)
	if err != nil {
		return 0, "", err
	}
	req.URL, req.Host = target, u.Host
	req.Header.Set("User-Agent", n.o.UserAgent)
	req.Header.Set(HeaderSource, r.Source) // survives a proxy that rewrites the request target
	req.Header.Set(HeaderTarget, r.Target)
	if r.Repl != "" {
		req.Header.Set(HeaderReplacement, r.Repl)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", errors.New(classify(err))
	}
	defer resp.Body.Close()
	reason := resp.Header.Get(HeaderReason)
	if reason == "" {
		reason = http.StatusText(resp.StatusCode)
	}
	return resp.StatusCode, fmt.Sprintf("%d %s", resp.StatusCode, reason), nil
}

// sendDraft sends the request line of the draft's framing (then the blank
// line that ends the request) and reads the answer's status line.
func (n *Notifier) sendDraft(ctx context.Context, tr *http.Transport, r Request) (int, string, error) {
	u, err := ValidateURL("source", r.Source)
	if err != nil {
		return 0, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, n.o.Timeout)
	defer cancel()
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	conn, err := tr.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		var refused *check.RefusedError
		if errors.As(err, &refused) {
			return 0, "", refused
		}
		return 0, "", errors.New(classify(err))
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if u.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			return 0, "", fmt.Errorf("tls: %w", err)
		}
		conn = tc
	}
	if _, err := fmt.Fprintf(conn, "%s\r\n\r\n", r.String()); err != nil {
		return 0, "", errors.New(classify(err))
	}
	br := bufio.NewReaderSize(conn, 1024)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, "", fmt.Errorf("read answer: %s", classify(err))
	}
	return parseStatusLine(strings.TrimRight(string(line), "\r\n"))
}

// parseStatusLine reads "HTTP/1.1 200 Ok".
func parseStatusLine(s string) (int, string, error) {
	proto, rest, ok := strings.Cut(s, " ")
	if !ok || !strings.HasPrefix(proto, "HTTP/") {
		return 0, "", &notStatusError{got: s}
	}
	code, reason, _ := strings.Cut(rest, " ")
	st, err := strconv.Atoi(code)
	if err != nil || st < 100 || st > 999 {
		return 0, "", &notStatusError{got: s}
	}
	return st, strings.TrimSpace(code + " " + reason), nil
}

// WriteText writes a notify run for a person: each notification sent
// (or, with dryRun, that would be sent) with the receiver's answer, then
// the totals; attempts is the most tries of one notification. Every
// string from the network is written Printable.
func (r *NotifyResult) WriteText(w io.Writer, dryRun bool, attempts int) {
	for _, s := range r.Sent {
		line := s.Method + " " + s.Source + " " + s.Target
		if s.Repl != "" {
			line += " " + s.Repl
		}
		answer := s.Answer
		if dryRun {
			answer = "not sent (--dry-run)"
		}
		fmt.Fprintf(w, "%s\n  → %s [%s framing]\n", Printable(line), Printable(answer), s.Framing)
	}
	verb := "Sent"
	if dryRun {
		verb = "Would send"
	}
	fmt.Fprintf(w, "%s %d notifications; %d already sent by an earlier notify; %d given up after %d attempts.\n",
		verb, len(r.Sent), r.AlreadySent, r.GaveUp, attempts)
}
