package check

// What other stages reuse of the checker's plumbing: the SSRF-guarded
// transport, the decoded-and-capped body reader, Retry-After parsing and
// network error classification. The archive stage (archives/memento,
// archives) fetches snapshot URLs, TimeGates and identifiers named by
// crawled pages and by archive answers, which are as untrusted as link
// targets, so it goes through the same guard and the same caps.

import (
	"context"
	"net/http"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/netguard"
	"github.com/linkrot/linkrot/politeness"
)

// NewTransport returns an HTTP transport that dials only addresses passing
// the SSRF policy of Options.AllowPrivate and Options.AllowPrivateHosts (checked on the resolved IP at
// connect time, on every request, DNS answers cached), with the connect
// timeout, per-host connection limit and header cap of opts (defaults as in
// New). It never uses a proxy. It does not follow redirects (it is a
// RoundTripper); callers re-enter it for each hop, so each hop is checked.
//
// The returned function cancels dials still in progress and closes idle
// connections; call it when done. With opts.Transport set, that transport
// is returned as is (tests), and the function only closes its idle
// connections.
func NewTransport(opts Options) (http.RoundTripper, func()) {
	c := New(opts)
	if c.o.Transport != nil {
		rt := c.o.Transport
		return rt, func() {
			if ci, ok := rt.(interface{ CloseIdleConnections() }); ok {
				ci.CloseIdleConnections()
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := newGuard(ctx, &c.o)
	tr := newTransport(g, &c.o)
	return tr, func() {
		cancel()
		tr.CloseIdleConnections()
	}
}

// NewTransportAllowing is NewTransport with a per-host exception to the
// SSRF policy: connections to the host and port of each URL in privateOK
// may go to loopback and private addresses (as with Options.AllowPrivate),
// while every other host, redirect hops and URLs named by crawled pages or
// archive answers included, stays under opts.AllowPrivate. It is for
// endpoints the user configured (an archive on the intranet or on
// loopback), so that trusting them does not open the private network to
// whatever URL the crawled pages name. Link-local, unspecified, multicast
// and broadcast addresses stay refused for every host.
//
// Entries are absolute http(s) URLs (the port defaults to the scheme's);
// others are ignored. Host names match case-insensitively, on the name
// in the URL, before resolution. With opts.AllowPrivate, no entry or
// opts.Transport set, it is NewTransport.
func NewTransportAllowing(opts Options, privateOK []string) (http.RoundTripper, func()) {
	var urls []string
	for _, raw := range privateOK {
		if _, ok := dialAddr(raw); ok {
			urls = append(urls, raw)
		}
	}
	if opts.Transport != nil || opts.AllowPrivate || len(urls) == 0 {
		return NewTransport(opts)
	}
	opts.AllowPrivateHosts = append(append([]string(nil), opts.AllowPrivateHosts...), urls...)
	return NewTransport(opts)
}

// dialAddr returns the address net/http dials for an absolute http(s)
// URL: host and port (default 80 or 443), lower-cased.
func dialAddr(raw string) (string, bool) {
	return netguard.DialAddr(raw)
}

// ReadBody reads at most max decoded bytes of resp's body: gzip and deflate
// bodies the Transport did not decode itself are decoded here, and the cap
// applies after decoding (a small compressed body cannot inflate past it).
// truncated reports that the body went on past max. An unsupported
// Content-Encoding is an error. ReadBody does not close the body.
func ReadBody(resp *http.Response, max int64) (body []byte, truncated bool, err error) {
	dec, err := decoder(resp, resp.Body)
	if err != nil {
		return nil, false, err
	}
	return readCapped(dec, max, resp.ContentLength)
}

// ParseRetryAfter reads a Retry-After value (RFC 9110 10.2.3), a number of
// seconds or an HTTP date, and returns the wait from now (0 for a date in
// the past) and whether the value was valid. It is
// politeness.ParseRetryAfter, the one reading every stage shares (a
// decimal number of seconds is accepted and rounded up to the
// millisecond).
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	return politeness.ParseRetryAfter(v, now)
}

// ClassifyError maps a failed request to the verdict and error class a
// live check would give it ("timeout", "dns", "refused", "tls", "policy"
// for the SSRF guard, ...), by error types only.
func ClassifyError(err error) (audit.Verdict, string) {
	return classifyErr(err, false)
}

// DecodeHTML returns an HTML body as UTF-8, its encoding found as the
// checker finds it: BOM, Content-Type charset, <meta>, UTF-8 sniff.
func DecodeHTML(body []byte, contentType string) []byte {
	return toUTF8(body, contentType)
}
