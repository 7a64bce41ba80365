package robustify

import (
	"strings"
	"testing"
)

func TestArchiveConfig_Apply(t *testing.T) {
	var o Options
	if _, err := (ArchiveConfig{Specs: []string{"bad=not a url,rate=x"}}).Apply(&o); err == nil || !strings.HasPrefix(err.Error(), "--archive: ") {
		t.Errorf("bad spec: %v", err)
	}
	release, err := ArchiveConfig{Save: true}.Apply(&o)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if o.Lookup == nil || o.Verify == nil || o.Save == nil {
		t.Errorf("options not set: lookup %v verify %v save %v", o.Lookup != nil, o.Verify != nil, o.Save != nil)
	}
}

func TestResult_WriteText(t *testing.T) {
	r := &Result{
		Files: []FileResult{{Path: "a.html", Changed: true, Diff: "--- a\n+++ a\n"}, {Path: "b.html", Skipped: "too big"}},
		Links: []LinkResult{{File: "a.html", Line: 3, Action: ActionAdded}, {File: "a.html", Line: 4, Action: ActionBroken, Href: "https://x/", Reason: "404"}},
	}
	var out, notes strings.Builder
	r.WriteText(&out, &notes, true)
	if out.String() != "--- a\n+++ a\n" {
		t.Errorf("out = %q", out.String())
	}
	want := "a.html:4: " + ActionBroken + " https://x/: 404\nb.html: skipped: too big\nrobustify: 2 files, 1 would change; links: 1 added, 0 saved, 0 audited, 1 broken, 0 fixed, 0 skipped\n"
	if notes.String() != want {
		t.Errorf("notes = %q, want %q", notes.String(), want)
	}
}
