package archives

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// Store is what the archives stage reads and writes of a run.
type Store interface {
	// LinkDates are the distinct first-seen dates of the run's links
	// to one target stored so far.
	LinkDates(ctx context.Context, runID int64, targetURL string) ([]time.Time, error)
	// EarlierFingerprints are, by target of the run, its first
	// fingerprinted check, for the targets whose first is of an earlier
	// run.
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

	// The chunks of Finish: a chunk is the targets with IDs in [from, to]
	// (to = 0: the links without a target).

	// TargetsAfter returns up to limit targets linked from the run with
	// ID > after, in ID order, with their numbers of links.
	TargetsAfter(ctx context.Context, runID, after int64, limit int) ([]audit.TargetRef, error)
	// EachTargetLink calls fn with each link of the chunk, its page's
	// URL, its target's URL and ID, and its pwids.
	EachTargetLink(ctx context.Context, runID, from, to int64, fn func(linkID int64, pageURL, targetURL string, targetID int64, l *audit.Link, pwids []audit.PWID) error) error
	ChecksOf(ctx context.Context, runID, from, to int64) ([]audit.Check, error)
	TargetsFirstSeenOf(ctx context.Context, runID, from, to int64) (map[int64]time.Time, error)
	LinksFirstSeenOf(ctx context.Context, runID, from, to int64) (map[int64]time.Time, error)
	FirstFingerprintsOf(ctx context.Context, runID, from, to int64) (map[int64]*audit.Check, error)
	// EachOriginalLink calls fn with each link of the run declaring a
	// data-originalurl and its target's URL.
	EachOriginalLink(ctx context.Context, runID int64, fn func(linkID int64, targetURL string, l *audit.Link) error) error
	// RunTargetIDs returns the IDs of the run's targets with these URLs.
	RunTargetIDs(ctx context.Context, runID int64, urls []string) (map[string]int64, error)
	// SharedCheckURLs returns the URLs at which the checks of two or
	// more of the run's targets ended (final URL, else the target's).
	SharedCheckURLs(ctx context.Context, runID int64) ([]string, error)
	// PageIdentifiers returns the run's pages declaring identifiers (URL
	// and identifiers).
	PageIdentifiers(ctx context.Context, runID int64) ([]*audit.Page, error)
}

// Stage is the archives stage of a run as the pipeline runs it (it is a
// linkrot.Archiver): Begin before the checks; Checked with each target
// whose live verdict is in, so that the nearest-memento lookups of broken
// targets start while the other targets are still being checked; Finish
// after the checks, which runs the stage over the whole run (the answers
// asked ahead are taken, the rest asked: a target not looked up yet is
// looked up then) and stores everything, replacing what an earlier pass
// stored. Finish works through the run in chunks of targets (by target
// ID), each loaded from the store when its turn comes, so that its memory
// grows with a chunk, not with the run; what chunks share (a question
// about a data-originalurl, a declared snapshot, a live page two chunks
// want, the own pages' identifiers, Save Page Now requests) is asked,
// fetched or sent once per run all the same. Nothing is stored before
// Finish: a run killed before its end asks again when resumed.
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
	// ChunkTargets and ChunkLinks bound a chunk of Finish: it takes
	// targets in ID order until it has ChunkTargets of them (default
	// 4096) or ChunkLinks links to them (default 50,000; a target with
	// more is a chunk of its own). Finish holds one chunk's links, checks
	// and dates at a time.
	ChunkTargets int
	ChunkLinks   int

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
	s := newStage(st.Options, stageInput{RunID: run.ID}, stageSink{})
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

