// Package robust is the archives stage of a linkrot run: after the live
// check, it answers the questions the Robust Links work exists for.
//
//  1. Snapshot audit: every snapshot a link declares (data-versionurl
//     entries, mset copy links, pwids resolved through the registry) is
//     fetched and judged snapshot-ok, snapshot-missing, snapshot-error or
//     not-a-memento; its Memento-Datetime is compared with the declared
//     datetime (exactly, or by UTC day for date-only values) and with
//     data-versiondate, its rel="original" with data-originalurl.
//  2. Nearest memento: for links with a versiondate (or mset temporal
//     reference), broken links and links without robustness data, every
//     archive's TimeGate is asked for the memento nearest to the wanted
//     date (optionally the TimeMap too); the closest across archives wins,
//     and one further than MaxDistance is not representative.
//  3. Drift: a live page with a representative memento is compared with
//     the memento's raw bytes (Wayback id_ mode), and every fingerprinted
//     target with the fingerprint linkrot stored when it first saw it.
//     The live side is the link's target, or its data-originalurl when
//     that differs (a link whose href is a snapshot: robust-links §4.2).
//     A measurement that cannot be made is a DriftFailure.
//  4. Identifiers: live targets on other sites (of any media type: the
//     HTTP Link header is read for all, <link> elements for HTML) and the
//     site's own pages declaring rel="identifier" or rel="cite-as" have
//     the identifier followed back (redirects or links) to the access URI.
//  5. Suggestions: ready Robust Link HTML for links without robustness
//     data whose target is alive, and for broken links with a memento;
//     links to access URIs whose target declares an identifier get the
//     identifier. With SaveMissing, targets without any memento are sent
//     to an archive's Save Page Now.
//
// With Options.Offline only first-seen drift runs: it needs no network.
//
// The stage's core (runStage) takes plain data (stageInput) and hands
// results to a stageSink as they are known; it knows nothing of the
// database. Stage reads that data from a Store and saves what comes back.
package archives

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/urls"
)

// Options configure Run. Client is required unless Offline; the rest has
// useful zero values.
type Options struct {
	Client *memento.Client
	// Offline runs only what needs no network: first-seen drift.
	Offline bool
	// Archives are asked for nearest mementos, in order (default: the
	// Client's).
	Archives []memento.Archive
	// Registry resolves pwids (default memento.DefaultRegistry()).
	Registry memento.Registry
	// MaxDistance is the farthest a memento may be from the wanted date
	// and still represent it (default 30 days).
	MaxDistance time.Duration
	// TimeMaps also fetches each archive's TimeMap: how many mementos
	// exist, the first and the last, and a nearer memento than the
	// TimeGate's when the TimeMap lists one.
	TimeMaps bool
	// Shingle and Thresholds configure drift measurement (package drift).
	Shingle    int
	Thresholds drift.Thresholds
	// SaveMissing asks the first archive with a Save endpoint to capture
	// live targets of which no archive found a memento while that archive
	// answered it has none (the errors of other archives do not count; a
	// resource it was not asked about, a private one, is never sent); Save
	// tunes the requests.
	SaveMissing bool
	Save        memento.SaveOptions
	// Saved reports whether a URL was already sent to Save Page Now for
	// this run (an interrupted run being resumed, its requests recorded):
	// such a URL is not sent again. Nil: none was.
	Saved func(url string) bool
	// Workers is the number of concurrent lookups and fetches (default
	// 8); archive budgets bound the request rate whatever their number.
	// Nearest-memento lookups get Workers per archive: archives are asked
	// in parallel, each at its own budget, so the stage takes about as
	// long as the slowest archive's lookups ÷ its budget.
	Workers int
	// MaxSnapshots caps the declared snapshots checked per link (default
	// DefaultMaxSnapshots; negative: no cap): those nearest to the link's
	// declared datetime are checked, the rest are reported not checked.
	MaxSnapshots int
	// Known are earlier runs' lookups still fresh (--archive-max-age):
	// found or no-memento answers that are reused instead of asked again.
	// Failed lookups are never in it, so they are retried.
	Known []audit.Memento
	// MaxBody caps a live page or memento read for drift (default 2 MiB).
	MaxBody int64
	// SiteHosts are the audited site's hosts (host[:port] as
	// urls.NormalizeURL writes them): links to them are internal, and get
	// no "no-robustness-data" suggestion.
	SiteHosts map[string]bool
	// Identifiers extracts rel="identifier" and rel="cite-as" links from
	// a fetched HTML page (the crawler's extractor). Nil: only HTTP Link
	// headers are read.
	Identifiers func(body []byte, contentType string, pageURL *url.URL, header http.Header) []audit.Identifier
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger

	// pre holds the answers Stage asked for while the checks ran.
	pre *prefetch
}

// DefaultMaxDistance is the default of Options.MaxDistance.
const DefaultMaxDistance = 30 * 24 * time.Hour

// DefaultMaxSnapshots is the default of Options.MaxSnapshots.
const DefaultMaxSnapshots = 10

