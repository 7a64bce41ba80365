package crawler

// Where the crawler may connect. Pages, robots.txt files and sitemaps are
// hostile: a redirect or a DNS answer can point anywhere, the cloud
// metadata service included. Every connection goes through the SSRF guard
// (package netguard): the address is resolved and checked at connect
// time, link-local, unspecified, multicast and broadcast addresses are
// never contacted, and loopback and private addresses only for the hosts
// of the crawl's scope, the audited site (its seeds' host:port and
// --allow-domain), which the user chose: exactly those, never another
// port or another name of the same machine.

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linkrot/linkrot/netguard"
)

// Bounds of the crawl transport.
const (
	connectTimeout = 10 * time.Second
	headerTimeout  = 20 * time.Second
	// maxRobotsRedirects is the redirect hops followed for robots.txt
	// (RFC 9309 2.3.1.2: at least five).
	maxRobotsRedirects = 5
)

// SiteTransport returns a transport for fetching the pages of a site: every
// connection goes through the checker's SSRF guard (link-local, unspecified,
// multicast and broadcast addresses refused), loopback and private addresses
// are allowed only for the host and port of each of siteURLs (the site the
// user named), keep-alive and HTTP/2, no proxy, bounded connect, TLS and
// header timeouts. It does not follow redirects; an http.Client using it
// connects through the guard on every hop. The returned function closes its
// connections.
func SiteTransport(siteURLs []string) (http.RoundTripper, func()) {
	var seeds []*url.URL
	for _, s := range siteURLs {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			seeds = append(seeds, u)
		}
	}
	return guardedTransport(newScope(seeds, nil, nil, nil), nil)
}

// transportFor returns the transport of a crawl whose scope is sc:
// override, else Options.Transport (tests), else a guarded transport.
func (c *Crawler) transportFor(sc *scope, override http.RoundTripper) (http.RoundTripper, func()) {
	switch {
	case override != nil:
		return urlTransport{override}, func() {}
	case c.opts.Transport != nil:
		return urlTransport{c.opts.Transport}, func() {}
	}
	rt, done := guardedTransport(sc, c.opts.Resolver)
	// Keep a connection per request in flight to a host (at most the
	// crawl's threads): with fewer idle ones kept, a busy crawl closes
	// and dials connections all the time.
	if tr, ok := rt.(*http.Transport); ok && c.opts.PerHost > tr.MaxIdleConnsPerHost {
		tr.MaxIdleConnsPerHost = min(c.opts.PerHost, tr.MaxIdleConns)
	}
	return urlTransport{rt}, done
}

// guardedTransport is the crawler's default transport: netguard's
// transport allowing private addresses for the scope's named hosts only,
// its pool tuned for crawling (no per-host connection cap: Colly's limit
// rules bound parallelism).
func guardedTransport(sc *scope, r netguard.Resolver) (http.RoundTripper, func()) {
	tr, _, done := netguard.NewTransport(netguard.Options{Allow: sc.allowlist(), Resolver: r, ConnectTimeout: connectTimeout})
	tr.MaxConnsPerHost = 0
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 16
	tr.ResponseHeaderTimeout = headerTimeout
	return tr, done
}

// allowlist returns the hosts the user named, which may be on a loopback
// or private address: each seed's host and port (with its twin default
// port, see newScope) and each --allow-domain entry without wildcard. A
// "*.example.org" entry puts names in scope that the user did not name
// (and whoever controls a subdomain's DNS can point at the intranet):
// those hosts are crawled under the strict policy.
func (s *scope) allowlist() *netguard.Allowlist {
	entries := make([]string, 0, len(s.hostPorts)+len(s.domains))
	for hp := range s.hostPorts {
		entries = append(entries, hp)
	}
	entries = append(entries, s.domains...)
	return netguard.NewAllowlist(entries...)
}

// dialAllowed reports whether a dial address ("host:port", as net/http
// dials) is on the scope's allowlist.
func (s *scope) dialAllowed(addr string) bool {
	return s.allowlist().Allows(addr)
}

// sameHostRedirects is a CheckRedirect policy for robots.txt and sitemaps:
// at most max hops, each on the first request's host name (any port,
// http or https). A redirect elsewhere is not followed: the client returns
// the 3xx response, which the caller judges (robots.txt: unavailable,
// RFC 9309; sitemap: an error).
func sameHostRedirects(max int) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > max {
			return http.ErrUseLastResponse
		}
		if !sameHost(via[0].URL, req.URL) {
			return http.ErrUseLastResponse
		}
		return nil
	}
}

func sameHost(a, b *url.URL) bool {
	switch strings.ToLower(b.Scheme) {
	case "http", "https":
	default:
		return false
	}
	return strings.EqualFold(a.Hostname(), b.Hostname())
}

// isRefused reports whether err is the SSRF guard's refusal.
func isRefused(err error) bool {
	var re *netguard.RefusedError
	return errors.As(err, &re)
}

// errOffHostRedirect reports a sitemap redirect the client did not follow:
// off the sitemap's host, or one hop too many.
func errOffHostRedirect(from string, resp *http.Response) error {
	loc := resp.Header.Get("Location")
	if resp.Request != nil {
		if to, err := resp.Request.URL.Parse(loc); err == nil {
			if first, err := url.Parse(from); err == nil && !sameHost(first, to) {
				return fmt.Errorf("sitemap %s redirects to another host (%s), not followed", from, to.Redacted())
			}
		}
	}
	return fmt.Errorf("sitemap %s: too many redirects (last to %s)", from, loc)
}

// sitemapScope is the scope of a sitemap crawl: the sitemaps' hosts and
// --allow-domain.
func sitemapScope(sitemaps, allow []string) *scope {
	var us []*url.URL
	for _, s := range sitemaps {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			us = append(us, u)
		}
	}
	return newScope(us, allow, nil, nil)
}
