package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// SchemaVersion is the version of the JSON output's schema
// (testdata/report.schema.json). It changes only when a field is removed or
// changes meaning; new fields may appear within a version.
const SchemaVersion = 1

// The JSON document is written field by field (WriteJSON streams its
// arrays one element at a time); its field names are stable within a
// SchemaVersion. Times are RFC 3339 UTC strings or null, durations are
// milliseconds or seconds as their names say.

type jsonRun struct {
	ID         int64      `json:"id"`
	Status     string     `json:"status"`
	Mode       string     `json:"mode"`
	Seeds      []string   `json:"seeds"`
	StartedAt  audit.Time `json:"started_at"`
	FinishedAt audit.Time `json:"finished_at"`
	Version    string     `json:"version"`
	Error      string     `json:"error"`
}

type jsonSummary struct {
	TargetsChecked int `json:"targets_checked"`
	BrokenTargets  int `json:"broken_targets"`
	MovedTargets   int `json:"moved_targets"`
	Findings       int `json:"findings"`
	Fixes          int `json:"fixes"`
	DriftedTargets int `json:"drifted_targets"`
	// LookupFailed counts failed archive lookups (lookup-failed: 429s,
	// timeouts, unparsable answers) by archive.
	LookupFailed map[string]int `json:"lookup_failed"`
}

type jsonPage struct {
	URL         string             `json:"url"`
	RequestURL  string             `json:"request_url"`
	Title       string             `json:"title"`
	Status      int                `json:"status"`
	Depth       int                `json:"depth"`
	ContentType string             `json:"content_type"`
	FetchError  string             `json:"fetch_error"`
	FetchedAt   audit.Time         `json:"fetched_at"`
	Redirects   []audit.Redirect   `json:"redirects"`
	Identifiers []audit.Identifier `json:"identifiers"`
	PWIDs       []audit.PWID       `json:"pwids"`
	Diagnostics []audit.Diagnostic `json:"diagnostics"`
}

type jsonTimings struct {
	DNS       int64 `json:"dns"`
	Connect   int64 `json:"connect"`
	TLS       int64 `json:"tls"`
	FirstByte int64 `json:"first_byte"`
	Total     int64 `json:"total"`
}

type jsonSoft404 struct {
	ProbeURL    string              `json:"probe_url"`
	ProbeStatus int                 `json:"probe_status"`
	ProbeFinal  string              `json:"probe_final"`
	Similarity  *float64            `json:"similarity"`
	Score       *float64            `json:"score"`
	Parked      *float64            `json:"parked"`
	Signals     []jsonSoft404Signal `json:"signals"`
}

type jsonSoft404Signal struct {
	Name  string   `json:"name"`
	Score *float64 `json:"score"`
	Match string   `json:"match"`
	Where string   `json:"where"`
}

func soft404JSON(e *audit.Soft404Evidence) *jsonSoft404 {
	j := &jsonSoft404{ProbeURL: e.ProbeURL, ProbeStatus: e.ProbeStatus, ProbeFinal: e.ProbeFinal,
		Similarity: finite(e.Similarity), Score: finite(e.Score), Parked: finite(e.Parked),
		Signals: make([]jsonSoft404Signal, len(e.Signals))}
	for i, s := range e.Signals {
		j.Signals[i] = jsonSoft404Signal{Name: s.Name, Score: finite(s.Score), Match: s.Match, Where: s.Where}
	}
	return j
}

type jsonTarget struct {
	ID          int64             `json:"id"`
	URL         string            `json:"url"`
	Host        string            `json:"host"`
	Verdict     string            `json:"verdict"`
	Broken      bool              `json:"broken"`
	Status      int               `json:"status"`
	Reason      string            `json:"reason"`
	ErrorClass  string            `json:"error_class"`
	FinalURL    string            `json:"final_url"`
	Redirects   []audit.Redirect  `json:"redirects"`
	Replacement string            `json:"replacement"`
	Attempts    int               `json:"attempts"`
	TimingsMS   jsonTimings       `json:"timings_ms"`
	CheckedAt   audit.Time        `json:"checked_at"`
	ContentType string            `json:"content_type"`
	Headers     map[string]string `json:"headers"`
	Reused      bool              `json:"reused"`
	Soft404     *jsonSoft404      `json:"soft404"`
	Links       int               `json:"links"`
	Pages       int               `json:"pages"`
	History     *jsonHistory      `json:"history"`
}

