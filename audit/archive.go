package audit

import "time"

// SnapshotVerdict is the outcome of fetching a snapshot a link declares
// (data-versionurl entry, mset copy link, or pwid resolved to a URL).
type SnapshotVerdict string

// Snapshot verdicts.
const (
	SnapshotOK      SnapshotVerdict = "snapshot-ok"      // a memento (Memento-Datetime present), 2xx
	SnapshotMissing SnapshotVerdict = "snapshot-missing" // 404/410, or the archive has no memento
	SnapshotError   SnapshotVerdict = "snapshot-error"   // timeouts, 5xx, network errors
	NotAMemento     SnapshotVerdict = "not-a-memento"    // 200 without Memento-Datetime
)

// SnapshotCheck is the audit of one declared snapshot of one link.
type SnapshotCheck struct {
	RunID  int64 `json:"run_id"`
	LinkID int64 `json:"link_id"`
	// Source is where the snapshot was declared: "versionurl", "mset" or "pwid".
	Source string `json:"source"`
	// Declared is the snapshot URI as written (a pwid URI for pwids).
	Declared string `json:"declared"`
	// URL is the URL fetched (the pwid resolved through the archive registry).
	URL      string          `json:"url"`
	FinalURL string          `json:"final_url,omitempty"`
	Verdict  SnapshotVerdict `json:"verdict"`
	Status   int             `json:"status"`
	Reason   string          `json:"reason,omitempty"`
	// MementoDatetime is the Memento-Datetime the archive answered.
	MementoDatetime time.Time `json:"memento_datetime"`
	// DeclaredDatetime is the datetime the link gives for this snapshot
	// (noon UTC when DeclaredDateOnly).
	DeclaredDatetime time.Time `json:"declared_datetime"`
	DeclaredDateOnly bool      `json:"declared_date_only,omitempty"`
	// DatetimeMismatch is true when the Memento-Datetime differs from the
	// declared datetime (exactly for datetimes, by UTC day for dates).
	DatetimeMismatch bool `json:"datetime_mismatch,omitempty"`
	// DeclaredDelta is MementoDatetime minus DeclaredDatetime.
	DeclaredDelta time.Duration `json:"declared_delta"`
	// VersionDateDelta is MementoDatetime minus the link's data-versiondate.
	VersionDateDelta time.Duration `json:"versiondate_delta"`
	// Original is the memento's Link rel="original" target.
	Original string `json:"original,omitempty"`
	// OriginalMismatch is true when Original and the link's data-originalurl
	// differ after normalization: the snapshot is of something else.
	OriginalMismatch bool      `json:"original_mismatch,omitempty"`
	CheckedAt        time.Time `json:"checked_at"`
}

