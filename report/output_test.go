package report

import (
	"strings"
	"testing"
)

func TestParseOutput(t *testing.T) {
	for _, tc := range []struct {
		in     string
		format Format
		path   string
		bad    bool
	}{
		{in: "json", format: JSON},
		{in: "CSV", format: CSV},
		{in: "md", format: Markdown},
		{in: "xml", format: JUnit},
		{in: "sarif", format: SARIF},
		{in: "report.json", format: JSON, path: "report.json"},
		{in: "out/links.CSV", format: CSV, path: "out/links.CSV"},
		{in: "junit.xml", format: JUnit, path: "junit.xml"},
		{in: "summary.markdown", format: Markdown, path: "summary.markdown"},
		{in: "linkrot.sarif", format: SARIF, path: "linkrot.sarif"},
		{in: "linkrot.sarif.json", format: SARIF, path: "linkrot.sarif.json"},
		{in: "html", bad: true},
		{in: "index.html", bad: true},
		{in: "report.pdf", bad: true},
		{in: "pdf", bad: true},
		{in: "", bad: true},
		{in: ".json", bad: true},
		{in: "out/", bad: true},
	} {
		got, err := ParseOutput(tc.in)
		if tc.bad {
			if err == nil || !strings.Contains(err.Error(), "--output") {
				t.Errorf("ParseOutput(%q) = %+v, %v; want an --output error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got.Format != tc.format || got.File != tc.path {
			t.Errorf("ParseOutput(%q) = %+v, %v; want %s at %q", tc.in, got, err, tc.format, tc.path)
		}
	}
}

func TestOutputIn(t *testing.T) {
	for f, want := range map[Format]string{JSON: "d/report.json", JUnit: "d/report.xml", Markdown: "d/report.md", SARIF: "d/report.sarif", CSV: "d/report.csv"} {
		if got := (Output{Format: f}).In("d").File; got != want {
			t.Errorf("%s: %q, want %q", f, got, want)
		}
	}
	if got := (Output{Format: JSON, File: "x.json"}).In("d").File; got != "x.json" {
		t.Errorf("a named file moved: %q", got)
	}
}
