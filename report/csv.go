package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// csvRow is what the cells of one CSV row are computed from: a link and
// the results that belong to it.
type csvRow struct {
	run   int64
	link  *Link
	page  *audit.Page
	tgt   *Target
	check *audit.Check
	// rep is the target's replacement URL (from its check or a fix).
	rep   string
	snaps []snapshotRow
	// mem is the link's nearest memento; memLink says whether it is the
	// link's own (false: a target-level memento, LinkID 0).
	mem     *audit.Memento
	memLink bool
	// drift is the link's own drift measurement (never another link's);
	// first the target-level drift against its first fingerprint.
	drift, first *audit.Drift
	verdict      audit.Verdict
	findings     []*audit.Finding
	traps        []string // crawl-trap findings of the link (trapsByLink)
}

// csvColumn is one column: its header and how its cell is computed. A
// text cell goes through cell (formula neutralised); a number, time or
// boolean cell is written as is.
type csvColumn struct {
	name string
	text bool
	get  func(r *csvRow) string
}

func txt(name string, get func(r *csvRow) string) csvColumn {
	return csvColumn{name: name, text: true, get: get}
}

func val(name string, get func(r *csvRow) string) csvColumn {
	return csvColumn{name: name, get: get}
}

// onCheck, onDrift, ... return "" when the row has no such part.
func onCheck(f func(c *audit.Check) string) func(r *csvRow) string {
	return func(r *csvRow) string {
		if r.check == nil {
			return ""
		}
		return f(r.check)
	}
}

func onSoft404(f func(e *audit.Soft404Evidence) string) func(r *csvRow) string {
	return func(r *csvRow) string {
		if r.check == nil || r.check.Soft404 == nil {
			return ""
		}
		return f(r.check.Soft404)
	}
}

