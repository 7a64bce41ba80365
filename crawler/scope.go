package crawler

import (
	"net/url"
	"regexp"
	"strings"
)

// scope decides which URLs are crawled (fetched and parsed for more links).
// Links outside it are still recorded by the extractor, only not fetched.
//
// Hosts are compared with their port (Colly's AllowedDomains compares bare
// hostnames, so another service on the same host would be in scope). Names
// from --allow-domain without a port match the hostname on any port, and
// "*.example.org" matches every subdomain.
type scope struct {
	hostPorts map[string]bool // exact host:port, from the seeds
	domains   []string        // --allow-domain values, lower-cased
	include   []*regexp.Regexp
	exclude   []*regexp.Regexp
	// prefix, when set, limits the seeds' hosts to paths under it (a
	// local build directory served under a base path).
	prefix string
}

func newScope(seeds []*url.URL, allow []string, include, exclude []*regexp.Regexp) *scope {
	s := &scope{hostPorts: map[string]bool{}, include: include, exclude: exclude}
	for _, u := range seeds {
		s.hostPorts[hostPort(u)] = true
		if u.Port() == "" {
			// A site on the default ports is one site over http and https:
			// http://site/ commonly redirects to https://site/.
			h := strings.ToLower(u.Hostname())
			if strings.Contains(h, ":") {
				h = "[" + h + "]"
			}
			s.hostPorts[h+":80"] = true
			s.hostPorts[h+":443"] = true
		}
	}
	for _, d := range allow {
		if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
			s.domains = append(s.domains, d)
		}
	}
	return s
}

// hostPort returns the lower-cased host with an explicit port.
func hostPort(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	p := u.Port()
	if p == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			p = "443"
		default:
			p = "80"
		}
	}
	if strings.Contains(h, ":") {
		return "[" + h + "]:" + p
	}
	return h + ":" + p
}

// hostAllowed reports whether u's host and port are in scope.
func (s *scope) hostAllowed(u *url.URL) bool {
	if s.hostPorts[hostPort(u)] {
		return true
	}
	h := strings.ToLower(u.Hostname())
	for _, d := range s.domains {
		switch {
		case strings.HasPrefix(d, "*."):
			if strings.HasSuffix(h, d[1:]) || h == d[2:] {
				return true
			}
		case strings.Contains(d, ":") && !strings.HasPrefix(d, "["):
			if hostPort(u) == d {
				return true
			}
		case h == d:
			return true
		}
	}
	return false
}

// reason returns "" when u is to be crawled, or why it is not.
func (s *scope) reason(u *url.URL) string {
	if u.Scheme != "http" && u.Scheme != "https" {
		return "scheme"
	}
	if !s.hostAllowed(u) {
		return "host"
	}
	if s.prefix != "" && s.hostPorts[hostPort(u)] && !strings.HasPrefix(u.EscapedPath(), s.prefix) {
		return "path"
	}
	str := u.String()
	for _, re := range s.exclude {
		if re.MatchString(str) {
			return "exclude"
		}
	}
	if len(s.include) > 0 {
		for _, re := range s.include {
			if re.MatchString(str) {
				return ""
			}
		}
		return "include"
	}
	return ""
}
