package report

import (
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func TestWriteDiff(t *testing.T) {
	d := &audit.RunDiff{From: 1, To: 2, NewBroken: []audit.Change{{URL: "https://a/x", Verdict: audit.Verdict("broken"), Status: 404, Pages: 2}}}
	var b strings.Builder
	if err := WriteDiff(&b, "json", d); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "null") {
		t.Errorf("json has null lists:\n%s", b.String())
	}
	b.Reset()
	if err := WriteDiff(&b, "text", d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Run 2 compared with run 1\n", "\nNew broken: 1\n  broken 404", "(new link; 2 pages)", "Newly drifted: not measured"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	if err := WriteDiff(&b, "xml", d); err == nil {
		t.Error("format xml accepted")
	}
}

func TestWriteSuggestions(t *testing.T) {
	sgs := []audit.Suggestion{{PageURL: "https://a/--p", Reason: "use-identifier", Href: "=cmd", HTML: `<a href="x">x</a>`}}
	var b strings.Builder
	if err := WriteSuggestions(&b, "csv", 3, sgs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "'=cmd") {
		t.Errorf("csv formula not neutralised:\n%s", b.String())
	}
	b.Reset()
	if err := WriteSuggestions(&b, "html", 3, sgs); err != nil {
		t.Fatal(err)
	}
	if want := "<!-- linkrot run 3: 1 suggestions -->\n\n<!-- on https://a/%2D%2Dp -->\n<!-- use-identifier -->\n<a href=\"x\">x</a>\n"; b.String() != want {
		t.Errorf("html = %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := WriteSuggestions(&b, "json", 3, nil); err != nil || b.String() != "[]\n" {
		t.Errorf("json of none = %q, %v", b.String(), err)
	}
}
