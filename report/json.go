package report

import (
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

// The JSON document. Field names are stable within a SchemaVersion; times
// are RFC 3339 UTC strings or null, durations are milliseconds or seconds as
// their names say.
type jsonReport struct {
	SchemaVersion    int                  `json:"schema_version"`
	Generator        string               `json:"generator"`
	GeneratedAt      audit.Time           `json:"generated_at"`
	Run              jsonRun              `json:"run"`
	Stats            audit.RunStats       `json:"stats"`
	Summary          jsonSummary          `json:"summary"`
	VerdictCounts    map[string]int       `json:"verdict_counts"`
	Pages            []jsonPage           `json:"pages"`
	Targets          []jsonTarget         `json:"targets"`
	Links            []jsonLink           `json:"links"`
	Findings         []jsonFinding        `json:"findings"`
	Fixes            []jsonFix            `json:"fixes"`
	SnapshotChecks   []jsonSnapshotCheck  `json:"snapshot_checks"`
	Mementos         []jsonMemento        `json:"mementos"`
	Drifts           []jsonDrift          `json:"drifts"`
	IdentifierChecks []jsonIdentifierChck `json:"identifier_checks"`
	Suggestions      []jsonSuggestion     `json:"suggestions"`
	Runs             []jsonRunSummary     `json:"runs"`
}

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
	ProbeURL    string   `json:"probe_url"`
	ProbeStatus int      `json:"probe_status"`
	ProbeFinal  string   `json:"probe_final"`
	Similarity  *float64 `json:"similarity"`
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
	Checks         []jsonHistoryEntry `json:"checks"`
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
	Verdict     string             `json:"verdict"`
	Robust      *audit.Robust      `json:"robust"`
	Mset        *audit.Mset        `json:"mset"`
	Diagnostics []audit.Diagnostic `json:"diagnostics"`
}

