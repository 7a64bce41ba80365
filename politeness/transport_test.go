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

// TestTransport_GivenUp: a refusal with a window longer than MaxRetryWait
// is returned as the answer at once, and its resource is not asked for
// again inside the window (a *WindowError, no request). The key pauses
// MaxRetryWait; another URL refused the same way after the pause shows the
// limit covers the host: the key is given up, the later round trips fail
// with ErrGivenUp.
func TestTransport_GivenUp(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	s := New(Options{MaxRetryWait: 100 * time.Millisecond})
	client := &http.Client{Transport: s.Transport(nil, nil)}
	start := time.Now()
	resp, err := client.Get(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 {
		t.Errorf("status %d, want the 429", resp.StatusCode)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the refusal took %v: its hour-long window was waited for", time.Since(start))
	}
	_, err = client.Get(srv.URL + "/x")
	var we *WindowError
	if !errors.As(err, &we) || !errors.Is(err, errWindow) || we.Until.Sub(time.Now()) < 59*time.Minute {
		t.Errorf("/x again inside its window: %v, want a WindowError ending in an hour", err)
	}
	if g := s.GivenUp(Key(mustParse(t, srv.URL))); g != "" {
		t.Fatalf("given up after one URL's refusal: %s", g)
	}
	resp, err = client.Get(srv.URL + "/y")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 {
		t.Errorf("/y: status %d, want the 429", resp.StatusCode)
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Errorf("/y sent %v after the refusal of /x, inside the key's pause", time.Since(start))
	}
	if g := s.GivenUp(Key(mustParse(t, srv.URL))); g != "" {
		t.Fatalf("given up after two URLs' refusals: %s", g)
	}
	resp, err = client.Get(srv.URL + "/z")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if time.Since(start) < 200*time.Millisecond {
		t.Errorf("/z sent %v after the refusal of /x, inside the key's second pause", time.Since(start))
	}
	_, err = client.Get(srv.URL + "/w")
	if !errors.Is(err, ErrGivenUp) {
		t.Errorf("after giving up: %v, want ErrGivenUp", err)
	}
	if n := served.Load(); n != 3 {
		t.Errorf("%d requests served, want 3 (/x, then /y and /z each after a pause)", n)
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
