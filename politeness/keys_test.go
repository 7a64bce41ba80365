package politeness_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
)

// TestKey_NormalizedHosts: the key of a URL as the pipeline holds it (the
// URL model's normalization) is that URL's host, so the crawl, the checks
// and the archive client, which all hold normalized URLs, share one budget
// per host whatever case, default port or international name the link was
// written with.
func TestKey_NormalizedHosts(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://Example.ORG/a", "example.org"},
		{"http://example.org:80/", "example.org"},
		{"https://example.org:443/", "example.org"},
		{"http://example.org:443/", "example.org:443"},
		{"https://EXAMPLE.org:8443/x?y", "example.org:8443"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"http://[::1]/", "[::1]"},
		{"https://Bücher.Example/", "xn--bcher-kva.example"},
		{"https://xn--bcher-kva.example:443/", "xn--bcher-kva.example"},
		{"http://BÜCHER.example:8080/", "xn--bcher-kva.example:8080"},
	}
	for _, tt := range tests {
		n, err := urls.NormalizeURL(tt.in)
		if err != nil {
			t.Fatalf("NormalizeURL(%s): %v", tt.in, err)
		}
		u, err := url.Parse(n)
		if err != nil {
			t.Fatal(err)
		}
		if got := politeness.Key(u); got != tt.want || u.Host != tt.want {
			t.Errorf("%s: normalized host %q, Key %q, want %q", tt.in, u.Host, got, tt.want)
		}
	}
}

// TestScheduler_ResourceIDNormalizes: with the pipeline's ResourceID, a
// window announced on one spelling of a URL holds for every spelling that
// normalizes alike (the crawl and the checks name URLs alike).
func TestScheduler_ResourceIDNormalizes(t *testing.T) {
	s := politeness.New(politeness.Options{MaxRetryWait: time.Second, ResourceID: urls.NormalizeURL})
	key := "example.org"
	sl, _, err := s.TryAcquire(key)
	if sl == nil {
		t.Fatalf("TryAcquire: %v", err)
	}
	h := http.Header{}
	h.Set("Retry-After", "3600")
	sl.Release(politeness.Outcome{Status: http.StatusTooManyRequests, Header: h, Resource: "HTTP://Example.org:80/a#frag"})
	u, _ := url.Parse("http://example.org/a")
	if s.RetryAt(u).IsZero() {
		t.Fatalf("no window on %s after a refusal of its other spelling (state %+v)", u, s.State(key))
	}
	other, _ := url.Parse("http://example.org/b")
	if !s.RetryAt(other).IsZero() {
		t.Errorf("window on %s, only /a was refused", other)
	}
}
