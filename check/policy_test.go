package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
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

// TestNewGuardedTransport: loopback is allowed for the addresses privateOK
// names only; link-local is refused even when privateOK says yes.
func TestNewGuardedTransport(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "site") }))
	defer site.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "other") }))
	defer other.Close()
	siteAddr := strings.TrimPrefix(site.URL, "http://")
	var asked []string
	tr, done := NewGuardedTransport(Options{Resolver: fakeResolver{"meta.test": {"169.254.169.254"}}}, func(addr string) bool {
		asked = append(asked, addr)
		return addr == siteAddr || strings.HasPrefix(addr, "meta.test:") || strings.HasPrefix(addr, "169.254.")
	})
	defer done()
	if tr.Proxy != nil {
		t.Errorf("the guarded transport uses a proxy")
	}
	get := func(u string) error {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(site.URL + "/"); err != nil {
		t.Errorf("the allowed loopback site: %v", err)
	}
	var refused *RefusedError
	if err := get(other.URL + "/"); !errors.As(err, &refused) || refused.Reason != "loopback address" {
		t.Errorf("another loopback service: %v, want refused", err)
	}
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://meta.test/latest/meta-data/"} {
		if err := get(u); !errors.As(err, &refused) || !strings.Contains(refused.Reason, "link-local") {
			t.Errorf("%s: %v, want refused as link-local", u, err)
		}
	}
	if len(asked) == 0 {
		t.Errorf("privateOK never consulted")
	}
}
