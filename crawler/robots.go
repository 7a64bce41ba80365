package crawler

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// robots fetches and caches robots.txt per scheme+host with RFC 9309
// semantics, using the same parser Colly uses (temoto/robotstxt):
//   - 2xx: parsed (at most 512 KiB, RFC 9309 asks for at least 500 KiB);
//   - 4xx: unavailable, everything allowed;
//   - 5xx or a network failure: unreachable, everything disallowed;
//   - redirects: up to 5 hops are followed while they stay on the host
//     name of the robots.txt URL (any port, http or https: see
//     sameHostRedirects). A redirect elsewhere, or a sixth hop, is not
//     followed and robots.txt counts as unavailable (RFC 9309 2.3.1.2 lets
//     a crawler stop after five hops and assume so): the cloud metadata
//     service or an intranet host is never asked for it;
//   - a connection the SSRF guard refuses (the host resolves to a
//     link-local, or a private address outside the crawl's scope):
//     unavailable, no robots.txt can be read there; the pages themselves
//     are refused by the same guard and recorded as refused.
//
// linkrot does the robots check itself instead of Colly's: Colly drops a
// disallowed request without telling any callback (the page would silently
// vanish from the audit) and does not expose Crawl-delay.
type robots struct {
	client *http.Client
	ua     string

	mu    sync.Mutex
	hosts map[string]*robotsEntry
}

type robotsEntry struct {
	once  sync.Once
	data  *robotstxt.RobotsData
	group *robotstxt.Group
	err   error
	// fetched is when the robots.txt request ended: a Crawl-delay counts
	// from it too.
	fetched time.Time
}

func newRobots(client *http.Client, ua string) *robots {
	return &robots{client: client, ua: ua, hosts: map[string]*robotsEntry{}}
}

func (r *robots) entry(ctx context.Context, u *url.URL) *robotsEntry {
	key := u.Scheme + "://" + u.Host
	r.mu.Lock()
	e := r.hosts[key]
	if e == nil {
		e = &robotsEntry{}
		r.hosts[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() {
		e.data, e.err = r.fetch(ctx, key+"/robots.txt")
		if e.err != nil {
			e.data, _ = robotstxt.FromStatusAndBytes(http.StatusServiceUnavailable, nil)
		}
		e.group = e.data.FindGroup(r.ua)
		e.fetched = time.Now()
	})
	return e
}

func (r *robots) fetch(ctx context.Context, u string) (*robotstxt.RobotsData, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("robots.txt request: %w", err)
	}
	req.Header.Set("User-Agent", r.ua)
	resp, err := r.client.Do(req)
	if err != nil {
		if isRefused(err) {
			return robotstxt.FromStatusAndBytes(http.StatusNotFound, nil)
		}
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 512<<10))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", u, err)
	}
	status := resp.StatusCode
	if status >= 300 && status < 400 {
		// A redirect not followed (off the host, or beyond five hops):
		// treat as unavailable.
		status = http.StatusNotFound
	}
	data, err := robotstxt.FromStatusAndBytes(status, body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", u, err)
	}
	return data, nil
}

// Allowed reports whether the user agent may fetch u. The error explains an
// unreachable robots.txt (which disallows everything).
func (r *robots) Allowed(ctx context.Context, u *url.URL) (bool, error) {
	e := r.entry(ctx, u)
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return e.data.TestAgent(p, r.ua), e.err
}

// fetchedAt returns when u's robots.txt was read (fetching it first).
func (r *robots) fetchedAt(ctx context.Context, u *url.URL) time.Time {
	return r.entry(ctx, u).fetched
}

// CrawlDelay returns the Crawl-delay for the user agent on u's host, capped
// at max so a hostile robots.txt cannot stall the run.
func (r *robots) CrawlDelay(ctx context.Context, u *url.URL, max time.Duration) time.Duration {
	e := r.entry(ctx, u)
	if e.group == nil {
		return 0
	}
	if d := e.group.CrawlDelay; d > 0 {
		return min(d, max)
	}
	return 0
}
