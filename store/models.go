package store

import (
	"time"

	"github.com/linkrot/linkrot/audit"
)

// RunProgress is what a run has stored so far.
type RunProgress struct {
	RunID    int64
	Status   audit.RunStatus
	Pages    int
	Links    int
	Checked  int
	Broken   int
	Findings int
}

// SearchHit is a URL found by a search, with the latest run it appears in.
type SearchHit struct {
	ID    int64 // the target's ID (0 for pages)
	URL   string
	RunID int64
}

// FindingRef is a finding with its store ID (what a dismissal names) and
// the link it is about.
type FindingRef struct {
	ID       int64
	RunID    int64
	LinkID   int64
	TargetID int64
	PageURL  string
	Verdict  audit.Verdict
	Message  string
	Fragment string
}

// TargetLink is one link to a target: the page that carries it.
type TargetLink struct {
	RunID   int64
	LinkID  int64
	PageURL string
	Element string
	Text    string
}

// TargetInfo is a target with where it was first seen.
type TargetInfo struct {
	ID           int64
	URL          string
	Host         string
	Scheme       string
	FirstSeenRun int64
	FirstSeenAt  time.Time
}

// WireCounts are the numbers of the dashboard's link-maintenance card.
type WireCounts struct {
	// Pending counts UNLINKR and LINKMOD notifications whose check is
	// not made yet.
	Pending int
	// Confirmed and Unconfirmed count the UNLINKR claims recorded on
	// maintenance records that the checks bore out, or not.
	Confirmed   int
	Unconfirmed int
	// Backlinks counts the verified backlinks.
	Backlinks int
}

// WireClaim is an inbound UNLINKR or LINKMOD about one target, as the
// dashboard lists it: the sender's claim and what linkrot's check made of
// it.
type WireClaim struct {
	Method string // audit.WireUNLINKR or audit.WireLINKMOD
	// Source is our page (the one linking to the target).
	Source string
	Target string
	// Claimant is the sender's address.
	Claimant string
	// Replacement is the replacement the sender named ("" when none).
	Replacement string
	ReceivedAt  time.Time
	State       string
	// Verdict is the check's verdict of the target, ReplacementVerdict
	// that of the replacement (UNLINKR), Band the drift band against the
	// check before (LINKMOD); "" when not known.
	Verdict            audit.Verdict
	ReplacementVerdict audit.Verdict
	Band               string
	// Confirmed is set for an UNLINKR the checks bore out.
	Confirmed bool
	// Note is the check's conclusion, one line.
	Note string
	// RunID is the run whose maintenance record holds the claim (0 when
	// none).
	RunID int64
}

// StoredLink is one link of a run as EachLink streams it: the link with
// its Robust Links, mset data and diagnostics, and the IDs that tie it to
// its page, its target and other rows.
type StoredLink struct {
	ID     int64
	PageID int64
	// TargetID is the link's target, 0 when it has none (see SavePages).
	TargetID int64
	audit.Link
}

// LockOptions configure TryLock. The zero value is useful: a heartbeat
// every 15 s, a lock of another host stale after 2 min without one.
type LockOptions struct {
	// Command names what the holder does ("audit", "prune", ...), for the
	// message another process shows.
	Command string
	// Heartbeat is how often the holder proves it is alive.
	Heartbeat time.Duration
	// StaleAfter is how old the heartbeat of a lock held by another host
	// must be for the lock to be taken over. Locks of this host are
	// stale as soon as their process is gone, whatever the heartbeat.
	StaleAfter time.Duration
	// OnLost is called (once, from the heartbeat goroutine) when the lock
	// was taken over by another process: the holder must stop writing.
	OnLost func()
}

// PruneResult lists the runs Prune removed (or would remove).
type PruneResult struct {
	Runs []int64
}

// PruneOptions says which runs Prune keeps. A run is kept when it is
// among the Keep newest runs or started within OlderThan before Now; an
// option left at zero keeps nothing by itself. The newest run is always
// kept (so run IDs keep growing and history stays ordered).
type PruneOptions struct {
	Keep      int
	OlderThan time.Duration
	// Now is the reference time for OlderThan (zero: time.Now()).
	Now time.Time
	// DryRun reports what would be removed without removing it.
	DryRun bool
}

// RunSummary is a run with the counts linkrot runs lists.
type RunSummary struct {
	audit.Run
	Pages    int `json:"pages"`
	Links    int `json:"links"`
	Targets  int `json:"targets"`
	Checked  int `json:"checked"`
	Broken   int `json:"broken"`
	Findings int `json:"findings"`
	// Confirmed is the number of targets the run confirmed broken
	// (history events; 0 before the run's history is applied).
	Confirmed int `json:"newly_confirmed"`
	// Abandoned is true for an unfinished run that will never be resumed
	// (AbandonRun): a newer run of its settings completed, or it grew too
	// old. Its Status is still what it was when it stopped.
	Abandoned bool `json:"abandoned,omitempty"`
}

// ResumeQuery selects the run a command resumes (UnfinishedRun).
type ResumeQuery struct {
	// Command is the command that started the run (audit.CommandAudit, ...).
	Command string
	// Fingerprint selects runs with these settings; "" selects any.
	Fingerprint string
	// WithReport also selects complete runs whose report stage is not
	// recorded (audit.StageReport): killed while writing their report.
	WithReport bool
}

// WireEffect is what processing a notification changes besides its inbox
// row; FinishWire stores both in one transaction.
type WireEffect struct {
	// UpsertBacklink stores (or refreshes) a verified backlink.
	UpsertBacklink *audit.Backlink
	// DeleteBacklinks removes the backlinks (source, target) listed.
	DeleteBacklinks [][2]string
	// LiveChecks are stored with the notification's ID.
	LiveChecks []audit.LiveCheck
	// Claim is stored on the maintenance record of its run and link.
	Claim *audit.Claim
}

// PWIDSnapshot is a snapshot the archives stage resolved from a pwid of a
// link (snapshots rows with source 'pwid').
type PWIDSnapshot struct {
	LinkID   int64
	Ord      int
	URL      string
	Datetime time.Time
	TargetID int64
}

// TimelineEntry is one run's check of a target.
type TimelineEntry struct {
	RunID     int64         `json:"run_id"`
	Verdict   audit.Verdict `json:"verdict"`
	Status    int           `json:"status"`
	CheckedAt time.Time     `json:"checked_at"`
}
