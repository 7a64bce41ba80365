package crawler

import (
	"os"
	"testing"
)

func TestOnePass_PythonDocs(t *testing.T) {
	dir := "/usr/share/doc/python3.11/html"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no python docs")
	}
	pages, fb := onePassTree(t, dir)
	t.Logf("%d pages, %d fell back", pages, fb)
}
