package linkrot_test

import (
	"context"
	"reflect"
	"sort"
	"testing"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
)

// TestDeriveFindings_FragmentByKind: a #fragment naming no anchor of its
// target is a finding for the links to pages (a, iframe, cite, meta
// refresh) and not for embedded resources, whose fragments are media
// fragments or sprite ids (audit.LinkRules).
func TestDeriveFindings_FragmentByKind(t *testing.T) {
	ctx := context.Background()
	store, run := mustOpen(t, "https://example.org/")
	const target = "https://example.org/t"
	link := func(element, attr, frag string) audit.Link {
		return audit.Link{Element: element, Attr: attr, Href: target + "#" + frag, RawHref: "t#" + frag,
			Resource: element != "a" && element != "blockquote" && element != "meta"}
	}
	page := &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/", Links: []audit.Link{
		link("a", "href", "a-missing"), link("a", "href", "here"),
		link("iframe", "src", "iframe-missing"), link("blockquote", "cite", "cite-missing"),
		link("meta", "content", "refresh-missing"),
		link("video", "src", "t=10"), link("video", "poster", "p"), link("img", "srcset", "icon"),
		link("source", "src", "t=1,2"), link("object", "data", "page=2"), link("link", "href", "x"),
	}}, Status: 200}
	if err := store.SavePages(ctx, run.ID, []*audit.Page{page}); err != nil {
		t.Fatal(err)
	}
	if missing, err := store.SaveChecksByURL(ctx, []audit.Check{{RunID: run.ID, URL: target, Verdict: audit.VerdictOK, Status: 200}}); err != nil || len(missing) != 0 {
		t.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
	}
	counts, err := linkrot.DeriveFindings(ctx, store, run, map[string][]string{target: {"here"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	findings, err := store.Findings(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		if f.Verdict != audit.VerdictFragmentMissing {
			t.Errorf("finding %+v", f)
		}
		got = append(got, f.Fragment)
	}
	sort.Strings(got)
	want := []string{"a-missing", "cite-missing", "iframe-missing", "refresh-missing"}
	if !reflect.DeepEqual(got, want) || counts.Fragments != len(want) {
		t.Errorf("fragment findings %q (counted %d), want %q", got, counts.Fragments, want)
	}
}