type jsonHistory struct {
	FirstSeen      audit.Time         `json:"first_seen"`
	FirstSeenRun   int64              `json:"first_seen_run"`
	FirstBroken    audit.Time         `json:"first_broken"`
	FirstBrokenRun int64              `json:"first_broken_run"`
	LastOK         audit.Time         `json:"last_ok"`
	LastOKRun      int64              `json:"last_ok_run"`
	Tracked        bool               `json:"tracked"`
	Confirmed      bool               `json:"confirmed"`
	ConfirmedAt    audit.Time         `json:"confirmed_at"`
	ConfirmedRun   int64              `json:"confirmed_run"`
	FailingSince   audit.Time         `json:"failing_since"`
	FailingRun     int64              `json:"failing_since_run"`
	FailedRuns     int                `json:"failed_runs"`
	Checks         []jsonHistoryEntry `json:"checks"`
}

type jsonSince struct {
	From           int64        `json:"from"`
	To             int64        `json:"to"`
	NewBroken      []jsonChange `json:"new_broken"`
	NewlyConfirmed []jsonChange `json:"newly_confirmed"`
	Recovered      []jsonChange `json:"recovered"`
	NewlyDrifted   []jsonChange `json:"newly_drifted"`
	NewlyMoved     []jsonChange `json:"newly_moved"`
	DriftAvailable bool         `json:"drift_available"`
}

type jsonChange struct {
	TargetID     int64  `json:"target_id"`
	URL          string `json:"url"`
	Verdict      string `json:"verdict"`
	Status       int    `json:"status"`
	Previous     string `json:"previous"`
	Replacement  string `json:"replacement"`
	Band         string `json:"band"`
	PreviousBand string `json:"previous_band"`
	Pages        int    `json:"pages"`
}

func jsonChanges(cs []audit.Change) []jsonChange {
	out := make([]jsonChange, len(cs))
	for i, c := range cs {
		out[i] = jsonChange{TargetID: c.TargetID, URL: c.URL, Verdict: string(c.Verdict), Status: c.Status,
			Previous: string(c.Previous), Replacement: c.Replacement, Band: c.Band, PreviousBand: c.PreviousBand, Pages: c.Pages}
	}
	return out
}

type jsonHistoryEntry struct {
	RunID     int64      `json:"run_id"`
	CheckedAt audit.Time `json:"checked_at"`
	Verdict   string     `json:"verdict"`
	Status    int        `json:"status"`
}

type jsonLink struct {
	ID          int64              `json:"id"`
	PageURL     string             `json:"page_url"`
	TargetID    *int64             `json:"target_id"`
	Element     string             `json:"element"`
	Attr        string             `json:"attr"`
	Href        string             `json:"href"`
	Text        string             `json:"text"`
	Rel         []string           `json:"rel"`
	Resource    bool               `json:"resource"`
	Kind        string             `json:"kind"`
	Verdict     string             `json:"verdict"`
	Robust      *audit.Robust      `json:"robust"`
	Mset        *audit.Mset        `json:"mset"`
	Diagnostics []audit.Diagnostic `json:"diagnostics"`
	// File, Line and Column locate the link in its source (omitted when
	// unknown): the page's local file, the 1-based line and UTF-16 column.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

type jsonFinding struct {
	PageURL  string `json:"page_url"`
	LinkID   *int64 `json:"link_id"`
	Target   string `json:"target"`
	Verdict  string `json:"verdict"`
	Message  string `json:"message"`
	Fragment string `json:"fragment"`
	// Element, Attr and Kind are the link's (see jsonLink), "" when the
	// finding has no link.
	Element string `json:"element"`
	Attr    string `json:"attr"`
	Kind    string `json:"kind"`
}

type jsonFix struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Replacement string `json:"replacement"`
	Status      int    `json:"status"`
}

type jsonSnapshotCheck struct {
	LinkID                  int64      `json:"link_id"`
	Source                  string     `json:"source"`
	Declared                string     `json:"declared"`
	URL                     string     `json:"url"`
	FinalURL                string     `json:"final_url"`
	Verdict                 string     `json:"verdict"`
	Status                  int        `json:"status"`
	Reason                  string     `json:"reason"`
	MementoDatetime         audit.Time `json:"memento_datetime"`
	DeclaredDatetime        audit.Time `json:"declared_datetime"`
	DeclaredDateOnly        bool       `json:"declared_date_only"`
	DatetimeMismatch        bool       `json:"datetime_mismatch"`
	DeclaredDeltaSeconds    int64      `json:"declared_delta_s"`
	VersionDateDeltaSeconds int64      `json:"versiondate_delta_s"`
	Original                string     `json:"original"`
	OriginalMismatch        bool       `json:"original_mismatch"`
	CheckedAt               audit.Time `json:"checked_at"`
}

