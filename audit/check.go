package audit

import "time"

// Verdict is the outcome of checking one target: an honest taxonomy, so a
// site owner can tell rot from a bot wall from a flaky night.
type Verdict string

// Verdicts of a live check.
const (
	VerdictOK               Verdict = "ok"                 // 2xx
	VerdictRedirected       Verdict = "redirected"         // temporary redirects ending in 2xx
	VerdictMoved            Verdict = "moved"              // permanent (301/308) redirects ending in 2xx
	VerdictNotFound         Verdict = "not-found"          // 404
	VerdictGone             Verdict = "gone"               // 410
	VerdictClientError      Verdict = "client-error"       // other 4xx
	VerdictBlocked          Verdict = "blocked"            // 401/403, 999, bot challenges
	VerdictRateLimited      Verdict = "rate-limited"       // 429 after retries
	VerdictServerError      Verdict = "server-error"       // 5xx after retries
	VerdictTimeout          Verdict = "timeout"            // connect, header or body deadline
	VerdictDNSError         Verdict = "dns-error"          // host does not resolve
	VerdictConnectionError  Verdict = "connection-error"   // refused, reset
	VerdictTLSError         Verdict = "tls-error"          // handshake or certificate failure
	VerdictTooManyRedirects Verdict = "too-many-redirects" // hop cap reached
	VerdictRedirectLoop     Verdict = "redirect-loop"      // a URL repeats in the chain
	VerdictSoft404          Verdict = "soft-404"           // 200 page that is really "not found"
	VerdictRedirectToRoot   Verdict = "redirect-to-root"   // deep URL redirected to the home page
	VerdictParked           Verdict = "parked"             // parked or hijacked domain (parking service, for sale)
	VerdictSkipped          Verdict = "skipped"            // not fetched: scheme or pattern
	VerdictFragmentMissing  Verdict = "fragment-missing"   // #fragment not in the target page
	VerdictRefused          Verdict = "refused"            // linkrot refused to connect (SSRF policy)
	// VerdictInvalidURL is a link's own verdict, never a target's: its
	// URL could not be parsed (an out-of-range port, an unterminated IPv6
	// host, ...), so it has no target and nothing was requested; a browser
	// cannot follow it either.
	VerdictInvalidURL Verdict = "invalid-url"
)

// Verdicts lists every verdict in report order.
var Verdicts = []Verdict{
	VerdictOK, VerdictRedirected, VerdictMoved, VerdictNotFound, VerdictGone,
	VerdictClientError, VerdictBlocked, VerdictRateLimited, VerdictServerError,
	VerdictTimeout, VerdictDNSError, VerdictConnectionError, VerdictTLSError,
	VerdictTooManyRedirects, VerdictRedirectLoop, VerdictSoft404,
	VerdictRedirectToRoot, VerdictParked, VerdictSkipped, VerdictFragmentMissing, VerdictRefused,
	VerdictInvalidURL,
}

// Transient reports whether the verdict may go away on its own (and so is
// retried within a run and never reused from an earlier run).
func (v Verdict) Transient() bool {
	switch v {
	case VerdictTimeout, VerdictServerError, VerdictRateLimited, VerdictConnectionError:
		return true
	}
	return false
}

// Broken reports whether the verdict means the link does not lead to what
// it promised. Blocked, rate-limited, skipped and refused are not broken:
// linkrot could not tell.
func (v Verdict) Broken() bool {
	switch v {
	case VerdictNotFound, VerdictGone, VerdictClientError, VerdictServerError,
		VerdictTimeout, VerdictDNSError, VerdictConnectionError, VerdictTLSError,
		VerdictTooManyRedirects, VerdictRedirectLoop, VerdictSoft404,
		VerdictRedirectToRoot, VerdictParked, VerdictFragmentMissing, VerdictInvalidURL:
		return true
	}
	return false
}

// Timings are the phases of the final request of a check.
type Timings struct {
	DNS       time.Duration `json:"dns"`
	Connect   time.Duration `json:"connect"`
	TLS       time.Duration `json:"tls"`
	FirstByte time.Duration `json:"first_byte"`
	Total     time.Duration `json:"total"`
}

// Soft404Evidence is why a 2xx HTML answer was judged a soft 404 or a
// parked domain (or not): the soft-404 classifier's named signals
// (check, docs/checking.md "Soft-404 signals"), among them the probe of a
// sibling URL that cannot exist (Bar-Yossef et al. 2004). ProbeURL is ""
// when no probe was made (a page read from a local directory).
type Soft404Evidence struct {
	ProbeURL    string  `json:"probe_url"`
	ProbeStatus int     `json:"probe_status"`
	ProbeFinal  string  `json:"probe_final,omitempty"`
	Similarity  float64 `json:"similarity"`
	// Score is the sum of the soft-404 signals' scores, Parked that of the
	// parked-domain signals; each verdict needs its sum to reach 1
	// (Soft404Threshold).
	Score  float64 `json:"score"`
	Parked float64 `json:"parked,omitempty"`
	// Signals are the signals that were looked at, with what they found
	// (a signal that found nothing is left out).
	Signals []Soft404Signal `json:"signals,omitempty"`
}

