package netguard

import (
	"net/netip"
	"testing"
)

// FuzzCheck: an IPv4 address and its IPv4-mapped IPv6 form are judged
// alike.
func FuzzCheck(f *testing.F) {
	f.Add([]byte{169, 254, 169, 254}, false)
	f.Add([]byte{127, 0, 0, 1}, true)
	f.Add([]byte{100, 64, 0, 1}, false)
	f.Fuzz(func(t *testing.T, b []byte, allow bool) {
		if len(b) != 4 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(b))
		mapped := netip.AddrFrom16(v4.As16())
		if (Check(v4, allow) == "") != (Check(mapped, allow) == "") {
			t.Fatalf("%s: %q, mapped %s: %q", v4, Check(v4, allow), mapped, Check(mapped, allow))
		}
	})
}