type jsonMemento struct {
	LinkID          int64      `json:"link_id"`
	TargetID        int64      `json:"target_id"`
	Archive         string     `json:"archive"`
	Wanted          audit.Time `json:"wanted"`
	WantedFrom      string     `json:"wanted_from"`
	URL             string     `json:"url"`
	Datetime        audit.Time `json:"datetime"`
	DistanceSeconds int64      `json:"distance_s"`
	Representative  bool       `json:"representative"`
	Count           int        `json:"count"`
	First           audit.Time `json:"first"`
	Last            audit.Time `json:"last"`
	Error           string     `json:"error"`
	CheckedAt       audit.Time `json:"checked_at"`
	Status          string     `json:"status"`
	Reused          bool       `json:"reused"`
}

type jsonDrift struct {
	LinkID           int64      `json:"link_id"`
	TargetID         int64      `json:"target_id"`
	Kind             string     `json:"kind"`
	ReferenceURL     string     `json:"reference_url"`
	ReferenceTime    audit.Time `json:"reference_time"`
	LiveURL          string     `json:"live_url"`
	SimHashDistance  int        `json:"simhash_distance"`
	Jaccard          *float64   `json:"jaccard"`
	Dice             *float64   `json:"dice"`
	Cosine           *float64   `json:"cosine"`
	WordsReference   int        `json:"words_reference"`
	WordsLive        int        `json:"words_live"`
	WordChange       *float64   `json:"word_change"`
	Band             string     `json:"band"`
	ExcerptReference string     `json:"excerpt_reference"`
	ExcerptLive      string     `json:"excerpt_live"`
	MeasuredAt       audit.Time `json:"measured_at"`
	ReferenceNote    string     `json:"reference_note"`
}

type jsonIdentifierChck struct {
	AccessURL  string     `json:"access_url"`
	Identifier string     `json:"identifier"`
	Rel        string     `json:"rel"`
	OwnPage    bool       `json:"own_page"`
	Resolves   bool       `json:"resolves"`
	LeadsBack  bool       `json:"leads_back"`
	Status     int        `json:"status"`
	How        string     `json:"how"`
	Reason     string     `json:"reason"`
	CheckedAt  audit.Time `json:"checked_at"`
}

type jsonSuggestion struct {
	LinkID      int64      `json:"link_id"`
	PageURL     string     `json:"page_url"`
	Href        string     `json:"href"`
	Text        string     `json:"text"`
	Reason      string     `json:"reason"`
	OriginalURL string     `json:"originalurl"`
	VersionDate audit.Time `json:"versiondate"`
	VersionURL  string     `json:"versionurl"`
	HTML        string     `json:"html"`
}

type jsonRunSummary struct {
	ID         int64      `json:"id"`
	StartedAt  audit.Time `json:"started_at"`
	FinishedAt audit.Time `json:"finished_at"`
	Status     string     `json:"status"`
	Pages      int        `json:"pages"`
	Links      int        `json:"links"`
	Checked    int        `json:"checked"`
	Broken     int        `json:"broken"`
	Drifted    int        `json:"drifted"`
}

func tm(t time.Time) audit.Time { return audit.NewTime(t) }

