package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun_Short runs the benchmark on 600 references: the uninterrupted
// study, then one killed during its checks and during its TimeMaps and
// resumed, whose outputs must equal the first's with no request
// repeated or lost. It builds linkrot first (skipped with -short).
func TestRun_Short(t *testing.T) {
	if testing.Short() {
		t.Skip("builds linkrot and runs three studies")
	}
	bin := filepath.Join(t.TempDir(), "linkrot")
	build := exec.Command("go", "build", "-o", bin, "../linkrot")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Linkrot: bin, Refs: 600, Dir: t.TempDir()}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	if res.Kills != 2 || !res.SameOutputs || len(res.Repeated) != 0 || len(res.Lost) != 0 || !res.OK() {
		t.Errorf("kills %d, same outputs %v, repeated %v, lost %v", res.Kills, res.SameOutputs, res.Repeated, res.Lost)
	}
	if res.Wall <= 0 || res.PeakMB <= 0 || !strings.Contains(out.String(), "requests repeated: 0") {
		t.Errorf("no measures: %+v\n%s", res, out.String())
	}
}
