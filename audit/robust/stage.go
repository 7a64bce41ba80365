package robust

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// Store is what the archives stage reads and writes of a run.
type Store interface {
	Pages(ctx context.Context, runID int64) ([]*audit.Page, error)
	LinkRefs(ctx context.Context, runID int64) ([]audit.LinkRef, error)
	Targets(ctx context.Context, runID int64) ([]audit.TargetRef, error)
	Checks(ctx context.Context, runID int64) ([]audit.Check, error)
	TargetsFirstSeen(ctx context.Context, runID int64) (map[int64]time.Time, error)
	LinksFirstSeen(ctx context.Context, runID int64) (map[int64]time.Time, error)
	// LinkDates are the distinct LinksFirstSeen dates of the run's links
	// to one target stored so far.
	LinkDates(ctx context.Context, runID int64, targetURL string) ([]time.Time, error)
	FirstFingerprints(ctx context.Context, runID int64) (map[int64]*audit.Check, error)
	// EarlierFingerprints is FirstFingerprints without the targets whose
	// first fingerprint is of runID itself.
	EarlierFingerprints(ctx context.Context, runID int64) (map[int64]*audit.Check, error)
	// EachCheck calls fn with each check of a run.
	EachCheck(ctx context.Context, runID int64, fn func(c *audit.Check) error) error
	KnownLookups(ctx context.Context, runID int64, since time.Time) ([]audit.Memento, error)
	SaveRequests(ctx context.Context, runID int64) ([]audit.SaveRequest, error)
	ClearArchives(ctx context.Context, runID int64) error
	ClearFirstSeenDrift(ctx context.Context, runID int64) error
	SaveSnapshotChecks(ctx context.Context, checks []audit.SnapshotCheck) error
	SaveMementos(ctx context.Context, ms []audit.Memento) error
	SaveDrifts(ctx context.Context, ds []audit.Drift) error
	SaveDriftFailures(ctx context.Context, fs []audit.DriftFailure) error
	SaveIdentifierChecks(ctx context.Context, ics []audit.IdentifierCheck) error
	SaveSuggestions(ctx context.Context, sgs []audit.Suggestion) error
	SaveSaveRequests(ctx context.Context, rs []audit.SaveRequest) error
	SaveSnapshotSkips(ctx context.Context, ss []audit.SnapshotSkip) error
}

// Stage is the archives stage of a run as the pipeline runs it (it is a
// linkrot.Archiver): Begin before the checks; Checked with each target
// whose live verdict is in, so that the nearest-memento lookups of broken
// targets start while the other targets are still being checked; Finish
// after the checks, which runs Run over the whole run (the answers asked
// ahead are taken, the rest asked: a target not looked up yet is looked up
// then) and stores everything, replacing what an earlier pass stored.
// Nothing is stored before Finish: a run killed before its end asks again
// when resumed.
type Stage struct {
	// Store is the run database (required).
	Store Store
	// Options configure Run. Known and Saved are set by the stage.
	Options Options
	// MaxAge reuses archive answers of earlier runs younger than this
	// (0: always ask).
	MaxAge time.Duration
	// Queue bounds the broken targets, and the questions per archive,
	// waiting to be asked ahead (default 1024). A target finding the
	// queue full is looked up by Finish.
	Queue int

	run     *audit.Run
	pre     *prefetch
	targets chan string
	wg      sync.WaitGroup
	once    sync.Once
	sum     *Summary
}

// Begin starts the stage for run: the workers asking ahead. Its context
// bounds the lookups asked ahead.
func (st *Stage) Begin(ctx context.Context, run *audit.Run) error {
	st.run = run
	if st.Options.Offline {
		return nil
	}
	if st.MaxAge > 0 {
		known, err := st.Store.KnownLookups(ctx, run.ID, time.Now().Add(-st.MaxAge))
		if err != nil {
			return err
		}
		st.Options.Known = known
	}
	q := st.Queue
	if q <= 0 {
		q = 1024
	}
	s := newStage(st.Options, Input{RunID: run.ID}, Sink{})
	st.pre = newPrefetch(ctx, s, q)
	st.targets = make(chan string, q)
	st.wg.Go(func() { st.resolve(ctx) })
	return nil
}

