package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"
)

// defaultConnectTimeout bounds DNS plus TCP connect when
// Options.ConnectTimeout is zero.
const defaultConnectTimeout = 10 * time.Second

// Resolver looks up the addresses of a host. *net.Resolver satisfies it;
// tests answer from a table so that no query leaves the machine.
// Implementations must be safe for concurrent use.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Options configure a Dialer. The zero value is the strict policy: no
// private address, the system resolver, a 10 s connect timeout.
type Options struct {
	// AllowPrivate opens loopback and every private range (--allow-private).
	AllowPrivate bool
	// Allow names the hosts that may be private when AllowPrivate is off
	// (nil: none).
	Allow *Allowlist
	// Resolver resolves host names (nil: net.DefaultResolver). Answers
	// are cached for the Dialer's lifetime.
	Resolver Resolver
	// ConnectTimeout bounds DNS plus TCP connect (default 10 s).
	ConnectTimeout time.Duration
	// OnLookup, when set, is called after each DNS lookup a dial made
	// (cache hits included) with the dial's context and the time it took:
	// the checker records DNS timings with it.
	OnLookup func(ctx context.Context, d time.Duration)
}

// Dialer dials through the policy. It is safe for concurrent use.
type Dialer struct {
	o      Options
	dns    *dnsCache
	dialer *net.Dialer
	runCtx context.Context // cancels dials still running when it ends
	dials  atomic.Int64
}

// NewDialer returns a Dialer whose dials and DNS lookups end when ctx
// ends (the run).
func NewDialer(ctx context.Context, o Options) *Dialer {
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = defaultConnectTimeout
	}
	d := &Dialer{o: o, dns: newDNSCache(ctx, o.Resolver, o.ConnectTimeout), runCtx: ctx}
	d.dialer = &net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second}
	return d
}

// Dials returns the number of connection attempts made so far (tests:
// a refused host is refused before any attempt).
func (d *Dialer) Dials() int64 { return d.dials.Load() }

// allowPrivate reports whether a dial to addr may reach a private address.
func (d *Dialer) allowPrivate(addr string) bool {
	return d.o.AllowPrivate || d.o.Allow.Allows(addr)
}

// control returns the net.Dialer Control hook of one dial: the last look
// at the address before connect(2).
func control(allowPrivate bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &RefusedError{Host: address, Reason: "unparsable address"}
		}
		if r := Check(ap.Addr(), allowPrivate); r != "" {
			return &RefusedError{Host: ap.Addr().String(), IP: ap.Addr(), Reason: r}
		}
		return nil
	}
}

// DialContext dials addr ("host:port") through the policy. It is an
// http.Transport's DialContext.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port: %w", addr, err)
	}
	private := d.allowPrivate(addr)
	// The Transport detaches dials from the request's cancellation; bound
	// them by the connect timeout and by the run.
	ctx, cancel := context.WithTimeout(ctx, d.o.ConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(d.runCtx, cancel)
	defer stop()

	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		start := time.Now()
		ips, err = d.dns.lookup(ctx, host)
		if d.o.OnLookup != nil {
			d.o.OnLookup(ctx, time.Since(start))
		}
		if err != nil {
			return nil, err
		}
	}
	// Refuse the host when any of its addresses is forbidden: which one a
	// client picks is not under the page author's control, but the DNS
	// answer is.
	for _, ip := range ips {
		if r := Check(ip, private); r != "" {
			return nil, &RefusedError{Host: host, IP: ip.WithZone(""), Reason: r}
		}
	}
	dialer := *d.dialer
	dialer.Control = control(private)
	var firstErr error
	for _, ip := range ips {
		d.dials.Add(1)
		conn, err := dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// NewTransport returns an HTTP transport whose every connection goes
// through a Dialer with o: keep-alive, HTTP/2 where offered, no proxy,
// TLS handshake bounded by the connect timeout, response headers capped
// at 1 MiB. It does not follow redirects (it is a RoundTripper); a client
// re-enters it for each hop, so each hop is checked. Callers may tune the
// pool and timeouts before first use, but must keep DialContext and Proxy.
// The returned function cancels dials in progress and closes idle
// connections.
func NewTransport(o Options) (*http.Transport, *Dialer, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	d := NewDialer(ctx, o)
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    d.o.ConnectTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	return tr, d, func() {
		cancel()
		tr.CloseIdleConnections()
	}
}

// dnsCache resolves each host once per run. Concurrent lookups of one host
// share a single query (singleflight), made under the run's context with
// its own timeout, so one caller giving up does not fail the others.
// Answers and "no such host" errors are cached; timeouts and other
// temporary failures are not.
type dnsCache struct {
	r       Resolver
	base    context.Context // the run: ends lookups still running when it ends
	timeout time.Duration
	sf      singleflight.Group
	mu      sync.Mutex
	m       map[string]dnsEntry
}

type dnsEntry struct {
	ips []netip.Addr
	err error
}

func newDNSCache(base context.Context, r Resolver, timeout time.Duration) *dnsCache {
	return &dnsCache{r: r, base: base, timeout: timeout, m: map[string]dnsEntry{}}
}

func (d *dnsCache) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	e, ok := d.m[host]
	d.mu.Unlock()
	if ok {
		return e.ips, e.err
	}
	ch := d.sf.DoChan(host, func() (any, error) {
		lctx, cancel := context.WithTimeout(d.base, d.timeout)
		defer cancel()
		addrs, err := d.r.LookupIPAddr(lctx, host)
		var ips []netip.Addr
		for _, a := range addrs {
			if ip, ok := netip.AddrFromSlice(a.IP); ok {
				ips = append(ips, ip.Unmap().WithZone(a.Zone))
			}
		}
		if err == nil && len(ips) == 0 {
			err = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
		var dnsErr *net.DNSError
		if err == nil || (errors.As(err, &dnsErr) && dnsErr.IsNotFound) {
			d.mu.Lock()
			d.m[host] = dnsEntry{ips: ips, err: err}
			d.mu.Unlock()
		}
		return ips, err
	})
	select {
	case r := <-ch:
		ips, _ := r.Val.([]netip.Addr)
		return ips, r.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
