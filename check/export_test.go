package check

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

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
	var refused *RefusedError
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
		got, ok := dialAddr(in)
		if got != want || ok != (want != "") {
			t.Errorf("dialAddr(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
