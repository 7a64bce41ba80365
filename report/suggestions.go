package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// SuggestionFormats are the formats WriteSuggestions writes.
var SuggestionFormats = []string{"html", "json", "csv"}

// WriteSuggestions writes the Robust Link suggestions of run runID (what
// linkrot suggest prints): "html" writes paste-ready links grouped by page
// in HTML comments, "json" an indented array, "csv" one row per suggestion
// with spreadsheet formulas neutralised. Any other format is an error.
func WriteSuggestions(w io.Writer, format string, runID int64, sgs []audit.Suggestion) error {
	switch format {
	case "json":
		if sgs == nil {
			sgs = []audit.Suggestion{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(sgs)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"page_url", "link_id", "reason", "href", "text", "originalurl", "versiondate", "versionurl", "html"})
		for _, s := range sgs {
			vd := ""
			if !s.VersionDate.IsZero() {
				vd = s.VersionDate.UTC().Format(time.RFC3339)
			}
			cw.Write([]string{cell(s.PageURL), fmt.Sprint(s.LinkID), s.Reason, cell(s.Href), cell(s.Text),
				cell(s.OriginalURL), vd, cell(s.VersionURL), cell(s.HTML)})
		}
		cw.Flush()
		return cw.Error()
	case "html":
		fmt.Fprintf(w, "<!-- linkrot run %d: %d suggestions -->\n", runID, len(sgs))
		last := ""
		for _, s := range sgs {
			if s.PageURL != last {
				fmt.Fprintf(w, "\n<!-- on %s -->\n", commentSafe(s.PageURL))
				last = s.PageURL
			}
			fmt.Fprintf(w, "<!-- %s -->\n%s\n", s.Reason, s.HTML)
		}
		return nil
	}
	return fmt.Errorf("unknown suggestions format %q (html, json or csv)", format)
}

// commentSafe keeps a URL from closing the HTML comment it is written in.
func commentSafe(s string) string { return strings.ReplaceAll(s, "--", "%2D%2D") }
