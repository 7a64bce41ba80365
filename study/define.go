package study

import (
	"math"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift"
)

// Tri is a yes/no that may be unknown: written true, false or an empty
// cell.
type Tri int8

// Tri values.
const (
	Unknown Tri = iota
	No
	Yes
)

func (t Tri) String() string {
	switch t {
	case Yes:
		return "true"
	case No:
		return "false"
	}
	return ""
}

func tri(b bool) Tri {
	if b {
		return Yes
	}
	return No
}

// DriftUnmeasured is the drift of a reference whose live page could not be
// compared with a representative memento (the live URL is rotten or
// unmeasured, there is no representative memento, or the comparison was
// not made). The other drift values are the bands of package drift
// (audit.BandUnchanged, BandMinor, BandMajor, BandOffTopic).
const DriftUnmeasured = "unmeasured"

// Memento is one capture of a URL in an archive.
type Memento struct {
	Datetime time.Time
	URL      string
	// Archive names the archive that holds it.
	Archive string
	// Drift is the band of the live page against this memento
	// (audit.BandUnchanged, ...), "" when they were not compared.
	Drift string
}

// Result is what a run found for one distinct URL: the live check and the
// archives' mementos (a TimeMap, any order). Every reference to the URL
// shares it.
type Result struct {
	URL string
	// Verdict is the live check's verdict, "" when the URL was not checked.
	Verdict audit.Verdict
	// Status is the final HTTP status, 0 without a response.
	Status   int
	Mementos []Memento
}

// Wave is one check of the study's URLs: the first study is wave 1, a
// later study of the same references wave 2, and so on.
type Wave struct {
	Number    int
	CheckedAt time.Time
	// Results are keyed by Reference.URL.
	Results map[string]Result
}

// DefaultWindow is how far from the citation a memento may be to be
// representative: 7 days before or after.
const DefaultWindow = 7 * 24 * time.Hour

// Params are a study's parameters, recorded in study.json and the methods
// paragraph.
type Params struct {
	// Window is how far before or after the citation a representative
	// memento may be (DefaultWindow when 0).
	Window time.Duration
	// Archives are the archives asked, by name.
	Archives []string
	// Thresholds are the drift bands' thresholds the run used.
	Thresholds drift.Thresholds
	// Version is linkrot's version.
	Version string
	// Created is when the study's outputs were written.
	Created time.Time
	// HTMLRows caps the rows of index.html's references table
	// (DefaultHTMLRows when 0), so that a study of a million references
	// still opens in a browser; references.csv has every row.
	HTMLRows int
}

// DefaultHTMLRows is the default cap of index.html's references table.
const DefaultHTMLRows = 25000

func (p Params) htmlRows() int {
	if p.HTMLRows <= 0 {
		return DefaultHTMLRows
	}
	return p.HTMLRows
}

func (p Params) window() time.Duration {
	if p.Window <= 0 {
		return DefaultWindow
	}
	return p.Window
}

// Broken is the link rot of a live verdict: Yes for every verdict
// audit.Verdict.Broken reports (soft-404, parked, not-found, gone, dns-,
// connection-, tls- and server-error, redirect loops, redirect-to-root,
// ...) except timeout; Unknown for the verdicts that say linkrot could not
// tell (timeout, rate-limited, blocked, skipped, refused) and for a URL not
// checked; No for the rest (ok, redirected, moved).
func Broken(v audit.Verdict) Tri {
	switch v {
	case "", audit.VerdictTimeout, audit.VerdictRateLimited, audit.VerdictBlocked,
		audit.VerdictSkipped, audit.VerdictRefused:
		return Unknown
	}
	return tri(v.Broken())
}

// Distance is how far a memento is from a citation: 0 inside the
// citation's interval (CitedAt), negative before it, positive after.
func Distance(at CitedAt, m time.Time) time.Duration {
	switch {
	case m.Before(at.From):
		return m.Sub(at.From)
	case at.Precision != Instant && !m.Before(at.To):
		// To is exclusive: the last instant of the interval is To - 1ns.
		return m.Sub(at.To) + time.Nanosecond
	case at.Precision == Instant && m.After(at.From):
		return m.Sub(at.From)
	}
	return 0
}

