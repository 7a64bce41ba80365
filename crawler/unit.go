package crawler

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	"github.com/linkrot/linkrot/audit"
)

// This file is the crawler's side of a distributed crawl (package
// scaleout): one page fetched as the crawl would fetch it (robots.txt,
// scope, redirects, body caps, extraction, evidence), its links admitted
// by the same filters, with the run's visited set kept elsewhere.

// UnitResult is what FetchUnit got for one page.
type UnitResult struct {
	// Page is the recorded page (fetched, failed or disallowed by
	// robots.txt).
	Page *audit.Page
	// Next are the links the page adds to the crawl: in scope, within
	// depth, past the trap guards, and claimed (first sight in the run).
	Next []audit.FrontierEntry
	// Traps are the crawl traps the guards cut on the page.
	Traps []audit.CrawlTrap
}

// Claim marks a URL (by its visited-set key: normalized, no fragment or
// session parameters) as seen in a distributed crawl. It reports whether
// the caller may crawl it: the first claim of a key wins (a claim
// repeated by the same unit after a redelivery wins again).
type Claim func(ctx context.Context, key string) (bool, error)

// unitSpec is the page a Crawler fetches alone (FetchUnit).
type unitSpec struct {
	ctx   context.Context
	url   *url.URL
	depth int
	claim Claim

	mu    sync.Mutex
	err   error
	pages []*audit.Page
	next  []audit.FrontierEntry
	traps []audit.CrawlTrap
}

// claimKey asks the run's seen set for key; an error of the seen set
// fails the unit (it is fetched again later).
func (s *unitSpec) claimKey(key string) bool {
	ok, err := s.claim(s.ctx, key)
	if err != nil {
		s.mu.Lock()
		s.err = errors.Join(s.err, err)
		s.mu.Unlock()
		return false
	}
	return ok
}

// start schedules the unit's page, marked seen in the crawl.
func (s *unitSpec) start(cr *crawl) {
	if key, _, ok := cr.key(s.url); ok {
		cr.mu.Lock()
		cr.seen[key] = true
		cr.mu.Unlock()
	}
	cr.schedule(s.url, s.depth)
}

// Add is Sink.Add.
func (s *unitSpec) Add(p *audit.Page) {
	s.mu.Lock()
	s.pages = append(s.pages, p)
	s.mu.Unlock()
}

// AddTraps is TrapSink.AddTraps.
func (s *unitSpec) AddTraps(ts []audit.CrawlTrap) {
	s.mu.Lock()
	s.traps = append(s.traps, ts...)
	s.mu.Unlock()
}

// Restore is Frontier.Restore: a unit has nothing to restore.
func (s *unitSpec) Restore(context.Context) ([]audit.FrontierEntry, []string, error) {
	return nil, nil, nil
}

// Queue is Frontier.Queue.
func (s *unitSpec) Queue(entries []audit.FrontierEntry) {
	s.mu.Lock()
	s.next = append(s.next, entries...)
	s.mu.Unlock()
}

// FetchUnit fetches one page of a distributed crawl of seeds (which
// define the scope, as for Crawl): pageURL, found depth links away from a
// seed. It is the recursive crawl's fetch of that page, with the links
// the page adds to the crawl returned instead of fetched, and the run's
// visited set asked through claim (the links' keys, and the URLs of
// redirects it follows). Options.Robots should be set (a gate shared by
// the units), else each unit reads robots.txt again. The error is a
// failure of claim or of the request's context; a page that could not be
// fetched is a page with FetchError.
func (c *Crawler) FetchUnit(ctx context.Context, seeds []string, pageURL string, depth int, claim Claim) (*UnitResult, error) {
	u, err := url.Parse(pageURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("crawl unit: %q is not an absolute http(s) URL", pageURL)
	}
	spec := &unitSpec{ctx: ctx, url: stripFragment(u), depth: depth, claim: claim}
	c2 := *c
	c2.unit = spec
	c2.sink = spec
	c2.opts.Frontier = spec
	c2.opts.OnPage = nil
	if _, err := c2.run(ctx, seeds, true, nil); err != nil {
		return nil, err
	}
	spec.mu.Lock()
	defer spec.mu.Unlock()
	if spec.err != nil {
		return nil, fmt.Errorf("crawl unit %s: seen set: %w", pageURL, spec.err)
	}
	if len(spec.pages) == 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("crawl unit %s: %w", pageURL, err)
		}
		return nil, fmt.Errorf("crawl unit %s: no page recorded", pageURL)
	}
	return &UnitResult{Page: spec.pages[0], Next: spec.next, Traps: spec.traps}, nil
}
