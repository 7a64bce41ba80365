package politeness

import (
	"net"
	"net/url"
	"strings"
	"time"
)

// HostRule overrides politeness and request headers for the hosts it
// matches, in the crawler and the checker alike. Zero fields keep the
// run's settings.
type HostRule struct {
	// Match selects hosts: "example.org" (that host on any port),
	// "example.org:8080" (that host and port), or "*.example.org" (the
	// domain and all its subdomains, any port).
	Match string `json:"match"`
	// PerHost is the most parallel requests to one matching host
	// (host and port).
	PerHost int `json:"concurrency,omitempty"`
	// Delay is the least pause between two requests to one matching host.
	Delay time.Duration `json:"delay,omitempty"`
	// Headers are sent with every request to a matching host (an
	// Authorization header for a staging site, a cookie, ...).
	Headers map[string]string `json:"headers,omitempty"`
}

// Matches reports whether the rule applies to u's host and port (the
// scheme's default port when u has none).
func (r HostRule) Matches(u *url.URL) bool {
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return r.MatchesHostPort(net.JoinHostPort(u.Hostname(), port))
}

// MatchesHostPort reports whether the rule applies to hostport ("host:port",
// IPv6 hosts in brackets).
func (r HostRule) MatchesHostPort(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	m := strings.ToLower(strings.TrimSpace(r.Match))
	if m == "" {
		return false
	}
	if d, ok := strings.CutPrefix(m, "*."); ok {
		return host == d || strings.HasSuffix(host, "."+d)
	}
	if mh, mp, err := net.SplitHostPort(m); err == nil {
		return host == strings.Trim(mh, "[]") && port == mp
	}
	return host == strings.Trim(m, "[]")
}

// HostRuleFor returns the first rule of rules matching hostport, or false.
func HostRuleFor(rules []HostRule, hostport string) (HostRule, bool) {
	for _, r := range rules {
		if r.MatchesHostPort(hostport) {
			return r, true
		}
	}
	return HostRule{}, false
}
