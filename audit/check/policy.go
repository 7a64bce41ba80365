package check

// The SSRF policy for other stages that choose per host which addresses
// they may reach: the crawler (the audited site may live on loopback or a
// private network, nothing it links to may) and the command line (is the
// audited site private?). See export.go for the archive stage's pieces.

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// IsPrivateAddr reports whether ip is an address the SSRF policy connects
// to only with Options.AllowPrivate (or an equivalent per-host allowance):
// loopback, RFC 1918, CGNAT 100.64.0.0/10, benchmarking 198.18.0.0/15, ULA
// fc00::/7, site-local fec0::/10, and the IPv6 forms that embed such an
// IPv4 address. Addresses never connected to (link-local, unspecified,
// multicast, broadcast, reserved) are not private: IsPrivateAddr is false
// for them, and no allowance makes them reachable. It is the test to use
// for "the audited site lives on a private network", so that a site the
// crawler may reach is a site whose own pages the checker may reach.
func IsPrivateAddr(ip netip.Addr) bool {
	return checkAddr(ip, true) == "" && checkAddr(ip, false) != ""
}

// NewGuardedTransport returns an HTTP transport whose every connection
// goes through the SSRF guard (resolved, checked and dialed on the checked
// address, the Dialer's Control hook checking again), with the connect
// timeout, per-host connection limit and header cap of opts (defaults as
// in New), and no proxy. Loopback and private addresses are allowed for a
// dial when opts.AllowPrivate is set or privateOK (which may be nil)
// reports true for its address: "host:port" as net/http dials it, the host
// lower-cased, an IPv6 literal in brackets. Link-local, unspecified,
// multicast and broadcast addresses are refused for every address.
// opts.Transport is ignored: the result is always guarded.
//
// Callers may tune the returned transport's pool and timeouts before
// first use, but must keep its DialContext and Proxy. The returned function
// cancels dials in progress and closes idle connections.
func NewGuardedTransport(opts Options, privateOK func(addr string) bool) (*http.Transport, func()) {
	c := New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	dns := newDNSCache(ctx, c.o.Resolver, c.o.ConnectTimeout)
	strict := newGuard(ctx, dns, c.o.AllowPrivate, c.o.ConnectTimeout)
	tr := newTransport(strict, &c.o)
	if privateOK != nil && !c.o.AllowPrivate {
		lenient := newGuard(ctx, dns, true, c.o.ConnectTimeout)
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if privateOK(strings.ToLower(addr)) {
				return lenient.dialContext(ctx, network, addr)
			}
			return strict.dialContext(ctx, network, addr)
		}
	}
	return tr, func() {
		cancel()
		tr.CloseIdleConnections()
	}
}
