package netguard

import (
	"net/netip"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		addr        string
		wantPrivate string // reason with allowPrivate=false ("" allowed)
		wantAllowed string // reason with allowPrivate=true
	}{
		{"93.184.215.14", "", ""},
		{"2606:4700:4700::1111", "", ""},
		{"169.254.169.254", "link-local address (cloud metadata service)", "link-local address (cloud metadata service)"},
		{"169.254.1.1", "link-local address", "link-local address"},
		{"fe80::1", "link-local address", "link-local address"},
		{"fe80::1%eth0", "link-local address", "link-local address"},
		{"0.0.0.0", "unspecified address", "unspecified address"},
		{"::", "unspecified address", "unspecified address"},
		{"0.1.2.3", `"this network" address`, `"this network" address`},
		{"224.0.0.1", "multicast address", "multicast address"},
		{"ff02::1", "multicast address", "multicast address"},
		{"255.255.255.255", "broadcast address", "broadcast address"},
		{"240.0.0.1", "reserved address", "reserved address"},
		{"127.0.0.1", "loopback address", ""},
		{"127.8.9.10", "loopback address", ""},
		{"::1", "loopback address", ""},
		{"10.0.0.1", "private address", ""},
		{"172.16.5.4", "private address", ""},
		{"172.32.0.1", "", ""},
		{"192.168.1.1", "private address", ""},
		{"100.64.0.1", "carrier-grade NAT address", ""},
		{"100.128.0.1", "", ""},
		{"198.18.0.1", "benchmarking address", ""},
		{"fc00::1", "private address", ""},
		{"fd12:3456::1", "private address", ""},
		{"fec0::1", "private address", ""},
		// IPv4-mapped: judged as the IPv4 address.
		{"::ffff:169.254.169.254", "link-local address (cloud metadata service)", "link-local address (cloud metadata service)"},
		{"::ffff:127.0.0.1", "loopback address", ""},
		{"::ffff:10.0.0.1", "private address", ""},
		{"::ffff:8.8.8.8", "", ""},
		// Other IPv6 forms embedding IPv4.
		{"64:ff9b::a9fe:a9fe", "link-local address (cloud metadata service) (embedded in 64:ff9b::a9fe:a9fe)", "link-local address (cloud metadata service) (embedded in 64:ff9b::a9fe:a9fe)"},
		{"64:ff9b::7f00:1", "loopback address (embedded in 64:ff9b::7f00:1)", ""},
		{"64:ff9b::808:808", "", ""},
		{"2002:a9fe:a9fe::1", "link-local address (cloud metadata service) (embedded in 2002:a9fe:a9fe::1)", "link-local address (cloud metadata service) (embedded in 2002:a9fe:a9fe::1)"},
		{"::a9fe:a9fe", "link-local address (cloud metadata service) (embedded in ::a9fe:a9fe)", "link-local address (cloud metadata service) (embedded in ::a9fe:a9fe)"},
	}
	for _, tt := range tests {
		ip := netip.MustParseAddr(tt.addr)
		if got := Check(ip, false); got != tt.wantPrivate {
			t.Errorf("Check(%s, false) = %q, want %q", tt.addr, got, tt.wantPrivate)
		}
		if got := Check(ip, true); got != tt.wantAllowed {
			t.Errorf("Check(%s, true) = %q, want %q", tt.addr, got, tt.wantAllowed)
		}
	}
	if got := Check(netip.Addr{}, true); got != "invalid address" {
		t.Errorf("Check(zero) = %q", got)
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
