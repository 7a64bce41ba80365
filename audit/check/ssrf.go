package check

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"
)

// RefusedError reports that the SSRF policy forbade a connection: the
// host resolved to (or was) an address linkrot never connects to, or one
// it connects to only with Options.AllowPrivate. Checks that end in a
// RefusedError get the verdict refused; callers branch on it with
// errors.As.
type RefusedError struct {
	Host   string     // the host name or literal from the URL
	IP     netip.Addr // the address refused
	Reason string     // "link-local address", "loopback address", ...
}

func (e *RefusedError) Error() string {
	if e.Host == "" || e.Host == e.IP.String() {
		return fmt.Sprintf("refused to connect to %s: %s", e.IP, e.Reason)
	}
	return fmt.Sprintf("refused to connect to %s (%s): %s", e.Host, e.IP, e.Reason)
}

var (
	prefixThisNet  = netip.MustParsePrefix("0.0.0.0/8")
	prefixCGNAT    = netip.MustParsePrefix("100.64.0.0/10")
	prefixBench    = netip.MustParsePrefix("198.18.0.0/15")
	prefixClassE   = netip.MustParsePrefix("240.0.0.0/4")
	prefixSiteLoc  = netip.MustParsePrefix("fec0::/10")
	prefixNAT64    = netip.MustParsePrefix("64:ff9b::/96")
	prefixNAT64Loc = netip.MustParsePrefix("64:ff9b:1::/48")
	prefix6to4     = netip.MustParsePrefix("2002::/16")
	prefixCompat   = netip.MustParsePrefix("::/96")
	broadcast      = netip.AddrFrom4([4]byte{255, 255, 255, 255})
)

// checkAddr applies the SSRF policy to one address. It returns "" when
// linkrot may connect, else the reason it may not.
//
// Never allowed: unspecified (0.0.0.0, ::), "this network" 0.0.0.0/8,
// link-local (169.254.0.0/16 with the cloud metadata address, fe80::/10),
// multicast, broadcast and the reserved 240.0.0.0/4. Allowed only with
// allowPrivate: loopback, RFC 1918, CGNAT 100.64.0.0/10, benchmarking
// 198.18.0.0/15, ULA fc00::/7 and site-local fec0::/10. IPv6 forms that
// embed an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are
// judged by the embedded address.
func checkAddr(ip netip.Addr, allowPrivate bool) string {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return "invalid address"
	}
	if ip.Is6() {
		if v4, ok := embeddedIPv4(ip); ok {
			if r := checkAddr(v4, allowPrivate); r != "" {
				return r + " (embedded in " + ip.String() + ")"
			}
			return ""
		}
	}
	switch {
	case ip.IsUnspecified():
		return "unspecified address"
	case ip.IsLinkLocalUnicast():
		if ip == netip.AddrFrom4([4]byte{169, 254, 169, 254}) {
			return "link-local address (cloud metadata service)"
		}
		return "link-local address"
	case ip.IsMulticast():
		return "multicast address"
	case ip == broadcast:
		return "broadcast address"
	case prefixThisNet.Contains(ip):
		return "\"this network\" address"
	case prefixClassE.Contains(ip):
		return "reserved address"
	}
	if allowPrivate {
		return ""
	}
	switch {
	case ip.IsLoopback():
		return "loopback address"
	case ip.IsPrivate(), prefixSiteLoc.Contains(ip):
		return "private address"
	case prefixCGNAT.Contains(ip):
		return "carrier-grade NAT address"
	case prefixBench.Contains(ip):
		return "benchmarking address"
	}
	return ""
}

// embeddedIPv4 returns the IPv4 address carried by an IPv6 address of a
// translation or transition form.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case prefixNAT64.Contains(ip), prefixNAT64Loc.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case prefix6to4.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case prefixCompat.Contains(ip) && !ip.IsUnspecified() && !ip.IsLoopback():
		// Deprecated IPv4-compatible form ::a.b.c.d.
		return netip.AddrFrom4([4]byte(b[12:16])), true
	}
	return netip.Addr{}, false
}

// Resolver looks up the addresses of a host. *net.Resolver satisfies it;
// tests answer from a table so that no query leaves the machine.
// Implementations must be safe for concurrent use.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
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

// guard dials for the Transport: it resolves the host itself (cached),
// applies the SSRF policy to every address and dials the checked address,
// so a second DNS answer cannot swap in another one (DNS rebinding). A
// net.Dialer Control hook applies the policy again to the address actually
// connected to.
type guard struct {
	dns          *dnsCache
	dialer       *net.Dialer
	allowPrivate bool
	timeout      time.Duration   // DNS plus connect
	runCtx       context.Context // cancels dials still running when the run ends
	dials        atomic.Int64    // connection attempts (tests)
}

func newGuard(runCtx context.Context, dns *dnsCache, allowPrivate bool, connectTimeout time.Duration) *guard {
	g := &guard{dns: dns, allowPrivate: allowPrivate, timeout: connectTimeout, runCtx: runCtx}
	g.dialer = &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second, Control: g.control}
	return g
}

// control is the Dialer's last look at the address before connect(2).
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedError{Host: address, Reason: "unparsable address"}
	}
	if r := checkAddr(ap.Addr(), g.allowPrivate); r != "" {
		return &RefusedError{Host: ap.Addr().String(), IP: ap.Addr(), Reason: r}
	}
	return nil
}

// dialContext is the Transport's DialContext.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port: %w", addr, err)
	}
	// The Transport detaches dials from the request's cancellation; bound
	// them by the connect timeout and by the run.
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	stop := context.AfterFunc(g.runCtx, cancel)
	defer stop()

	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		start := time.Now()
		ips, err = g.dns.lookup(ctx, host)
		if rec, ok := ctx.Value(timingsKey{}).(*timingRec); ok {
			rec.setDNS(time.Since(start))
		}
		if err != nil {
			return nil, err
		}
	}
	// Refuse the host when any of its addresses is forbidden: which one a
	// client picks is not under the page author's control, but the DNS
	// answer is.
	for _, ip := range ips {
		if r := checkAddr(ip, g.allowPrivate); r != "" {
			return nil, &RefusedError{Host: host, IP: ip.WithZone(""), Reason: r}
		}
	}
	var firstErr error
	for _, ip := range ips {
		g.dials.Add(1)
		conn, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
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
