package crawler

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gocolly/colly/v2"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// Frontier persists a crawl's frontier as the crawl goes, so that an
// interrupted crawl can resume where it stopped: no page fetched twice, no
// page lost.
//
// A crawl's frontier is in two places: which URLs were queued or fetched
// (the crawler's own visited set: it allows Colly to revisit and decides
// itself) and the requests waiting in Colly's queue.Storage. Both are
// rebuilt from what Restore returns; while the crawl runs, every URL that
// passes the crawler's filters is handed to Queue before it reaches Colly's
// queue.
//
// Methods may be called from several goroutines.
type Frontier interface {
	// Restore returns the frontier of the crawl being resumed: the URLs
	// queued so far (with their depth) and the URLs already visited
	// (pages recorded, and the URLs their redirect chains went through).
	// A new crawl returns neither. It is called once, before the first
	// request.
	Restore(ctx context.Context) (queued []audit.FrontierEntry, visited []string, err error)
	// Queue records URLs entering the queue. The crawler calls it before it
	// hands the page that discovered them to the Sink, so an implementation
	// that writes both through one ordered writer never stores a page
	// without the URLs it queued: after a crash, a page either is stored
	// with its links queued, or is fetched again.
	Queue(entries []audit.FrontierEntry)
}

// Admitter is implemented by a Frontier that must know a URL is the
// crawl's from the moment it is admitted. The crawler calls Admitted
// inside its admission lock, before any other page's admission can find
// the URL taken, so that a page recorded meanwhile that links to it
// (whose own admission of the URL failed) never finds the URL unclaimed:
// Queue comes only after the admitting page has admitted all its links.
// Admitted must be quick and must not block on anything the crawl waits
// for.
type Admitter interface {
	Admitted(url string)
}

// noFrontier is the default Frontier: nothing to resume, nothing kept.
type noFrontier struct{}

func (noFrontier) Restore(context.Context) ([]audit.FrontierEntry, []string, error) {
	return nil, nil, nil
}
func (noFrontier) Queue([]audit.FrontierEntry) {}

// restore loads the frontier of an interrupted crawl into cr: visited and
// queued URLs become seen (and count toward MaxPages as they did), and the
// queued URLs not visited are returned to be scheduled again.
func (cr *crawl) restore(ctx context.Context) ([]audit.FrontierEntry, error) {
	queued, visited, err := cr.frontier.Restore(ctx)
	if err != nil {
		return nil, fmt.Errorf("crawl: restore frontier: %w", err)
	}
	if len(queued) == 0 && len(visited) == 0 {
		return nil, nil
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for _, v := range visited {
		if u, err := parseURL(v); err == nil {
			if key, _, ok := cr.key(u); ok {
				cr.seen[key] = true
			}
		}
	}
	counted := map[string]bool{}
	var pending []audit.FrontierEntry
	for _, q := range queued {
		u, err := parseURL(q.URL)
		if err != nil {
			continue
		}
		key, _, ok := cr.key(u)
		if !ok || counted[key] {
			continue
		}
		counted[key] = true
		cr.queued++
		if !cr.seen[key] {
			cr.seen[key] = true
			pending = append(pending, q)
		}
	}
	cr.opts.Logger.Info("resuming crawl", "visited", len(visited), "queued", len(counted), "pending", len(pending))
	return pending, nil
}

// queue hands newly admitted URLs to the Frontier.
func (cr *crawl) queue(urls []*url.URL, depth int) {
	if len(urls) == 0 {
		return
	}
	entries := make([]audit.FrontierEntry, len(urls))
	for i, u := range urls {
		entries[i] = audit.FrontierEntry{URL: u.String(), Depth: depth}
	}
	cr.frontier.Queue(entries)
}

// setHostHeaders adds the headers of the first HostRule matching the
// request's URL.
func setHostHeaders(rules []politeness.HostRule, r *colly.Request) {
	for _, rule := range rules {
		if rule.Matches(r.URL) {
			if r.Headers == nil {
				h := http.Header{}
				r.Headers = &h
			}
			for k, v := range rule.Headers {
				r.Headers.Set(k, v)
			}
			return
		}
	}
}
