package scaleout

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// Follow is told what the workers report, for a progress display.
type Follow struct {
	// Page is called for each page stored, with its number of links.
	Page func(links int)
	// Checked is called for each check stored.
	Checked func()
}

// CoordinateConfig configures Coordinate.
type CoordinateConfig struct {
	Queue *Queue
	// Run is the run, created (or reopened by --resume) by the caller.
	Run *audit.Run
	// Seeds are the crawl's seeds.
	Seeds []string
	// Targets are targets of a run whose links are stored already (the
	// reference list of linkrot study), to check without a crawl: each
	// is claimed and published as a check unit. The caller passes those
	// not checked yet, so that a re-attached coordinator checks none
	// twice.
	Targets []string
	// PerHost is the most units of one host in flight (MaxAckPending of
	// each partition's consumer).
	PerHost int
	// Follow receives the workers' progress (zero: none).
	Follow Follow
	// Poll is how often the stream is asked whether the run drained (0:
	// 250 ms).
	Poll time.Duration
	// Stored reports whether the run's store has the page of a seed (a
	// resumed run whose seed was claimed but perhaps never queued); nil:
	// seeds already claimed are published again (deduplicated within the
	// stream's window, idempotent anyway).
	Stored func(ctx context.Context, run int64, u string) bool
	Logger *slog.Logger
}

// Coordinate is the crawl and the checks of a run in the scale-out mode,
// as linkrot.Config.Work: it makes sure the consumers exist, enqueues the
// seeds, follows the workers' progress and returns once the run's units
// are all done (none queued, none in flight), with the anchors the
// findings stage needs. Killed and started again on the same run, it
// re-attaches: the seen set and the queue are where they were.
func Coordinate(ctx context.Context, c CoordinateConfig) (map[string][]string, error) {
	q, run, key := c.Queue, c.Run.ID, RunKey(c.Run)
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if c.Poll <= 0 {
		c.Poll = 250 * time.Millisecond
	}
	if err := q.EnsureConsumers(ctx, c.PerHost); err != nil {
		return nil, err
	}
	sub, err := q.nc.Subscribe(ProgressPrefix+"."+key, func(m *nats.Msg) {
		s := string(m.Data)
		switch {
		case strings.HasPrefix(s, "p ") && c.Follow.Page != nil:
			n, _ := strconv.Atoi(s[2:])
			c.Follow.Page(n)
		case s == "c" && c.Follow.Checked != nil:
			c.Follow.Checked()
		}
	})
	if err != nil {
		return nil, fmt.Errorf("follow progress: %w", err)
	}
	defer sub.Unsubscribe()
	for _, s := range c.Seeds {
		su, err := url.Parse(strings.TrimSpace(s))
		if err != nil || (su.Scheme != "http" && su.Scheme != "https") || su.Host == "" {
			return nil, fmt.Errorf("seed %q is not an absolute http(s) URL", s)
		}
		su.Fragment, su.RawFragment = "", ""
		norm, err := urls.NormalizeURL(su.String())
		if err != nil {
			return nil, fmt.Errorf("seed %q: %w", s, err)
		}
		won, _, err := q.Claim(ctx, key, 'c', norm, "seed", "")
		if err != nil {
			return nil, err
		}
		if !won && c.Stored != nil && c.Stored(ctx, run, norm) {
			continue
		}
		if err := q.Publish(ctx, Unit{Run: run, Key: key, Kind: KindCrawl, URL: su.String()}); err != nil {
			return nil, err
		}
	}
	for _, t := range c.Targets {
		won, _, err := q.Claim(ctx, key, 't', t, "stored", "live")
		if err != nil {
			return nil, err
		}
		if !won {
			continue // a worker routed it already
		}
		if err := q.Publish(ctx, Unit{Run: run, Key: key, Kind: KindCheck, URL: t}); err != nil {
			return nil, err
		}
	}
	log.Info("run enqueued: waiting for the workers", "run", run)
	// Drained: no unit of the run in the stream, twice in a row (a unit
	// leaves the stream when acked, after what it produced was published).
	zero := 0
	lastLog, lastErr := time.Now(), time.Time{}
	// A run whose queue does not move for a while: no worker is running.
	lastN, movedAt, hinted := uint64(0), time.Now(), false
	t := time.NewTicker(c.Poll)
	defer t.Stop()
	for zero < 2 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		n, err := q.Pending(ctx, key)
		if err != nil {
			// The server restarting or a connection being re-established:
			// the work is in the stream, wait for it.
			if time.Since(lastErr) > 10*time.Second {
				log.Warn("progress of the run not readable: retrying", "run", run, "err", err)
				lastErr = time.Now()
			}
			zero = 0
			continue
		}
		if n == 0 {
			zero++
		} else {
			zero = 0
		}
		if n != lastN {
			lastN, movedAt = n, time.Now()
		} else if n > 0 && !hinted && time.Since(movedAt) > 30*time.Second {
			hinted = true
			log.Warn("the run's queue has not changed for 30s: is a linkrot worker running on this NATS server and database?", "run", run, "units_left", n)
		}
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			log.Info("waiting for the workers", "run", run, "units_left", n)
		}
	}
	for {
		anchors, err := q.Anchors(ctx, key)
		if err == nil || ctx.Err() != nil {
			return anchors, err
		}
		log.Warn("anchors not readable: retrying", "run", run, "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
