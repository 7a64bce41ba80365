package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostsArePrivate: the command decides "the audited site is private"
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

// TestCheckMaxBodyLimit: --check-max-body above 64 MiB is a usage error
// (HTML parsing costs many times the body read), 64 MiB itself is fine.
func TestCheckMaxBodyLimit(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "none.db")
	for _, v := range []string{"100MiB", "64MiB"} {
		f := checkFlags{concurrency: 1, perHost: 1, failOn: "none"}
		if err := f.maxBody.Set(v); err != nil {
			t.Fatal(err)
		}
		_, _, err := f.options(nil)
		var ue *usageError
		if got := errors.As(err, &ue); got != (v == "100MiB") {
			t.Errorf("--check-max-body %s: %v", v, err)
		}
	}
	code, _, stderr := run(t, "", "check", "--db", dbPath, "--check-max-body", "1GiB")
	if code != exitUsage || !strings.Contains(stderr, "64MiB") {
		t.Errorf("check --check-max-body 1GiB: exit %d (%s), want %d", code, stderr, exitUsage)
	}
}
