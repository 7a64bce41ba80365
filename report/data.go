package report

import (
	"slices"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// verdictClass maps a verdict to the colour class the report uses for it.
func verdictClass(v audit.Verdict) string {
	switch {
	case v == audit.VerdictOK:
		return "good"
	case v == audit.VerdictRedirected:
		return "info"
	case v == audit.VerdictMoved || v == audit.VerdictBlocked || v == audit.VerdictRateLimited:
		return "warn"
	case v.Broken():
		return "bad"
	}
	return "muted"
}

// bandClass maps a drift band to a colour class.
func bandClass(b string) string {
	switch b {
	case audit.BandUnchanged:
		return "good"
	case audit.BandMinor:
		return "info"
	case audit.BandMajor:
		return "warn"
	case audit.BandOffTopic:
		return "bad"
	}
	return "muted"
}

// verdictList is every verdict a link can have in the report, in report
// order; the embedded data refers to verdicts by their index in it.
var verdictList = append(slices.Clone(audit.Verdicts), Unchecked)

var verdictCode = func() map[audit.Verdict]int {
	m := make(map[audit.Verdict]int, len(verdictList))
	for i, v := range verdictList {
		m[v] = i
	}
	return m
}()

func codeOf(v audit.Verdict) int64 {
	if c, ok := verdictCode[v]; ok {
		return int64(c)
	}
	return int64(verdictCode[Unchecked])
}

// Link flags in the embedded data.
const (
	flagRobust = 1 << iota
	flagMset
	flagResource
	flagDiagnostics
)

// scriptData builds the JSON the report's script reads: compact row
// arrays, documented field by field in templates/report.js (the DATA
// comment). Rows refer to each other by index.
func scriptData(ix *index) []byte {
	ds := ix.ds
	w := &jw{b: make([]byte, 0, 256+len(ix.links)*96+len(ds.Targets)*96)}
	w.raw(`{"v":1,"verdicts":[`)
	for i, v := range verdictList {
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.str(string(v))
		w.comma()
		w.str(verdictClass(v))
		w.comma()
		w.bool(v.Broken())
		if a := audit.FixAdvice(v); a != "" {
			w.comma()
			w.str(a)
		}
		w.raw("]")
	}

	// pages: [url, title, status, depth, links, broken links, fetch error, content type]
	linksPerPage, brokenPerPage := ix.linksPerPage, ix.brokenPerPage
	w.raw(`],"pages":[`)
	for i, p := range ds.Pages {
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.str(p.URL)
		w.comma()
		w.str(p.Title)
		w.comma()
		w.int(int64(p.Status))
		w.comma()
		w.int(int64(p.Depth))
		w.comma()
		w.int(int64(linksPerPage[i]))
		w.comma()
		w.int(int64(brokenPerPage[i]))
		w.comma()
		w.str(p.FetchError)
		w.comma()
		w.str(p.ContentType)
		w.raw("]")
	}

	// mementos: [archive, url, datetime, wanted, wanted from, distance s, representative, count, error, status]
	memIdx := map[*audit.Memento]int{}
	w.raw(`],"mementos":[`)
	for i := range ds.Mementos {
		m := &ds.Mementos[i]
		memIdx[m] = i
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.str(m.Archive)
		w.comma()
		w.str(m.URL)
		w.comma()
		w.time(m.Datetime)
		w.comma()
		w.time(m.Wanted)
		w.comma()
		w.str(m.WantedFrom)
		w.comma()
		w.int(int64(m.Distance / time.Second))
		w.comma()
		w.bool(m.Representative)
		w.comma()
		w.int(int64(m.Count))
		w.comma()
		w.str(m.Error)
		w.comma()
		w.str(m.Status)
		w.raw("]")
	}

	// drifts: [target, link, kind, band, simhash, jaccard, dice, cosine,
	// words ref, words live, word change, reference URL, reference time,
	// live URL, excerpt ref, excerpt live, rank, reference note]
	driftIdx := map[*audit.Drift]int{}
	w.raw(`],"drifts":[`)
	for i := range ds.Drifts {
		d := &ds.Drifts[i]
		driftIdx[d] = i
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.int(int64(targetIndex(ix, d.TargetID)))
		w.comma()
		w.int(int64(linkIndex(ix, d.LinkID)))
		w.comma()
		w.str(d.Kind)
		w.comma()
		w.str(d.Band)
		w.comma()
		w.int(int64(d.SimHashDistance))
		w.comma()
		// Fingerprints give no set measures: null, shown as a dash.
		for _, m := range []float64{d.Jaccard, d.Dice, d.Cosine} {
			if d.TextMeasured {
				w.num(m)
			} else {
				w.raw("null")
			}
			w.comma()
		}
		w.int(int64(d.WordsReference))
		w.comma()
		w.int(int64(d.WordsLive))
		w.comma()
		w.num(d.WordChange)
		w.comma()
		w.str(d.ReferenceURL)
		w.comma()
		w.time(d.ReferenceTime)
		w.comma()
		w.str(d.LiveURL)
		w.comma()
		w.str(d.ExcerptReference)
		w.comma()
		w.str(d.ExcerptLive)
		w.comma()
		w.num(driftRank(d))
		w.comma()
		w.str(d.ReferenceNote)
		w.raw("]")
	}

	// suggestions: [link, reason, html, versionurl, versiondate]
	sugIdx := map[*audit.Suggestion]int{}
	w.raw(`],"suggestions":[`)
	for i := range ds.Suggestions {
		s := &ds.Suggestions[i]
		sugIdx[s] = i
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.int(int64(linkIndex(ix, s.LinkID)))
		w.comma()
		w.str(s.Reason)
		w.comma()
		w.str(s.HTML)
		w.comma()
		w.str(s.VersionURL)
		w.comma()
		w.time(s.VersionDate)
		w.raw("]")
	}

	// history: [first seen, first seen run, first broken, first broken run,
	// last ok, last ok run, [[run, checked at, verdict, status], ...],
	// tracked, confirmed, confirmed at, confirmed run, failing since,
	// failing since run, failed runs]
	histIdx := map[int64]int{}
	w.raw(`],"history":[`)
	for i := range ds.History {
		h := &ds.History[i]
		histIdx[h.TargetID] = i
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.time(h.FirstSeen)
		w.comma()
		w.int(h.FirstSeenRun)
		w.comma()
		w.time(h.FirstBroken)
		w.comma()
		w.int(h.FirstBrokenRun)
		w.comma()
		w.time(h.LastOK)
		w.comma()
		w.int(h.LastOKRun)
		w.raw(",[")
		for j, e := range h.Checks {
			if j > 0 {
				w.comma()
			}
			w.raw("[")
			w.int(e.RunID)
			w.comma()
			w.time(e.CheckedAt)
			w.comma()
			w.int(codeOf(e.Verdict))
			w.comma()
			w.int(int64(e.Status))
			w.raw("]")
		}
		w.raw("],")
		w.bool(h.Tracked)
		w.comma()
		w.bool(h.Confirmed)
		w.comma()
		w.time(h.ConfirmedAt)
		w.comma()
		w.int(h.ConfirmedRun)
		w.comma()
		w.time(h.FailingSince)
		w.comma()
		w.int(h.FailingSinceRun)
		w.comma()
		w.int(int64(h.FailedRuns))
		w.raw("]")
	}

	// targets: [url, host, verdict, status, reason, redirect chain, links,
	// pages, replacement, memento, suggestion snippet, total ms, checked at,
	// history, evidence, drift, error class]
	w.raw(`],"targets":[`)
	for i := range ds.Targets {
		t := &ds.Targets[i]
		c := ix.checkByTarget[t.ID]
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.str(t.URL)
		w.comma()
		w.str(t.Host)
		w.comma()
		if c != nil {
			w.int(codeOf(c.Verdict))
		} else {
			w.int(codeOf(Unchecked))
		}
		w.comma()
		status, reason, chain, total, errClass := 0, "", "", int64(0), ""
		var checkedAt time.Time
		replacement := ""
		if c != nil {
			status, reason, total, checkedAt, errClass = c.Status, c.Reason, c.Timings.Total.Milliseconds(), c.CheckedAt, c.ErrorClass
			if len(c.Redirects) > 0 {
				chain = redirectChain(c)
			}
			replacement = c.Replacement
		}
		if replacement == "" {
			replacement = ix.fixesByTarget[t.URL]
		}
		w.int(int64(status))
		w.comma()
		w.str(reason)
		w.comma()
		w.str(chain)
		w.comma()
		w.int(int64(ix.linksPerTgt[t.ID]))
		w.comma()
		w.int(int64(ix.pagesPerTarget[t.ID]))
		w.comma()
		w.str(replacement)
		w.comma()
		if m := ix.targetMemento(t.ID); m != nil {
			w.int(int64(memIdx[m]))
		} else {
			w.int(-1)
		}
		w.comma()
		w.str(targetSnippet(ix, t.ID))
		w.comma()
		w.int(total)
		w.comma()
		w.time(checkedAt)
		w.comma()
		if h, ok := histIdx[t.ID]; ok {
			w.int(int64(h))
		} else {
			w.int(-1)
		}
		w.comma()
		w.str(evidence(c))
		w.comma()
		if d := ix.driftByTarget[t.ID]; d != nil {
			w.int(int64(driftIdx[d]))
		} else {
			w.int(-1)
		}
		w.comma()
		w.str(errClass)
		w.raw("]")
	}

	// links: [page, target, element, text, href, verdict, flags, suggestion]
	// element is elementLabel's ("img srcset", "video poster"); href is ""
	// when the link has a target and its href is the target URL.
	w.raw(`],"links":[`)
	for i := range ix.links {
		l := &ix.links[i]
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.int(int64(l.Page))
		w.comma()
		ti := targetIndex(ix, l.TargetID)
		w.int(int64(ti))
		w.comma()
		w.str(elementLabel(l.Element, l.Attr))
		w.comma()
		w.str(l.Text)
		w.comma()
		if ti >= 0 && ds.Targets[ti].URL == l.Href {
			w.str("")
		} else {
			w.str(l.Href)
		}
		w.comma()
		w.int(codeOf(ix.linkVerdict(l)))
		w.comma()
		flags := 0
		if l.Robust != nil {
			flags |= flagRobust
		}
		if l.Mset != nil {
			flags |= flagMset
		}
		if l.Resource {
			flags |= flagResource
		}
		if len(l.Diagnostics) > 0 {
			flags |= flagDiagnostics
		}
		w.int(int64(flags))
		w.comma()
		if s := ix.suggestByLink[l.ID]; s != nil {
			w.int(int64(sugIdx[s]))
		} else {
			w.int(-1)
		}
		w.raw("]")
	}

	// snapshots: [link, source, declared URL, declared datetime, verdict,
	// memento datetime, status, declared original, actual original,
	// flags (1 datetime mismatch, 2 original mismatch), delta s, reason,
	// final URL]
	w.raw(`],"snapshots":[`)
	first := true
	for _, row := range snapshotRows(ix) {
		if !first {
			w.comma()
		}
		first = false
		w.raw("[")
		w.int(int64(row.link))
		w.comma()
		w.str(row.source)
		w.comma()
		w.str(row.declared)
		w.comma()
		w.time(row.declaredTime)
		w.comma()
		w.str(row.verdict)
		w.comma()
		w.time(row.mementoTime)
		w.comma()
		w.int(int64(row.status))
		w.comma()
		w.str(row.declaredOriginal)
		w.comma()
		w.str(row.actualOriginal)
		w.comma()
		w.int(int64(row.flags))
		w.comma()
		w.int(row.deltaSeconds)
		w.comma()
		w.str(row.reason)
		w.comma()
		w.str(row.finalURL)
		w.raw("]")
	}

	// diagnostics: [page, link, field, code, message]
	w.raw(`],"diagnostics":[`)
	first = true
	diag := func(page, link int, d audit.Diagnostic) {
		if !first {
			w.comma()
		}
		first = false
		w.raw("[")
		w.int(int64(page))
		w.comma()
		w.int(int64(link))
		w.comma()
		w.str(d.Field)
		w.comma()
		w.str(d.Code)
		w.comma()
		w.str(d.Message)
		w.raw("]")
	}
	for pi, p := range ds.Pages {
		for _, d := range p.Diagnostics {
			diag(pi, -1, d)
		}
	}
	for li := range ix.links {
		for _, d := range ix.links[li].Diagnostics {
			diag(ix.links[li].Page, li, d)
		}
	}

	// identifiers: [access URL, identifier, rel, own page, resolves, leads
	// back, status, how, reason, checked, linking pages, access URL's
	// target]
	w.raw(`],"identifiers":[`)
	for i, r := range identifierRows(ix) {
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.str(r.access)
		w.comma()
		w.str(r.identifier)
		w.comma()
		w.str(r.rel)
		w.comma()
		w.bool(r.ownPage)
		w.comma()
		w.bool(r.resolves)
		w.comma()
		w.bool(r.leadsBack)
		w.comma()
		w.int(int64(r.status))
		w.comma()
		w.str(r.how)
		w.comma()
		w.str(r.reason)
		w.comma()
		w.bool(r.checked)
		w.comma()
		w.int(int64(r.linkingPages))
		w.comma()
		w.int(int64(r.target))
		w.raw("]")
	}

	// fragments: [link, missing fragment, message], one per
	// fragment-missing finding of a link.
	w.raw(`],"fragments":[`)
	first = true
	for i := range ds.Findings {
		f := &ds.Findings[i]
		li := linkIndex(ix, f.LinkID)
		if f.Verdict != audit.VerdictFragmentMissing || li < 0 {
			continue
		}
		if !first {
			w.comma()
		}
		first = false
		w.raw("[")
		w.int(int64(li))
		w.comma()
		w.str(f.Fragment)
		w.comma()
		w.str(f.Message)
		w.raw("]")
	}

	// runs: [id, started, status, checked, broken, drifted]
	w.raw(`],"runs":[`)
	for i, r := range ds.Runs {
		if i > 0 {
			w.comma()
		}
		w.raw("[")
		w.int(r.ID)
		w.comma()
		w.time(r.StartedAt)
		w.comma()
		w.str(string(r.Status))
		w.comma()
		w.int(int64(r.Checked))
		w.comma()
		w.int(int64(r.Broken))
		w.comma()
		w.int(int64(r.Drifted))
		w.raw("]")
	}
	w.raw(`],"run":`)
	w.int(ds.Run.ID)
	w.raw(`,"archives":`)
	w.bool(archiveStageRan(ds))
	w.raw("}")
	return w.b
}

func targetIndex(ix *index, id int64) int {
	if i, ok := ix.targetIdx[id]; ok && id != 0 {
		return i
	}
	return -1
}

func linkIndex(ix *index, id int64) int {
	if i, ok := ix.linkIdx[id]; ok && id != 0 {
		return i
	}
	return -1
}

// archiveStageRan reports whether the run recorded anything from archives.
func archiveStageRan(ds *Dataset) bool {
	return len(ds.SnapshotChecks) > 0 || len(ds.Mementos) > 0 || len(ds.Drifts) > 0 ||
		len(ds.IdentifierChecks) > 0 || len(ds.Suggestions) > 0
}

// evidence summarises what a check saw beyond status and chain.
func evidence(c *audit.Check) string {
	if c == nil {
		return ""
	}
	var parts []string
	if c.ErrorClass != "" {
		parts = append(parts, "error: "+c.ErrorClass)
	}
	if e := c.Soft404; e != nil {
		if e.ProbeURL != "" {
			parts = append(parts, "soft-404 probe "+e.ProbeURL+" answered "+itoa(e.ProbeStatus)+
				", similarity "+fmtFloat(e.Similarity))
		}
		if len(e.Signals) > 0 {
			parts = append(parts, "soft-404 score "+fmtFloat(e.Score)+", parked score "+fmtFloat(e.Parked)+" (1 decides)")
		}
		for _, s := range e.Signals {
			line := "signal " + s.Name
			if s.Where != "" {
				line += " (" + s.Where + ")"
			}
			line += " " + signedFloat(s.Score)
			if s.Match != "" {
				line += ": " + s.Match
			}
			parts = append(parts, line)
		}
	}
	if c.ContentType != "" {
		parts = append(parts, "content-type: "+c.ContentType)
	}
	if c.Attempts > 1 {
		parts = append(parts, itoa(c.Attempts)+" attempts")
	}
	for _, k := range []string{"Location", "Retry-After", "Server"} {
		if v := c.Headers[k]; v != "" {
			parts = append(parts, k+": "+v)
		}
	}
	if c.Reused {
		parts = append(parts, "result reused from run "+itoa(int(c.ReusedFrom)))
	}
	return strings.Join(parts, "\n")
}

// signedFloat formats a signal's score with its sign.
func signedFloat(x float64) string {
	if x >= 0 {
		return "+" + fmtFloat(x)
	}
	return fmtFloat(x)
}

// targetSnippet returns the Robust Link suggestion for a target: the one of
// its first link that has one.
func targetSnippet(ix *index, targetID int64) string {
	for _, li := range ix.linksByTarget[targetID] {
		if s := ix.suggestByLink[ix.links[li].ID]; s != nil && s.HTML != "" {
			return s.HTML
		}
	}
	return ""
}

// snapshotRow is a declared snapshot of a link next to what the archive
// answered for it.
type snapshotRow struct {
	link             int
	source           string
	declared         string
	declaredTime     time.Time
	verdict          string // a SnapshotVerdict, or "unchecked"
	mementoTime      time.Time
	status           int
	declaredOriginal string
	actualOriginal   string
	flags            int
	deltaSeconds     int64
	reason           string
	finalURL         string
	checkedAt        time.Time
}

// snapshotRows lists every declared snapshot (data-versionurl entries and
// mset copies) with its check when the archive stage ran, plus checks of
// snapshots that extraction did not list (pwids resolved to URLs).
func snapshotRows(ix *index) []snapshotRow {
	var rows []snapshotRow
	for li := range ix.links {
		rows = ix.linkSnapshotRows(rows, li, &ix.links[li])
	}
	return rows
}

// linkSnapshotRows appends to rows the snapshot rows of l, whose index in
// ix.links is li (-1 when the report does not detail it).
func (ix *index) linkSnapshotRows(rows []snapshotRow, li int, l *Link) []snapshotRow {
	{
		if l.Robust == nil && l.Mset == nil && len(ix.snapshotsByLink[l.ID]) == 0 {
			return rows
		}
		original := ""
		var versionDate time.Time
		if l.Robust != nil {
			original = l.Robust.OriginalURL
			versionDate = l.Robust.VersionDate.Time
		}
		if l.Mset != nil && len(l.Mset.Temporal) > 0 && versionDate.IsZero() {
			versionDate = l.Mset.Temporal[0].Time
		}
		used := map[*audit.SnapshotCheck]bool{}
		find := func(source, u string) *audit.SnapshotCheck {
			for _, s := range ix.snapshotsByLink[l.ID] {
				if !used[s] && s.Source == source && (s.Declared == u || s.URL == u) {
					used[s] = true
					return s
				}
			}
			return nil
		}
		add := func(source, u string, declared time.Time, s *audit.SnapshotCheck) {
			if declared.IsZero() {
				// A snapshot without its own datetime is of the link's date.
				declared = versionDate
			}
			r := snapshotRow{link: li, source: source, declared: u, declaredTime: declared,
				verdict: string(Unchecked), declaredOriginal: original}
			if s != nil {
				r.verdict = string(s.Verdict)
				r.mementoTime = s.MementoDatetime
				r.status = s.Status
				r.actualOriginal = s.Original
				r.reason = s.Reason
				r.finalURL = s.FinalURL
				r.checkedAt = s.CheckedAt
				if r.declaredTime.IsZero() {
					r.declaredTime = s.DeclaredDatetime
				}
				if s.DatetimeMismatch {
					r.flags |= 1
				}
				if s.OriginalMismatch {
					r.flags |= 2
				}
				if !s.MementoDatetime.IsZero() && !s.DeclaredDatetime.IsZero() {
					r.deltaSeconds = int64(s.DeclaredDelta / time.Second)
				}
			}
			rows = append(rows, r)
		}
		if l.Robust != nil {
			for _, s := range l.Robust.Snapshots {
				add("versionurl", s.URL, s.Datetime.Time, find("versionurl", s.URL))
			}
		}
		if l.Mset != nil {
			for _, c := range l.Mset.Copies {
				add("mset", c.URL, c.Datetime.Time, find("mset", c.URL))
			}
		}
		for _, s := range ix.snapshotsByLink[l.ID] {
			if !used[s] {
				used[s] = true
				add(s.Source, s.Declared, s.DeclaredDatetime, s)
			}
		}
	}
	return rows
}

// identifierRow is a declared identifier, checked or not.
type identifierRow struct {
	access, identifier, rel      string
	ownPage, resolves, leadsBack bool
	checked                      bool
	status                       int
	how, reason                  string
	linkingPages                 int
	target                       int // index in ds.Targets of the access URL, -1 when not linked
}

// identifierRows lists identifier checks; when the archive stage did not
// run, the identifiers the crawled pages declare, unchecked.
func identifierRows(ix *index) []identifierRow {
	var rows []identifierRow
	target := func(u string) (int, int) {
		if i, ok := ix.targetByURL[u]; ok {
			return i, ix.pagesPerTarget[ix.ds.Targets[i].ID]
		}
		return -1, 0
	}
	for _, c := range ix.ds.IdentifierChecks {
		ti, pages := target(c.AccessURL)
		rows = append(rows, identifierRow{
			access: c.AccessURL, identifier: c.Identifier, rel: c.Rel, ownPage: c.OwnPage,
			resolves: c.Resolves, leadsBack: c.LeadsBack, checked: true, status: c.Status,
			how: c.How, reason: c.Reason, linkingPages: pages, target: ti,
		})
	}
	if len(ix.ds.IdentifierChecks) == 0 {
		for _, p := range ix.ds.Pages {
			for _, id := range p.Identifiers {
				ti, pages := target(p.URL)
				rows = append(rows, identifierRow{access: p.URL, identifier: id.URL, rel: id.Rel,
					ownPage: true, linkingPages: pages, target: ti})
			}
		}
	}
	return rows
}
