package crawler

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRobots_RedirectPolicy: robots.txt redirects are followed on the
// same host name only, at most five hops; otherwise robots.txt counts as
// unavailable (everything allowed) and the other host is never asked.
func TestRobots_RedirectPolicy(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Write([]byte("User-agent: *\nDisallow: /\n"))
	}))
	defer other.Close()
	// The same machine under another name: a different host for the
	// policy.
	otherByName := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/off/robots.txt":
			http.Redirect(w, r, otherByName+"/robots.txt", http.StatusFound)
		case strings.HasPrefix(p, "/hop/"):
			// /hop/N/robots.txt redirects N more times, then serves the file.
			n, _ := strconv.Atoi(strings.Split(p, "/")[2])
			if n > 0 {
				http.Redirect(w, r, fmt.Sprintf("/hop/%d/robots.txt", n-1), http.StatusMovedPermanently)
				return
			}
			w.Write([]byte("User-agent: *\nDisallow: /\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	tests := []struct {
		name, robots string
		want         bool // allowed
	}{
		{"OffHost", site.URL + "/off/robots.txt", true},
		{"FiveHopsFollowed", site.URL + "/hop/5/robots.txt", false},
		{"SixHopsUnavailable", site.URL + "/hop/6/robots.txt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRobots(&http.Client{CheckRedirect: sameHostRedirects(maxRobotsRedirects)}, "x")
			data, err := r.fetch(context.Background(), tt.robots)
			if err != nil {
				t.Fatal(err)
			}
			if got := data.TestAgent("/page", "x"); got != tt.want {
				t.Errorf("allowed = %v, want %v", got, tt.want)
			}
		})
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other host was asked %d times", n)
	}
}

func TestScope_DialAllowed(t *testing.T) {
	seed, _ := url.Parse("http://127.0.0.1:8080/")
	named, _ := url.Parse("https://Site.Example/")
	s := newScope([]*url.URL{seed, named}, []string{"docs.example", "api.example:9000", "*.cdn.example"}, nil, nil)
	for addr, want := range map[string]bool{
		"127.0.0.1:8080":     true,
		"127.0.0.1:8081":     false, // another service on the machine
		"site.example:443":   true,
		"docs.example:1234":  true, // named without a port: any port
		"api.example:9000":   true,
		"api.example:9001":   false,
		"img.cdn.example:80": false, // wildcard: in scope, not private
		"169.254.169.254:80": false,
		"garbage":            false,
	} {
		if got := s.dialAllowed(addr); got != want {
			t.Errorf("dialAllowed(%q) = %v, want %v", addr, got, want)
		}
	}
}
