package dashboard

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// unchecked is the verdict shown for a link whose target was not checked.
const unchecked audit.Verdict = "unchecked"

// runData is one run as the tables show it.
type runData struct {
	run      audit.Run
	stats    audit.RunStats
	pages    []*audit.Page
	pageIdx  map[string]int // page URL -> index in pages
	links    []audit.LinkRef
	targets  map[int64]audit.TargetRef
	checks   map[int64]*audit.Check
	findings map[int64][]store.FindingRef // by link ID
	hist     map[int64]audit.TargetHistory
	drift    map[int64]string // worst drift band by target
	// linksOf lists the indexes in links of each target's links, and of
	// each page's links (by page URL).
	linksOf     map[int64][]int
	pageLinks   map[string][]int
	pageBroken  map[string]int
	brokenRows  []brokenRow
	verdictOfLn []audit.Verdict // by index in links
	robustOfLn  []string        // by index in links: robustness filter value
}

// brokenRow is one target to fix, grouped as the report groups them:
// broken and moved targets, and targets linked with a missing #fragment.
type brokenRow struct {
	Target    audit.TargetRef
	Verdict   audit.Verdict
	Class     string
	Check     *audit.Check
	Confirmed bool
	Links     []int // indexes in runData.links
	Pages     int
	Evidence  string
}

var bandRank = map[string]int{audit.BandUnchanged: 1, audit.BandMinor: 2, audit.BandMajor: 3, audit.BandOffTopic: 4}

func (h *handler) runData(ctx context.Context, run *audit.Run) (*runData, error) {
	if d := h.cache.get(run); d != nil {
		return d, nil
	}
	d := &runData{run: *run, pageIdx: map[string]int{}, targets: map[int64]audit.TargetRef{},
		checks: map[int64]*audit.Check{}, findings: map[int64][]store.FindingRef{}, drift: map[int64]string{},
		linksOf: map[int64][]int{}, pageLinks: map[string][]int{}, pageBroken: map[string]int{}}
	wrap := func(what string, err error) error { return fmt.Errorf("load %s of run %d: %w", what, run.ID, err) }
	stats, err := h.db.RunStats(ctx, run.ID)
	if err != nil {
		return nil, wrap("stats", err)
	}
	d.stats = *stats
	if d.pages, err = h.db.Pages(ctx, run.ID); err != nil {
		return nil, wrap("pages", err)
	}
	if d.links, err = h.db.LinkRefs(ctx, run.ID); err != nil {
		return nil, wrap("links", err)
	}
	targets, err := h.db.Targets(ctx, run.ID)
	if err != nil {
		return nil, wrap("targets", err)
	}
	checks, err := h.db.Checks(ctx, run.ID)
	if err != nil {
		return nil, wrap("checks", err)
	}
	fs, err := h.db.RunFindingRefs(ctx, run.ID)
	if err != nil {
		return nil, wrap("findings", err)
	}
	// The store redacts URL passwords when it writes; a database written
	// by an older linkrot may still hold some. Redact once here, before
	// the data is shared by concurrent requests through the cache.
	urls.RedactStrings(&d.run)
	urls.RedactStrings(&d.pages)
	urls.RedactStrings(&d.links)
	urls.RedactStrings(&targets)
	urls.RedactStrings(&checks)
	urls.RedactStrings(&fs)
	for i, p := range d.pages {
		d.pageIdx[p.URL] = i
	}
	for _, t := range targets {
		d.targets[t.ID] = t
	}
	for i := range checks {
		d.checks[checks[i].TargetID] = &checks[i]
	}
	for _, f := range fs {
		d.findings[f.LinkID] = append(d.findings[f.LinkID], f)
	}
	if d.hist, err = h.db.RunHistories(ctx, run.ID); err != nil {
		return nil, wrap("history", err)
	}
	drifts, err := h.db.Drifts(ctx, run.ID)
	if err != nil {
		return nil, wrap("drift", err)
	}
	for _, dr := range drifts {
		if bandRank[dr.Band] > bandRank[d.drift[dr.TargetID]] {
			d.drift[dr.TargetID] = dr.Band
		}
	}
	d.index()
	h.cache.put(run, d)
	return d, nil
}

// linkVerdict is a link's verdict: its finding's (a missing #fragment is
// a finding of the link, not of the target), else its target's check's.
func (d *runData) linkVerdict(l *audit.LinkRef) audit.Verdict {
	if fs := d.findings[l.LinkID]; len(fs) > 0 {
		return fs[0].Verdict
	}
	if c := d.checks[l.TargetID]; c != nil && l.TargetID != 0 {
		return c.Verdict
	}
	return unchecked
}

