package check

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// TestChecker_HostRules checks per-host overrides: a rule's headers reach
// its host only, and its concurrency bounds the requests in flight.
func TestChecker_HostRules(t *testing.T) {
	var (
		mu               sync.Mutex
		auth             = map[string]string{}
		inFlight, maxFly atomic.Int64
	)
	handler := func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxFly.Load()
			if n <= m || maxFly.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		auth[r.Host+r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	}
	staging := httptest.NewServer(http.HandlerFunc(handler))
	defer staging.Close()
	other := httptest.NewServer(http.HandlerFunc(handler))
	defer other.Close()
	su, _ := url.Parse(staging.URL)

	o := testOptions()
	o.PerHost = 4
	o.DisableSoft404 = true
	o.Hosts = []politeness.HostRule{{Match: su.Host, PerHost: 1, Headers: map[string]string{"Authorization": "Bearer s3cret"}}}
	var targets []Target
	for i, p := range []string{"/a", "/b", "/c", "/d"} {
		targets = append(targets, Target{ID: int64(i + 1), URL: staging.URL + p})
	}
	targets = append(targets, Target{ID: 9, URL: staging.URL + "/hop?to=" + url.QueryEscape(other.URL+"/elsewhere")})
	var checks []audit.Check
	var cmu sync.Mutex
	if err := New(o).Run(context.Background(), targets, func(c audit.Check) {
		cmu.Lock()
		checks = append(checks, c)
		cmu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if len(checks) != len(targets) {
		t.Fatalf("%d checks, want %d", len(checks), len(targets))
	}
	mu.Lock()
	defer mu.Unlock()
	if got := auth[su.Host+"/a"]; got != "Bearer s3cret" {
		t.Errorf("staging got Authorization %q", got)
	}
	ou, _ := url.Parse(other.URL)
	if got, ok := auth[ou.Host+"/elsewhere"]; !ok || got != "" {
		t.Errorf("the redirect hop to another host got Authorization %q (requested: %v)", got, ok)
	}
	if m := maxFly.Load(); m != 1 {
		t.Errorf("%d requests in flight at once, want 1 (host rule concurrency)", m)
	}
}
