package check

import (
	"net/netip"
	"testing"

	"github.com/linkrot/linkrot/netguard"
)

func TestIsPrivateAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1":        true,
		"::1":              true,
		"10.1.2.3":         true,
		"172.16.0.1":       true,
		"192.168.1.1":      true,
		"100.64.0.1":       true, // CGNAT: the checker treats it as private, so must the command
		"198.18.0.1":       true, // benchmarking
		"fc00::1":          true,
		"fec0::1":          true, // site-local
		"::ffff:10.0.0.1":  true, // IPv4-mapped
		"64:ff9b::a00:1":   true, // NAT64 of 10.0.0.1
		"93.184.215.14":    false,
		"2606:4700::1111":  false,
		"169.254.169.254":  false, // never allowed, so not "private"
		"fe80::1":          false,
		"0.0.0.0":          false,
		"224.0.0.1":        false,
		"::ffff:127.0.0.1": true,
	} {
		if got := IsPrivateAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("IsPrivateAddr(%s) = %v, want %v", addr, got, want)
		}
		// The same policy as the guard: private means refused without
		// AllowPrivate and allowed with it.
		ip := netip.MustParseAddr(addr)
		if want && (netguard.Check(ip, false) == "" || netguard.Check(ip, true) != "") {
			t.Errorf("%s: IsPrivateAddr disagrees with checkAddr", addr)
		}
	}
}
