package audit

import (
	"encoding/json"
	"time"
)

// Diagnostic is a problem found in a page's markup or headers: an invalid
// or lenient value, a missing attribute. Diagnostics are data, not errors.
type Diagnostic struct {
	// Field names where the problem is: an attribute ("data-versiondate"),
	// "mset", "href", "link-header", "pwid", ...
	Field string `json:"field"`
	// Code is a stable, machine-readable kebab-case identifier.
	Code string `json:"code"`
	// Message explains the problem to a human, quoting the offending value.
	Message string `json:"message"`
}

// Time is a UTC instant that marshals to RFC 3339 (seconds precision), or
// to JSON null when zero.
type Time struct{ time.Time }

// NewTime returns t in UTC wrapped as a Time.
func NewTime(t time.Time) Time { return Time{t.UTC()} }

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	*t = NewTime(v)
	return nil
}

// Identifier is a preferred identifying URI declared by a page, either with
// rel="identifier" (draft-vandesompel-identifier) or rel="cite-as" (RFC 8574).
type Identifier struct {
	URL string `json:"url"`
	// Rel is "identifier" or "cite-as".
	Rel string `json:"rel"`
	// Source is "html" (a <link> element) or "header" (an HTTP Link field).
	Source string `json:"source"`
}

// PWID is a parsed Persistent Web IDentifier (pwid: or urn:pwid: URI).
type PWID struct {
	Raw       string `json:"raw"`
	ArchiveID string `json:"archive_id"`
	// Datetime is the archived datetime, always to the second, in UTC.
	Datetime Time `json:"datetime"`
	// ContentSpec is "page", "part", "coll", "snapshot", "rec", "other" or ""
	// when the URI carries none.
	ContentSpec string `json:"content_spec"`
	// Item is the archived item: a URI or an archive-specific identifier.
	Item string `json:"item"`
	// LeapSecond reports that the archived time was a leap second
	// (23:59:60 UTC): Datetime is then the next second, Raw keeps it.
	LeapSecond bool `json:"leap_second,omitempty"`
	// Source tells where it was found: "href", "text", "versionurl", "mset".
	Source string `json:"source"`
	// Link is the index into Extraction.Links of the link carrying the pwid,
	// or -1 for a pwid found in page text.
	Link int `json:"-"`
}

// Snapshot is one entry of data-versionurl: the URI of a snapshot of the
// original resource, and the datetime the linker gave for it.
type Snapshot struct {
	URL string `json:"url"`
	// Datetime is the declared snapshot datetime (noon UTC for dates), or zero.
	Datetime Time `json:"datetime"`
	// DateOnly reports that Datetime was declared at day granularity.
	DateOnly bool `json:"date_only,omitempty"`
	// DatetimeRaw is the datetime exactly as written.
	DatetimeRaw string `json:"datetime_raw,omitempty"`
	// LeapSecond reports that DatetimeRaw is a leap second (23:59:60
	// UTC, valid in RFC 3339): Datetime is then the next second.
	LeapSecond bool `json:"leap_second,omitempty"`
}

// Robust is the Robust Links data of a link (robust-links spec, section 3).
type Robust struct {
	// OriginalURL is the absolute data-originalurl, or href when the
	// attribute is missing (then OriginalInferred is true). Empty = null.
	OriginalURL      string `json:"-"`
	OriginalInferred bool   `json:"-"`
	OriginalRaw      string `json:"-"`
	// VersionDate is data-versiondate in UTC (noon rule applied), or zero.
	VersionDate     Time   `json:"-"`
	VersionDateOnly bool   `json:"-"`
	VersionDateRaw  string `json:"-"`
	// VersionDateLeapSecond reports that VersionDateRaw is a leap second
	// (23:59:60 UTC): VersionDate is then the next second.
	VersionDateLeapSecond bool       `json:"-"`
	VersionURLRaw         string     `json:"-"`
	Snapshots             []Snapshot `json:"-"`
}

type robustJSON struct {
	OriginalURL      *string    `json:"originalurl"`
	OriginalInferred bool       `json:"originalurl_inferred"`
	OriginalRaw      string     `json:"originalurl_raw,omitempty"`
	VersionDate      Time       `json:"versiondate"`
	VersionDateOnly  bool       `json:"versiondate_date_only,omitempty"`
	VersionDateRaw   string     `json:"versiondate_raw"`
	VersionDateLeap  bool       `json:"versiondate_leap_second,omitempty"`
	VersionURLRaw    string     `json:"versionurl_raw,omitempty"`
	Snapshots        []Snapshot `json:"snapshots"`
}