// Checked hands over a target whose live check is stored (with the links
// to it): a broken target's nearest-memento questions (the date each
// link was first seen) are queued for every archive. It never blocks.
func (st *Stage) Checked(c *audit.Check) {
	if st.pre == nil || c == nil || !c.Verdict.Broken() || !isHTTP(c.URL) {
		return
	}
	select {
	case st.targets <- c.URL:
	default: // full: Finish looks it up
	}
}

// resolve turns queued targets into questions.
func (st *Stage) resolve(ctx context.Context) {
	for u := range st.targets {
		if ctx.Err() != nil {
			continue
		}
		dates, err := st.Store.LinkDates(ctx, st.run.ID, u)
		if err != nil {
			continue // Finish looks it up
		}
		for _, at := range dates {
			st.pre.ask(want{uriR: u, at: at, from: "first-seen"})
		}
	}
}

// closeStream ends the stream of targets and waits for the questions
// under way to be queued.
func (st *Stage) closeStream() {
	st.once.Do(func() {
		if st.targets != nil {
			close(st.targets)
		}
	})
	st.wg.Wait()
}

// Close stops the lookups asked ahead and waits for them, without
// storing anything (a run that ends before Finish). It may be called more
// than once, also after Finish.
func (st *Stage) Close() {
	st.closeStream()
	st.pre.stop()
}

