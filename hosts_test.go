package linkrot

import (
	"context"
	"testing"
)

// TestHostsArePrivate: the pipeline decides "the audited site is private"
// with the checker's own policy, so a site the checker would refuse
// without --allow-private (CGNAT, benchmarking, site-local) turns the
// allowance on, and a link-local one never does.
func TestHostsArePrivate(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8080":   true,
		"10.0.0.5":         true,
		"100.64.0.1:8080":  true, // CGNAT: was crawled, then its own pages refused
		"198.18.0.1":       true,
		"[fec0::1]:80":     true,
		"[fd00::1]:80":     true,
		"169.254.169.254":  false,
		"[fe80::1]:80":     false,
		"93.184.215.14:80": false,
	} {
		if got := hostsArePrivate(context.Background(), map[string]bool{host: true}); got != want {
			t.Errorf("hostsArePrivate(%s) = %v, want %v", host, got, want)
		}
	}
}
