package study

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// ReferenceColumns are the columns of references.csv. The file is long
// ("tidy"): one row per reference and wave, references in input order and
// each reference's waves in order, so one wave gives exactly one row per
// input reference and a later wave adds rows a spreadsheet filter or a
// pivot on wave separates. A per-wave column set would change the header
// with every wave. There is no input line column, so that the same
// references in any input format give the same file.
var ReferenceColumns = []string{
	"id", "url", "cited_at", "group", "title", "wave", "checked_at",
	"live_verdict", "live_status", "broken",
	"memento_url", "memento_datetime", "memento_distance_days", "memento_archive",
	"representative", "drift", "reference_rot",
}

// SummaryColumns are the columns of summary.csv: for each share its count
// k, its denominator n, the share k/n and its Wilson 95% interval (empty
// cells when n is 0).
var SummaryColumns = func() []string {
	cols := []string{"wave", "scope", "key", "n"}
	for _, s := range shareNames {
		cols = append(cols, s+"_k", s+"_n", s, s+"_lo", s+"_hi")
	}
	return cols
}()

var shareNames = []string{"rot", "drift", "reference_rot", "representative", "new_rot"}

func (s SummaryRow) shares() []Share {
	return []Share{s.Rot, s.Drift, s.ReferenceRot, s.Represented, s.NewRot}
}

// SafeCell makes a cell from cited text safe to open in a spreadsheet: a
// cell starting with =, +, -, @, a tab or a carriage return would be read
// as a formula (CSV injection, OWASP), so it gets a leading apostrophe,
// which spreadsheets show as text and do not display. Cells linkrot makes
// itself (numbers, dates, verdicts) are written as they are.
func SafeCell(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r') {
		return "'" + s
	}
	return s
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// FormatDays formats a number of days with up to two decimals.
func FormatDays(d float64) string {
	if math.IsNaN(d) {
		return ""
	}
	d = math.Round(d*100) / 100
	if d == 0 {
		d = 0 // no "-0"
	}
	return strconv.FormatFloat(d, 'f', -1, 64)
}

func formatShare(x float64) string {
	return strconv.FormatFloat(x, 'f', 6, 64)
}

// ReferenceRecord is one row of references.csv.
func ReferenceRecord(r Row) []string {
	status := ""
	if r.Status != 0 {
		status = strconv.Itoa(r.Status)
	}
	representative := ""
	if r.Checked {
		representative = strconv.FormatBool(r.Representative)
	}
	var murl, mdt, march string
	if r.Memento != nil {
		murl, mdt, march = r.Memento.URL, formatTime(r.Memento.Datetime), r.Memento.Archive
	}
	return []string{
		SafeCell(r.Ref.ID), SafeCell(r.Ref.URL), r.Ref.CitedAt.String(), SafeCell(r.Ref.Group), SafeCell(r.Ref.Title),
		strconv.Itoa(r.Wave), formatTime(r.CheckedAt),
		string(r.Verdict), status, r.Broken.String(),
		SafeCell(murl), mdt, FormatDays(r.DistanceDays()), SafeCell(march),
		representative, r.Drift, r.ReferenceRot.String(),
	}
}

// WriteReferencesCSV writes references.csv.
func WriteReferencesCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ReferenceColumns); err != nil {
		return fmt.Errorf("write references.csv: %w", err)
	}
	for _, r := range rows {
		if err := cw.Write(ReferenceRecord(r)); err != nil {
			return fmt.Errorf("write references.csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write references.csv: %w", err)
	}
	return nil
}

// SummaryRecord is one row of summary.csv.
func SummaryRecord(s SummaryRow) []string {
	rec := []string{strconv.Itoa(s.Wave), s.Scope, SafeCell(s.Key), strconv.Itoa(s.N)}
	for _, sh := range s.shares() {
		if sh.N == 0 {
			rec = append(rec, "0", "0", "", "", "")
			continue
		}
		rec = append(rec, strconv.Itoa(sh.K), strconv.Itoa(sh.N), formatShare(sh.P()), formatShare(sh.Lo), formatShare(sh.Hi))
	}
	return rec
}

// WriteSummaryCSV writes summary.csv.
func WriteSummaryCSV(w io.Writer, sum []SummaryRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(SummaryColumns); err != nil {
		return fmt.Errorf("write summary.csv: %w", err)
	}
	for _, s := range sum {
		if err := cw.Write(SummaryRecord(s)); err != nil {
			return fmt.Errorf("write summary.csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write summary.csv: %w", err)
	}
	return nil
}