// Finish runs the stage over the whole run, taking the answers asked
// ahead, and stores what it finds. Network failures are results; an error
// means the stage could not go on (store failure, cancellation).
func (st *Stage) Finish(ctx context.Context) error {
	st.closeStream()
	defer st.pre.stop()
	run := st.run
	if st.Options.Offline {
		return st.firstSeenOnly(ctx)
	}
	in, err := st.input(ctx)
	if err != nil {
		return err
	}
	// Save Page Now requests an interrupted pass of the stage sent are
	// kept (ClearArchives leaves them) and never sent again.
	prior, err := st.Store.SaveRequests(ctx, run.ID)
	if err != nil {
		return err
	}
	sent := make(map[string]bool, len(prior))
	for _, r := range prior {
		sent[r.URL] = true
	}
	if err := st.Store.ClearArchives(ctx, run.ID); err != nil {
		return err
	}
	wctx := context.WithoutCancel(ctx)
	wo := audit.WriterOptions{BatchSize: 500}
	snaps := audit.NewBatcher(wctx, st.Store.SaveSnapshotChecks, wo)
	mems := audit.NewBatcher(wctx, st.Store.SaveMementos, wo)
	drifts := audit.NewBatcher(wctx, st.Store.SaveDrifts, wo)
	driftFails := audit.NewBatcher(wctx, st.Store.SaveDriftFailures, wo)
	idents := audit.NewBatcher(wctx, st.Store.SaveIdentifierChecks, wo)
	suggs := audit.NewBatcher(wctx, st.Store.SaveSuggestions, wo)
	saves := audit.NewBatcher(wctx, st.Store.SaveSaveRequests, wo)
	skips := audit.NewBatcher(wctx, st.Store.SaveSnapshotSkips, wo)
	sink := Sink{
		SnapshotCheck: snaps.Add,
		Memento:       mems.Add,
		Drift:         drifts.Add,
		DriftFailure:  driftFails.Add,
		Identifier:    idents.Add,
		Suggestion:    suggs.Add,
		Save:          saves.Add,
		SnapshotSkip:  skips.Add,
	}
	opts := st.Options
	opts.Saved = func(u string) bool { return sent[u] }
	opts.pre = st.pre
	if opts.Logger != nil {
		names := make([]string, len(opts.Archives))
		for i, a := range opts.Archives {
			names[i] = a.Name
		}
		asked := 0
		if st.pre != nil {
			asked = st.pre.started()
		}
		opts.Logger.Info("archives stage", "run", run.ID, "links", len(in.Links), "archives", strings.Join(names, ","), "asked_during_checks", asked)
	}
	sum, runErr := Run(ctx, opts, in, sink)
	var errs []error
	for _, b := range []interface{ Close() error }{snaps, mems, drifts, driftFails, idents, suggs, saves, skips} {
		errs = append(errs, b.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("save archive results: %w", err)
	}
	if sum != nil {
		for _, r := range prior {
			sum.Saves[r.Status]++
		}
	}
	st.sum = sum
	return runErr
}

// Summary returns what Finish found (nil before).
func (st *Stage) Summary() *Summary { return st.sum }

// AskedAhead returns the number of lookups asked while the checks ran.
func (st *Stage) AskedAhead() int {
	if st.pre == nil {
		return 0
	}
	return st.pre.started()
}

// firstSeenOnly is the stage with Options.Offline (linkrot --no-archives):
// first-seen drift (each fingerprinted target against its first
// fingerprint), which needs no network, replacing what an earlier pass
// measured for the run.
func (st *Stage) firstSeenOnly(ctx context.Context) error {
	run := st.run
	// Only targets fingerprinted by an earlier run have a first-seen
	// drift: only their checks are held (a run's checks all at once were
	// the peak of its memory).
	in := Input{RunID: run.ID, Checks: map[int64]*audit.Check{}}
	var err error
	if in.Reference, err = st.Store.EarlierFingerprints(ctx, run.ID); err != nil {
		return err
	}
	if len(in.Reference) > 0 {
		err = st.Store.EachCheck(ctx, run.ID, func(c *audit.Check) error {
			if in.Reference[c.TargetID] != nil {
				in.Checks[c.TargetID] = c
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("load checks: %w", err)
		}
	}
	if err := st.Store.ClearFirstSeenDrift(ctx, run.ID); err != nil {
		return err
	}
	drifts := audit.NewBatcher(context.WithoutCancel(ctx), st.Store.SaveDrifts, audit.WriterOptions{BatchSize: 500})
	sum, runErr := Run(ctx, Options{Offline: true, Thresholds: st.Options.Thresholds, Logger: st.Options.Logger}, in, Sink{Drift: drifts.Add})
	if err := drifts.Close(); err != nil {
		return fmt.Errorf("save drift: %w", err)
	}
	st.sum = sum
	return runErr
}

// input loads what Run needs of the run.
func (st *Stage) input(ctx context.Context) (Input, error) {
	store, run := st.Store, st.run
	in := Input{RunID: run.ID, Checks: map[int64]*audit.Check{}}
	pages, err := store.Pages(ctx, run.ID)
	if err != nil {
		return in, fmt.Errorf("load pages: %w", err)
	}
	refs, err := store.LinkRefs(ctx, run.ID)
	if err != nil {
		return in, fmt.Errorf("load links: %w", err)
	}
	targets, err := store.Targets(ctx, run.ID)
	if err != nil {
		return in, fmt.Errorf("load targets: %w", err)
	}
	targetURL := make(map[int64]string, len(targets))
	for _, t := range targets {
		targetURL[t.ID] = t.URL
	}
	checks, err := store.Checks(ctx, run.ID)
	if err != nil {
		return in, fmt.Errorf("load checks: %w", err)
	}
	for i := range checks {
		in.Checks[checks[i].TargetID] = &checks[i]
	}
	if in.FirstSeen, err = store.TargetsFirstSeen(ctx, run.ID); err != nil {
		return in, err
	}
	if in.LinkFirstSeen, err = store.LinksFirstSeen(ctx, run.ID); err != nil {
		return in, err
	}
	if in.Reference, err = store.FirstFingerprints(ctx, run.ID); err != nil {
		return in, err
	}
	// Pages and LinkRefs both list links by page, then document order.
	k := 0
	for _, p := range pages {
		if len(p.Identifiers) > 0 {
			in.Pages = append(in.Pages, OwnPage{URL: p.URL, Identifiers: p.Identifiers})
		}
		first := len(in.Links)
		for _, l := range p.Links {
			if k >= len(refs) || refs[k].Href != l.Href || refs[k].PageURL != p.URL {
				return in, fmt.Errorf("load links: pages and link rows disagree at link %d", k)
			}
			r := refs[k]
			k++
			in.Links = append(in.Links, Link{ID: r.LinkID, PageURL: p.URL, Link: l, TargetID: r.TargetID, TargetURL: targetURL[r.TargetID]})
		}
		for _, w := range p.PWIDs {
			if w.Link >= 0 && first+w.Link < len(in.Links) {
				in.Links[first+w.Link].PWIDs = append(in.Links[first+w.Link].PWIDs, w)
			}
		}
	}
	if k != len(refs) {
		return in, fmt.Errorf("load links: %d link rows, %d links in pages", len(refs), k)
	}
	return in, nil
}
