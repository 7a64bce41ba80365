package audit

import "time"

// Stage names: a run records each stage it finished (a store's
// MarkStage), so that a resumed run skips them. Other stages may use any
// name.
const (
	StageCrawl    = "crawl"
	StageCheck    = "check"
	StageArchives = "archives"
	StageHistory  = "history"
	// StageReport is recorded once the run's report is written (or when
	// the run writes none): a complete run without it has a report to
	// write.
	StageReport = "report"
	// StageAbandoned marks an unfinished run that will never be resumed:
	// its status stays what it was.
	StageAbandoned = "abandoned"
)

// Commands whose runs have stored settings: a run is resumed by the
// command that started it.
const (
	CommandAudit = "audit"
	CommandCrawl = "crawl"
	// CommandStudy is linkrot study: a run whose outputs are the study's
	// files, recorded as its report stage.
	CommandStudy = "study"
)

// TargetRef is a target a run links to, as the stages read it back.
type TargetRef struct {
	ID  int64
	URL string // normalized by NormalizeURL
	// Host is the URL's host[:port] as normalized (default ports dropped),
	// or "" for URLs without one (mailto:, ...).
	Host string
	// LinkCount is the number of links of the run that point to the target.
	LinkCount int
}

// LinkRef is a link of a run as the findings stage reads it: where it is
// and what it points to.
type LinkRef struct {
	LinkID  int64
	PageID  int64
	PageURL string // the page's final URL
	// TargetID is the link's target, 0 when it has none.
	TargetID int64
	Href     string
	Fragment string // Href after the first '#', "" when none
	Element  string
	Attr     string // the attribute holding the URL
	Text     string
	Resource bool
}

// BrokenTarget is a broken target of a run with how widely it is linked.
type BrokenTarget struct {
	URL     string
	Verdict Verdict
	Status  int
	// Pages is the number of distinct pages of the run linking to the
	// target, Links the number of links.
	Pages int
	Links int
}

// HistoryResult is what applying runs to the targets' histories did.
type HistoryResult struct {
	// Runs are the runs applied, in order (empty when the run was applied
	// before).
	Runs []int64
	// Targets is the number of target histories updated; Confirmed and
	// Recovered count the targets newly confirmed broken and recovered by
	// the runs applied.
	Targets   int
	Confirmed int
	Recovered int
}

// TrendPoint counts one run for the trend across runs.
type TrendPoint struct {
	ID         int64
	StartedAt  time.Time
	FinishedAt time.Time
	Status     RunStatus
	Pages      int
	Links      int
	// Checked counts the run's checks (one per target); Broken those
	// with a broken verdict (Verdict.Broken); Drifted the distinct
	// targets whose drift band is major or off-topic.
	Checked int
	Broken  int
	Drifted int
}

// TargetStatus is a target's status across the runs up to a given one.
type TargetStatus struct {
	TargetID int64
	// FirstSeen is the start of the run that first linked to the target
	// (when that run was deleted, the time the target was first stored).
	FirstSeen    time.Time
	FirstSeenRun int64 // 0 when the run that first saw it was deleted
	// FirstBroken is the first of Checks with a broken verdict; LastOK the
	// last with ok, redirected or moved. Zero when there is none among
	// Checks: older runs, and pruned ones, are summarised by
	// TargetHistories instead.
	FirstBroken    time.Time
	FirstBrokenRun int64
	LastOK         time.Time
	LastOKRun      int64
	// Checks are the target's checks in the site's latest runs, oldest
	// first.
	Checks []StatusEntry
}

// Occurrence is a link occurrence as the baseline rule compares it: the
// link's target (its normalized URL, NormalizeURL) and the hash of
// the text of the line holding it (LineHash).
type Occurrence struct {
	Target   string
	LineHash string
}

// StatusEntry is one check of a target.
type StatusEntry struct {
	RunID     int64
	CheckedAt time.Time // the run's start when the check has no time
	Verdict   Verdict
	Status    int
}
