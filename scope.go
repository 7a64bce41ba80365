package linkrot

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/politeness"
	"github.com/linkrot/linkrot/urls"
)

// siteScope is what a run audits, as the later stages need it: the
// origins of its seeds and the --allow-domain hosts (both may live on a
// loopback or private address, nothing else may without --allow-private),
// and whether robots.txt binds the run.
type siteScope struct {
	origins      []string // absolute URLs, one per seed origin (and its default-port twin)
	seeds        []string // the seeds' own origins, without twins
	allowDomains []string
	ignoreRobots bool
	offline      bool // a directory crawl: the site is not on the network
}

// runScope reads a run's scope from its seeds and stored settings (a run
// without settings has its seeds only).
func runScope(ctx context.Context, store settingsReader, run *audit.Run) siteScope {
	sc := siteScope{origins: seedOrigins(run.Seeds, true), seeds: seedOrigins(run.Seeds, false), offline: run.Mode == string(Directory)}
	if _, b, err := store.RunSettings(ctx, run.ID); err == nil {
		if s, err := ParseSettings(b); err == nil {
			sc.allowDomains = s.Crawl.AllowDomains
			sc.ignoreRobots = s.Crawl.IgnoreRobots
		}
	}
	return sc
}

// privateHosts are the hosts the checker may reach on a loopback or
// private address without --allow-private: exactly the audited origins
// and the --allow-domain hosts.
func (s siteScope) privateHosts() []string {
	return append(append([]string{}, s.origins...), s.allowDomains...)
}

// robotsGate returns the site's robots.txt gate for the crawl and the
// checks, or nil when robots.txt does not bind the run (--ignore-robots)
// or the site is a local directory. The returned function closes its
// connections. The gate hands each host's Crawl-delay to sched, which
// then paces every stage.
func (s siteScope) robotsGate(userAgent string, sched crawler.CrawlDelaySetter) (*crawler.RobotsGate, func()) {
	if s.ignoreRobots || s.offline || len(s.origins) == 0 {
		return nil, func() {}
	}
	return crawler.NewRobotsGate(s.origins, crawler.RobotsGateOptions{AllowDomains: s.allowDomains, UserAgent: userAgent, Scheduler: sched})
}

// crawlDelayRules returns rules with each audited origin whose robots.txt
// asks a Crawl-delay first: one check at a time, starts at least the
// delay apart, in the checker's dispatcher (which waits before an
// attempt's timeout starts, holding no worker). A [[host]] rule of the
// same host keeps its headers, and its delay when longer. The gate's own
// pacing (check.Options.Robots) then only spaces the requests inside one
// check (soft-404 probe, redirect hops) and across stages.
func crawlDelayRules(ctx context.Context, gate interface {
	CrawlDelay(context.Context, *url.URL) time.Duration
}, origins []string, rules []politeness.HostRule) []politeness.HostRule {
	var out []politeness.HostRule
	done := map[string]bool{}
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil {
			continue
		}
		d := gate.CrawlDelay(ctx, u)
		if d <= 0 {
			continue
		}
		port := u.Port()
		if port == "" {
			port = "80"
			if u.Scheme == "https" {
				port = "443"
			}
		}
		hp := net.JoinHostPort(strings.ToLower(u.Hostname()), port)
		if done[hp] {
			continue
		}
		done[hp] = true
		r, _ := politeness.HostRuleFor(rules, hp)
		r.Match, r.PerHost, r.Delay = hp, 1, max(r.Delay, d)
		out = append(out, r)
	}
	return append(out, rules...)
}

// settingsReader reads the stored settings of a run.
type settingsReader interface {
	RunSettings(ctx context.Context, runID int64) (fingerprint string, settings []byte, err error)
}

// HostOf returns the host[:port] of a URL as urls.NormalizeURL writes
// it, or "".
func HostOf(raw string) string {
	u, err := urls.ParseURL(raw)
	if err != nil {
		return ""
	}
	return u.Host()
}

// SiteHosts returns the hosts (host[:port] as urls.NormalizeURL writes them)
// of a run's seeds: the audited site.
func SiteHosts(run *audit.Run) map[string]bool {
	out := map[string]bool{}
	for _, s := range run.SeedURLs() {
		if h := HostOf(s); h != "" {
			out[h] = true
		}
	}
	return out
}

// hostsArePrivate reports whether any audited host resolves to a loopback
// or private address, by the checker's own policy (check.IsPrivateAddr:
// RFC 1918, CGNAT, benchmarking, ULA, site-local too): then linkrot may
// connect to such addresses.
func hostsArePrivate(ctx context.Context, hosts map[string]bool) bool {
	for h := range hosts {
		name := h
		if hh, _, err := net.SplitHostPort(h); err == nil {
			name = hh
		}
		name = strings.Trim(name, "[]")
		if ip, err := netip.ParseAddr(name); err == nil {
			if check.IsPrivateAddr(ip) {
				return true
			}
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		addrs, err := net.DefaultResolver.LookupNetIP(lctx, "ip", name)
		cancel()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if check.IsPrivateAddr(a) {
				return true
			}
		}
	}
	return false
}

// seedOrigins returns the origins of seed URLs ("DIR as BASE" seeds of a
// directory crawl count by their base). With twins, a seed on a default
// port brings the other scheme's default port too, as the crawl's scope
// does (http://site/ commonly redirects to https://site/).
func seedOrigins(seeds []string, twins bool) []string {
	var out []string
	for _, s := range seeds {
		u, err := url.Parse(strings.TrimSpace(audit.SeedURL(s)))
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		out = append(out, u.Scheme+"://"+u.Host+"/")
		if twins && u.Port() == "" {
			other := "https"
			if u.Scheme == "https" {
				other = "http"
			}
			out = append(out, other+"://"+u.Host+"/")
		}
	}
	return out
}
