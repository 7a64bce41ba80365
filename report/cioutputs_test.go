package report

import (
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func TestWriteCI_NothingAsked(t *testing.T) {
	var b strings.Builder
	if err := WriteCI(&b, &Dataset{}, CIOutputs{Locations: true}); err != nil || b.Len() != 0 {
		t.Errorf("no findings: %q, %v", b.String(), err)
	}
}

func TestDataset_Introduced(t *testing.T) {
	ds := &Dataset{Findings: make([]audit.Finding, 3)}
	for i := range ds.Findings {
		ds.Findings[i].LinkID = int64(i + 1)
	}
	if n := ds.Introduced(); n != 3 {
		t.Errorf("without a baseline: %d, want 3", n)
	}
	ds.Baseline = &Baseline{Old: map[int64]bool{1: true, 3: true}}
	if n := ds.Introduced(); n != 1 {
		t.Errorf("with two old: %d, want 1", n)
	}
}
