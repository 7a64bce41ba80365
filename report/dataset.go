package report

import (
	"time"

	"github.com/linkrot/linkrot/audit"
)

// Dataset is everything a report shows about one run. The caller fills it
// from its store; nil slices mean "nothing recorded" (for example a run
// whose archive stage did not run has no SnapshotChecks, Mementos or
// Drifts, and the report says so). A Dataset is read, never modified, by
// this package.
type Dataset struct {
	Run   audit.Run
	Stats audit.RunStats
	// Pages are the crawled pages of the run in crawl order. Their Links
	// field is not read: the links are in Links, with their store IDs.
	Pages []*audit.Page
	// Links are the run's links in page order, then document order.
	Links []Link
	// EachLink, when not nil, streams the run's links instead (Links is
	// then not read): it calls fn for each, in the order of Links, and
	// stops at fn's first error, which it returns. Writers call it once or
	// twice, so that a run of millions of links is never in memory; the
	// *Link is valid during the call only.
	EachLink func(fn func(*Link) error) error
	// Targets are the distinct targets the run's links point to.
	Targets []Target
	// Checks holds at most one check per target.
	Checks   []audit.Check
	Findings []audit.Finding
	// CrawlTraps are the run's crawl-trap findings (nil: none).
	CrawlTraps       []audit.CrawlTrap
	Fixes            []audit.Maintenance
	SnapshotChecks   []audit.SnapshotCheck
	Mementos         []audit.Memento
	Drifts           []audit.Drift
	IdentifierChecks []audit.IdentifierCheck
	Suggestions      []audit.Suggestion
	// Runs summarises the runs of the same site up to and including Run,
	// oldest first, for the trend chart. It may be empty.
	Runs []RunSummary
	// History is the status history of the run's targets across runs, at
	// most one entry per target.
	History []TargetHistory
	// Since is what changed since the previous run of the same site (the
	// "since last run" section); nil when not loaded. Its From is 0 when
	// the run is the site's first: then everything broken counts as new
	// and the report says there is nothing to compare with.
	Since *audit.RunDiff
	// Baseline, when set, marks the old link occurrences of a PR-scoped
	// run (--fail-on introduced): the CI outputs report their findings as
	// warnings with the target's history.
	Baseline *Baseline
	// GeneratedAt is when the report was made (fixed in tests).
	GeneratedAt time.Time
	// Generator names the program, e.g. "linkrot 0.1.0".
	Generator string
}

// Link is one link of the run with the IDs that tie it to its page, its
// target, findings and archive results.
type Link struct {
	ID int64
	// Page is the index of the link's page in Dataset.Pages.
	Page int
	// TargetID is the link's target, 0 when it has none (a URL that is not
	// absolute, javascript:, ...).
	TargetID int64
	audit.Link
}

// Target is a normalized URL linked from the run.
type Target struct {
	ID   int64
	URL  string
	Host string // host[:port], "" for URLs without one
}

// RunSummary counts one run for the trend across runs.
type RunSummary struct {
	ID         int64
	StartedAt  time.Time
	FinishedAt time.Time
	Status     audit.RunStatus
	Pages      int
	Links      int
	// Checked counts the targets checked; Broken those with a broken
	// verdict (audit.Verdict.Broken); Drifted those whose drift band is
	// major or off-topic.
	Checked int
	Broken  int
	Drifted int
}

// TargetHistory is one target's status across the runs up to the
// reported one.
type TargetHistory struct {
	TargetID     int64
	FirstSeen    time.Time
	FirstSeenRun int64
	// FirstBroken and LastOK are zero when the target never was broken or
	// never answered OK (ok, redirected or moved).
	FirstBroken    time.Time
	FirstBrokenRun int64
	LastOK         time.Time
	LastOKRun      int64 // 0 when LastOK comes from the history summary (a pruned run, or older than Checks)
	// Tracked is true when the fields below come from the target's
	// history across every run (audit.TargetHistory, pruned runs
	// included) as of the reported run; false when that history is not
	// available for it (the run was not applied, or a later run was).
	Tracked bool
	// Confirmed is true when the failure is confirmed: it failed in
	// enough consecutive runs (audit.ConfirmRule). ConfirmedAt and
	// ConfirmedRun say when.
	Confirmed    bool
	ConfirmedAt  time.Time
	ConfirmedRun int64
	// FailingSince is the first failure of the current streak (zero when
	// the target is not failing); FailedRuns counts the consecutive runs
	// of the streak.
	FailingSince    time.Time
	FailingSinceRun int64
	FailedRuns      int
	// Checks are the target's checks, oldest first (bounded by the loader).
	Checks []HistoryEntry
}

// HistoryEntry is one check of a target in one run.
type HistoryEntry struct {
	RunID     int64
	CheckedAt time.Time
	Verdict   audit.Verdict
	Status    int
}