// Soft404Threshold is the sum of signal scores that makes a 2xx page a
// soft 404 (Soft404Evidence.Score) or parked (Soft404Evidence.Parked).
const Soft404Threshold = 1.0

// Soft404Signal is one named signal of the soft-404 classifier.
type Soft404Signal struct {
	// Name is the signal: "probe", "words", "error-url", "parked",
	// "drift".
	Name string `json:"name"`
	// Score is its contribution: to Soft404Evidence.Score for probe,
	// words and error-url, to Soft404Evidence.Parked for parked and
	// drift. It may be 0 (recorded, but no weight) or negative.
	Score float64 `json:"score"`
	// Match is what matched: a phrase, a URL, a similarity, a host.
	Match string `json:"match,omitempty"`
	// Where is where it matched: "title", "h1", "text-start", "text",
	// "url", "probe", "html", "fingerprint".
	Where string `json:"where,omitempty"`
}

// Check is the result of checking one target URL in one run, with the
// evidence behind its verdict.
type Check struct {
	RunID    int64 `json:"run_id"`
	TargetID int64 `json:"target_id"`
	// URL is the target as checked (normalized, fragment stripped).
	URL     string  `json:"url"`
	Verdict Verdict `json:"verdict"`
	// Reason explains the verdict in one line (skip reason, error text,
	// soft-404 evidence summary).
	Reason string `json:"reason,omitempty"`
	// ErrorClass is the classified network error ("timeout", "dns",
	// "refused", "reset", "tls", ...), empty when a response arrived.
	ErrorClass string     `json:"error_class,omitempty"`
	Status     int        `json:"status"` // final status, 0 without a response
	FinalURL   string     `json:"final_url,omitempty"`
	Redirects  []Redirect `json:"redirects,omitempty"`
	// Replacement is the URL that replaces a moved target.
	Replacement string    `json:"replacement,omitempty"`
	Attempts    int       `json:"attempts"`
	Timings     Timings   `json:"timings"`
	CheckedAt   time.Time `json:"checked_at"`
	// Headers keeps the response header fields that matter as evidence
	// (Content-Type, Content-Length, Location, Retry-After, Server, ETag,
	// Last-Modified, Link, Memento-Datetime, ...).
	Headers     map[string]string `json:"headers,omitempty"`
	ContentType string            `json:"content_type,omitempty"`
	// ETag and LastModified are the validators for conditional requests in
	// later runs.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// Reused is true when the result was taken from an earlier run
	// (--max-age) or confirmed by a 304 Not Modified.
	Reused     bool  `json:"reused,omitempty"`
	ReusedFrom int64 `json:"reused_from,omitempty"`
	// FromCrawl is true when the verdict was judged from the response the
	// crawl of the same run got for the URL (a page of the audited site)
	// instead of a request of the checker's own: Attempts is 0, CheckedAt
	// the crawl's fetch time.
	FromCrawl bool `json:"from_crawl,omitempty"`
	// SHA256 and SimHash fingerprint a 2xx HTML body (hex SHA-256 of the
	// bytes; 64-bit SimHash of the main text) for drift measurement.
	SHA256    string           `json:"sha256,omitempty"`
	SimHash   uint64           `json:"simhash,omitempty"`
	Words     int              `json:"words,omitempty"`
	Truncated bool             `json:"truncated,omitempty"`
	Soft404   *Soft404Evidence `json:"soft404,omitempty"`
	// Anchors are the id and name values of a fetched HTML target, used to
	// check #fragment links (bounded).
	Anchors []string `json:"-"`
}

// Finding is a problem tied to one link of one page: a broken target, a
// missing fragment, a link to a moved resource.
type Finding struct {
	RunID    int64   `json:"run_id"`
	PageURL  string  `json:"page_url"`
	LinkID   int64   `json:"link_id,omitempty"`
	Target   string  `json:"target"`
	Verdict  Verdict `json:"verdict"`
	Message  string  `json:"message"`
	Fragment string  `json:"fragment,omitempty"`
}

// Maintenance is a link-maintenance record: exactly the UNLINKR triple of
// the HTTP link-maintenance protocol (Source-URL Target-URL
// Repl-Target-URL), telling a site owner which link on which page to
// update to what.
type Maintenance struct {
	RunID       int64  `json:"run_id"`
	Source      string `json:"source"`
	Target      string `json:"target"`
	Replacement string `json:"replacement"`
	// Status is the permanent redirect status that justified the record
	// (for a record made from a claim: the status of the target's check).
	Status int `json:"status"`
	// Origin is "" for a record of the run's own checks, "unlinkr"
	// for one made from an UNLINKR received by linkrot serve and borne out
	// by serve's checks (see Claim).
	Origin string `json:"origin,omitempty"`
	// Claimant is who sent an UNLINKR about this link ("" when nobody
	// did), with ClaimNote saying what serve's checks made of it.
	Claimant  string `json:"claimant,omitempty"`
	ClaimNote string `json:"claim_note,omitempty"`
}
