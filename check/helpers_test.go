package check

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/netguard"
)

// testOptions are fast options for loopback servers.
func testOptions() Options {
	return Options{
		AllowPrivate:   true,
		RetryBase:      time.Millisecond,
		MaxRetryWait:   100 * time.Millisecond,
		Timeout:        2 * time.Second,
		ConnectTimeout: time.Second,
		Resolver:       fakeResolver{},
	}
}

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

// countingResolver counts lookups.
type countingResolver struct {
	netguard.Resolver
	n atomic.Int64
}

func (c *countingResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	c.n.Add(1)
	time.Sleep(5 * time.Millisecond) // let concurrent callers pile up
	return c.Resolver.LookupIPAddr(ctx, host)
}

// newServer starts an httptest server with a mux and counts requests and
// connections.
type server struct {
	*httptest.Server
	mux      *http.ServeMux
	requests atomic.Int64
	conns    atomic.Int64
}

func newServer(t testing.TB) *server {
	t.Helper()
	s := &server{mux: http.NewServeMux()}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mux.ServeHTTP(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *server) handle(pattern string, h http.HandlerFunc) { s.mux.HandleFunc(pattern, h) }

func html200(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(body))
	}
}

func redirect(to string, status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, status)
	}
}

// collect runs c over targets and returns the results by URL.
func collect(t testing.TB, c *Checker, targets []Target) map[string]audit.Check {
	t.Helper()
	var mu sync.Mutex
	got := map[string]audit.Check{}
	err := c.Run(context.Background(), targets, func(ch audit.Check) {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[ch.URL]; dup {
			t.Errorf("emitted twice: %s", ch.URL)
		}
		got[ch.URL] = ch
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return got
}

// concurrency tracks how many handlers run at once.
type concurrency struct {
	cur, peak atomic.Int64
}

func (c *concurrency) enter() {
	n := c.cur.Add(1)
	for {
		p := c.peak.Load()
		if n <= p || c.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (c *concurrency) exit() { c.cur.Add(-1) }

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
