package crawler

import (
	"context"
	"net/http"
	"time"

	"github.com/linkrot/linkrot/politeness"
)

// deadlineTransport bounds each round trip of next, the reading of the
// response body included, by timeout from the moment it is sent. Placed
// under the politeness Scheduler's transport, it leaves out the time a
// request waits for its host's slot; http.Client.Timeout would count it.
type deadlineTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.timeout <= 0 {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	// The request's context ends with its body: read to the end, failed
	// or closed.
	resp.Body = politeness.OnDone(resp.Body, cancel)
	return resp, nil
}