func (d *runData) index() {
	d.verdictOfLn = make([]audit.Verdict, len(d.links))
	d.robustOfLn = make([]string, len(d.links))
	fragOnly := map[int64]bool{}
	for i := range d.links {
		l := &d.links[i]
		v := d.linkVerdict(l)
		d.verdictOfLn[i] = v
		// LinkRefs and a page's Links are both in document order: the
		// k-th link of a page is its k-th LinkRef.
		d.robustOfLn[i] = "none"
		if pi, ok := d.pageIdx[l.PageURL]; ok {
			if k := len(d.pageLinks[l.PageURL]); k < len(d.pages[pi].Links) {
				d.robustOfLn[i] = robustness(&d.pages[pi].Links[k])
			}
		}
		if l.TargetID != 0 {
			d.linksOf[l.TargetID] = append(d.linksOf[l.TargetID], i)
		}
		d.pageLinks[l.PageURL] = append(d.pageLinks[l.PageURL], i)
		if v.Broken() {
			d.pageBroken[l.PageURL]++
		}
		if v == audit.VerdictFragmentMissing && l.TargetID != 0 {
			fragOnly[l.TargetID] = true
		}
	}
	for id, t := range d.targets {
		c := d.checks[id]
		row := brokenRow{Target: t, Check: c}
		switch {
		case c != nil && (c.Verdict.Broken() || c.Verdict == audit.VerdictMoved):
			row.Verdict = c.Verdict
			row.Links = d.linksOf[id]
			row.Confirmed = d.hist[id].Confirmed
			row.Evidence = statusLine(c)
		case fragOnly[id]:
			row.Verdict = audit.VerdictFragmentMissing
			for _, li := range d.linksOf[id] {
				if d.verdictOfLn[li] == audit.VerdictFragmentMissing {
					row.Links = append(row.Links, li)
				}
			}
			row.Evidence = "the page answers; the #anchor is gone"
		default:
			continue
		}
		row.Class = vclass(row.Verdict)
		pages := map[string]bool{}
		for _, li := range row.Links {
			pages[d.links[li].PageURL] = true
		}
		row.Pages = len(pages)
		d.brokenRows = append(d.brokenRows, row)
	}
	// As the report: most linking pages first, then by URL.
	slices.SortFunc(d.brokenRows, func(a, b brokenRow) int {
		if a.Pages != b.Pages {
			return b.Pages - a.Pages
		}
		return strings.Compare(a.Target.URL, b.Target.URL)
	})
}

// robustness is the report's Robustness filter value of a link.
func robustness(l *audit.Link) string {
	switch r, m := l.Robust != nil, l.Mset != nil; {
	case r && m:
		return "Robust Links and mset"
	case r:
		return "Robust Links"
	case m:
		return "mset"
	}
	return "none"
}

// statusLine is a check's evidence in one line: the status chain or the
// error.
func statusLine(c *audit.Check) string {
	if c == nil {
		return ""
	}
	if c.Status == 0 {
		if c.ErrorClass != "" {
			return c.ErrorClass
		}
		if c.Reason != "" {
			return c.Reason
		}
		return "no response"
	}
	var b strings.Builder
	b.WriteString("HTTP ")
	for _, r := range c.Redirects {
		b.WriteString(strconv.Itoa(r.Status))
		b.WriteString(" → ")
	}
	b.WriteString(strconv.Itoa(c.Status))
	return b.String()
}

// filter is one select of a table's filter form.
type filter struct {
	Key, Label string
	Value      string
	Options    []option
}

type option struct {
	Value, Label string
	Count        int
}

// newFilter builds a filter from the values of the rows, in the order
// given first (order), then alphabetically; extra options come first.
func newFilter(key, label, value string, values []string, order []string, extra ...option) filter {
	counts := map[string]int{}
	for _, v := range values {
		counts[v]++
	}
	f := filter{Key: key, Label: label, Value: value}
	f.Options = append(f.Options, extra...)
	seen := map[string]bool{}
	for _, v := range order {
		if counts[v] > 0 && !seen[v] {
			seen[v] = true
			f.Options = append(f.Options, option{Value: v, Label: v, Count: counts[v]})
		}
	}
	var rest []string
	for v := range counts {
		// "" is the select's "All": a row without a value (a target
		// without a host) is found through All.
		if !seen[v] && v != "" {
			rest = append(rest, v)
		}
	}
	slices.Sort(rest)
	for _, v := range rest {
		f.Options = append(f.Options, option{Value: v, Label: v, Count: counts[v]})
	}
	return f
}

func verdictOrder() []string {
	out := make([]string, 0, len(audit.Verdicts)+1)
	for _, v := range audit.Verdicts {
		out = append(out, string(v))
	}
	return append(out, string(unchecked))
}

// pager is the page of a filtered table that is shown.
type pager struct {
	Total, From, To int
	Prev, Next      string // URLs, "" when none
}

// paginate cuts n rows at the page the query asks for (p=1...).
func paginate(r *url.URL, n int) (from, to int, p pager, err error) {
	page := 1
	if s := r.Query().Get("p"); s != "" {
		page, err = strconv.Atoi(s)
		if err != nil || page < 1 || page > 1_000_000 {
			return 0, 0, p, errBadRequest
		}
	}
	from = min((page-1)*rowsPerPage, n)
	to = min(from+rowsPerPage, n)
	p = pager{Total: n, From: from + 1, To: to}
	if n == 0 {
		p.From = 0
	}
	link := func(page int) string {
		q := r.Query()
		q.Set("p", strconv.Itoa(page))
		return r.Path + "?" + q.Encode()
	}
	if page > 1 {
		p.Prev = link(page - 1)
	}
	if to < n {
		p.Next = link(page + 1)
	}
	return from, to, p, nil
}

// matches reports whether the lower-cased needle is in any of hay.
func matches(needle string, hay ...string) bool {
	if needle == "" {
		return true
	}
	for _, h := range hay {
		if strings.Contains(strings.ToLower(h), needle) {
			return true
		}
	}
	return false
}

func statusClassOf(p *audit.Page) string {
	if p.FetchError != "" || p.Status == 0 {
		return "failed"
	}
	return strconv.Itoa(p.Status/100) + "xx"
}
