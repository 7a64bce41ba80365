package audit

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
