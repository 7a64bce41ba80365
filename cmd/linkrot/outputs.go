package main

import (
	"path/filepath"
	"strings"

	"github.com/linkrot/linkrot/report"
)

// reportOutput is one --output of linkrot audit: a machine format,
// written into the report directory under its usual name (outputName)
// when path is "", else to the file path.
type reportOutput struct {
	format report.Format
	path   string
}

// outputUsage is what --output accepts, for its messages.
const outputUsage = "want a format (json, csv, junit, markdown, sarif) or a file name whose extension names one (.json, .csv, .xml, .md, .sarif)"

// parseOutput reads an --output value: a format name (json, csv, junit,
// markdown or md, sarif, xml for JUnit) or a file name whose extension
// names the format (report.json, out/links.csv, report.xml for JUnit,
// report.md, linkrot.sarif or linkrot.sarif.json for SARIF).
func parseOutput(v string) (reportOutput, error) {
	s := strings.TrimSpace(v)
	if s == "" {
		return reportOutput{}, usagef("--output %q: %s", v, outputUsage)
	}
	if !strings.ContainsAny(s, "./"+string(filepath.Separator)) {
		f, err := report.ParseFormat(strings.ToLower(s))
		if err != nil || f == report.HTML {
			return reportOutput{}, usagef("--output %q: %s", v, outputUsage)
		}
		return reportOutput{format: f}, nil
	}
	base := filepath.Base(s)
	lower := strings.ToLower(base)
	var f report.Format
	switch {
	case strings.HasSuffix(lower, ".sarif"), strings.HasSuffix(lower, ".sarif.json"):
		f = report.SARIF
	case strings.HasSuffix(lower, ".json"):
		f = report.JSON
	case strings.HasSuffix(lower, ".csv"):
		f = report.CSV
	case strings.HasSuffix(lower, ".xml"):
		f = report.JUnit
	case strings.HasSuffix(lower, ".md"), strings.HasSuffix(lower, ".markdown"):
		f = report.Markdown
	}
	// A directory ("out/") or a name that is only an extension (".json")
	// names no file.
	dirOnly := strings.HasSuffix(s, "/") || strings.HasSuffix(s, string(filepath.Separator))
	extOnly := strings.HasPrefix(base, ".") && !strings.Contains(base[1:], ".")
	if f == "" || dirOnly || extOnly {
		return reportOutput{}, usagef("--output %q: %s", v, outputUsage)
	}
	return reportOutput{format: f, path: s}, nil
}

// parseOutputs reads the --output values.
func parseOutputs(values []string) ([]reportOutput, error) {
	var out []reportOutput
	for _, v := range values {
		o, err := parseOutput(v)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// file is where the output is written, with dir the report directory.
func (o reportOutput) file(dir string) string {
	if o.path != "" {
		return o.path
	}
	return filepath.Join(dir, outputName(o.format))
}

// checkReportFlags refuses the combinations of the report flags of
// linkrot audit that contradict each other: --report DIR names where to
// write the HTML report that --no-report turns off.
func checkReportFlags(reportDir string, noReport bool) error {
	if noReport && reportDir != "" {
		return usagef("--report %s and --no-report contradict each other: --report says where to write the HTML report, --no-report not to write it (drop one; --output FILE writes a machine format without it)", reportDir)
	}
	return nil
}
