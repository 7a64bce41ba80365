package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/drift"
)

// TestStudy_Smoke is a first look.
func TestStudy_Smoke(t *testing.T) {
	w := newStudyWorld(t, 40)
	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.csv")
	w.writeCSV(t, refs, true)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := run(t, "", append([]string{"study", refs}, w.args(filepath.Join(dir, "s.db"), out)...)...)
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	b, _ := os.ReadFile(filepath.Join(out, "references.csv"))
	t.Logf("%s", b)
	th := drift.DefaultThresholds()
	th.Exact = true
	rows := readCSV(t, filepath.Join(out, "references.csv"))
	for i, r := range w.refs {
		want := w.expectRow(r, 7*24*time.Hour, th)
		for k, v := range want {
			if rows[i][k] != v {
				t.Errorf("row %d %s: %q, want %q", i, k, rows[i][k], v)
			}
		}
	}
	_ = strings.Contains
}
