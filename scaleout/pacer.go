package scaleout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkrot/linkrot/politeness"
)

// hostState is a host's entry in HostsBucket, shared by every worker:
// the earliest start of the next request (Crawl-delay and --delay
// spacing) and the end of a pause a 429 or 503 asked for.
type hostState struct {
	Next  int64 `json:"next,omitempty"`  // unix nanoseconds
	Until int64 `json:"until,omitempty"` // unix nanoseconds
}

func hostKey(host string) string { return "h." + digest(host) }

// Pacer spaces and pauses the requests of all workers to one host through
// HostsBucket: each request reserves the next start slot of its host (a
// compare-and-set on the host's entry), and a 429 or 503 answer pauses
// the host for every worker until its Retry-After (1 s without one). The
// per-host limit on requests in flight is the consumers' MaxAckPending;
// the Pacer adds what needs time: spacing and pauses.
type Pacer struct {
	q *Queue
	// Delay returns the least time between the starts of two requests to
	// u's host (the larger of --delay and the robots.txt Crawl-delay); nil
	// or 0: no spacing, pauses only.
	Delay func(ctx context.Context, u *url.URL) time.Duration
	// MaxPause caps a pause (0: politeness.DefaultMaxRetryWait).
	MaxPause time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// NewPacer returns a Pacer on the queue's hosts bucket.
func (q *Queue) NewPacer(delay func(ctx context.Context, u *url.URL) time.Duration) *Pacer {
	return &Pacer{q: q, Delay: delay}
}

func (p *Pacer) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// update applies fn to host's entry with compare-and-set, retrying on a
// conflicting writer, and returns the entry written.
func (p *Pacer) update(ctx context.Context, host string, fn func(*hostState)) (hostState, error) {
	key := hostKey(host)
	for {
		var st hostState
		var rev uint64
		e, err := p.q.hosts.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return st, fmt.Errorf("host state of %s: %w", host, err)
		default:
			rev = e.Revision()
			if err := json.Unmarshal(e.Value(), &st); err != nil {
				st = hostState{}
			}
		}
		fn(&st)
		b, _ := json.Marshal(st)
		if rev == 0 {
			_, err = p.q.hosts.Create(ctx, key, b)
		} else {
			_, err = p.q.hosts.Update(ctx, key, b, rev)
		}
		if err == nil {
			return st, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongSequence(err) {
			return st, fmt.Errorf("host state of %s: %w", host, err)
		}
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
	}
}

func isWrongSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

// Reserve waits until host may be sent a request, d after the previous
// reserved start and after any pause, and takes that slot.
func (p *Pacer) Reserve(ctx context.Context, host string, d time.Duration) error {
	for {
		var start time.Time
		if d > 0 {
			st, err := p.update(ctx, host, func(st *hostState) {
				s := max(p.now().UnixNano(), st.Next, st.Until)
				st.Next = s + int64(d)
				start = time.Unix(0, s)
			})
			if err != nil {
				return err
			}
			_ = st
		} else {
			until, err := p.pausedUntil(ctx, host)
			if err != nil {
				return err
			}
			start = until
		}
		if err := sleepUntil(ctx, start, p.now()); err != nil {
			return err
		}
		// A pause that began while this request waited for its slot is
		// honoured too.
		until, err := p.pausedUntil(ctx, host)
		if err != nil {
			return err
		}
		if !until.After(p.now()) {
			return nil
		}
	}
}

// pausedUntil returns the end of host's pause (zero: none).
func (p *Pacer) pausedUntil(ctx context.Context, host string) (time.Time, error) {
	e, err := p.q.hosts.Get(ctx, hostKey(host))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("host state of %s: %w", host, err)
	}
	var st hostState
	if json.Unmarshal(e.Value(), &st) != nil || st.Until == 0 {
		return time.Time{}, nil
	}
	return time.Unix(0, st.Until), nil
}

// Pause pauses host for every worker until until (a later pause wins).
func (p *Pacer) Pause(ctx context.Context, host string, until time.Time) error {
	_, err := p.update(ctx, host, func(st *hostState) {
		st.Until = max(st.Until, until.UnixNano())
	})
	return err
}

func sleepUntil(ctx context.Context, t, now time.Time) error {
	d := t.Sub(now)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// Transport returns next behind the Pacer: each request reserves its
// host's slot first, and a 429 or 503 answer pauses the host for all.
func (p *Pacer) Transport(next http.RoundTripper) http.RoundTripper {
	return &pacedTransport{p: p, next: next}
}

type pacedTransport struct {
	p    *Pacer
	next http.RoundTripper
}

func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	host := politeness.Key(req.URL)
	var d time.Duration
	if t.p.Delay != nil {
		d = t.p.Delay(req.Context(), req.URL)
	}
	if err := t.p.Reserve(req.Context(), host, d); err != nil {
		return nil, fmt.Errorf("pacing %s: %w", host, err)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		now := t.p.now()
		wait, ok := politeness.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
		if !ok && resp.StatusCode == http.StatusTooManyRequests {
			wait, ok = politeness.DefaultPause, true
		}
		if ok {
			maxPause := t.p.MaxPause
			if maxPause <= 0 {
				maxPause = politeness.DefaultMaxRetryWait
			}
			if perr := t.p.Pause(context.WithoutCancel(req.Context()), host, now.Add(min(wait, maxPause))); perr != nil {
				resp.Body.Close()
				return nil, perr
			}
		}
	}
	return resp, nil
}
