package httpx

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/linkrot/linkrot/netguard"
)

// Defaults of Options, the live checker's.
const (
	defaultPerHost        = 4
	defaultConnectTimeout = 10 * time.Second
)

// Options configure a guarded transport. The zero value is useful.
type Options struct {
	// AllowPrivate lets the transport connect to loopback and private
	// addresses. Link-local (cloud metadata), unspecified, multicast and
	// broadcast addresses are refused regardless.
	AllowPrivate bool
	// AllowPrivateHosts names the only hosts that may be on loopback or
	// private addresses when AllowPrivate is off (see
	// netguard.NewAllowlist). Decided on the resolved address at dial
	// time, on every request.
	AllowPrivateHosts []string
	// Resolver resolves host names (default net.DefaultResolver). Answers
	// are cached for the transport's life.
	Resolver netguard.Resolver
	// ConnectTimeout bounds DNS plus TCP connect, and the TLS handshake
	// (default 10s).
	ConnectTimeout time.Duration
	// PerHost is the most connections to one host (default 4).
	PerHost int
	// OnLookup, if set, receives the duration of each DNS lookup.
	OnLookup func(ctx context.Context, d time.Duration)
	// Transport replaces the guarded transport (tests only): NewTransport
	// returns it as is; the SSRF policy does not apply to it.
	Transport http.RoundTripper
}

func (o Options) withDefaults() Options {
	if o.PerHost <= 0 {
		o.PerHost = defaultPerHost
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = defaultConnectTimeout
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	return o
}

func (o Options) guard() netguard.Options {
	return netguard.Options{
		AllowPrivate:   o.AllowPrivate,
		Allow:          netguard.NewAllowlist(o.AllowPrivateHosts...),
		Resolver:       o.Resolver,
		ConnectTimeout: o.ConnectTimeout,
		OnLookup:       o.OnLookup,
	}
}

// NewDialer returns the SSRF guard of o (defaults filled in): every dial
// resolves the host and connects only to an address the policy allows.
// Dials still in progress end when ctx is done.
func NewDialer(ctx context.Context, o Options) *netguard.Dialer {
	return netguard.NewDialer(ctx, o.withDefaults().guard())
}

// NewPool returns the pooled transport that dials through dial:
// keep-alive, HTTP/2 where the server offers it, at most o.PerHost
// connections per host, o.ConnectTimeout for the TLS handshake, response
// headers capped at 1 MiB, never a proxy. It does not follow redirects
// (it is a RoundTripper): callers re-enter it for each hop, so each hop
// is dialed through the guard.
func NewPool(dial func(ctx context.Context, network, addr string) (net.Conn, error), o Options) *http.Transport {
	o = o.withDefaults()
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            dial,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           0, // no limit; per host below
		MaxIdleConnsPerHost:    o.PerHost,
		MaxConnsPerHost:        o.PerHost,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    o.ConnectTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// NewTransport returns a transport that dials only addresses passing the
// SSRF policy of o (checked on the resolved IP at connect time, on every
// request, DNS answers cached), pooled as NewPool describes.
//
// The returned function cancels dials still in progress and closes idle
// connections; call it when done. With o.Transport set, that transport is
// returned as is, and the function only closes its idle connections.
func NewTransport(o Options) (http.RoundTripper, func()) {
	if rt := o.Transport; rt != nil {
		return rt, func() {
			if ci, ok := rt.(interface{ CloseIdleConnections() }); ok {
				ci.CloseIdleConnections()
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tr := NewPool(NewDialer(ctx, o).DialContext, o)
	return tr, func() {
		cancel()
		tr.CloseIdleConnections()
	}
}

// NewTransportAllowing is NewTransport with a per-host exception to the
// SSRF policy: connections to the host and port of each URL in privateOK
// may go to loopback and private addresses (as with o.AllowPrivate), while
// every other host, redirect hops and URLs named by crawled pages or
// archive answers included, stays under o.AllowPrivate. It is for
// endpoints the user configured (an archive on the intranet or on
// loopback), so that trusting them does not open the private network to
// whatever URL the crawled pages name. Link-local, unspecified, multicast
// and broadcast addresses stay refused for every host.
//
// Entries are absolute http(s) URLs (the port defaults to the scheme's);
// others are ignored. Host names match case-insensitively, on the name in
// the URL, before resolution. With o.AllowPrivate, no entry or o.Transport
// set, it is NewTransport.
func NewTransportAllowing(o Options, privateOK []string) (http.RoundTripper, func()) {
	var allowed []string
	for _, raw := range privateOK {
		if _, ok := netguard.DialAddr(raw); ok {
			allowed = append(allowed, raw)
		}
	}
	if o.Transport != nil || o.AllowPrivate || len(allowed) == 0 {
		return NewTransport(o)
	}
	o.AllowPrivateHosts = append(append([]string(nil), o.AllowPrivateHosts...), allowed...)
	return NewTransport(o)
}

// NewGuardedTransport returns an *http.Transport whose every dial goes
// through the SSRF guard of o, pooled as NewPool describes. Loopback and
// private addresses are allowed for a dial when o.AllowPrivate is set, its
// address is on o.AllowPrivateHosts, or privateOK (which may be nil)
// reports true for it: "host:port" as net/http dials it, the host
// lower-cased, an IPv6 literal in brackets. Link-local, unspecified,
// multicast and broadcast addresses are refused for every address.
// o.Transport is ignored: the result is always guarded.
//
// Callers may tune the returned transport's pool and timeouts before first
// use, but must keep its DialContext and Proxy. The returned function
// cancels dials in progress and closes idle connections.
func NewGuardedTransport(o Options, privateOK func(addr string) bool) (*http.Transport, func()) {
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	gopts := o.guard()
	strict := netguard.NewDialer(ctx, gopts)
	tr := NewPool(strict.DialContext, o)
	if privateOK != nil && !o.AllowPrivate {
		lenientOpts := gopts
		lenientOpts.AllowPrivate = true
		lenient := netguard.NewDialer(ctx, lenientOpts)
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if privateOK(strings.ToLower(addr)) {
				return lenient.DialContext(ctx, network, addr)
			}
			return strict.DialContext(ctx, network, addr)
		}
	}
	return tr, func() {
		cancel()
		tr.CloseIdleConnections()
	}
}
