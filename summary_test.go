package linkrot

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func TestNothingToCheck(t *testing.T) {
	for _, tc := range []struct {
		mode          string
		links         int
		pages, failed int
		want          string
	}{
		{"dir", 0, 0, 0, "Nothing to check: the directory has no HTML (.html, .htm) or Markdown (.md, .markdown) documents."},
		{"site", 0, 0, 0, "Nothing to check: no page was crawled."},
		{"site", 0, 1, 1, "Nothing to check: the page could not be read."},
		{"urls", 0, 3, 3, "Nothing to check: none of the 3 pages could be read."},
		{"dir", 0, 1, 0, "Nothing to check: the page has no links."},
		{"site", 0, 4, 1, "Nothing to check: the 4 pages have no links."},
		{"site", 1, 1, 0, "Nothing to check: the link has no target to check."},
		{"site", 3, 2, 0, "Nothing to check: none of the 3 links has a target to check."},
	} {
		got := NothingToCheck(tc.mode, &audit.RunStats{Links: tc.links}, PageCount{Pages: tc.pages, Failed: tc.failed})
		if got != tc.want {
			t.Errorf("%s, %d links, %d pages (%d failed): %q, want %q", tc.mode, tc.links, tc.pages, tc.failed, got, tc.want)
		}
	}
}

func TestParseFailOn(t *testing.T) {
	got, err := ParseFailOn("broken, not-found,none")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range audit.Verdicts {
		if got[v] != v.Broken() {
			t.Errorf("%s: %v, want %v", v, got[v], v.Broken())
		}
	}
	var se *SettingsError
	if _, err := ParseFailOn("not-found,nope"); !errors.As(err, &se) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown verdict: %v", err)
	}
	if got, err := ParseFailOn("none"); err != nil || len(got) != 0 {
		t.Errorf("none: %v, %v", got, err)
	}
}

func TestWriteTrapSummary(t *testing.T) {
	var b strings.Builder
	WriteTrapSummary(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no traps: %q", b.String())
	}
	traps := make([]audit.CrawlTrap, 12)
	for i := range traps {
		traps[i] = audit.CrawlTrap{Kind: "query-variants", Cut: 2, Pattern: "/cal?\xff", PageURL: "https://a/"}
	}
	WriteTrapSummary(&b, traps)
	if !strings.HasPrefix(b.String(), "Crawl traps: 12 found, 24 URLs not crawled") || !strings.Contains(b.String(), "… and 2 more") || !strings.Contains(b.String(), "/cal??") {
		t.Errorf("traps:\n%s", b.String())
	}
}

func TestWritePruned(t *testing.T) {
	for _, tc := range []struct {
		ids    []int64
		dryRun bool
		want   string
	}{
		{nil, false, "No run to remove.\n"},
		{[]int64{3, 4}, false, "Removed 2 runs: 3, 4. Target histories are kept.\n"},
		{[]int64{7}, true, "Would remove 1 runs: 7. Target histories are kept.\n"},
	} {
		var b strings.Builder
		WritePruned(&b, tc.ids, tc.dryRun)
		if b.String() != tc.want {
			t.Errorf("%v %v: %q, want %q", tc.ids, tc.dryRun, b.String(), tc.want)
		}
	}
}
