package maintain

import (
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

func TestWriteFixes(t *testing.T) {
	fix := Proposal{Maintenance: audit.Maintenance{Source: "https://a/p", Target: "https://a/old", Replacement: "https://a/new", Status: 301}, Evidence: "301"}
	held := Proposal{Maintenance: audit.Maintenance{Source: "https://a/p", Target: "https://doi.org/10.1/x", Replacement: "https://pub/x", Status: 302}, Evidence: "DOI"}
	var out, notes strings.Builder
	if err := WriteFixes(&out, &notes, "unlinkr", 1, []Proposal{fix}, []Proposal{held}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "UNLINKR https://a/p https://a/old https://a/new\n" || !strings.Contains(notes.String(), "not proposed: https://doi.org/10.1/x") {
		t.Errorf("unlinkr: %q; notes %q", out.String(), notes.String())
	}
	out.Reset()
	if err := WriteFixes(&out, &notes, "text", 1, []Proposal{fix}, []Proposal{held}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Run 1: 1 links to update.\n", "  https://a/old\n    → https://a/new  (301)\n", "1 links to identifiers redirect elsewhere"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	if err := WriteFixes(&out, &notes, "csv", 1, nil, nil); err == nil {
		t.Error("format csv accepted")
	}
}

func TestWriteOpenClaims(t *testing.T) {
	var b strings.Builder
	WriteOpenClaims(&b, []audit.Claim{
		{Target: "https://a/x", Source: "https://a/p", Confirmed: true},
		{Target: "https://a/y", Source: "https://a/p", Claimant: "c\x1b", ClaimedAt: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Note: "n"},
	})
	if !strings.Contains(b.String(), "\n1 UNLINKR claims") || strings.Contains(b.String(), "https://a/x") || strings.Contains(b.String(), "\x1b") {
		t.Errorf("claims:\n%q", b.String())
	}
}
