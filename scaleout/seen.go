package scaleout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// The seen set of a run lives in SeenBucket, one key per URL and role:
//
//	r<key>.c.<digest>  a page admitted to the crawl (crawler.Claim keys)
//	r<key>.t.<digest>  a target routed: value "crawl" (judged from its
//	                   page's response) or "live" (a check unit)
//	r<key>.d.<digest>  a crawled page stored (its own URLs: request URL,
//	                   redirect hops, final URL)
//
// A claim is a KV Create: the first writer wins. Its value names the
// claimer (the unit that made it), so that the same unit, redelivered
// after a crash between its claim and its publish, wins its claim again
// and publishes what it claimed: nothing is lost, and the stream's
// Nats-Msg-Id deduplication keeps it from being queued twice.

// claim is a seen-set entry.
type claim struct {
	Owner string `json:"o"`
	Value string `json:"v,omitempty"`
}

func seenKey(run string, role byte, u string) string {
	return "r" + run + "." + string(role) + "." + digest(u)
}

// Claim claims u in role ('c', 't') of a run for owner with value. It
// reports whether owner holds the claim (it won now, or it had won
// before) and the claim's value (the winner's).
func (q *Queue) Claim(ctx context.Context, run string, role byte, u, owner, value string) (bool, string, error) {
	key := seenKey(run, role, u)
	b, _ := json.Marshal(claim{Owner: owner, Value: value})
	for range 3 {
		_, err := q.seen.Create(ctx, key, b)
		if err == nil {
			return true, value, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return false, "", fmt.Errorf("seen set: claim %s: %w", u, err)
		}
		e, err := q.seen.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted meanwhile (run pruned): claim again
		}
		if err != nil {
			return false, "", fmt.Errorf("seen set: read %s: %w", u, err)
		}
		var c claim
		if err := json.Unmarshal(e.Value(), &c); err != nil {
			return false, "", fmt.Errorf("seen set: %s: %w", u, err)
		}
		return c.Owner == owner, c.Value, nil
	}
	return false, "", fmt.Errorf("seen set: claim %s: key keeps vanishing", u)
}

// Seen returns the value of u's claim in role, and whether it exists.
func (q *Queue) Seen(ctx context.Context, run string, role byte, u string) (string, bool, error) {
	e, err := q.seen.Get(ctx, seenKey(run, role, u))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("seen set: read %s: %w", u, err)
	}
	var c claim
	if err := json.Unmarshal(e.Value(), &c); err != nil {
		return "", false, fmt.Errorf("seen set: %s: %w", u, err)
	}
	return c.Value, true, nil
}

// markDone records that the page at u (one of its own URLs) is stored.
func (q *Queue) markDone(ctx context.Context, run string, u string) error {
	b, _ := json.Marshal(claim{Owner: "page"})
	if _, err := q.seen.Put(ctx, seenKey(run, 'd', u), b); err != nil {
		return fmt.Errorf("seen set: mark %s: %w", u, err)
	}
	return nil
}

// anchorsEntry is the anchors of a target checked live.
type anchorsEntry struct {
	URL     string   `json:"u"`
	Anchors []string `json:"a"`
}

// SaveAnchors keeps the anchors of a target checked live for the
// findings stage (#fragment links).
func (q *Queue) SaveAnchors(ctx context.Context, run string, u string, anchors []string) error {
	if anchors == nil {
		anchors = []string{}
	}
	b, err := json.Marshal(anchorsEntry{URL: u, Anchors: anchors})
	if err != nil {
		return err
	}
	if _, err := q.anchors.Put(ctx, "r"+run+"."+digest(u), b); err != nil {
		return fmt.Errorf("anchors of %s: %w", u, err)
	}
	return nil
}

// Anchors returns the anchors the workers kept for a run, by target URL.
func (q *Queue) Anchors(ctx context.Context, run string) (map[string][]string, error) {
	out := map[string][]string{}
	lister, err := q.anchors.ListKeysFiltered(ctx, "r"+run+".*")
	if err != nil {
		return nil, fmt.Errorf("anchors of run %s: %w", run, err)
	}
	for key := range lister.Keys() {
		e, err := q.anchors.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			lister.Stop()
			return nil, fmt.Errorf("anchors of run %s: %w", run, err)
		}
		var a anchorsEntry
		if err := json.Unmarshal(e.Value(), &a); err != nil {
			lister.Stop()
			return nil, fmt.Errorf("anchors of run %s: %w", run, err)
		}
		out[a.URL] = a.Anchors
	}
	return out, nil
}
