package audit

import "fmt"

// FindingCrawlTrap is the kind of the findings a crawl trap makes (see
// CrawlTrap), as machine outputs name it.
const FindingCrawlTrap = "crawl-trap"

// TrapKind names the guard that cut a crawl trap.
type TrapKind string

// The crawl-trap guards.
const (
	// TrapRepeatedSegments: the same path segment, or pair of segments,
	// more than Limit times in a row (/more/more/more/).
	TrapRepeatedSegments TrapKind = "repeated-segments"
	// TrapTooDeep: more than Limit path segments.
	TrapTooDeep TrapKind = "too-deep"
	// TrapQueryVariants: more than Limit query strings of one path
	// (calendars, facets, sorts).
	TrapQueryVariants TrapKind = "query-variants"
	// TrapSessionID: links differing only in a session-id parameter,
	// crawled as one page.
	TrapSessionID TrapKind = "session-id"
	// TrapURLTooLong: a URL longer than Limit bytes.
	TrapURLTooLong TrapKind = "url-too-long"
)

// TrapKinds lists every TrapKind.
var TrapKinds = []TrapKind{TrapRepeatedSegments, TrapTooDeep, TrapQueryVariants, TrapSessionID, TrapURLTooLong}

// CrawlTrap is a finding of kind crawl-trap: a guard of the crawl cut the
// URLs matching Pattern.
type CrawlTrap struct {
	RunID int64    `json:"run_id"`
	Kind  TrapKind `json:"trap"`
	// Pattern describes the URLs cut, e.g. "http://site/(more/){3,}",
	// "http://site/calendar?…", "http://site/…?sid=…".
	Pattern string `json:"pattern"`
	// PageURL is the page where the trap starts: the first page of its
	// pattern (the first query variant crawled, the first occurrence of
	// the repeated segments, the first page crawled with the session id),
	// or, for too-deep and too-long URLs, the page whose link first hit
	// the guard.
	PageURL string `json:"page_url"`
	// Example is the first URL cut (shortened when too long).
	Example string `json:"example"`
	// Cut counts the URLs (links) the guard kept out of the crawl.
	Cut int64 `json:"cut"`
	// Limit is the guard's limit (repetitions, segments, variants or
	// bytes; 0 for session ids).
	Limit int `json:"limit"`
}

// Message describes the trap in a sentence.
func (t *CrawlTrap) Message() string {
	var what string
	switch t.Kind {
	case TrapRepeatedSegments:
		what = fmt.Sprintf("a path segment (or pair) repeated more than %d times in a row", t.Limit)
	case TrapTooDeep:
		what = fmt.Sprintf("paths of more than %d segments", t.Limit)
	case TrapQueryVariants:
		what = fmt.Sprintf("more than %d query variants of one path", t.Limit)
	case TrapSessionID:
		what = "links differing only in a session id, crawled as one page"
	case TrapURLTooLong:
		what = fmt.Sprintf("URLs longer than %d bytes", t.Limit)
	default:
		what = string(t.Kind)
	}
	return fmt.Sprintf("crawl trap: %s; %d URLs not crawled (%s)", what, t.Cut, t.Pattern)
}