// finite returns a pointer to f, or nil for NaN and infinities (JSON null).
func finite(f float64) *float64 {
	if f != f || f > 1e308 || f < -1e308 {
		return nil
	}
	return &f
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteJSON writes the complete findings of ds as one JSON document
// (schema: testdata/report.schema.json, version SchemaVersion). The arrays
// are streamed: each element is encoded and written on its own, so the
// memory used does not grow with the size of the document.
func WriteJSON(w io.Writer, ds *Dataset) error {
	ds = redactedDataset(ds) // URL passwords never printed (redact.go)
	ix := newIndex(ds)
	if ix.err != nil {
		return fmt.Errorf("read the run's links: %w", ix.err)
	}
	o := newJSONOut(w)
	o.field("schema_version", SchemaVersion)
	o.field("generator", ds.Generator)
	o.field("generated_at", tm(ds.GeneratedAt))
	o.field("run", jsonRun{ID: ds.Run.ID, Status: string(ds.Run.Status), Mode: ds.Run.Mode, Seeds: nonNil(ds.Run.Seeds),
		StartedAt: tm(ds.Run.StartedAt), FinishedAt: tm(ds.Run.FinishedAt), Version: ds.Run.Version, Error: ds.Run.Error})
	o.field("stats", ds.Stats)
	var sum jsonSummary
	counts := map[string]int{}
	for v, n := range ix.verdictCounts() {
		counts[string(v)] = n
		if v.Broken() {
			sum.BrokenTargets += n
		}
	}
	sum.TargetsChecked = len(ds.Checks)
	sum.MovedTargets = counts[string(audit.VerdictMoved)]
	sum.Findings = len(ds.Findings)
	sum.Fixes = len(ds.Fixes)
	for _, d := range ix.driftByTarget {
		if drifted(d.Band) {
			sum.DriftedTargets++
		}
	}
	sum.LookupFailed = map[string]int{}
	for i := range ds.Mementos {
		if ds.Mementos[i].Status == audit.LookupFailed {
			sum.LookupFailed[ds.Mementos[i].Archive]++
		}
	}
	o.field("summary", sum)
	o.field("verdict_counts", counts)
	o.array("pages", len(ds.Pages), func(i int) any {
		p := ds.Pages[i]
		return jsonPage{URL: p.URL, RequestURL: p.RequestURL, Title: p.Title, Status: p.Status,
			Depth: p.Depth, ContentType: p.ContentType, FetchError: p.FetchError, FetchedAt: tm(p.FetchedAt),
			Redirects: nonNil(p.Redirects), Identifiers: nonNil(p.Identifiers), PWIDs: nonNil(p.PWIDs),
			Diagnostics: nonNil(p.Diagnostics)}
	})
	o.array("targets", len(ds.Targets), func(i int) any {
		t := &ds.Targets[i]
		jt := jsonTarget{ID: t.ID, URL: t.URL, Host: t.Host, Verdict: string(Unchecked), Redirects: []audit.Redirect{},
			Headers: map[string]string{}, Links: ix.linksPerTgt[t.ID], Pages: ix.pagesPerTarget[t.ID]}
		if c := ix.checkByTarget[t.ID]; c != nil {
			jt.Verdict, jt.Broken, jt.Status, jt.Reason, jt.ErrorClass = string(c.Verdict), c.Verdict.Broken(), c.Status, c.Reason, c.ErrorClass
			jt.FinalURL, jt.Redirects, jt.Replacement, jt.Attempts = c.FinalURL, nonNil(c.Redirects), c.Replacement, c.Attempts
			jt.TimingsMS = jsonTimings{c.Timings.DNS.Milliseconds(), c.Timings.Connect.Milliseconds(), c.Timings.TLS.Milliseconds(),
				c.Timings.FirstByte.Milliseconds(), c.Timings.Total.Milliseconds()}
			jt.CheckedAt, jt.ContentType, jt.Reused = tm(c.CheckedAt), c.ContentType, c.Reused
			if c.Headers != nil {
				jt.Headers = c.Headers
			}
			if e := c.Soft404; e != nil {
				jt.Soft404 = soft404JSON(e)
			}
		}
		if jt.Replacement == "" {
			jt.Replacement = ix.fixesByTarget[t.URL]
		}
		if h := ix.historyByTarget[t.ID]; h != nil {
			jh := &jsonHistory{FirstSeen: tm(h.FirstSeen), FirstSeenRun: h.FirstSeenRun, FirstBroken: tm(h.FirstBroken),
				FirstBrokenRun: h.FirstBrokenRun, LastOK: tm(h.LastOK), LastOKRun: h.LastOKRun,
				Tracked: h.Tracked, Confirmed: h.Confirmed, ConfirmedAt: tm(h.ConfirmedAt), ConfirmedRun: h.ConfirmedRun,
				FailingSince: tm(h.FailingSince), FailingRun: h.FailingSinceRun, FailedRuns: h.FailedRuns,
				Checks: make([]jsonHistoryEntry, 0, len(h.Checks))}
			for _, e := range h.Checks {
				jh.Checks = append(jh.Checks, jsonHistoryEntry{RunID: e.RunID, CheckedAt: tm(e.CheckedAt), Verdict: string(e.Verdict), Status: e.Status})
			}
			jt.History = jh
		}
		return jt
	})
	o.stream("links", ix.eachLink, func(l *Link) any {
		jl := jsonLink{ID: l.ID, Element: l.Element, Attr: l.Attr, Href: l.Href, Text: l.Text, Rel: nonNil(l.Rel),
			Resource: l.Resource, Kind: string(l.Rule().Kind), Verdict: string(ix.linkVerdict(l)), Robust: l.Robust, Mset: l.Mset, Diagnostics: nonNil(l.Diagnostics)}
		if l.Page >= 0 && l.Page < len(ds.Pages) {
			jl.PageURL = ds.Pages[l.Page].URL
			jl.File = ds.Pages[l.Page].File
		}
		jl.Line, jl.Column = l.Line, l.Column
		if l.TargetID != 0 {
			id := l.TargetID
			jl.TargetID = &id
		}
		if jl.Mset != nil && (jl.Mset.Temporal == nil || jl.Mset.Copies == nil) {
			m := *jl.Mset
			m.Temporal, m.Copies = nonNil(m.Temporal), nonNil(m.Copies)
			jl.Mset = &m
		}
		return jl
	})
	o.array("findings", len(ds.Findings), func(i int) any {
		f := &ds.Findings[i]
		jf := jsonFinding{PageURL: f.PageURL, Target: f.Target, Verdict: string(f.Verdict), Message: f.Message, Fragment: f.Fragment}
		if f.LinkID != 0 {
			id := f.LinkID
			jf.LinkID = &id
		}
		if l := ix.findingLink(f); l != nil {
			jf.Element, jf.Attr, jf.Kind = l.Element, l.Attr, string(l.Rule().Kind)
		}
		return jf
	})
	writeJSONTraps(o, ds)
	o.array("fixes", len(ds.Fixes), func(i int) any {
		m := &ds.Fixes[i]
		return jsonFix{m.Source, m.Target, m.Replacement, m.Status}
	})
	o.array("snapshot_checks", len(ds.SnapshotChecks), func(i int) any {
		s := &ds.SnapshotChecks[i]
		return jsonSnapshotCheck{LinkID: s.LinkID, Source: s.Source, Declared: s.Declared,
			URL: s.URL, FinalURL: s.FinalURL, Verdict: string(s.Verdict), Status: s.Status, Reason: s.Reason,
			MementoDatetime: tm(s.MementoDatetime), DeclaredDatetime: tm(s.DeclaredDatetime), DeclaredDateOnly: s.DeclaredDateOnly,
			DatetimeMismatch: s.DatetimeMismatch, DeclaredDeltaSeconds: int64(s.DeclaredDelta / time.Second),
			VersionDateDeltaSeconds: int64(s.VersionDateDelta / time.Second), Original: s.Original,
			OriginalMismatch: s.OriginalMismatch, CheckedAt: tm(s.CheckedAt)}
	})
	o.array("mementos", len(ds.Mementos), func(i int) any {
		m := &ds.Mementos[i]
		return jsonMemento{LinkID: m.LinkID, TargetID: m.TargetID, Archive: m.Archive,
			Wanted: tm(m.Wanted), WantedFrom: m.WantedFrom, URL: m.URL, Datetime: tm(m.Datetime),
			DistanceSeconds: int64(m.Distance / time.Second), Representative: m.Representative, Count: m.Count,
			First: tm(m.First), Last: tm(m.Last), Error: m.Error, CheckedAt: tm(m.CheckedAt), Status: m.Status, Reused: m.Reused}
	})
	o.array("drifts", len(ds.Drifts), func(i int) any {
		d := &ds.Drifts[i]
		var jac, dice, cos *float64
		if d.TextMeasured { // fingerprints give no set measures: null
			jac, dice, cos = finite(d.Jaccard), finite(d.Dice), finite(d.Cosine)
		}
		return jsonDrift{Jaccard: jac, Dice: dice, Cosine: cos, LinkID: d.LinkID, TargetID: d.TargetID, Kind: d.Kind,
			ReferenceURL: d.ReferenceURL, ReferenceTime: tm(d.ReferenceTime), LiveURL: d.LiveURL, SimHashDistance: d.SimHashDistance,
			WordsReference: d.WordsReference, WordsLive: d.WordsLive, WordChange: finite(d.WordChange), Band: d.Band,
			ExcerptReference: d.ExcerptReference, ExcerptLive: d.ExcerptLive, MeasuredAt: tm(d.MeasuredAt), ReferenceNote: d.ReferenceNote}
	})
	o.array("identifier_checks", len(ds.IdentifierChecks), func(i int) any {
		c := &ds.IdentifierChecks[i]
		return jsonIdentifierChck{AccessURL: c.AccessURL, Identifier: c.Identifier,
			Rel: c.Rel, OwnPage: c.OwnPage, Resolves: c.Resolves, LeadsBack: c.LeadsBack, Status: c.Status, How: c.How,
			Reason: c.Reason, CheckedAt: tm(c.CheckedAt)}
	})
	o.array("suggestions", len(ds.Suggestions), func(i int) any {
		s := &ds.Suggestions[i]
		return jsonSuggestion{LinkID: s.LinkID, PageURL: s.PageURL, Href: s.Href, Text: s.Text,
			Reason: s.Reason, OriginalURL: s.OriginalURL, VersionDate: tm(s.VersionDate), VersionURL: s.VersionURL, HTML: s.HTML}
	})
	o.array("runs", len(ds.Runs), func(i int) any {
		s := &ds.Runs[i]
		return jsonRunSummary{ID: s.ID, StartedAt: tm(s.StartedAt), FinishedAt: tm(s.FinishedAt),
			Status: string(s.Status), Pages: s.Pages, Links: s.Links, Checked: s.Checked, Broken: s.Broken, Drifted: s.Drifted}
	})
	var since *jsonSince
	if d := ds.Since; d != nil {
		since = &jsonSince{From: d.From, To: d.To, NewBroken: jsonChanges(d.NewBroken), NewlyConfirmed: jsonChanges(d.NewlyConfirmed),
			Recovered: jsonChanges(d.Recovered), NewlyDrifted: jsonChanges(d.NewlyDrifted), NewlyMoved: jsonChanges(d.NewlyMoved),
			DriftAvailable: d.DriftAvailable}
	}
	o.field("since_last_run", since)
	if err := o.end(); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

// jsonOut writes a JSON object field by field, indented like
// json.Encoder with SetIndent("", " "), encoding the elements of an array
// one at a time.
type jsonOut struct {
	w   *bufio.Writer
	n   int // fields written
	err error
}

func newJSONOut(w io.Writer) *jsonOut { return &jsonOut{w: bufio.NewWriterSize(w, 1<<16)} }

func (o *jsonOut) key(name string) {
	if o.n == 0 {
		o.w.WriteString("{\n \"")
	} else {
		o.w.WriteString(",\n \"")
	}
	o.n++
	o.w.WriteString(name)
	o.w.WriteString("\": ")
}

// value writes v, its lines after the first prefixed with prefix.
func (o *jsonOut) value(v any, prefix string) {
	if o.err != nil {
		return
	}
	b, err := json.MarshalIndent(v, prefix, " ")
	if err != nil {
		o.err = err
		return
	}
	if _, err := o.w.Write(b); err != nil {
		o.err = err
	}
}

// field writes "name": v.
func (o *jsonOut) field(name string, v any) {
	o.key(name)
	o.value(v, " ")
}

// stream writes "name": [...] with an element for each link each gives.
func (o *jsonOut) stream(name string, each func(func(*Link) error) error, elem func(*Link) any) {
	o.key(name)
	n := 0
	err := each(func(l *Link) error {
		if n == 0 {
			o.w.WriteString("[")
		} else {
			o.w.WriteString(",")
		}
		n++
		o.w.WriteString("\n  ")
		o.value(elem(l), "  ")
		return o.err
	})
	if err != nil && o.err == nil {
		o.err = err
	}
	if n == 0 {
		o.w.WriteString("[]")
		return
	}
	o.w.WriteString("\n ]")
}

// array writes "name": [...] with the n elements elem returns.
func (o *jsonOut) array(name string, n int, elem func(i int) any) {
	o.key(name)
	if n == 0 {
		o.w.WriteString("[]")
		return
	}
	o.w.WriteString("[")
	for i := 0; i < n && o.err == nil; i++ {
		if i > 0 {
			o.w.WriteString(",")
		}
		o.w.WriteString("\n  ")
		o.value(elem(i), "  ")
	}
	o.w.WriteString("\n ]")
}

func (o *jsonOut) end() error {
	o.w.WriteString("\n}\n")
	if o.err != nil {
		return o.err
	}
	return o.w.Flush()
}
