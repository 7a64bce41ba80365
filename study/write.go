package study

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/linkrot/linkrot/drift"
)

// Study is everything the outputs are made of.
type Study struct {
	Input  *Input
	Waves  []Wave
	Params Params
}

// Meta is study.json: what is needed to reproduce the numbers.
type Meta struct {
	Input struct {
		Name   string `json:"name"`
		Format Format `json:"format"`
		SHA256 string `json:"sha256"`
	} `json:"input"`
	Archives   []string         `json:"archives"`
	WindowDays float64          `json:"window_days"`
	Thresholds drift.Thresholds `json:"drift_thresholds"`
	Version    string           `json:"linkrot_version"`
	Created    string           `json:"created"`
	Waves      []MetaWave       `json:"waves"`
	Counts     struct {
		References   int `json:"references"`
		DistinctURLs int `json:"distinct_urls"`
		Malformed    int `json:"malformed"`
		Rows         int `json:"rows"`
	} `json:"counts"`
	Malformed []RowError `json:"malformed_rows"`
	// Definitions restate the rules the rows were judged by.
	Definitions map[string]string `json:"definitions"`
}

// MetaWave is a wave in study.json.
type MetaWave struct {
	Number    int    `json:"number"`
	CheckedAt string `json:"checked_at"`
	URLs      int    `json:"urls_with_results"`
}

// Definitions are the rules, as study.json and the methods paragraph
// state them.
var Definitions = map[string]string{
	"link_rot":                "the live check's verdict is broken (every verdict linkrot counts as broken, soft-404 and parked included); timeout, rate-limited, blocked, skipped and refused are unmeasured",
	"representative_memento":  "the memento nearest the citation date (distance 0 inside a day, month or year cited without more precision), within the window before or after; ties go to the earlier memento",
	"content_drift":           "the drift band of the live page against the representative memento, counted as drift when major or off-topic; unmeasured without a live page and a representative memento",
	"reference_rot":           "link rot, or content drift beyond minor",
	"intervals":               "Wilson score intervals at 95% (z = 1.959964)",
	"distance_days":           "signed days from the citation to the memento, negative before",
	"references_csv_layout":   "one row per reference and wave, input order, waves in order",
	"spreadsheet_safe_cells":  "cited text starting with = + - @ tab or carriage return is prefixed with an apostrophe",
	"shares_denominators":     "rot among references with a measured live check; drift among live references with measured drift; reference rot among references where it is known; representative among references whose URL has a result; new rot among references not broken in the previous wave",
	"unknown_citation_detail": "a citation date given as a year or a month is that whole interval",
}

// DistinctURLs counts the distinct URLs of the references.
func DistinctURLs(refs []Reference) int {
	seen := make(map[string]struct{}, len(refs))
	for _, r := range refs {
		seen[r.URL] = struct{}{}
	}
	return len(seen)
}

// MetaOf builds study.json's content.
func MetaOf(s *Study, rows int) Meta {
	var m Meta
	m.Input.Name, m.Input.Format, m.Input.SHA256 = s.Input.Name, s.Input.Format, s.Input.Digest
	m.Archives = append([]string{}, s.Params.Archives...)
	m.WindowDays = s.Params.window().Hours() / 24
	m.Thresholds = s.Params.Thresholds.WithDefaults()
	m.Version = s.Params.Version
	m.Created = formatTime(s.Params.Created)
	for _, w := range s.Waves {
		m.Waves = append(m.Waves, MetaWave{Number: w.Number, CheckedAt: formatTime(w.CheckedAt), URLs: len(w.Results)})
	}
	if m.Waves == nil {
		m.Waves = []MetaWave{}
	}
	m.Counts.References = len(s.Input.References)
	m.Counts.DistinctURLs = DistinctURLs(s.Input.References)
	m.Counts.Malformed = len(s.Input.Errors)
	m.Counts.Rows = rows
	m.Malformed = append([]RowError{}, s.Input.Errors...)
	m.Definitions = Definitions
	return m
}

// WriteDir writes references.csv, summary.csv, index.html and study.json
// into dir (created when missing). The rows are judged and written one at
// a time (Each), so memory holds only the summary and the rows index.html
// shows, whatever the number of references. Each file is written to a
// temporary name and renamed, so a reader never sees half a file.
func WriteDir(dir string, s *Study) error {
	if s.Input == nil {
		return fmt.Errorf("write study: no input")
	}
	if s.Params.Created.IsZero() {
		s.Params.Created = time.Now().UTC()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write study: %w", err)
	}
	var z Summarizer
	var shown []Row
	total := 0
	limit := s.Params.htmlRows()
	err := writeAtomic(dir, "references.csv", func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(ReferenceColumns); err != nil {
			return err
		}
		err := Each(s.Input.References, s.Waves, s.Params, func(r Row) error {
			total++
			z.Add(r)
			if len(shown) < limit {
				shown = append(shown, r)
			}
			return cw.Write(ReferenceRecord(r))
		})
		if err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	sum := z.Rows()
	if err := writeAtomic(dir, "summary.csv", func(w io.Writer) error { return WriteSummaryCSV(w, sum) }); err != nil {
		return err
	}
	if err := writeAtomic(dir, "index.html", func(w io.Writer) error { return WriteHTML(w, s, shown, total, sum) }); err != nil {
		return err
	}
	return writeAtomic(dir, "study.json", func(w io.Writer) error {
		js, err := json.MarshalIndent(MetaOf(s, total), "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(js, '\n'))
		return err
	})
}

// writeAtomic writes name in dir through fill, via a temporary file
// renamed into place.
func writeAtomic(dir, name string, fill func(io.Writer) error) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	bw := bufio.NewWriterSize(tmp, 256<<10)
	if err := fill(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
