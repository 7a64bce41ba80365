package report

import (
	"fmt"
	"path/filepath"
	"strings"
)

// outputUsage is what an --output value may be, for its messages.
const outputUsage = "want a format (json, csv, junit, markdown, sarif) or a file name whose extension names one (.json, .csv, .xml, .md, .sarif)"

// ParseOutput reads an --output value: a format name (json, csv, junit,
// markdown or md, sarif, xml for JUnit), giving an Output without File
// (written into the report directory, see In), or a file name whose
// extension names the format (report.json, out/links.csv, report.xml for
// JUnit, report.md, linkrot.sarif or linkrot.sarif.json for SARIF). HTML
// is not a machine output; a directory or a bare extension names no file.
func ParseOutput(v string) (Output, error) {
	s := strings.TrimSpace(v)
	bad := fmt.Errorf("--output %q: %s", v, outputUsage)
	if s == "" {
		return Output{}, bad
	}
	if !strings.ContainsAny(s, "./"+string(filepath.Separator)) {
		f, err := ParseFormat(strings.ToLower(s))
		if err != nil || f == HTML {
			return Output{}, bad
		}
		return Output{Format: f}, nil
	}
	base := filepath.Base(s)
	lower := strings.ToLower(base)
	var f Format
	switch {
	case strings.HasSuffix(lower, ".sarif"), strings.HasSuffix(lower, ".sarif.json"):
		f = SARIF
	case strings.HasSuffix(lower, ".json"):
		f = JSON
	case strings.HasSuffix(lower, ".csv"):
		f = CSV
	case strings.HasSuffix(lower, ".xml"):
		f = JUnit
	case strings.HasSuffix(lower, ".md"), strings.HasSuffix(lower, ".markdown"):
		f = Markdown
	}
	dirOnly := strings.HasSuffix(s, "/") || strings.HasSuffix(s, string(filepath.Separator))
	extOnly := strings.HasPrefix(base, ".") && !strings.Contains(base[1:], ".")
	if f == "" || dirOnly || extOnly {
		return Output{}, bad
	}
	return Output{Format: f, File: s}, nil
}

// In returns o with its File in the report directory dir under the
// format's usual name (report.json, report.csv, report.xml for JUnit,
// report.md, report.sarif) when o names no file.
func (o Output) In(dir string) Output {
	if o.File == "" {
		o.File = filepath.Join(dir, OutputName(o.Format))
	}
	return o
}

// OutputName is the file name of a machine output in the report directory.
func OutputName(f Format) string {
	switch f {
	case JUnit:
		return "report.xml"
	case Markdown:
		return "report.md"
	}
	return "report." + string(f)
}
