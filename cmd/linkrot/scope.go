package main

import (
	"context"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/linkrot/linkrot"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/politeness"
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
	sc := siteScope{origins: linkrot.SeedOrigins(run.Seeds, true), seeds: linkrot.SeedOrigins(run.Seeds, false), offline: run.Mode == "dir"}
	if _, b, err := store.RunSettings(ctx, run.ID); err == nil {
		if s, err := linkrot.ParseSettings(b); err == nil {
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

// robotsGate returns the site's robots.txt gate for the check stage (and
// the crawl, when shared), or nil when robots.txt does not bind the run
// (--ignore-robots) or the site is a local directory. The returned
// function closes its connections.
//
// With sched (the run's shared politeness scheduler; nil: none), the gate
// hands each host's Crawl-delay to it and the scheduler paces every stage.
func (s siteScope) robotsGate(userAgent string, sched crawler.CrawlDelaySetter) (*crawler.RobotsGate, func()) {
	if s.ignoreRobots || s.offline || len(s.origins) == 0 {
		return nil, func() {}
	}
	return crawler.NewRobotsGate(s.origins, crawler.RobotsGateOptions{AllowDomains: s.allowDomains, UserAgent: userAgent, Scheduler: sched})
}

// crawlDelayRules returns opts' host rules with each audited origin whose
// robots.txt asks a Crawl-delay first: one check at a time, starts at
// least the delay apart, in the checker's dispatcher (which waits before
// an attempt's timeout starts, holding no worker). A [[host]] rule of the
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