// Finish runs the stage over the whole run, chunk by chunk (see
// ChunkTargets), taking the answers asked ahead, and stores what it finds. Network failures are results; an error
// means the stage could not go on (store failure, cancellation).
func (st *Stage) Finish(ctx context.Context) error {
	st.closeStream()
	defer st.pre.stop()
	run := st.run
	if st.Options.Offline {
		return st.firstSeenOnly(ctx)
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
	sink := stageSink{
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
	names := make([]string, len(opts.Archives))
	for i, a := range opts.Archives {
		names[i] = a.Name
	}
	var log *slog.Logger
	if opts.Logger != nil {
		log = opts.Logger
		log.Info("archives stage", "run", run.ID, "archives", strings.Join(names, ","), "asked_during_checks", st.AskedAhead())
	}
	sum, links, runErr := st.chunks(ctx, opts, sink)
	if log != nil && runErr == nil {
		log.Info("archives stage done", "run", run.ID, "links", links)
	}
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
	in := stageInput{RunID: run.ID, Checks: map[int64]*audit.Check{}}
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
	sum, runErr := runStage(ctx, Options{Offline: true, Thresholds: st.Options.Thresholds, Logger: st.Options.Logger}, in, stageSink{Drift: drifts.Add})
	if err := drifts.Close(); err != nil {
		return fmt.Errorf("save drift: %w", err)
	}
	st.sum = sum
	return runErr
}

// chunks runs the stage over the run in chunks of targets (see
// ChunkTargets), sharing one run state: first the questions about
// another resource than a link's target (data-originalurl) are asked,
// the only ones two chunks could ask; then each chunk is loaded and run,
// the links without a target first. It returns the Summary and the
// number of links.
func (st *Stage) chunks(ctx context.Context, opts Options, sink stageSink) (*Summary, int, error) {
	run := st.run
	base := newStage(opts, stageInput{RunID: run.ID}, sink)
	if err := st.crossTarget(ctx, base); err != nil {
		return base.rs.sum, 0, err
	}
	pages, err := st.Store.PageIdentifiers(ctx, run.ID)
	if err != nil {
		return base.rs.sum, 0, fmt.Errorf("load page identifiers: %w", err)
	}
	var own []ownPage
	for _, p := range pages {
		own = append(own, ownPage{URL: p.URL, Identifiers: p.Identifiers})
	}
	maxTargets, maxLinks := st.ChunkTargets, st.ChunkLinks
	if maxTargets <= 0 {
		maxTargets = 4096
	}
	if maxLinks <= 0 {
		maxLinks = 50000
	}
	links := 0
	runChunk := func(from, to int64) error {
		in, err := st.chunkInput(ctx, from, to)
		if err != nil {
			return err
		}
		in.Pages, own = own, nil // the first chunk checks the own pages' identifiers
		links += len(in.Links)
		base.log.Debug("archives chunk", "run", run.ID, "from", from, "to", to, "links", len(in.Links), "checks", len(in.Checks))
		return base.chunk(in).run(ctx)
	}
	// The links without a target (to = 0).
	if err := runChunk(0, 0); err != nil {
		return base.rs.sum, links, err
	}
	var after int64
	for {
		refs, err := st.Store.TargetsAfter(ctx, run.ID, after, maxTargets)
		if err != nil {
			return base.rs.sum, links, fmt.Errorf("load targets: %w", err)
		}
		if len(refs) == 0 {
			// The last chunk was full: the targets after it are the
			// checked ones no link of the run points to (its seeds),
			// which first-seen drift covers too.
			if err := runChunk(after+1, math.MaxInt64); err != nil {
				return base.rs.sum, links, err
			}
			break
		}
		n, count := 0, 0
		for n < len(refs) && (n == 0 || count+refs[n].LinkCount <= maxLinks) {
			count += refs[n].LinkCount
			n++
		}
		from, to := after+1, refs[n-1].ID
		if n == len(refs) && len(refs) < maxTargets {
			to = math.MaxInt64 // the last chunk: checks of targets no link points to too
		}
		if err := runChunk(from, to); err != nil {
			return base.rs.sum, links, err
		}
		if to == math.MaxInt64 {
			break
		}
		after = to
	}
	return base.rs.sum, links, ctx.Err()
}

// crossTarget reads what two chunks may share: the links of the run
// declaring a data-originalurl (the run's targets of their originals,
// under which drift is stored; the nearest-memento questions about
// another resource than the link's target, answered here once for all
// chunks) and the live pages more than one chunk may want.
func (st *Stage) crossTarget(ctx context.Context, s *stage) error {
	wants := map[lookupKey]want{}
	var keys []lookupKey
	origs := map[string]bool{}
	err := st.Store.EachOriginalLink(ctx, st.run.ID, func(id int64, targetURL string, l *audit.Link) error {
		lk := stageLink{ID: id, TargetURL: targetURL, Link: *l}
		if r := l.Robust; r != nil && isHTTP(r.OriginalURL) && !sameResource(r.OriginalURL, targetURL) {
			origs[normalize(r.OriginalURL)] = true
		}
		w, ok := versionWant(&lk)
		if !ok || w.uriR == targetURL {
			return nil
		}
		k := lookupKey{w.uriR, w.at.Unix()}
		if _, ok := wants[k]; !ok {
			wants[k] = w
			keys = append(keys, k)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load links with an original URL: %w", err)
	}
	urls := make([]string, 0, len(origs))
	for u := range origs {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	if s.rs.targetIDs, err = st.Store.RunTargetIDs(ctx, st.run.ID, urls); err != nil {
		return err
	}
	// The live pages two chunks may fetch: a data-originalurl (the live
	// side of drift), the URL where the checks of several targets ended.
	// Only they are kept from one chunk to the next.
	shared, err := st.Store.SharedCheckURLs(ctx, st.run.ID)
	if err != nil {
		return err
	}
	s.rs.keepLive = origs
	for _, u := range shared {
		s.rs.keepLive[u] = true
	}
	s.rs.answered = s.ask(ctx, keys, wants)
	s.rs.crossURIs = map[string]bool{}
	for _, k := range keys {
		s.rs.crossURIs[k.uriR] = true
	}
	return ctx.Err()
}

// chunkInput loads what Run needs of the links to the targets with IDs in
// [from, to] (to = 0: the links without a target).
func (st *Stage) chunkInput(ctx context.Context, from, to int64) (stageInput, error) {
	store, run := st.Store, st.run
	in := stageInput{RunID: run.ID, Checks: map[int64]*audit.Check{}}
	err := store.EachTargetLink(ctx, run.ID, from, to, func(id int64, pageURL, targetURL string, targetID int64, l *audit.Link, pwids []audit.PWID) error {
		in.Links = append(in.Links, stageLink{ID: id, PageURL: pageURL, Link: *l, TargetID: targetID, TargetURL: targetURL, PWIDs: pwids})
		return nil
	})
	if err != nil {
		return in, fmt.Errorf("load links: %w", err)
	}
	if to == 0 {
		return in, nil
	}
	checks, err := store.ChecksOf(ctx, run.ID, from, to)
	if err != nil {
		return in, fmt.Errorf("load checks: %w", err)
	}
	for i := range checks {
		in.Checks[checks[i].TargetID] = &checks[i]
	}
	if in.FirstSeen, err = store.TargetsFirstSeenOf(ctx, run.ID, from, to); err != nil {
		return in, err
	}
	if in.LinkFirstSeen, err = store.LinksFirstSeenOf(ctx, run.ID, from, to); err != nil {
		return in, err
	}
	if in.Reference, err = store.FirstFingerprintsOf(ctx, run.ID, from, to); err != nil {
		return in, err
	}
	return in, nil
}
