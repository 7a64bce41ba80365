package main

import (
	"github.com/linkrot/linkrot/report"
)

// parseOutputs reads the --output values (report.ParseOutput).
func parseOutputs(values []string) ([]report.Output, error) {
	var out []report.Output
	for _, v := range values {
		o, err := report.ParseOutput(v)
		if err != nil {
			return nil, usagef("%v", err)
		}
		out = append(out, o)
	}
	return out, nil
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
