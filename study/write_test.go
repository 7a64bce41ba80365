package study

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestWriteDirCapsTheHTMLTable(t *testing.T) {
	w := newWorld(50, 3)
	in := &Input{Name: "x.csv", Format: FormatCSV, Digest: strings.Repeat("b", 64), References: w.refs}
	dir := filepath.Join(t.TempDir(), "out", "study")
	if err := WriteDir(dir, &Study{Input: in, Waves: w.waves, Params: Params{HTMLRows: 10}}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="refs-data">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no table data")
	}
	var data [][]string
	if err := json.Unmarshal(m[1], &data); err != nil {
		t.Fatal(err)
	}
	if len(data) != 10 || !strings.Contains(string(page), "first 10 of") {
		t.Errorf("%d rows in the page", len(data))
	}
	csv := readCSVFile(t, filepath.Join(dir, "references.csv"))
	if len(csv)-1 != 2*len(w.refs) {
		t.Errorf("references.csv has %d rows, want %d", len(csv)-1, 2*len(w.refs))
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "index.html references.csv study.json summary.csv" {
		t.Errorf("files %v (no temporary file may stay)", names)
	}
	if err := WriteDir(dir, &Study{}); err == nil {
		t.Error("WriteDir without input: no error")
	}
}
