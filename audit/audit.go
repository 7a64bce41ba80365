package audit

import (
	"errors"
	"time"
)

// ErrNotFound is returned by a Store when the requested record does not exist.
var ErrNotFound = errors.New("not found")

// RunStatus is the life-cycle state of a Run.
type RunStatus string

// Run states. A run starts as RunRunning and ends in exactly one of the
// other three.
const (
	RunRunning     RunStatus = "running"
	RunComplete    RunStatus = "complete"
	RunInterrupted RunStatus = "interrupted"
	RunFailed      RunStatus = "failed"
)

// Run is one invocation of linkrot against a site: every page, link and
// check it records hangs off its ID.
type Run struct {
	ID         int64
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
	Status     RunStatus
	// Mode names the input: "site", "sitemap", "urls" or "dir".
	Mode string
	// Seeds are the start URLs (or the directory) given by the user.
	Seeds []string
	// Args are the command-line arguments, kept for provenance.
	Args    []string
	Version string
	// Error holds the message of the failure that ended a RunFailed run,
	// or why a RunInterrupted run could not finish (the hosts of the
	// audited site it was waiting for, see linkrot.WaitingError).
	Error string
}

// Redirect is one hop of a redirect chain observed while fetching a page.
type Redirect struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Status int    `json:"status"`
}

// Page is one fetched document of a run: its HTTP outcome and, for HTML,
// everything extracted from it.
type Page struct {
	Extraction

	// RequestURL is the URL that was requested; Extraction.URL is the final
	// URL after redirects (equal when there were none).
	RequestURL string
	// File is the page's source file when the page came from a local
	// directory: slash-separated, the directory as it was named joined
	// with the file's path in it ("docs/guide.md"); "" for pages fetched
	// from the web.
	File        string
	Depth       int
	Status      int // 0 when the fetch failed before a response
	ContentType string
	// Charset is the character set the body was decoded from ("" for non-HTML).
	Charset string
	// Size is the number of (decoded) body bytes read.
	Size int64
	// Truncated reports that the body hit the size cap.
	Truncated bool
	// FetchError describes a failed fetch (timeout, refused, robots, ...).
	FetchError string
	FetchedAt  time.Time
	Duration   time.Duration
	Redirects  []Redirect
	// Evidence is what a check of the page's URL needs of its response
	// (nil when there was none, or it was not recorded).
	Evidence *PageEvidence

	// Prepared is what a store computed of the page ahead of saving it,
	// on the goroutine that produced it (see store.PagePreparer), so that
	// the run's single writer does less: nil when nothing was. Only that
	// store reads it; it is never serialized.
	Prepared any `json:"-"`
}

// IsHTML reports whether the page was parsed as HTML.
func (p *Page) IsHTML() bool { return p.Parsed }

// RunStats counts what a run recorded, for the end-of-run summary.
type RunStats struct {
	Pages       int `json:"pages"`
	ErrorPages  int `json:"error_pages"`
	Links       int `json:"links"`
	Targets     int `json:"unique_targets"`
	RobustLinks int `json:"robust_links"`
	MsetLinks   int `json:"mset_links"`
	Snapshots   int `json:"snapshots"`
	Identifiers int `json:"identifiers"`
	PWIDs       int `json:"pwids"`
	Diagnostics int `json:"diagnostics"`
	Redirects   int `json:"redirects"`
}