// Memento is the nearest memento an archive's TimeGate gave for a link's
// target at the wanted datetime.
type Memento struct {
	RunID    int64  `json:"run_id"`
	LinkID   int64  `json:"link_id"`
	TargetID int64  `json:"target_id"`
	Archive  string `json:"archive"`
	// Wanted is the datetime asked for; WantedFrom says where it came from:
	// "versiondate", "mset", or "first-seen" (broken links without a date).
	Wanted     time.Time `json:"wanted"`
	WantedFrom string    `json:"wanted_from"`
	// URL and Datetime are the memento found; empty/zero when none.
	URL      string    `json:"url,omitempty"`
	Datetime time.Time `json:"datetime"`
	// Distance is |Datetime - Wanted|.
	Distance time.Duration `json:"distance"`
	// Representative is false when Distance exceeds --max-memento-distance.
	Representative bool `json:"representative"`
	// Nearest is true for the one record of the link (across archives)
	// whose memento is closest to Wanted.
	Nearest bool `json:"nearest,omitempty"`
	// TimeMap data (--timemap): number of mementos, first and last.
	Count int       `json:"count,omitempty"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// Error explains a failed lookup ("no memento", "rate limited", ...).
	Error     string    `json:"error,omitempty"`
	CheckedAt time.Time `json:"checked_at"`
	// Status is the lookup's outcome: LookupFound, LookupNoMemento,
	// LookupFailed (429s, timeouts, an unparsable TimeMap: the archive
	// did not answer the question, which is retried next run) or
	// LookupNotAsked (a private URL and a public archive).
	Status string `json:"status"`
	// URIR is the resource asked about (data-originalurl or the target).
	URIR string `json:"uri_r,omitempty"`
	// Reused is true when the answer is an earlier run's (within
	// --archive-max-age), not asked again; CheckedAt is then when it was.
	Reused bool `json:"reused,omitempty"`
}

// Memento lookup outcomes (Memento.Status).
const (
	LookupFound     = "found"
	LookupNoMemento = "no-memento"
	LookupFailed    = "lookup-failed"
	LookupNotAsked  = "not-asked"
)

// SnapshotSkip is a declared snapshot that was not checked, with why (the
// --max-snapshots cap: the link declares more snapshots than are checked).
type SnapshotSkip struct {
	RunID    int64     `json:"run_id"`
	LinkID   int64     `json:"link_id"`
	Source   string    `json:"source"`
	Declared string    `json:"declared"`
	Datetime time.Time `json:"declared_datetime"`
	Reason   string    `json:"reason"`
}

// Drift bands, from no change to a different page (Off-Topic Memento
// Toolkit thresholds for "off-topic").
const (
	BandUnchanged = "unchanged"
	BandMinor     = "minor"
	BandMajor     = "major"
	BandOffTopic  = "off-topic"
)

// Drift measures how far a live page moved from a reference state of it: a
// memento near the link's date ("memento"), or the fingerprint linkrot
// stored when it first saw the target ("first-seen").
type Drift struct {
	RunID    int64  `json:"run_id"`
	LinkID   int64  `json:"link_id,omitempty"`
	TargetID int64  `json:"target_id"`
	Kind     string `json:"kind"` // "memento" or "first-seen"
	// ReferenceURL is the memento URL (raw mode) or the target URL.
	ReferenceURL  string    `json:"reference_url"`
	ReferenceTime time.Time `json:"reference_time"`
	LiveURL       string    `json:"live_url"`
	// Measures: SimHash Hamming distance (of 64 bits), Jaccard and
	// Sørensen–Dice similarity of word shingles, cosine similarity of term
	// frequencies, relative word-count change ((live-ref)/ref).
	SimHashDistance int     `json:"simhash_distance"`
	Jaccard         float64 `json:"jaccard"`
	Dice            float64 `json:"dice"`
	Cosine          float64 `json:"cosine"`
	WordsReference  int     `json:"words_reference"`
	WordsLive       int     `json:"words_live"`
	WordChange      float64 `json:"word_change"`
	// TextMeasured is true when Jaccard, Dice and Cosine were computed
	// (both texts at hand, Kind "memento"); first-seen drift compares
	// stored fingerprints and has only SimHash and word counts.
	TextMeasured bool   `json:"text_measured"`
	Band         string `json:"band"`
	// Short excerpts of what changed, for the report.
	ExcerptReference string    `json:"excerpt_reference,omitempty"`
	ExcerptLive      string    `json:"excerpt_live,omitempty"`
	MeasuredAt       time.Time `json:"measured_at"`
	// ReferenceNote says how the memento's bytes were had: "raw" (the
	// archive's no-banner form), or why not (the archive has no raw form:
	// its banner and rewritten links are part of the measure). Empty for
	// first-seen drift.
	ReferenceNote string `json:"reference_note,omitempty"`
}

// DriftFailure records a drift measurement that was due but could not be
// made: the live page or the memento could not be fetched, or was no
// usable reference (an error status, not HTML, no Memento-Datetime).
type DriftFailure struct {
	RunID    int64  `json:"run_id"`
	LinkID   int64  `json:"link_id,omitempty"`
	TargetID int64  `json:"target_id"`
	Kind     string `json:"kind"` // "memento"
	// ReferenceURL is the memento asked for (raw mode), LiveURL the live
	// page.
	ReferenceURL string    `json:"reference_url"`
	LiveURL      string    `json:"live_url"`
	Reason       string    `json:"reason"`
	MeasuredAt   time.Time `json:"measured_at"`
}

// IdentifierCheck records a declared identifying URI (rel="identifier" or
// rel="cite-as") and whether it resolves and leads back to the access URI.
type IdentifierCheck struct {
	RunID int64 `json:"run_id"`
	// AccessURL is the page (crawled page or checked target) that declares
	// the identifier.
	AccessURL  string `json:"access_url"`
	Identifier string `json:"identifier"`
	Rel        string `json:"rel"`
	// OwnPage is true for identifiers declared by the crawled site's pages;
	// false for identifiers of link targets (then LinkingPages use the
	// access URI instead of the identifier).
	OwnPage bool `json:"own_page"`
	// LinkingPages are the pages of the run linking to AccessURL (targets
	// only): they use the access URI where the identifier is preferred.
	LinkingPages []string `json:"linking_pages,omitempty"`
	Resolves     bool     `json:"resolves"`
	LeadsBack    bool     `json:"leads_back"`
	Status       int      `json:"status"`
	// How names the follow-your-nose path back ("redirect", "link", "") .
	How       string    `json:"how,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	CheckedAt time.Time `json:"checked_at"`
}

// Suggestion is a ready Robust Link a site owner can paste in place of a
// link: the link's href with data-originalurl, data-versiondate and
// data-versionurl from the nearest memento.
type Suggestion struct {
	RunID       int64     `json:"run_id"`
	LinkID      int64     `json:"link_id"`
	PageURL     string    `json:"page_url"`
	Href        string    `json:"href"`
	Text        string    `json:"text"`
	Reason      string    `json:"reason"` // "no-robustness-data", "broken-with-memento" or "use-identifier"
	OriginalURL string    `json:"originalurl"`
	VersionDate time.Time `json:"versiondate"`
	VersionURL  string    `json:"versionurl"`
	// HTML is the suggested element, attribute values escaped.
	HTML string `json:"html"`
}

// SaveRequest records an opt-in request to an archive to capture a URL
// that has no memento (Save Page Now 2 semantics).
type SaveRequest struct {
	RunID     int64     `json:"run_id"`
	URL       string    `json:"url"`
	Archive   string    `json:"archive"`
	JobID     string    `json:"job_id,omitempty"`
	Status    string    `json:"status"` // "requested", "success", "error", "pending"
	Memento   string    `json:"memento,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Requested time.Time `json:"requested"`
}