// stageLink is one link of the run with what the stage needs of it.
type stageLink struct {
	ID      int64
	PageURL string
	Link    audit.Link
	// TargetID and TargetURL are the link's target (0 and "" when its
	// href is not an absolute URL); TargetURL is normalized.
	TargetID  int64
	TargetURL string
	// PWIDs are the pwids the link carries (href, data-versionurl, mset).
	PWIDs []audit.PWID
}

// ownPage is a crawled page of the site with the identifiers it declares.
type ownPage struct {
	URL         string
	Identifiers []audit.Identifier
}

// stageInput is what Run works on.
type stageInput struct {
	RunID int64
	Links []stageLink
	// Checks are the run's live checks by target ID.
	Checks map[int64]*audit.Check
	// LinkFirstSeen is, by link ID, when linkrot first saw the link: the
	// earliest run in which the same page linked to the same target. It
	// dates the nearest-memento question of links without a date of
	// their own; FirstSeen (when linkrot first saw the target, from any
	// page: targets.first_seen_at) is the fallback for links missing here.
	LinkFirstSeen map[int64]time.Time
	FirstSeen     map[int64]time.Time
	// Reference is, by target ID, the earliest fingerprinted check of the
	// target (SHA256 set), from any run: first-seen drift compares the
	// run's check with it when it comes from an earlier run.
	Reference map[int64]*audit.Check
	Pages     []ownPage
}

// stageSink receives results as they are known. Its functions are called from
// several goroutines at once and must be safe for concurrent use; a nil
// function drops that kind of result.
type stageSink struct {
	SnapshotCheck func(audit.SnapshotCheck)
	Memento       func(audit.Memento)
	Drift         func(audit.Drift)
	DriftFailure  func(audit.DriftFailure)
	Identifier    func(audit.IdentifierCheck)
	Suggestion    func(audit.Suggestion)
	Save          func(audit.SaveRequest)
	SnapshotSkip  func(audit.SnapshotSkip)
}

// Summary counts what the stage found, for the end-of-run summary.
type Summary struct {
	Snapshots          map[audit.SnapshotVerdict]int
	DatetimeMismatches int
	OriginalMismatches int
	// LinksLookedUp links had a wanted date; LinksWithMemento got a
	// memento from some archive, LinksRepresentative one within
	// MaxDistance. LookupErrors counts failed archive lookups (other than
	// "no memento").
	LinksLookedUp       int
	LinksWithMemento    int
	LinksRepresentative int
	LookupErrors        int
	// LookupFailed counts failed lookups by archive (429s, timeouts,
	// unparsable answers); Reused the answers taken from earlier runs.
	LookupFailed  map[string]int
	LookupsReused int
	// SnapshotsNotChecked counts declared snapshots over the
	// --max-snapshots cap.
	SnapshotsNotChecked int
	// DriftNotRaw counts memento drift measured on replayed (not raw)
	// bytes, because the archive has no raw form.
	DriftNotRaw int
	// Bands count memento drift by band, FirstSeenBands first-seen drift.
	// DriftErrors counts the memento drift measurements that could not be
	// made (each one a DriftFailure).
	Bands          map[string]int
	FirstSeenBands map[string]int
	DriftErrors    int
	// Identifiers checked; those that do not resolve or do not lead back.
	Identifiers         int
	IdentifiersBroken   int
	IdentifiersNoReturn int
	Suggestions         map[string]int
	Saves               map[string]int
}

func newSummary() *Summary {
	return &Summary{
		Snapshots:      map[audit.SnapshotVerdict]int{},
		Bands:          map[string]int{},
		FirstSeenBands: map[string]int{},
		Suggestions:    map[string]int{},
		Saves:          map[string]int{},
		LookupFailed:   map[string]int{},
	}
}

