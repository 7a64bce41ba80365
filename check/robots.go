package check

// robots.txt for the audited site's own URLs in the check stage. The
// crawler owns robots.txt (fetching, caching, RFC 9309 semantics); the
// checker asks it through RobotsGate, so that both stages obey the same
// file and share one Crawl-delay budget per host.

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/linkrot/linkrot/politeness"
)

// RobotsGate is robots.txt applied to the audited site's own URLs (the
// hosts the crawl covers): a URL it disallows is never requested, by the
// crawl or by a check, and its Crawl-delay bounds every request to the
// host. URLs of other hosts (external links) are not its business: it
// allows them and gives them no delay. crawler.RobotsGate implements it.
// Implementations must be safe for concurrent use.
type RobotsGate interface {
	// Disallowed returns why u may not be fetched ("disallowed by
	// robots.txt", or robots.txt unreachable, which disallows everything
	// under RFC 9309), or "" when it may.
	Disallowed(ctx context.Context, u *url.URL) string
	// CrawlDelay returns the Crawl-delay that applies to u's host, 0 for
	// none. A shared per-host scheduler takes it from here.
	CrawlDelay(ctx context.Context, u *url.URL) time.Duration
	// Wait blocks until a request to u may start under its host's
	// Crawl-delay (one request at a time, at least the delay after the
	// previous one ended, across every stage sharing the gate) and returns
	// the function to call once the response is done. For hosts without a
	// delay it returns at once. The error is ctx's.
	Wait(ctx context.Context, u *url.URL) (done func(), err error)
}

// robotsSkip returns why a target may not be fetched under Options.Robots,
// "" when it may.
func (rs *runState) robotsSkip(ctx context.Context, u *url.URL) string {
	if rs.o.Robots == nil {
		return ""
	}
	return rs.o.Robots.Disallowed(ctx, u)
}

// robotsError reports a request not sent because the audited site's
// robots.txt disallows its URL.
type robotsError struct {
	URL    string
	Reason string
}

func (e *robotsError) Error() string { return "not requested: " + e.Reason + ": " + e.URL }

// pacedTransport makes every request wait for its host's turn under a
// RobotsGate's Crawl-delay (each attempt, retry, redirect hop and soft-404
// probe is one request) and refuses requests to URLs the gate disallows.
type pacedTransport struct {
	next http.RoundTripper
	gate RobotsGate
}

// withRobotsPacing wraps rt when a gate is set.
func withRobotsPacing(rt http.RoundTripper, gate RobotsGate) http.RoundTripper {
	if gate == nil {
		return rt
	}
	return &pacedTransport{next: rt, gate: gate}
}

func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The last line of defence: a request the checker makes on its own
	// (a soft-404 probe) to a URL robots.txt disallows is not sent.
	if why := t.gate.Disallowed(req.Context(), req.URL); why != "" {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &robotsError{URL: req.URL.Redacted(), Reason: why}
	}
	done, err := t.gate.Wait(req.Context(), req.URL)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		done()
		return nil, err
	}
	resp.Body = politeness.OnDone(resp.Body, done)
	return resp, nil
}

// CloseIdleConnections closes the wrapped transport's idle connections.
func (t *pacedTransport) CloseIdleConnections() {
	if ci, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
