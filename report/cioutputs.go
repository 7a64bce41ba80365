package report

import (
	"fmt"
	"io"
)

// CIOutputs are the outputs WriteCI writes of a finished run.
type CIOutputs struct {
	// Locations lists the broken links with path:line:col (at most 50)
	// under "Broken links:".
	Locations bool
	// GitHub writes GitHub Actions annotations of the broken links.
	GitHub bool
	// StepSummary, when set, is the job summary file the Markdown report
	// is appended to ($GITHUB_STEP_SUMMARY).
	StepSummary string
	// SARIF, when set, is the file the findings are written to as SARIF.
	SARIF string
}

// WriteCI writes the CI outputs o asks for of ds: locations and
// annotations on w, the job summary and the SARIF file to theirs.
func WriteCI(w io.Writer, ds *Dataset, o CIOutputs) error {
	if o.Locations && len(ds.Findings) > 0 {
		fmt.Fprintln(w, "Broken links:")
		if err := WriteLocations(w, ds, 50); err != nil {
			return err
		}
	}
	if o.GitHub {
		if err := WriteGitHub(w, ds); err != nil {
			return err
		}
	}
	if o.StepSummary != "" {
		if err := AppendMarkdown(o.StepSummary, ds); err != nil {
			return err
		}
	}
	if o.SARIF != "" {
		if err := WriteFile(o.SARIF, SARIF, ds); err != nil {
			return err
		}
	}
	return nil
}

// Introduced returns how many findings of ds its Baseline does not mark
// old: the broken links a change introduced (all of them without a
// baseline).
func (ds *Dataset) Introduced() int {
	n := 0
	for i := range ds.Findings {
		if ds.Baseline == nil || !ds.Baseline.Old[ds.Findings[i].LinkID] {
			n++
		}
	}
	return n
}
