package politeness

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTransport: every round trip holds a slot until its body is closed;
// a 429 is retried after its Retry-After, for every request to the host;
// the outcome is fed back.
func TestTransport(t *testing.T) {
	var (
		mu       sync.Mutex
		window   time.Time
		inWindow int
		served   atomic.Int64
		refused  atomic.Bool
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		mu.Lock()
		if time.Now().Before(window) {
			inWindow++
		}
		if r.URL.Path == "/limited" && !refused.Swap(true) {
			window = time.Now().Add(200 * time.Millisecond)
			mu.Unlock()
			w.Header().Set("Retry-After", "0.2")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	s := New(Options{PerHost: 2})
	client := &http.Client{Transport: s.Transport(http.DefaultTransport, nil)}
	u, _ := url.Parse(srv.URL)
	key := Key(u)

	resp, err := client.Get(srv.URL + "/a")
	if err != nil {
		t.Fatal(err)
	}
	if st := s.State(key); st.InFlight != 1 {
		t.Errorf("body open: in flight %d, want 1", st.InFlight)
	}
	resp.Body.Close()
	if st := s.State(key); st.InFlight != 0 {
		t.Errorf("body closed: in flight %d, want 0", st.InFlight)
	}

	// The refusal and concurrent requests to the same host.
	start := time.Now()
	var wg sync.WaitGroup
	for _, p := range []string{"/limited", "/b", "/c", "/d"} {
		wg.Go(func() {
			if p != "/limited" {
				time.Sleep(20 * time.Millisecond) // after the refusal
			}
			resp, err := client.Get(srv.URL + p)
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body) // read to the end: released
			if resp.StatusCode != 200 || string(b) != "ok" {
				t.Errorf("%s: %d %q", p, resp.StatusCode, b)
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	if time.Since(start) < 200*time.Millisecond {
		t.Errorf("done in %v: the Retry-After was not waited for", time.Since(start))
	}
	if inWindow != 0 {
		t.Errorf("%d requests inside the Retry-After window", inWindow)
	}
	if st := s.State(key); st.InFlight != 0 || st.Refusals != 1 {
		t.Errorf("state %+v", st)
	}
}

// TestTransport_GivenUp: a key given up fails the round trip with
// ErrGivenUp; the refusal that gave it up is returned as the answer.
func TestTransport_GivenUp(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	s := New(Options{})
	client := &http.Client{Transport: s.Transport(nil, nil)}
	resp, err := client.Get(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 {
		t.Errorf("status %d, want the 429", resp.StatusCode)
	}
	_, err = client.Get(srv.URL + "/y")
	if !errors.Is(err, ErrGivenUp) {
		t.Errorf("after giving up: %v, want ErrGivenUp", err)
	}
	if n := served.Load(); n != 1 {
		t.Errorf("%d requests served, want 1", n)
	}
}