// soft404Signals lists a check's soft-404 signals in one cell:
// "name(where) score: match", separated by " | ".
func soft404Signals(e *audit.Soft404Evidence) string {
	parts := make([]string, 0, len(e.Signals))
	for _, s := range e.Signals {
		p := s.Name
		if s.Where != "" {
			p += "(" + s.Where + ")"
		}
		p += " " + csvFloat(s.Score)
		if s.Match != "" {
			p += ": " + s.Match
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " | ")
}

func onMemento(f func(m *audit.Memento) string) func(r *csvRow) string {
	return func(r *csvRow) string {
		if r.mem == nil {
			return ""
		}
		return f(r.mem)
	}
}

func onDrift(first bool, f func(d *audit.Drift) string) func(r *csvRow) string {
	return func(r *csvRow) string {
		d := r.drift
		if first {
			d = r.first
		}
		if d == nil {
			return ""
		}
		return f(d)
	}
}

// setMeasure is a Jaccard, Dice or cosine cell: empty when the drift was
// measured on fingerprints only.
func setMeasure(d *audit.Drift, m float64) string {
	if !d.TextMeasured {
		return ""
	}
	return csvFloat(m)
}

// snapList joins one field of the link's snapshot rows with " | ".
func snapList(f func(s *snapshotRow) string) func(r *csvRow) string {
	return func(r *csvRow) string {
		if len(r.snaps) == 0 {
			return ""
		}
		parts := make([]string, len(r.snaps))
		for i := range r.snaps {
			parts[i] = f(&r.snaps[i])
		}
		return strings.Join(parts, " | ")
	}
}

func i64(n int64) string  { return strconv.FormatInt(n, 10) }
func bools(b bool) string { return strconv.FormatBool(b) }

// driftColumns are the columns of one drift measurement, named prefix+...
func driftColumns(first bool) []csvColumn {
	p := "drift_"
	if first {
		p = "first_seen_"
	}
	cols := []csvColumn{}
	if !first {
		cols = append(cols, txt(p+"kind", onDrift(first, func(d *audit.Drift) string { return d.Kind })))
	}
	return append(cols,
		txt(p+"band", onDrift(first, func(d *audit.Drift) string { return d.Band })),
		val(p+"simhash_distance", onDrift(first, func(d *audit.Drift) string { return strconv.Itoa(d.SimHashDistance) })),
		val(p+"text_measured", onDrift(first, func(d *audit.Drift) string { return bools(d.TextMeasured) })),
		val(p+"jaccard", onDrift(first, func(d *audit.Drift) string { return setMeasure(d, d.Jaccard) })),
		val(p+"dice", onDrift(first, func(d *audit.Drift) string { return setMeasure(d, d.Dice) })),
		val(p+"cosine", onDrift(first, func(d *audit.Drift) string { return setMeasure(d, d.Cosine) })),
		val(p+"words_reference", onDrift(first, func(d *audit.Drift) string { return strconv.Itoa(d.WordsReference) })),
		val(p+"words_live", onDrift(first, func(d *audit.Drift) string { return strconv.Itoa(d.WordsLive) })),
		val(p+"word_change", onDrift(first, func(d *audit.Drift) string { return csvFloat(d.WordChange) })),
		txt(p+"reference_url", onDrift(first, func(d *audit.Drift) string { return d.ReferenceURL })),
		val(p+"reference_time", onDrift(first, func(d *audit.Drift) string { return csvTime(d.ReferenceTime) })),
		txt(p+"live_url", onDrift(first, func(d *audit.Drift) string { return d.LiveURL })),
		val(p+"measured_at", onDrift(first, func(d *audit.Drift) string { return csvTime(d.MeasuredAt) })),
	)
}

// csvColumns are the columns of the CSV output, one row per link, in
// groups: the link, its target's check, its Robust Links data and declared
// snapshots, its nearest memento, its own drift, its target's drift since
// first seen, its findings. docs/report-and-dashboard.md documents each;
// names and order are stable within a SchemaVersion (new columns are
// added at the end of their group only with a new version).
var csvColumns = func() []csvColumn {
	cols := []csvColumn{
		val("run_id", func(r *csvRow) string { return i64(r.run) }),
		val("link_id", func(r *csvRow) string { return i64(r.link.ID) }),
		txt("page_url", func(r *csvRow) string {
			if r.page == nil {
				return ""
			}
			return r.page.URL
		}),
		txt("page_title", func(r *csvRow) string {
			if r.page == nil {
				return ""
			}
			return r.page.Title
		}),
		txt("element", func(r *csvRow) string { return r.link.Element }),
		txt("href", func(r *csvRow) string { return r.link.Href }),
		txt("text", func(r *csvRow) string { return r.link.Text }),
		val("resource", func(r *csvRow) string { return bools(r.link.Resource) }),
		txt("attr", func(r *csvRow) string { return r.link.Attr }),
		val("target_id", func(r *csvRow) string {
			if r.link.TargetID == 0 {
				return ""
			}
			return i64(r.link.TargetID)
		}),
		txt("target_url", func(r *csvRow) string {
			if r.tgt == nil {
				return ""
			}
			return r.tgt.URL
		}),
		txt("host", func(r *csvRow) string {
			if r.tgt == nil {
				return ""
			}
			return r.tgt.Host
		}),
		txt("verdict", func(r *csvRow) string { return string(r.verdict) }),
		val("status", onCheck(func(c *audit.Check) string { return strconv.Itoa(c.Status) })),
		txt("reason", onCheck(func(c *audit.Check) string { return c.Reason })),
		txt("error_class", onCheck(func(c *audit.Check) string { return c.ErrorClass })),
		txt("status_chain", onCheck(redirectChain)),
		txt("final_url", onCheck(func(c *audit.Check) string { return c.FinalURL })),
		txt("replacement", func(r *csvRow) string { return r.rep }),
		val("attempts", onCheck(func(c *audit.Check) string { return strconv.Itoa(c.Attempts) })),
		val("dns_ms", onCheck(func(c *audit.Check) string { return ms(c.Timings.DNS) })),
		val("connect_ms", onCheck(func(c *audit.Check) string { return ms(c.Timings.Connect) })),
		val("tls_ms", onCheck(func(c *audit.Check) string { return ms(c.Timings.TLS) })),
		val("first_byte_ms", onCheck(func(c *audit.Check) string { return ms(c.Timings.FirstByte) })),
		val("total_ms", onCheck(func(c *audit.Check) string { return ms(c.Timings.Total) })),
		val("checked_at", onCheck(func(c *audit.Check) string { return csvTime(c.CheckedAt) })),
		txt("soft404_probe_url", onSoft404(func(e *audit.Soft404Evidence) string { return e.ProbeURL })),
		val("soft404_probe_status", onSoft404(func(e *audit.Soft404Evidence) string { return strconv.Itoa(e.ProbeStatus) })),
		val("soft404_similarity", onSoft404(func(e *audit.Soft404Evidence) string { return csvFloat(e.Similarity) })),
		val("soft404_score", onSoft404(func(e *audit.Soft404Evidence) string { return csvFloat(e.Score) })),
		val("soft404_parked", onSoft404(func(e *audit.Soft404Evidence) string { return csvFloat(e.Parked) })),
		txt("soft404_signals", onSoft404(soft404Signals)),

		val("robust_links", func(r *csvRow) string { return bools(r.link.Robust != nil) }),
		txt("originalurl", func(r *csvRow) string {
			if r.link.Robust == nil {
				return ""
			}
			return r.link.Robust.OriginalURL
		}),
		val("versiondate", func(r *csvRow) string {
			if r.link.Robust == nil {
				return ""
			}
			return csvTime(r.link.Robust.VersionDate.Time)
		}),
		txt("mset", func(r *csvRow) string {
			if r.link.Mset == nil {
				return ""
			}
			return r.link.Mset.Raw
		}),
		txt("snapshot_sources", snapList(func(s *snapshotRow) string { return s.source })),
		txt("snapshot_urls", snapList(func(s *snapshotRow) string { return s.declared })),
		val("snapshot_datetimes", snapList(func(s *snapshotRow) string { return csvTime(s.declaredTime) })),
		txt("snapshot_verdicts", snapList(func(s *snapshotRow) string { return s.verdict })),
		val("snapshot_statuses", snapList(func(s *snapshotRow) string {
			if s.verdict == string(Unchecked) {
				return ""
			}
			return strconv.Itoa(s.status)
		})),
		val("snapshot_memento_datetimes", snapList(func(s *snapshotRow) string { return csvTime(s.mementoTime) })),
		val("snapshot_datetime_mismatches", snapList(func(s *snapshotRow) string { return snapFlag(s, 1) })),
		txt("snapshot_originals", snapList(func(s *snapshotRow) string { return s.actualOriginal })),
		val("snapshot_original_mismatches", snapList(func(s *snapshotRow) string { return snapFlag(s, 2) })),
		val("snapshot_checked_at", snapList(func(s *snapshotRow) string { return csvTime(s.checkedAt) })),

		val("memento_scope", func(r *csvRow) string {
			switch {
			case r.mem == nil:
				return ""
			case r.memLink:
				return "link"
			}
			return "target"
		}),
		txt("memento_url", onMemento(func(m *audit.Memento) string { return m.URL })),
		val("memento_datetime", onMemento(func(m *audit.Memento) string { return csvTime(m.Datetime) })),
		txt("memento_archive", onMemento(func(m *audit.Memento) string { return m.Archive })),
		val("memento_wanted", onMemento(func(m *audit.Memento) string { return csvTime(m.Wanted) })),
		txt("memento_wanted_from", onMemento(func(m *audit.Memento) string { return m.WantedFrom })),
		val("memento_distance_s", onMemento(func(m *audit.Memento) string { return i64(int64(m.Distance / time.Second)) })),
		val("memento_representative", onMemento(func(m *audit.Memento) string { return bools(m.Representative) })),
	}
	cols = append(cols, driftColumns(false)...)
	cols = append(cols, driftColumns(true)...)
	return append(cols, txt("findings", func(r *csvRow) string {
		msgs := make([]string, len(r.findings))
		for i, f := range r.findings {
			msgs[i] = string(f.Verdict) + ": " + f.Message
		}
		return strings.Join(append(msgs, r.traps...), " | ")
	}))
}()

// snapFlag is a mismatch cell of a snapshot: true or false when audited,
// "" when not.
func snapFlag(s *snapshotRow, bit int) string {
	if s.verdict == string(Unchecked) {
		return ""
	}
	return bools(s.flags&bit != 0)
}

// CSVHeader returns the names of the CSV output's columns, in order.
func CSVHeader() []string {
	names := make([]string, len(csvColumns))
	for i, c := range csvColumns {
		names[i] = c.name
	}
	return names
}

// WriteCSV writes one row per link of ds with the evidence needed to
// recompute rot and drift rates. Every value in a row is the link's own:
// the memento and drift columns never borrow another link's results, even
// for the same target (memento_scope says when a memento is the target's,
// not the link's; the first_seen_ columns are the target's drift since
// linkrot first saw it). Lists inside a cell (snapshots, findings) are
// separated by " | ". A text cell that starts with =, +, -, @, tab or
// carriage return is prefixed with an apostrophe so that spreadsheets do
// not run it as a formula; numeric columns are never altered.
func WriteCSV(w io.Writer, ds *Dataset) error {
	ds = redactedDataset(ds) // URL passwords never printed (redact.go)
	ix := newIndex(ds)
	if ix.err != nil {
		return fmt.Errorf("read the run's links: %w", ix.err)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader()); err != nil {
		return fmt.Errorf("write csv report: %w", err)
	}
	rec := make([]string, len(csvColumns))
	traps := trapsByLink(ds)
	var snaps []snapshotRow
	err := ix.eachLink(func(l *Link) error {
		li, ok := ix.linkIdx[l.ID]
		if !ok {
			li = -1
		}
		snaps = ix.linkSnapshotRows(snaps[:0], li, l)
		r := csvRow{run: ds.Run.ID, link: l, tgt: ix.targetByID[l.TargetID], check: ix.checkByTarget[l.TargetID],
			snaps: snaps, drift: ix.driftByLink[l.ID], verdict: ix.linkVerdict(l), findings: ix.findingsByLink[l.ID], traps: traps[l.ID]}
		if l.Page >= 0 && l.Page < len(ds.Pages) {
			r.page = ds.Pages[l.Page]
		}
		if r.check != nil {
			r.rep = r.check.Replacement
			if r.rep == "" {
				r.rep = ix.fixesByTarget[r.check.URL]
			}
		}
		r.mem, r.memLink = ix.nearestMemento(l)
		if l.TargetID != 0 {
			r.first = ix.firstSeenDrift[l.TargetID]
		}
		for j, c := range csvColumns {
			v := c.get(&r)
			if c.text {
				v = cell(v)
			}
			rec[j] = v
		}
		return cw.Write(rec)
	})
	if err != nil {
		return fmt.Errorf("write csv report: %w", err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv report: %w", err)
	}
	return nil
}

// cell neutralises spreadsheet formulas in a text cell (OWASP CSV
// injection advice).
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func csvFloat(f float64) string {
	if f != f {
		return ""
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