// Nearest returns the index of the memento nearest the citation, or -1
// when there is none. Nearest is the smallest absolute Distance; a tie
// goes to the earlier memento, so that of two mementos as far before as
// after the citation the one before wins (it shows the page as the
// citing author could have seen it), and of two inside the citation's
// interval the earlier; equal datetimes go to the first listed.
func Nearest(at CitedAt, ms []Memento) int {
	best := -1
	var bestAbs time.Duration
	for i, m := range ms {
		if m.Datetime.IsZero() {
			continue
		}
		d := Distance(at, m.Datetime)
		if d < 0 {
			d = -d
		}
		if best < 0 || d < bestAbs || (d == bestAbs && m.Datetime.Before(ms[best].Datetime)) {
			best, bestAbs = i, d
		}
	}
	return best
}

// Row is one reference in one wave, with its judgement.
type Row struct {
	Ref Reference
	// Index is the reference's position in the input's references.
	Index     int
	Wave      int
	CheckedAt time.Time
	// Checked is whether the wave has a result for the reference's URL;
	// without one everything is unknown and representative is empty.
	Checked bool
	Verdict audit.Verdict
	Status  int
	// Broken is the link rot of Verdict (Broken).
	Broken Tri
	// Memento is the memento nearest the citation (Nearest), nil when the
	// URL has none; Distance its signed distance; Representative whether
	// it is within the window.
	Memento        *Memento
	Distance       time.Duration
	Representative bool
	// Drift is the band of the live page against the representative
	// memento, or DriftUnmeasured.
	Drift string
	// ReferenceRot is Yes when the link is rotten or drifted beyond
	// minor (major, off-topic), No when it is live and unchanged or
	// minor, Unknown otherwise (live unmeasured, or live but drift
	// unmeasured).
	ReferenceRot Tri
}

// DistanceDays is the memento's distance in days (negative before the
// citation), NaN without a memento.
func (r Row) DistanceDays() float64 {
	if r.Memento == nil {
		return math.NaN()
	}
	return r.Distance.Hours() / 24
}

// Judge makes the row of one reference from its URL's result.
func Judge(ref Reference, w Wave, res Result, p Params) Row {
	r := Row{Ref: ref, Index: -1, Checked: true, Wave: w.Number, CheckedAt: w.CheckedAt, Verdict: res.Verdict, Status: res.Status,
		Broken: Broken(res.Verdict), Drift: DriftUnmeasured}
	if i := Nearest(ref.CitedAt, res.Mementos); i >= 0 {
		m := res.Mementos[i]
		r.Memento = &m
		r.Distance = Distance(ref.CitedAt, m.Datetime)
		d := r.Distance
		if d < 0 {
			d = -d
		}
		r.Representative = d <= p.window()
	}
	if r.Broken == No && r.Representative {
		switch r.Memento.Drift {
		case audit.BandUnchanged, audit.BandMinor, audit.BandMajor, audit.BandOffTopic:
			r.Drift = r.Memento.Drift
		}
	}
	switch {
	case r.Broken == Yes || Drifted(r.Drift):
		r.ReferenceRot = Yes
	case r.Broken == No && r.Drift != DriftUnmeasured:
		r.ReferenceRot = No
	}
	return r
}

// Drifted reports whether a drift band is content drift: beyond minor.
func Drifted(band string) bool { return band == audit.BandMajor || band == audit.BandOffTopic }

// Build judges every reference in every wave: rows in input order, and
// within a reference in wave order. A reference whose URL has no result
// in a wave gets an unchecked row (Checked false, everything unknown).
func Build(refs []Reference, waves []Wave, p Params) []Row {
	rows := make([]Row, 0, len(refs)*len(waves))
	Each(refs, waves, p, func(r Row) error {
		rows = append(rows, r)
		return nil
	})
	return rows
}

// Each judges the references like Build, one row at a time, and stops at
// the first error fn returns.
func Each(refs []Reference, waves []Wave, p Params, fn func(Row) error) error {
	for i, ref := range refs {
		for _, w := range waves {
			res, ok := w.Results[ref.URL]
			r := Judge(ref, w, res, p)
			r.Index, r.Checked = i, ok
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}
