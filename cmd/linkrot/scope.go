package main

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/sqlite"
	"github.com/linkrot/linkrot/crawler"
)

// siteScope is what a run audits, as the later stages need it: the
// origins of its seeds and the --allow-domain hosts (both may live on a
// loopback or private address, nothing else may without --allow-private),
// and whether robots.txt binds the run.
type siteScope struct {
	origins      []string // absolute URLs, one per seed origin (and its default-port twin)
	allowDomains []string
	ignoreRobots bool
	offline      bool // a directory crawl: the site is not on the network
}

// runScope reads a run's scope from its seeds and stored settings (a run
// without settings has its seeds only).
func runScope(ctx context.Context, store *sqlite.DB, run *audit.Run) siteScope {
	sc := siteScope{origins: seedOrigins(run.Seeds), offline: run.Mode == "dir"}
	if _, b, err := store.RunSettings(ctx, run.ID); err == nil {
		var s runSettings
		if json.Unmarshal(b, &s) == nil {
			sc.allowDomains = s.Flags["allow-domain"]
			if v := s.Flags["ignore-robots"]; len(v) == 1 {
				sc.ignoreRobots = v[0] == "true"
			}
		}
	}
	return sc
}

// seedOrigins returns the origins of seed URLs ("DIR as BASE" seeds of a
// directory crawl count by their base). A seed on a default port brings
// the other scheme's default port too, as the crawl's scope does
// (http://site/ commonly redirects to https://site/).
func seedOrigins(seeds []string) []string {
	var out []string
	for _, s := range seeds {
		if _, after, ok := strings.Cut(s, " as "); ok {
			s = after
		}
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		out = append(out, u.Scheme+"://"+u.Host+"/")
		if u.Port() == "" {
			other := "https"
			if u.Scheme == "https" {
				other = "http"
			}
			out = append(out, other+"://"+u.Host+"/")
		}
	}
	return out
}

// privateHosts are the hosts the checker may reach on a loopback or
// private address without --allow-private: exactly the audited origins
// and the --allow-domain hosts.
func (s siteScope) privateHosts() []string {
	return append(append([]string{}, s.origins...), s.allowDomains...)
}

// robotsGate returns the site's robots.txt gate for the check stage (and
// the crawl, when shared), or nil when robots.txt does not bind the run
// (--ignore-robots) or the site is a local directory. The returned
// function closes its connections.
func (s siteScope) robotsGate(userAgent string) (*crawler.RobotsGate, func()) {
	if s.ignoreRobots || s.offline || len(s.origins) == 0 {
		return nil, func() {}
	}
	return crawler.NewRobotsGate(s.origins, crawler.RobotsGateOptions{AllowDomains: s.allowDomains, UserAgent: userAgent})
}
