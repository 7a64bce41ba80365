package audit

import "time"

// Link-maintenance wire records (linkrot serve and linkrot notify): the
// HTTP link-maintenance draft (draft-pritchard-http-links-00: LINK, UNLINK,
// UNLINKR, LINKMOD) and W3C Webmention. Every string in them came from a
// notification sent over the internet.

// Wire methods of WireRequest.Method: the draft's four, a Webmention, and a
// re-check the dashboard asked for.
const (
	WireLINK       = "LINK"
	WireUNLINK     = "UNLINK"
	WireUNLINKR    = "UNLINKR"
	WireLINKMOD    = "LINKMOD"
	WireWebmention = "WEBMENTION"
	WireRecheck    = "RECHECK"
)

// Framings of WireRequest.Framing.
const (
	FramingDraft      = "draft"      // the draft's own request line
	FramingHTTP       = "http"       // HTTP/1.1 with the URLs in headers
	FramingWebmention = "webmention" // W3C Webmention form POST
	FramingDashboard  = "dashboard"  // an action of the dashboard
)

// States of WireRequest.State.
const (
	WireQueued   = "queued"   // accepted, not processed yet
	WireDone     = "done"     // processed: its effect is stored
	WireRejected = "rejected" // processed: verification said no (source does not link, ...)
	WireFailed   = "failed"   // processing could not conclude (timeouts after retries)
)

// WireRequest is one notification serve accepted, queued for processing.
type WireRequest struct {
	ID         int64     `json:"id"`
	ReceivedAt time.Time `json:"received_at"`
	Framing    string    `json:"framing"`
	Method     string    `json:"method"`
	Source     string    `json:"source"`
	Target     string    `json:"target"`
	// Repl is the replacement URL (UNLINK: of the source, UNLINKR: of the
	// target), "" when none.
	Repl    string `json:"repl,omitempty"`
	LinkMod bool   `json:"linkmod,omitempty"`
	// Client is the sender's address.
	Client    string    `json:"client"`
	State     string    `json:"state"`
	Attempts  int       `json:"attempts"`
	NotBefore time.Time `json:"not_before,omitzero"`
	Result    string    `json:"result,omitempty"`
	DoneAt    time.Time `json:"done_at,omitzero"`
}

// Backlink is a page of another site verified to link to one of ours.
type Backlink struct {
	Source string `json:"source"` // their page
	Target string `json:"target"` // our page
	// Via is "link" or "webmention".
	Via string `json:"via"`
	// LinkMod is set when the source asked for LINKMOD calls.
	LinkMod bool `json:"linkmod"`
	// Draft is set when the source spoke the draft framing to us (so it
	// accepts it).
	Draft      bool      `json:"draft"`
	Client     string    `json:"client"`
	VerifiedAt time.Time `json:"verified_at"`
}

// Reasons of LiveCheck.Reason.
const (
	LiveUnlinkrTarget      = "unlinkr-target"
	LiveUnlinkrReplacement = "unlinkr-replacement"
	LiveLinkmod            = "linkmod"
	LiveRecheck            = "recheck"
)

// LiveCheck is a check serve made on its own, outside any run.
type LiveCheck struct {
	ID      int64   `json:"id"`
	InboxID int64   `json:"inbox_id,omitempty"`
	Reason  string  `json:"reason"`
	URL     string  `json:"url"`
	Verdict Verdict `json:"verdict"`
	Status  int     `json:"status"`
	// FinalURL is where redirects ended.
	FinalURL string `json:"final_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
	SimHash  uint64 `json:"simhash,omitempty"`
	Words    int    `json:"words,omitempty"`
	// PrevSHA256 and Band: the check this one was compared with and the
	// drift band (BandUnchanged, ...) against it; "" when not compared.
	PrevSHA256 string    `json:"prev_sha256,omitempty"`
	Band       string    `json:"band,omitempty"`
	CheckedAt  time.Time `json:"checked_at"`
}

// Claim is an UNLINKR received for a link of a run: the sender's claim and
// what linkrot's own checks made of it. It is stored on the run's
// maintenance record of the link.
type Claim struct {
	RunID     int64     `json:"run_id"`
	Source    string    `json:"source"` // our page
	Target    string    `json:"target"` // the link the sender says is no longer valid
	Claimant  string    `json:"claimant"`
	ClaimedAt time.Time `json:"claimed_at"`
	// Replacement is the replacement the sender named, "" when none.
	Replacement        string  `json:"replacement,omitempty"`
	TargetVerdict      Verdict `json:"target_verdict"`
	TargetStatus       int     `json:"target_status"`
	ReplacementVerdict Verdict `json:"replacement_verdict,omitempty"`
	// Confirmed is set when the checks bear the claim out: the target is
	// broken or moved, and the replacement (when named) answers.
	Confirmed bool `json:"confirmed"`
	// Note says why, in one line.
	Note string `json:"note"`
}

// Notification is one UNLINKR or LINKMOD linkrot notify sent.
type Notification struct {
	ID     int64  `json:"id"`
	Method string `json:"method"`
	Source string `json:"source"` // their page
	Target string `json:"target"` // our page
	Repl   string `json:"repl,omitempty"`
	// ChangeKey tells changes apart for LINKMOD (the new fingerprint); ""
	// for UNLINKR.
	ChangeKey string `json:"change_key,omitempty"`
	RunID     int64  `json:"run_id"`
	Framing   string `json:"framing"`
	Attempts  int    `json:"attempts"`
	// Status is the answer's status code, 0 without an answer.
	Status int       `json:"status"`
	Answer string    `json:"answer"`
	SentAt time.Time `json:"sent_at"`
	// Done is set once the receiver answered (any status below 500): the
	// notification is never sent again.
	Done bool `json:"done"`
}

// Dismissal is a finding a dashboard user dismissed.
type Dismissal struct {
	PageURL     string    `json:"page_url"`
	Target      string    `json:"target"`
	Note        string    `json:"note,omitempty"`
	DismissedAt time.Time `json:"dismissed_at"`
}
