package check

// The SSRF policy for other stages that choose per host which addresses
// they may reach. The guard itself is package netguard; these wrappers
// keep the checker's API for callers that build transports from
// check.Options. See export.go for the archive stage's pieces.

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/linkrot/linkrot/netguard"
)

// IsPrivateAddr reports whether ip is an address the SSRF policy connects
// to only when allowed (see netguard.IsPrivateAddr).
func IsPrivateAddr(ip netip.Addr) bool {
	return netguard.IsPrivateAddr(ip)
}

// NewGuardedTransport returns an HTTP transport whose every connection
// goes through the SSRF guard (resolved, checked and dialed on the checked
// address, the Dialer's Control hook checking again), with the connect
// timeout, per-host connection limit and header cap of opts (defaults as
// in New), and no proxy. Loopback and private addresses are allowed for a
// dial when opts.AllowPrivate is set, its address is on
// opts.AllowPrivateHosts, or privateOK (which may be nil) reports true
// for it: "host:port" as net/http dials it, the host lower-cased, an IPv6
// literal in brackets. Link-local, unspecified, multicast and broadcast
// addresses are refused for every address. opts.Transport is ignored: the
// result is always guarded.
//
// Callers may tune the returned transport's pool and timeouts before
// first use, but must keep its DialContext and Proxy. The returned function
// cancels dials in progress and closes idle connections.
func NewGuardedTransport(opts Options, privateOK func(addr string) bool) (*http.Transport, func()) {
	c := New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	gopts := guardOptions(&c.o)
	strict := netguard.NewDialer(ctx, gopts)
	tr := newTransport(strict, &c.o)
	if privateOK != nil && !c.o.AllowPrivate {
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
