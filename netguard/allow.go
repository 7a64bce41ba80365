package netguard

import (
	"net"
	"net/url"
	"strings"
)

// Allowlist names the hosts that may be on a loopback or private address:
// the exact scope of an audit (its origins and --allow-domain hosts), or
// the archives the user configured. It matches dial addresses, "host:port"
// as net/http dials them, on the name in the URL before resolution. The
// zero value and nil allow nothing. It is safe for concurrent use once
// built.
type Allowlist struct {
	hostPorts map[string]bool // exact "host:port", lower-cased
	hosts     map[string]bool // host on any port, lower-cased
}

// NewAllowlist builds an Allowlist from entries of three forms:
//
//   - an absolute http(s) URL: its origin's host and port (the port
//     defaulting to the scheme's), exactly;
//   - "host:port" ("[::1]:8080" for IPv6): that host on that port;
//   - "host" (an --allow-domain name, or a bare IPv6 literal): that host
//     on any port.
//
// A wildcard "*.example.org" entry is ignored: it puts names in scope the
// user did not name, and whoever controls a subdomain's DNS could point
// it at the intranet. Empty and unparsable entries are ignored.
func NewAllowlist(entries ...string) *Allowlist {
	a := &Allowlist{hostPorts: map[string]bool{}, hosts: map[string]bool{}}
	for _, e := range entries {
		a.add(strings.ToLower(strings.TrimSpace(e)))
	}
	return a
}

func (a *Allowlist) add(e string) {
	switch {
	case e == "", strings.HasPrefix(e, "*."):
		return
	case strings.Contains(e, "://"):
		if hp, ok := DialAddr(e); ok {
			a.hostPorts[hp] = true
		}
		return
	}
	if h, p, err := net.SplitHostPort(e); err == nil {
		a.hostPorts[net.JoinHostPort(h, p)] = true
		return
	}
	a.hosts[strings.Trim(e, "[]")] = true
}

// Allows reports whether a connection to addr ("host:port") may go to a
// loopback or private address.
func (a *Allowlist) Allows(addr string) bool {
	if a == nil {
		return false
	}
	addr = strings.ToLower(addr)
	if a.hostPorts[addr] {
		return true
	}
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return a.hosts[h]
	}
	return false
}

// Len returns the number of entries.
func (a *Allowlist) Len() int {
	if a == nil {
		return 0
	}
	return len(a.hostPorts) + len(a.hosts)
}

// DialAddr returns the address net/http dials for an absolute http(s)
// URL: host and port (default 80 or 443), lower-cased, an IPv6 literal in
// brackets.
func DialAddr(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	port := u.Port()
	switch strings.ToLower(u.Scheme) {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
	default:
		return "", false
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port)), true
}
