package report

// Crawl traps in every output. A crawl trap (audit.CrawlTrap) is a finding
// of kind crawl-trap on the page where the trap starts: the HTML overview
// lists them, JSON has a crawl_traps array, CSV adds the finding to the
// findings cell of the start page's link into the trap, JUnit a skipped test
// case per trap (its URLs were not crawled), SARIF a warning of rule
// crawl-trap located on the page, Markdown a table. Outputs of a run
// without traps are unchanged.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// trapView is one crawl trap as the HTML overview shows it.
type trapView struct {
	Kind, Pattern, Page, Example, Message string
	Cut                                   int64
	Limit                                 int
}

func trapViews(ds *Dataset) []trapView {
	out := make([]trapView, len(ds.CrawlTraps))
	for i := range ds.CrawlTraps {
		t := &ds.CrawlTraps[i]
		out[i] = trapView{Kind: string(t.Kind), Pattern: t.Pattern, Page: t.PageURL, Example: t.Example,
			Message: t.Message(), Cut: t.Cut, Limit: t.Limit}
	}
	return out
}

// trapLinks returns, per trap (index into ds.CrawlTraps), the link of the
// trap's page that leads into the trap: the one whose URL is the trap's
// example (the first URL cut), else the first whose URL starts with the
// pattern's literal prefix, else the page's first link; 0 when the page
// has none.
func trapLinks(ds *Dataset) []int64 {
	if len(ds.CrawlTraps) == 0 {
		return nil
	}
	pageIdx := map[string]int{}
	for i, p := range ds.Pages {
		if _, ok := pageIdx[p.URL]; !ok {
			pageIdx[p.URL] = i
		}
	}
	norm := func(s string) string {
		if n, err := urls.NormalizeURL(s); err == nil {
			return n
		}
		return s
	}
	want := map[int]map[string][]int{} // page → example → traps
	out := make([]int64, len(ds.CrawlTraps))
	for i := range ds.CrawlTraps {
		t := &ds.CrawlTraps[i]
		pi, ok := pageIdx[t.PageURL]
		if !ok {
			continue
		}
		if want[pi] == nil {
			want[pi] = map[string][]int{}
		}
		ex := norm(strings.TrimSuffix(t.Example, "…"))
		want[pi][ex] = append(want[pi][ex], i)
	}
	first := map[int]int64{}
	prefixed := make([]int64, len(ds.CrawlTraps))
	// The links stream when the dataset streams them (Dataset.EachLink):
	// a large run is not held in memory for its traps.
	each := func(fn func(*Link) error) error {
		if ds.EachLink != nil {
			return ds.EachLink(fn)
		}
		for i := range ds.Links {
			if err := fn(&ds.Links[i]); err != nil {
				return err
			}
		}
		return nil
	}
	// A stream error is the writers' to report (index.err, their own pass).
	_ = each(func(l *Link) error {
		m := want[l.Page]
		if m == nil {
			return nil
		}
		if _, ok := first[l.Page]; !ok {
			first[l.Page] = l.ID
		}
		href := l.Href
		if j := strings.IndexByte(href, '#'); j >= 0 {
			href = href[:j]
		}
		for _, ti := range m[norm(href)] {
			if out[ti] == 0 {
				out[ti] = l.ID
			}
		}
		for _, tis := range m {
			for _, ti := range tis {
				if prefixed[ti] == 0 && strings.HasPrefix(href, patternPrefix(ds.CrawlTraps[ti].Pattern)) {
					prefixed[ti] = l.ID
				}
			}
		}
		return nil
	})
	for ti := range out {
		if out[ti] == 0 {
			out[ti] = prefixed[ti]
		}
	}
	for pi, m := range want {
		for _, tis := range m {
			for _, ti := range tis {
				if out[ti] == 0 {
					out[ti] = first[pi]
				}
			}
		}
	}
	return out
}

// patternPrefix is the literal start of a trap pattern: up to its first
// "(", "?…" or "…".
func patternPrefix(p string) string {
	if i := strings.IndexAny(p, "(…"); i >= 0 {
		p = p[:i]
	}
	return strings.TrimSuffix(p, "?")
}

// trapsByLink indexes the traps' messages by the link that hit the guard
// (CSV findings cell).
func trapsByLink(ds *Dataset) map[int64][]string {
	links := trapLinks(ds)
	out := map[int64][]string{}
	for i, id := range links {
		if id != 0 {
			out[id] = append(out[id], audit.FindingCrawlTrap+": "+ds.CrawlTraps[i].Message())
		}
	}
	return out
}

// jsonTrap is one element of the JSON output's crawl_traps array.
type jsonTrap struct {
	Kind    string `json:"kind"`
	Trap    string `json:"trap"`
	Pattern string `json:"pattern"`
	PageURL string `json:"page_url"`
	LinkID  *int64 `json:"link_id"`
	Example string `json:"example"`
	Cut     int64  `json:"cut"`
	Limit   int    `json:"limit"`
	Message string `json:"message"`
}

// writeJSONTraps writes the crawl_traps array when the run has traps.
func writeJSONTraps(o *jsonOut, ds *Dataset) {
	if len(ds.CrawlTraps) == 0 {
		return
	}
	links := trapLinks(ds)
	o.array("crawl_traps", len(ds.CrawlTraps), func(i int) any {
		t := &ds.CrawlTraps[i]
		jt := jsonTrap{Kind: audit.FindingCrawlTrap, Trap: string(t.Kind), Pattern: t.Pattern, PageURL: t.PageURL,
			Example: t.Example, Cut: t.Cut, Limit: t.Limit, Message: t.Message()}
		if links[i] != 0 {
			id := links[i]
			jt.LinkID = &id
		}
		return jt
	})
}

// trapRule is the SARIF rule of crawl traps.
var trapRule = sarifRule{ID: audit.FindingCrawlTrap, Name: "CrawlTrap",
	ShortDescription: sarifMessage{"Crawl trap: URLs the crawl's guards did not follow"}, DefaultConfiguration: sarifConfig{"warning"}}

// junitTrapCases returns a skipped test case per crawl trap.
func junitTrapCases(ds *Dataset) []junitCase {
	var out []junitCase
	for i := range ds.CrawlTraps {
		t := &ds.CrawlTraps[i]
		out = append(out, junitCase{Name: string(t.Kind) + " " + t.Pattern + " on " + t.PageURL, Classname: audit.FindingCrawlTrap,
			Time: "0.000", Skipped: &junitSkipped{Message: t.Message() + "; first URL cut: " + t.Example}})
	}
	return out
}

// writeMarkdownTraps writes the crawl traps table (nothing without traps).
func writeMarkdownTraps(b *strings.Builder, ds *Dataset) {
	if len(ds.CrawlTraps) == 0 {
		return
	}
	fmt.Fprintf(b, "### Crawl traps\n\n%s traps cut the crawl; their URLs were not crawled.\n\n| Trap | URLs cut | Pattern | Starts on |\n|---|---:|---|---|\n", fmtInt(len(ds.CrawlTraps)))
	for i := range ds.CrawlTraps {
		if i == 10 {
			fmt.Fprintf(b, "\n…and %s more in the full report.\n", fmtInt(len(ds.CrawlTraps)-10))
			break
		}
		t := &ds.CrawlTraps[i]
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdEscape(string(t.Kind)), strconv.FormatInt(t.Cut, 10), mdEscape(t.Pattern), mdEscape(t.PageURL))
	}
	b.WriteString("\n")
}
