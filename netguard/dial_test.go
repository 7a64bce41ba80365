package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers from a table; unknown names are "no such host".
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
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

func TestAllowlist(t *testing.T) {
	a := NewAllowlist("http://127.0.0.1:8080/docs/", "https://Site.Test", "intranet.example", "cache.example:3128", "*.corp.example", "[::1]:9000", "", "ftp://x/")
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.1:8081", false}, // another port of the same machine
		{"site.test:443", true},
		{"site.test:80", false}, // the origin is https: exact
		{"SITE.TEST:443", true},
		{"intranet.example:80", true},
		{"intranet.example:9999", true}, // a bare host: any port
		{"cache.example:3128", true},
		{"cache.example:80", false},
		{"a.corp.example:80", false}, // wildcards never allow private
		{"[::1]:9000", true},
		{"[::1]:9001", false},
		{"[::ffff:127.0.0.1]:8080", false}, // another spelling is another host
		{"x:21", false},
		{"garbage", false},
	}
	for _, tt := range tests {
		if got := a.Allows(tt.addr); got != tt.want {
			t.Errorf("Allows(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	var nilList *Allowlist
	if nilList.Allows("127.0.0.1:80") || nilList.Len() != 0 {
		t.Errorf("a nil Allowlist allows something")
	}
}

// TestDialer_ExactScope: with an Allowlist naming one loopback origin, that
// origin is reached; another loopback port, a name resolving to loopback,
// the IPv4-mapped spellings and link-local addresses are refused before
// any connection attempt; AllowPrivate opens loopback but never
// link-local.
func TestDialer_ExactScope(t *testing.T) {
	var siteHits, otherHits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { siteHits.Add(1); fmt.Fprint(w, "site") }))
	defer site.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1); fmt.Fprint(w, "admin") }))
	defer other.Close()
	otherPort := other.URL[strings.LastIndex(other.URL, ":")+1:]
	sitePort := site.URL[strings.LastIndex(site.URL, ":")+1:]
	res := fakeResolver{
		"rebind.example": {"127.0.0.1"},
		"meta.example":   {"::ffff:169.254.169.254"},
		"site.example":   {"127.0.0.1"},
	}
	type want int
	const (
		ok want = iota
		refused
	)
	tests := []struct {
		name         string
		url          string
		allowPrivate bool
		want         want
		reason       string
	}{
		{"TheOrigin", site.URL + "/", false, ok, ""},
		{"AnotherLoopbackPort", other.URL + "/", false, refused, "loopback address"},
		{"AnotherLoopbackPortAllowPrivate", other.URL + "/", true, ok, ""},
		{"NameResolvingToLoopback", "http://rebind.example:" + sitePort + "/", false, refused, "loopback address"},
		{"MappedLoopback", "http://[::ffff:127.0.0.1]:" + otherPort + "/", false, refused, "loopback address"},
		{"MappedLoopbackOfTheOriginPort", "http://[::ffff:7f00:1]:" + sitePort + "/", false, refused, "loopback address"},
		{"MappedLoopbackAllowPrivate", "http://[::ffff:127.0.0.1]:" + otherPort + "/", true, ok, ""},
		{"Metadata", "http://169.254.169.254/latest/", true, refused, "link-local address (cloud metadata service)"},
		{"MappedMetadata", "http://[::ffff:169.254.169.254]/", true, refused, "link-local address (cloud metadata service)"},
		{"MetadataByName", "http://meta.example/", true, refused, "link-local address (cloud metadata service)"},
		{"IPv6LinkLocal", "http://[fe80::1]/", true, refused, "link-local address"},
		{"NAT64Loopback", "http://[64:ff9b::7f00:1]:" + otherPort + "/", false, refused, "loopback address (embedded in 64:ff9b::7f00:1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, d, done := NewTransport(Options{AllowPrivate: tt.allowPrivate, Allow: NewAllowlist(site.URL), Resolver: res, ConnectTimeout: 2 * time.Second})
			defer done()
			req, _ := http.NewRequest(http.MethodGet, tt.url, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			var re *RefusedError
			switch tt.want {
			case ok:
				if err != nil {
					t.Fatalf("%s: %v, want a response", tt.url, err)
				}
			case refused:
				if !errors.As(err, &re) || re.Reason != tt.reason {
					t.Fatalf("%s: %v, want refused (%s)", tt.url, err, tt.reason)
				}
				if d.Dials() != 0 {
					t.Errorf("%d connection attempts, want none", d.Dials())
				}
			}
		})
	}
}

// TestDialer_RedirectHops: a client following redirects re-enters the
// dialer on every hop: the audited origin redirecting to another loopback
// port is refused there.
func TestDialer_RedirectHops(t *testing.T) {
	var adminHits atomic.Int64
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { adminHits.Add(1) }))
	defer admin.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, admin.URL+"/admin", http.StatusFound)
	}))
	defer site.Close()
	tr, _, done := NewTransport(Options{Allow: NewAllowlist(site.URL)})
	defer done()
	_, err := (&http.Client{Transport: tr}).Get(site.URL + "/")
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("redirect to another loopback port: %v, want refused", err)
	}
	if adminHits.Load() != 0 {
		t.Errorf("the other service was reached")
	}
}

// TestDialer_ControlHookRefuses: the Dialer's Control hook is the second
// guard: it refuses even when the first check is bypassed.
func TestDialer_ControlHookRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := net.Dialer{Control: control(false)}
	_, err = d.DialContext(context.Background(), "tcp", ln.Addr().String())
	var re *RefusedError
	if !errors.As(err, &re) || re.Reason != "loopback address" {
		t.Fatalf("dial = %v, want a RefusedError for loopback", err)
	}
}

func TestIsPrivateAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "::1": true, "fd00::1": true, "::ffff:192.168.0.1": true,
		"169.254.169.254": false, "8.8.8.8": false, "0.0.0.0": false,
	} {
		if got := IsPrivateAddr(mustAddr(addr)); got != want {
			t.Errorf("IsPrivateAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}