// MarshalJSON writes the schema documented in docs/crawling.md ("robust" object).
func (r Robust) MarshalJSON() ([]byte, error) {
	j := robustJSON{
		OriginalInferred: r.OriginalInferred,
		OriginalRaw:      r.OriginalRaw,
		VersionDate:      r.VersionDate,
		VersionDateOnly:  r.VersionDateOnly,
		VersionDateRaw:   r.VersionDateRaw,
		VersionDateLeap:  r.VersionDateLeapSecond,
		VersionURLRaw:    r.VersionURLRaw,
		Snapshots:        r.Snapshots,
	}
	if r.OriginalURL != "" {
		s := r.OriginalURL
		j.OriginalURL = &s
	}
	if j.Snapshots == nil {
		j.Snapshots = []Snapshot{}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Robust) UnmarshalJSON(b []byte) error {
	var j robustJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Robust{
		OriginalInferred:      j.OriginalInferred,
		OriginalRaw:           j.OriginalRaw,
		VersionDate:           j.VersionDate,
		VersionDateOnly:       j.VersionDateOnly,
		VersionDateRaw:        j.VersionDateRaw,
		VersionDateLeapSecond: j.VersionDateLeap,
		VersionURLRaw:         j.VersionURLRaw,
		Snapshots:             j.Snapshots,
	}
	if j.OriginalURL != nil {
		r.OriginalURL = *j.OriginalURL
	}
	return nil
}

// Copy is a copy link of an mset attribute: the URL of a copy of the
// link's target, with the optional datetime and link type (e.g. "memento").
type Copy struct {
	URL         string `json:"url"`
	Datetime    Time   `json:"datetime"`
	DateOnly    bool   `json:"date_only,omitempty"`
	DatetimeRaw string `json:"datetime_raw,omitempty"`
	// LeapSecond: as Snapshot.LeapSecond.
	LeapSecond bool    `json:"leap_second,omitempty"`
	Rel        *string `json:"rel"`
}

// Mset is the parsed mset attribute of a link (mset-attribute spec, 3.1).
type Mset struct {
	Raw string `json:"raw,omitempty"`
	// Temporal holds the temporal references (noon UTC for dates).
	Temporal []Time `json:"temporal"`
	Copies   []Copy `json:"copies"`
}

// Link is one URL reference found in a page.
type Link struct {
	// Element is the lower-case element name: a, area, link, img, script,
	// iframe, source.
	Element string `json:"element"`
	// Attr is the attribute the URL came from (href, src).
	Attr string `json:"attr,omitempty"`
	// Href is the absolute URL (resolved against the base), or the raw value
	// when it cannot be resolved.
	Href    string `json:"href"`
	RawHref string `json:"raw_href,omitempty"`
	// Text is the trimmed, whitespace-collapsed, bounded anchor text (or alt
	// text for images).
	Text string   `json:"text"`
	Rel  []string `json:"rel"`
	// Resource is true for embedded resources (img, script, link, ...) as
	// opposed to hyperlinks (a, area).
	Resource    bool         `json:"resource,omitempty"`
	Robust      *Robust      `json:"robust"`
	Mset        *Mset        `json:"mset"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Line and Column locate the link in its source document: the 1-based
	// line and the 1-based column, counted in UTF-16 code units as SARIF
	// 2.1.0 counts them (columnKind "utf16CodeUnits"), of the first
	// character of the URL as written (the attribute value, the Markdown
	// destination) or of the construct holding it. Both are 0 when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// LineHash is LineHash of the source line at Line ("" when unknown).
	LineHash string `json:"-"`
	// target is the key of the link's target for the Href it was
	// computed from (SetTarget, Target): never encoded, so a Link read
	// from JSON or from the store has none.
	target linkTarget
}

// Extraction is everything linkrot reads from one HTML page. Its JSON form
// is the output of `linkrot extract` and is documented in docs/crawling.md.
type Extraction struct {
	URL         string       `json:"url"`
	Base        string       `json:"base"`
	Title       string       `json:"title,omitempty"`
	Identifiers []Identifier `json:"identifiers"`
	PWIDs       []PWID       `json:"pwids"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Links       []Link       `json:"links"`
	// Parsed reports that the body was parsed as HTML.
	Parsed bool `json:"-"`
}
