package check

import (
	"net/netip"

	"github.com/linkrot/linkrot/netguard"
)

// IsPrivateAddr reports whether ip is an address the SSRF policy connects
// to only when allowed (see netguard.IsPrivateAddr).
func IsPrivateAddr(ip netip.Addr) bool {
	return netguard.IsPrivateAddr(ip)
}
