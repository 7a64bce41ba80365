// Package store is the port between linkrot and its run database: the
// interfaces the pipeline, the archives stage, the report, the dashboard,
// the maintenance server and scale-out use, the read models they get back,
// and the errors every adapter returns. It imports no database driver.
//
// store/sqlite implements Store on both engines (a SQLite file through
// modernc.org/sqlite, a PostgreSQL database through pgx) with SQL written
// once; store/storetest is the contract suite every implementation
// passes. cmd/linkrot opens the database named by --db (see
// IsPostgresURL). docs/store-adapters.md describes the split.
package store

import (
	"context"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// IsPostgresURL reports whether name (a --db value) names a PostgreSQL
// database (postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgresURL(name string) bool {
	l := strings.ToLower(name)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Dashboard is what the dashboard (linkrot serve) reads. Open the store
// read-only for it so that it cannot write.
type Dashboard interface {
	RunSummaries(ctx context.Context, limit int) ([]RunSummary, error)
	Run(ctx context.Context, runID int64) (*audit.Run, error)
	RunStats(ctx context.Context, runID int64) (*audit.RunStats, error)
	Trend(ctx context.Context, runID int64, limit int) ([]audit.TrendPoint, error)
	UnprotectedLinks(ctx context.Context, runIDs []int64) (map[int64]int, error)
	RunningRuns(ctx context.Context) ([]RunProgress, error)

	Pages(ctx context.Context, runID int64) ([]*audit.Page, error)
	LinkRefs(ctx context.Context, runID int64) ([]audit.LinkRef, error)
	Targets(ctx context.Context, runID int64) ([]audit.TargetRef, error)
	Checks(ctx context.Context, runID int64) ([]audit.Check, error)
	RunFindingRefs(ctx context.Context, runID int64) ([]FindingRef, error)
	RunHistories(ctx context.Context, runID int64) (map[int64]audit.TargetHistory, error)
	Drifts(ctx context.Context, runID int64) ([]audit.Drift, error)

	Target(ctx context.Context, id int64) (*TargetInfo, error)
	TargetChecks(ctx context.Context, targetID int64, limit int) ([]audit.Check, error)
	TargetLinks(ctx context.Context, targetID int64, limit int) ([]TargetLink, error)
	TargetMementos(ctx context.Context, targetID int64, limit int) ([]audit.Memento, error)
	TargetDrifts(ctx context.Context, targetID int64, limit int) ([]audit.Drift, error)
	TargetHistories(ctx context.Context, targetIDs []int64) (map[int64]audit.TargetHistory, error)

	SearchTargets(ctx context.Context, q string, limit int) ([]SearchHit, error)
	SearchPages(ctx context.Context, q string, limit int) ([]SearchHit, error)

	// Link maintenance (linkrot serve): claims, live checks, backlinks,
	// the overview's counts, dismissed findings.
	TargetClaims(ctx context.Context, targetURL string, limit int) ([]WireClaim, error)
	LiveChecks(ctx context.Context, targetURL string, limit int) ([]audit.LiveCheck, error)
	PageBacklinks(ctx context.Context, pageURL string, limit int) ([]audit.Backlink, error)
	WireSummary(ctx context.Context) (WireCounts, error)
	Dismissals(ctx context.Context) ([]audit.Dismissal, error)
}

// Site is what the maintenance receiver reads of our own site: the run
// that defines it and its pages and links. Implementations must be safe
// for concurrent use; a missing run is audit.ErrNotFound.
type Site interface {
	SiteRun(ctx context.Context) (*audit.Run, error)
	SiteHosts(ctx context.Context, runID int64) ([]string, error)
	PageInRun(ctx context.Context, runID int64, pageURL string) (bool, error)
	PageLinksTo(ctx context.Context, runID int64, pageURL, targetURL string) (bool, error)
	HasBacklink(ctx context.Context, source, target string) (bool, error)
	HasPendingLink(ctx context.Context, source, target string) (bool, error)
}

// Inbox stores accepted maintenance notifications as queued, all or none,
// setting their IDs. It must be safe for concurrent use.
type Inbox interface {
	EnqueueWire(ctx context.Context, reqs []*audit.WireRequest) error
}

// WireQueue is the durable queue and result store of the maintenance
// verifier. Implementations must be safe for concurrent use.
type WireQueue interface {
	QueuedWire(ctx context.Context, now time.Time, limit int, busy map[int64]bool) ([]*audit.WireRequest, error)
	DeferWire(ctx context.Context, id int64, notBefore time.Time, attempted bool, note string) error
	FinishWire(ctx context.Context, id int64, state, result string, eff WireEffect, now time.Time) error
	// LiveChecks and CheckBefore give the check a LINKMOD or re-check is
	// compared with (audit.ErrNotFound when none).
	LiveChecks(ctx context.Context, url string, limit int) ([]audit.LiveCheck, error)
	CheckBefore(ctx context.Context, runID int64, url string) (*audit.Check, error)
	SiteRun(ctx context.Context) (*audit.Run, error)
	PageLinksTo(ctx context.Context, runID int64, pageURL, targetURL string) (bool, error)
}

// Notifications is what the maintenance notifier reads and records. A
// missing run or check is audit.ErrNotFound.
type Notifications interface {
	SiteRun(ctx context.Context) (*audit.Run, error)
	Backlinks(ctx context.Context) ([]audit.Backlink, error)
	CheckOfURL(ctx context.Context, runID int64, url string) (*audit.Check, error)
	CheckBefore(ctx context.Context, runID int64, url string) (*audit.Check, error)
	Notification(ctx context.Context, n *audit.Notification) (*audit.Notification, error)
	Notifications(ctx context.Context) ([]audit.Notification, error)
	SaveNotification(ctx context.Context, n *audit.Notification) error
}

// PagePreparer is implemented by a store that can do part of the work of
// saving a page ahead, on the goroutine that produced the page: a run has
// one writer that every crawl thread and checker waits for when it falls
// behind, and work done before the page reaches it is done in parallel.
// PreparePage computes from the page alone what saving it needs (and may
// rewrite the page as saving it would: URL passwords become "***"); the
// page must not change after it until it is saved. Saving a page that was
// not prepared, or whose preparation no longer matches it, does the same
// work in the writer.
type PagePreparer interface {
	PreparePage(p *audit.Page)
}

// Store is the whole contract of a run database, as both adapters
// implement it and store/storetest checks it: the pipeline's audit.Store,
// the read models above, and the methods of the stages after the crawl
// (checks, archives, drift, history, findings, resume, pruning).
// Every method is safe for concurrent use; a missing run or row is an
// error wrapping audit.ErrNotFound.
type Store interface {
	audit.Store
	Dashboard
	Site
	Inbox
	WireQueue
	Notifications

	// Path names the database for messages: the absolute file path, or a
	// PostgreSQL URL without password or parameters.
	Path() string

	AbandonRun(ctx context.Context, runID int64) error
	ApplyHistory(ctx context.Context, runID int64, rule audit.ConfirmRule) (audit.HistoryResult, error)
	CheckedTargetIDs(ctx context.Context, runID int64) (map[int64]bool, error)
	ChecksOf(ctx context.Context, runID, from, to int64) ([]audit.Check, error)
	Claims(ctx context.Context, runID int64) ([]audit.Claim, error)
	ClearArchives(ctx context.Context, runID int64) error
	ClearFirstSeenDrift(ctx context.Context, runID int64) error
	CrawlTraps(ctx context.Context, runID int64) ([]audit.CrawlTrap, error)
	Diff(ctx context.Context, from, to int64) (*audit.RunDiff, error)
	DriftFailures(ctx context.Context, runID int64) ([]audit.DriftFailure, error)
	EachCheck(ctx context.Context, runID int64, fn func(c *audit.Check) error) error
	EachLink(ctx context.Context, runID int64, fn func(*StoredLink) error) error
	EachOriginalLink(ctx context.Context, runID int64, fn func(linkID int64, targetURL string, l *audit.Link) error) error
	EachTargetLink(ctx context.Context, runID, from, to int64, fn func(linkID int64, pageURL, targetURL string, targetID int64, l *audit.Link, pwids []audit.PWID) error) error
	EarlierFingerprints(ctx context.Context, runID int64) (map[int64]*audit.Check, error)
	FindingByID(ctx context.Context, id int64) (*audit.Finding, error)
	FindingLinks(ctx context.Context, runID int64, keep func(c *audit.Check, fragment string) bool, fn func(audit.LinkRef, *audit.Check) error) error
	Findings(ctx context.Context, runID int64) ([]audit.Finding, error)
	FirstFingerprints(ctx context.Context, runID int64) (map[int64]*audit.Check, error)
	FirstFingerprintsOf(ctx context.Context, runID, from, to int64) (map[int64]*audit.Check, error)
	Frontier(ctx context.Context, runID int64) (queued []audit.FrontierEntry, visited []string, err error)
	HasChecksBefore(ctx context.Context, runID int64) (bool, error)
	IdentifierChecks(ctx context.Context, runID int64) ([]audit.IdentifierCheck, error)
	IntegrityCheck(ctx context.Context) error
	InvalidURLLinks(ctx context.Context, runID int64, fn func(audit.LinkRef, audit.Diagnostic) error) error
	KnownLookups(ctx context.Context, runID int64, since time.Time) ([]audit.Memento, error)
	LinkDates(ctx context.Context, runID int64, targetURL string) ([]time.Time, error)
	LinksFirstSeen(ctx context.Context, runID int64) (map[int64]time.Time, error)
	LinksFirstSeenOf(ctx context.Context, runID, from, to int64) (map[int64]time.Time, error)
	Maintenance(ctx context.Context, runID int64) ([]audit.Maintenance, error)
	MarkStage(ctx context.Context, runID int64, stage string) error
	Mementos(ctx context.Context, runID int64) ([]audit.Memento, error)
	NewerCompleteRun(ctx context.Context, runID int64) (*audit.Run, error)
	NewlyConfirmed(ctx context.Context, runID int64) (int, error)
	Occurrences(ctx context.Context, before int64) (map[audit.Occurrence]bool, int64, error)
	PWIDSnapshots(ctx context.Context, runID int64) ([]PWIDSnapshot, error)
	PageAnchors(ctx context.Context, runID int64, targetURL string) ([]string, error)
	PageContent(ctx context.Context, runID int64, pageURL string) (anchors []string, text string, err error)
	PageFiles(ctx context.Context, runID int64) (map[string]string, error)
	PageIdentifiers(ctx context.Context, runID int64) ([]*audit.Page, error)
	PageList(ctx context.Context, runID int64) ([]*audit.Page, []int64, error)
	PageResponse(ctx context.Context, runID int64, targetURL string) (*audit.Page, error)
	PageResponses(ctx context.Context, runID int64) ([]*audit.Page, error)
	PreviousChecks(ctx context.Context, runID int64, targetIDs []int64, maxAge time.Duration, now time.Time) (map[int64]*audit.Check, error)
	PreviousRun(ctx context.Context, runID int64) (*audit.Run, error)
	Prune(ctx context.Context, opts PruneOptions) (PruneResult, error)
	ReopenRun(ctx context.Context, runID int64) error
	ReplaceFindings(ctx context.Context, runID int64, findings []audit.Finding) error
	RunSettings(ctx context.Context, runID int64) (fingerprint string, settings []byte, err error)
	RunTargetIDs(ctx context.Context, runID int64, urls []string) (map[string]int64, error)
	SaveChecks(ctx context.Context, checks []audit.Check) error
	SaveChecksByURL(ctx context.Context, checks []audit.Check) (missing []audit.Check, err error)
	SaveCrawl(ctx context.Context, runID int64, pages []*audit.Page, queued []audit.FrontierEntry) error
	SaveCrawlTraps(ctx context.Context, traps []audit.CrawlTrap) error
	SaveDismissal(ctx context.Context, d audit.Dismissal) error
	SaveDriftFailures(ctx context.Context, fs []audit.DriftFailure) error
	SaveDrifts(ctx context.Context, ds []audit.Drift) error
	SaveFindings(ctx context.Context, findings []audit.Finding) error
	SaveIdentifierChecks(ctx context.Context, ics []audit.IdentifierCheck) error
	SaveMaintenance(ctx context.Context, records []audit.Maintenance) error
	SaveMementos(ctx context.Context, ms []audit.Memento) error
	SaveRequests(ctx context.Context, runID int64) ([]audit.SaveRequest, error)
	SaveRunSettings(ctx context.Context, runID int64, command, fingerprint string, settings []byte) error
	SaveSaveRequests(ctx context.Context, rs []audit.SaveRequest) error
	SaveSnapshotChecks(ctx context.Context, checks []audit.SnapshotCheck) error
	SaveSnapshotSkips(ctx context.Context, ss []audit.SnapshotSkip) error
	SaveSuggestions(ctx context.Context, sgs []audit.Suggestion) error
	SharedCheckURLs(ctx context.Context, runID int64) ([]string, error)
	SinceLastRun(ctx context.Context, runID int64) (*audit.RunDiff, error)
	SnapshotChecks(ctx context.Context, runID int64) ([]audit.SnapshotCheck, error)
	SnapshotSkips(ctx context.Context, runID int64) ([]audit.SnapshotSkip, error)
	Stages(ctx context.Context, runID int64) (map[string]time.Time, error)
	Suggestions(ctx context.Context, runID int64) ([]audit.Suggestion, error)
	TargetIDs(ctx context.Context, urls []string) (map[string]int64, error)
	TargetStatuses(ctx context.Context, runID int64, perTarget int) ([]audit.TargetStatus, error)
	TargetTimeline(ctx context.Context, targetID int64) ([]TimelineEntry, error)
	TargetURL(ctx context.Context, id int64) (string, error)
	TargetURLs(ctx context.Context, runID int64, fn func(url string) error) error
	TargetsAfter(ctx context.Context, runID, after int64, limit int) ([]audit.TargetRef, error)
	TargetsFirstSeen(ctx context.Context, runID int64) (map[int64]time.Time, error)
	TargetsFirstSeenOf(ctx context.Context, runID, from, to int64) (map[int64]time.Time, error)
	TopBroken(ctx context.Context, runID int64, limit int) ([]audit.BrokenTarget, error)
	UncheckedTargets(ctx context.Context, runID int64, fn func(audit.TargetRef) error) error
	UnfinishedRun(ctx context.Context, q ResumeQuery) (*audit.Run, error)
	Vacuum(ctx context.Context) error
	VerdictCounts(ctx context.Context, runID int64) (map[audit.Verdict]int, error)
	WireCounts(ctx context.Context) (map[string]int, error)
	WireRequests(ctx context.Context, limit int) ([]*audit.WireRequest, error)
}