type jsonFinding struct {
	PageURL  string `json:"page_url"`
	LinkID   *int64 `json:"link_id"`
	Target   string `json:"target"`
	Verdict  string `json:"verdict"`
	Message  string `json:"message"`
	Fragment string `json:"fragment"`
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
// (schema: testdata/report.schema.json, version SchemaVersion).
func WriteJSON(w io.Writer, ds *Dataset) error {
	ix := newIndex(ds)
	r := jsonReport{
		SchemaVersion: SchemaVersion,
		Generator:     ds.Generator,
		GeneratedAt:   tm(ds.GeneratedAt),
		Run: jsonRun{ID: ds.Run.ID, Status: string(ds.Run.Status), Mode: ds.Run.Mode, Seeds: nonNil(ds.Run.Seeds),
			StartedAt: tm(ds.Run.StartedAt), FinishedAt: tm(ds.Run.FinishedAt), Version: ds.Run.Version, Error: ds.Run.Error},
		Stats:         ds.Stats,
		VerdictCounts: map[string]int{},
	}
	for v, n := range ix.verdictCounts() {
		r.VerdictCounts[string(v)] = n
		if v.Broken() {
			r.Summary.BrokenTargets += n
		}
	}
	r.Summary.TargetsChecked = len(ds.Checks)
	r.Summary.MovedTargets = r.VerdictCounts[string(audit.VerdictMoved)]
	r.Summary.Findings = len(ds.Findings)
	r.Summary.Fixes = len(ds.Fixes)
	for _, d := range ix.driftByTarget {
		if drifted(d.Band) {
			r.Summary.DriftedTargets++
		}
	}
	r.Pages = make([]jsonPage, 0, len(ds.Pages))
	for _, p := range ds.Pages {
		r.Pages = append(r.Pages, jsonPage{URL: p.URL, RequestURL: p.RequestURL, Title: p.Title, Status: p.Status,
			Depth: p.Depth, ContentType: p.ContentType, FetchError: p.FetchError, FetchedAt: tm(p.FetchedAt),
			Redirects: nonNil(p.Redirects), Identifiers: nonNil(p.Identifiers), PWIDs: nonNil(p.PWIDs),
			Diagnostics: nonNil(p.Diagnostics)})
	}
	r.Targets = make([]jsonTarget, 0, len(ds.Targets))
	for _, t := range ds.Targets {
		jt := jsonTarget{ID: t.ID, URL: t.URL, Host: t.Host, Verdict: string(Unchecked), Redirects: []audit.Redirect{},
			Headers: map[string]string{}, Links: len(ix.linksByTarget[t.ID]), Pages: ix.pagesPerTarget[t.ID]}
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
				jt.Soft404 = &jsonSoft404{ProbeURL: e.ProbeURL, ProbeStatus: e.ProbeStatus, ProbeFinal: e.ProbeFinal, Similarity: finite(e.Similarity)}
			}
		}
		if jt.Replacement == "" {
			jt.Replacement = ix.fixesByTarget[t.URL]
		}
		if h := ix.historyByTarget[t.ID]; h != nil {
			jh := &jsonHistory{FirstSeen: tm(h.FirstSeen), FirstSeenRun: h.FirstSeenRun, FirstBroken: tm(h.FirstBroken),
				FirstBrokenRun: h.FirstBrokenRun, LastOK: tm(h.LastOK), LastOKRun: h.LastOKRun, Checks: []jsonHistoryEntry{}}
			for _, e := range h.Checks {
				jh.Checks = append(jh.Checks, jsonHistoryEntry{RunID: e.RunID, CheckedAt: tm(e.CheckedAt), Verdict: string(e.Verdict), Status: e.Status})
			}
			jt.History = jh
		}
		r.Targets = append(r.Targets, jt)
	}
	r.Links = make([]jsonLink, 0, len(ds.Links))
	for i := range ds.Links {
		l := &ds.Links[i]
		jl := jsonLink{ID: l.ID, Element: l.Element, Attr: l.Attr, Href: l.Href, Text: l.Text, Rel: nonNil(l.Rel),
			Resource: l.Resource, Verdict: string(ix.linkVerdict(l)), Robust: l.Robust, Mset: l.Mset, Diagnostics: nonNil(l.Diagnostics)}
		if l.Page >= 0 && l.Page < len(ds.Pages) {
			jl.PageURL = ds.Pages[l.Page].URL
		}
		if l.TargetID != 0 {
			id := l.TargetID
			jl.TargetID = &id
		}
		if jl.Mset != nil && (jl.Mset.Temporal == nil || jl.Mset.Copies == nil) {
			m := *jl.Mset
			m.Temporal, m.Copies = nonNil(m.Temporal), nonNil(m.Copies)
			jl.Mset = &m
		}
		r.Links = append(r.Links, jl)
	}
	r.Findings = make([]jsonFinding, 0, len(ds.Findings))
	for _, f := range ds.Findings {
		jf := jsonFinding{PageURL: f.PageURL, Target: f.Target, Verdict: string(f.Verdict), Message: f.Message, Fragment: f.Fragment}
		if f.LinkID != 0 {
			id := f.LinkID
			jf.LinkID = &id
		}
		r.Findings = append(r.Findings, jf)
	}
	r.Fixes = make([]jsonFix, 0, len(ds.Fixes))
	for _, m := range ds.Fixes {
		r.Fixes = append(r.Fixes, jsonFix{m.Source, m.Target, m.Replacement, m.Status})
	}
	r.SnapshotChecks = make([]jsonSnapshotCheck, 0, len(ds.SnapshotChecks))
	for _, s := range ds.SnapshotChecks {
		r.SnapshotChecks = append(r.SnapshotChecks, jsonSnapshotCheck{LinkID: s.LinkID, Source: s.Source, Declared: s.Declared,
			URL: s.URL, FinalURL: s.FinalURL, Verdict: string(s.Verdict), Status: s.Status, Reason: s.Reason,
			MementoDatetime: tm(s.MementoDatetime), DeclaredDatetime: tm(s.DeclaredDatetime), DeclaredDateOnly: s.DeclaredDateOnly,
			DatetimeMismatch: s.DatetimeMismatch, DeclaredDeltaSeconds: int64(s.DeclaredDelta / time.Second),
			VersionDateDeltaSeconds: int64(s.VersionDateDelta / time.Second), Original: s.Original,
			OriginalMismatch: s.OriginalMismatch, CheckedAt: tm(s.CheckedAt)})
	}
	r.Mementos = make([]jsonMemento, 0, len(ds.Mementos))
	for _, m := range ds.Mementos {
		r.Mementos = append(r.Mementos, jsonMemento{LinkID: m.LinkID, TargetID: m.TargetID, Archive: m.Archive,
			Wanted: tm(m.Wanted), WantedFrom: m.WantedFrom, URL: m.URL, Datetime: tm(m.Datetime),
			DistanceSeconds: int64(m.Distance / time.Second), Representative: m.Representative, Count: m.Count,
			First: tm(m.First), Last: tm(m.Last), Error: m.Error, CheckedAt: tm(m.CheckedAt)})
	}
	r.Drifts = make([]jsonDrift, 0, len(ds.Drifts))
	for _, d := range ds.Drifts {
		var jac, dice, cos *float64
		if d.TextMeasured { // fingerprints give no set measures: null
			jac, dice, cos = finite(d.Jaccard), finite(d.Dice), finite(d.Cosine)
		}
		r.Drifts = append(r.Drifts, jsonDrift{Jaccard: jac, Dice: dice, Cosine: cos, LinkID: d.LinkID, TargetID: d.TargetID, Kind: d.Kind, ReferenceURL: d.ReferenceURL,
			ReferenceTime: tm(d.ReferenceTime), LiveURL: d.LiveURL, SimHashDistance: d.SimHashDistance,
			WordsReference: d.WordsReference,
			WordsLive:      d.WordsLive, WordChange: finite(d.WordChange), Band: d.Band, ExcerptReference: d.ExcerptReference,
			ExcerptLive: d.ExcerptLive, MeasuredAt: tm(d.MeasuredAt)})
	}
	r.IdentifierChecks = make([]jsonIdentifierChck, 0, len(ds.IdentifierChecks))
	for _, c := range ds.IdentifierChecks {
		r.IdentifierChecks = append(r.IdentifierChecks, jsonIdentifierChck{AccessURL: c.AccessURL, Identifier: c.Identifier,
			Rel: c.Rel, OwnPage: c.OwnPage, Resolves: c.Resolves, LeadsBack: c.LeadsBack, Status: c.Status, How: c.How,
			Reason: c.Reason, CheckedAt: tm(c.CheckedAt)})
	}
	r.Suggestions = make([]jsonSuggestion, 0, len(ds.Suggestions))
	for _, s := range ds.Suggestions {
		r.Suggestions = append(r.Suggestions, jsonSuggestion{LinkID: s.LinkID, PageURL: s.PageURL, Href: s.Href, Text: s.Text,
			Reason: s.Reason, OriginalURL: s.OriginalURL, VersionDate: tm(s.VersionDate), VersionURL: s.VersionURL, HTML: s.HTML})
	}
	r.Runs = make([]jsonRunSummary, 0, len(ds.Runs))
	for _, s := range ds.Runs {
		r.Runs = append(r.Runs, jsonRunSummary{ID: s.ID, StartedAt: tm(s.StartedAt), FinishedAt: tm(s.FinishedAt),
			Status: string(s.Status), Pages: s.Pages, Links: s.Links, Checked: s.Checked, Broken: s.Broken, Drifted: s.Drifted})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}
