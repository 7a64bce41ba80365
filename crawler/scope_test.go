package crawler

import (
	"net/url"
	"regexp"
	"testing"
)

func TestScope(t *testing.T) {
	mustURL := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	seeds := []*url.URL{mustURL("http://site.example/"), mustURL("http://127.0.0.1:8080/")}
	s := newScope(seeds, []string{"docs.example", "*.cdn.example", "api.example:9000"}, nil, []*regexp.Regexp{regexp.MustCompile(`/private/`)})
	tests := []struct {
		url, want string
	}{
		{"http://site.example/a", ""},
		// The same site over https (default ports): http→https redirects stay in scope.
		{"https://site.example/a", ""},
		{"http://site.example:8443/a", "host"},
		// An explicit port is that port only (colly's AllowedDomains would allow any port).
		{"http://127.0.0.1:8080/x", ""},
		{"http://127.0.0.1:8081/x", "host"},
		{"https://127.0.0.1/x", "host"},
		{"http://docs.example:1234/", ""},
		{"https://a.b.cdn.example/x", ""},
		{"https://cdn.example/x", ""},
		{"https://evilcdn.example/x", "host"},
		{"http://api.example:9000/", ""},
		{"http://api.example/", "host"},
		{"http://site.example/private/x", "exclude"},
		{"mailto:a@site.example", "scheme"},
		{"ftp://site.example/", "scheme"},
	}
	for _, tt := range tests {
		if got := s.reason(mustURL(tt.url)); got != tt.want {
			t.Errorf("reason(%s) = %q, want %q", tt.url, got, tt.want)
		}
	}
	t.Run("Include", func(t *testing.T) {
		s := newScope(seeds, nil, []*regexp.Regexp{regexp.MustCompile(`/docs/`)}, nil)
		if got := s.reason(mustURL("http://site.example/docs/a")); got != "" {
			t.Errorf("included URL: %q", got)
		}
		if got := s.reason(mustURL("http://site.example/blog/a")); got != "include" {
			t.Errorf("not included URL: %q", got)
		}
	})
	t.Run("PathPrefix", func(t *testing.T) {
		// A build directory served under https://example.org/blog/: the rest
		// of the host is not part of the build.
		s := newScope([]*url.URL{mustURL("https://example.org/blog/")}, nil, nil, nil)
		s.prefix = "/blog/"
		if got := s.reason(mustURL("https://example.org/blog/post.html")); got != "" {
			t.Errorf("page under the prefix: %q", got)
		}
		if got := s.reason(mustURL("https://example.org/other/page.html")); got != "path" {
			t.Errorf("page outside the prefix: %q, want path", got)
		}
	})
}
