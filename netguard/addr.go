package netguard

import (
	"fmt"
	"net/netip"
)

// RefusedError reports that the policy forbade a connection: the host
// resolved to (or was) an address linkrot never connects to, or a private
// one it was not allowed to reach. Callers branch on it with errors.As.
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
	metadata       = netip.AddrFrom4([4]byte{169, 254, 169, 254})
)

// Check applies the policy to one address. It returns "" when linkrot may
// connect, else the reason it may not. allowPrivate opens loopback and the
// private ranges; the addresses never connected to stay refused.
func Check(ip netip.Addr, allowPrivate bool) string {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return "invalid address"
	}
	if ip.Is6() {
		if v4, ok := embeddedIPv4(ip); ok {
			if r := Check(v4, allowPrivate); r != "" {
				return r + " (embedded in " + ip.String() + ")"
			}
			return ""
		}
	}
	switch {
	case ip.IsUnspecified():
		return "unspecified address"
	case ip.IsLinkLocalUnicast():
		if ip == metadata {
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

// IsPrivateAddr reports whether ip is an address the policy connects to
// only when allowed (Options.AllowPrivate or the Allow list): loopback,
// RFC 1918, CGNAT, benchmarking, ULA, site-local, and the IPv6 forms that
// embed such an IPv4 address. Addresses never connected to (link-local,
// unspecified, multicast, broadcast, reserved) are not private:
// IsPrivateAddr is false for them, and no allowance makes them reachable.
func IsPrivateAddr(ip netip.Addr) bool {
	return Check(ip, true) == "" && Check(ip, false) != ""
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
