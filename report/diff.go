package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/linkrot/linkrot/audit"
)

// DiffFormats are the formats WriteDiff writes.
var DiffFormats = []string{"text", "json"}

// WriteDiff writes what changed between two runs (what linkrot diff
// prints): "text" a section per kind of change, "json" the RunDiff with
// empty lists as arrays, never null. Any other format is an error.
func WriteDiff(w io.Writer, format string, d *audit.RunDiff) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(nonNilDiff(d))
	case "text":
		writeDiffText(w, d)
		return nil
	}
	return fmt.Errorf("unknown diff format %q (text or json)", format)
}

// nonNilDiff returns d with empty lists instead of nil ones, so the JSON
// schema always has arrays.
func nonNilDiff(d *audit.RunDiff) *audit.RunDiff {
	c := *d
	for _, l := range []*[]audit.Change{&c.NewBroken, &c.NewlyConfirmed, &c.Recovered, &c.NewlyMoved, &c.NewlyDrifted} {
		if *l == nil {
			*l = []audit.Change{}
		}
	}
	return &c
}

func writeDiffText(w io.Writer, d *audit.RunDiff) {
	if d.From == 0 {
		fmt.Fprintf(w, "Run %d (no earlier run of this site to compare with)\n", d.To)
	} else {
		fmt.Fprintf(w, "Run %d compared with run %d\n", d.To, d.From)
	}
	section := func(title string, cs []audit.Change, line func(audit.Change) string) {
		fmt.Fprintf(w, "\n%s: %d\n", title, len(cs))
		for _, c := range cs {
			fmt.Fprintf(w, "  %s\n", line(c))
		}
	}
	verdict := func(c audit.Change) string {
		s := string(c.Verdict)
		if c.Status > 0 {
			s += fmt.Sprintf(" %d", c.Status)
		}
		was := "new link"
		if c.Previous != "" {
			was = "was " + string(c.Previous)
		}
		return fmt.Sprintf("%-22s %s  (%s; %d pages)", s, c.URL, was, c.Pages)
	}
	section("Newly confirmed broken", d.NewlyConfirmed, verdict)
	section("New broken", d.NewBroken, verdict)
	section("Recovered", d.Recovered, func(c audit.Change) string {
		return fmt.Sprintf("%-22s %s  (was %s)", c.Verdict, c.URL, c.Previous)
	})
	section("Newly moved", d.NewlyMoved, func(c audit.Change) string {
		return fmt.Sprintf("%s → %s", c.URL, c.Replacement)
	})
	if !d.DriftAvailable {
		fmt.Fprintf(w, "\nNewly drifted: not measured (no drift measurements in run %d: archives stage off or nothing to measure)\n", d.To)
		return
	}
	section("Newly drifted", d.NewlyDrifted, func(c audit.Change) string {
		was := c.PreviousBand
		if was == "" {
			was = "not measured"
		}
		return fmt.Sprintf("%-10s %s  (was %s)", c.Band, c.URL, was)
	})
}
