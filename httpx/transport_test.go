package httpx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/netguard"
)

// fakeResolver answers from a table, so no test query leaves the machine.
// Unknown names do not exist.
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// TestNewTransportAllowing: private addresses are allowed for the listed
// endpoints only. Another loopback server, reached directly or by a
// redirect from the allowed one, is refused.
func TestNewTransportAllowing(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "other") }))
	defer other.Close()
	trusted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "trusted")
	}))
	defer trusted.Close()

	rt, done := NewTransportAllowing(Options{}, []string{trusted.URL + "/web/", "not a url", "ftp://127.0.0.1:1/"})
	defer done()
	get := func(u string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return rt.RoundTrip(req)
	}
	resp, err := get(trusted.URL + "/x")
	if err != nil {
		t.Fatalf("allowed endpoint: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("allowed endpoint: status %d", resp.StatusCode)
	}
	var refused *netguard.RefusedError
	if _, err := get(other.URL + "/"); !errors.As(err, &refused) || !strings.Contains(refused.Reason, "loopback") {
		t.Errorf("other loopback host: %v, want a refusal", err)
	}
	// A redirect is a new request through the transport: its host is
	// judged on its own.
	resp, err = get(trusted.URL + "/redirect")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := get(resp.Header.Get("Location")); !errors.As(err, &refused) {
		t.Errorf("redirect target on another loopback host: %v, want a refusal", err)
	}

	// Nothing listed, or AllowPrivate: NewTransport's policy.
	strict, done2 := NewTransportAllowing(Options{}, nil)
	defer done2()
	req, _ := http.NewRequest(http.MethodGet, trusted.URL+"/", nil)
	if _, err := strict.RoundTrip(req); !errors.As(err, &refused) {
		t.Errorf("no allowed endpoint: %v, want a refusal", err)
	}
	open, done3 := NewTransportAllowing(Options{AllowPrivate: true}, []string{trusted.URL})
	defer done3()
	req, _ = http.NewRequest(http.MethodGet, other.URL+"/", nil)
	if resp, err := open.RoundTrip(req); err != nil {
		t.Errorf("AllowPrivate: %v", err)
	} else {
		resp.Body.Close()
	}
}

func TestDialAddr(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/web/": "127.0.0.1:8080",
		"https://Archive.Example/":   "archive.example:443",
		"http://[::1]/x":             "[::1]:80",
		"ftp://a/":                   "",
		"/relative":                  "",
	} {
		got, ok := netguard.DialAddr(in)
		if got != want || ok != (want != "") {
			t.Errorf("DialAddr(%q) = %q, %v; want %q", in, got, ok, want)
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
	var refused *netguard.RefusedError
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