// newStage returns a stage with opts' defaults applied.
func newStage(opts Options, in stageInput, sink stageSink) *stage {
	o := opts
	if len(o.Archives) == 0 && o.Client != nil {
		o.Archives = o.Client.Archives()
	}
	if o.Registry == nil {
		o.Registry = memento.DefaultRegistry()
	}
	if o.MaxDistance <= 0 {
		o.MaxDistance = DefaultMaxDistance
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.MaxSnapshots == 0 {
		o.MaxSnapshots = DefaultMaxSnapshots
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 2 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Thresholds = o.Thresholds.WithDefaults()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &stage{o: o, sink: sink, log: log, rs: &runState{sum: newSummary(),
		snaps: map[string]snapFetch{}, live: map[string]*livePage{}, identFetched: map[string]identFetch{},
		own: map[string][]identResult{}, saveSeen: map[string]bool{}, drifts: map[driftKey]driftResult{}}}
	s.rs.known = s.knownLookups()
	return s.chunk(in)
}

// chunk returns a stage over in that shares s's options, sink and run
// state: one chunk of a run (Stage.Finish), or the whole of it (Run).
func (s *stage) chunk(in stageInput) *stage {
	c := &stage{o: s.o, in: in, sink: s.sink, log: s.log, rs: s.rs}
	if in.Checks == nil {
		c.in.Checks = map[int64]*audit.Check{}
	}
	return c
}

// stage is one Run, or one chunk of the run Stage.Finish works through.
type stage struct {
	o    Options
	in   stageInput
	sink stageSink
	log  *slog.Logger
	rs   *runState

	targetsOnce sync.Once
	targets     map[string]int64 // by normalized URL (targetOf)
}

// runState is what the chunks of one run share, so that across them each
// question is asked of each archive once, each URL fetched once and each
// Save Page Now request sent once, and the counts add up. Each chunk runs
// after the one before has returned: only the Summary needs the mutex.
type runState struct {
	mu  sync.Mutex
	sum *Summary

	// known indexes Options.Known (knownLookups).
	known map[knownKey]audit.Memento
	// answered are the questions answered before the chunks: those of
	// links about another resource than their target (data-originalurl),
	// the only ones that can be asked from two chunks (every other
	// question is about the link's own target, whose links are all in one
	// chunk).
	answered map[lookupKey][]lookup
	// crossURIs are the URI-Rs of the questions answered before the
	// chunks, and drifts the memento drift measured of them: a
	// measurement two chunks may want, made once.
	crossURIs map[string]bool
	drifts    map[driftKey]driftResult
	// targetIDs are the run's targets by normalized URL for the
	// data-originalurl of the links of the run that have one (nil: the
	// chunk's links are the whole run).
	targetIDs map[string]int64
	// snaps are the declared snapshots fetched, by URL (no bodies).
	snaps map[string]snapFetch
	// live are the live pages fetched, by URL: those of keepLive (all
	// when it is nil), the only ones a later chunk may want again.
	live     map[string]*livePage
	keepLive map[string]bool
	// identFetched are the identifying URIs fetched, by URI.
	identFetched map[string]identFetch
	// own are the checks of the identifiers the site's own pages declare,
	// by normalized page URL.
	own map[string][]identResult
	// saveSeen are the URLs considered for Save Page Now.
	saveSeen map[string]bool
}

// runStage runs the stage over in and returns its summary. Results go to sink
// as they are known. It returns ctx.Err() when ctx is cancelled (the
// results delivered so far stand); every goroutine it starts has exited
// when it returns. Network failures are results, never errors.
func runStage(ctx context.Context, opts Options, in stageInput, sink stageSink) (*Summary, error) {
	s := newStage(opts, in, sink)
	if s.o.Offline {
		s.firstSeenDrift()
		return s.rs.sum, ctx.Err()
	}
	return s.rs.sum, s.run(ctx)
}

// run runs the stage's sub-stages over its input (a run, or a chunk of
// one), adding to the run state's Summary.
func (s *stage) run(ctx context.Context) error {
	s.snapshots(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	near := s.nearest(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	live := s.liveFetch(ctx, near)
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mementoDrift(ctx, near, live)
	s.firstSeenDrift()
	if err := ctx.Err(); err != nil {
		return err
	}
	ids := s.identifiers(ctx, live)
	if err := ctx.Err(); err != nil {
		return err
	}
	s.suggestions(near, ids)
	if s.o.SaveMissing {
		s.saveMissing(ctx, near)
	}
	return ctx.Err()
}

func (s *stage) count(f func(*Summary)) {
	s.rs.mu.Lock()
	f(s.rs.sum)
	s.rs.mu.Unlock()
}

// archiveByName returns the configured archive named name.
func (s *stage) archiveByName(name string) (memento.Archive, bool) {
	for _, a := range s.o.Archives {
		if a.Name == name {
			return a, true
		}
	}
	return memento.Archive{}, false
}

// parallel calls fn(i) for i in [0, n) on the stage's workers, stopping
// early when ctx is done. It returns when every call has returned.
func (s *stage) parallel(ctx context.Context, n int, fn func(i int)) {
	if n == 0 {
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(s.o.Workers, n) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			close(next)
			wg.Wait()
			return
		}
	}
	close(next)
	wg.Wait()
}

// checkURL is the URL a check ended at.
func checkURL(c *audit.Check) string {
	if c.FinalURL != "" {
		return c.FinalURL
	}
	return c.URL
}

// alive reports whether a check found the target reachable.
func alive(c *audit.Check) bool {
	if c == nil {
		return false
	}
	switch c.Verdict {
	case audit.VerdictOK, audit.VerdictRedirected, audit.VerdictMoved:
		return true
	}
	return false
}

func broken(c *audit.Check) bool { return c != nil && c.Verdict.Broken() }

func isHTTP(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// external reports whether u leaves the audited site.
func (s *stage) external(u string) bool {
	h := hostOf(u)
	return h != "" && !s.o.SiteHosts[h]
}

func normalize(u string) string {
	n, err := urls.NormalizeURL(u)
	if err != nil {
		return u
	}
	return n
}

// sameResource compares two URLs after normalization, http and https
// alike (archives match them interchangeably).
func sameResource(a, b string) bool {
	strip := func(s string) string {
		s = normalize(s)
		return strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	}
	return strip(a) == strip(b)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return truncate(err.Error(), 300)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
