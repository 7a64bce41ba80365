package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// csvColumns are the columns of the CSV output, one row per link. Their
// names and order are stable within a SchemaVersion.
var csvColumns = []string{
	"run_id", "link_id", "page_url", "page_title", "element", "href", "text", "resource",
	"target_url", "host", "verdict", "status", "reason", "error_class", "status_chain", "final_url",
	"replacement", "attempts", "dns_ms", "connect_ms", "tls_ms", "first_byte_ms", "total_ms", "checked_at",
	"soft404_probe_url", "soft404_similarity",
	"robust_links", "originalurl", "versiondate", "mset",
	"snapshot_urls", "snapshot_datetimes", "snapshot_verdicts", "snapshot_memento_datetimes",
	"memento_url", "memento_datetime", "memento_archive", "memento_wanted", "memento_distance_s", "memento_representative",
	"drift_kind", "drift_band", "simhash_distance", "jaccard", "dice", "cosine",
	"words_reference", "words_live", "word_change", "drift_reference_url", "drift_reference_time",
	"findings",
}

// WriteCSV writes one row per link of ds with the evidence needed to
// recompute rot and drift rates. Lists inside a cell (snapshots, findings)
// are separated by " | ". A text cell that starts with =, +, -, @, tab or
// carriage return is prefixed with an apostrophe so that spreadsheets do
// not run it as a formula; numeric columns are never altered.
func WriteCSV(w io.Writer, ds *Dataset) error {
	ix := newIndex(ds)
	cw := csv.NewWriter(w)
	if err := cw.Write(csvColumns); err != nil {
		return fmt.Errorf("write csv report: %w", err)
	}
	rows := snapshotRows(ix)
	snapsByLink := map[int][]snapshotRow{}
	for _, r := range rows {
		snapsByLink[r.link] = append(snapsByLink[r.link], r)
	}
	rec := make([]string, len(csvColumns))
	for i := range ds.Links {
		l := &ds.Links[i]
		for j := range rec {
			rec[j] = ""
		}
		set := func(col int, s string) { rec[col] = cell(s) }
		num := func(col int, s string) { rec[col] = s }
		num(0, strconv.FormatInt(ds.Run.ID, 10))
		num(1, strconv.FormatInt(l.ID, 10))
		if l.Page >= 0 && l.Page < len(ds.Pages) {
			set(2, ds.Pages[l.Page].URL)
			set(3, ds.Pages[l.Page].Title)
		}
		set(4, l.Element)
		set(5, l.Href)
		set(6, l.Text)
		num(7, strconv.FormatBool(l.Resource))
		if t := ix.targetByID[l.TargetID]; t != nil {
			set(8, t.URL)
			set(9, t.Host)
		}
		set(10, string(ix.linkVerdict(l)))
		if c := ix.checkByTarget[l.TargetID]; c != nil {
			num(11, strconv.Itoa(c.Status))
			set(12, c.Reason)
			set(13, c.ErrorClass)
			set(14, redirectChain(c))
			set(15, c.FinalURL)
			rep := c.Replacement
			if rep == "" {
				rep = ix.fixesByTarget[c.URL]
			}
			set(16, rep)
			num(17, strconv.Itoa(c.Attempts))
			num(18, ms(c.Timings.DNS))
			num(19, ms(c.Timings.Connect))
			num(20, ms(c.Timings.TLS))
			num(21, ms(c.Timings.FirstByte))
			num(22, ms(c.Timings.Total))
			num(23, csvTime(c.CheckedAt))
			if e := c.Soft404; e != nil {
				set(24, e.ProbeURL)
				num(25, csvFloat(e.Similarity))
			}
		}
		if r := l.Robust; r != nil {
			num(26, "true")
			set(27, r.OriginalURL)
			num(28, csvTime(r.VersionDate.Time))
		} else {
			num(26, "false")
		}
		if m := l.Mset; m != nil {
			set(29, m.Raw)
		}
		if ss := snapsByLink[i]; len(ss) > 0 {
			var us, ds2, vs, ms2 []string
			for _, s := range ss {
				us = append(us, s.declared)
				ds2 = append(ds2, csvTime(s.declaredTime))
				vs = append(vs, s.verdict)
				ms2 = append(ms2, csvTime(s.mementoTime))
			}
			set(30, strings.Join(us, " | "))
			num(31, strings.Join(ds2, " | "))
			set(32, strings.Join(vs, " | "))
			num(33, strings.Join(ms2, " | "))
		}
		if m := ix.nearestMemento(l); m != nil {
			set(34, m.URL)
			num(35, csvTime(m.Datetime))
			set(36, m.Archive)
			num(37, csvTime(m.Wanted))
			num(38, strconv.FormatInt(int64(m.Distance/time.Second), 10))
			num(39, strconv.FormatBool(m.Representative))
		}
		d := ix.driftByLink[l.ID]
		if d == nil {
			d = ix.driftByTarget[l.TargetID]
		}
		if d != nil {
			set(40, d.Kind)
			set(41, d.Band)
			num(42, strconv.Itoa(d.SimHashDistance))
			if d.TextMeasured {
				num(43, csvFloat(d.Jaccard))
				num(44, csvFloat(d.Dice))
				num(45, csvFloat(d.Cosine))
			}
			num(46, strconv.Itoa(d.WordsReference))
			num(47, strconv.Itoa(d.WordsLive))
			num(48, csvFloat(d.WordChange))
			set(49, d.ReferenceURL)
			num(50, csvTime(d.ReferenceTime))
		}
		if fs := ix.findingsByLink[l.ID]; len(fs) > 0 {
			var msgs []string
			for _, f := range fs {
				msgs = append(msgs, string(f.Verdict)+": "+f.Message)
			}
			set(51, strings.Join(msgs, " | "))
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("write csv report: %w", err)
		}
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
