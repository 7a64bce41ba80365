package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// Verdicts a link or target can have in a report besides audit.Verdicts.
const (
	// Unchecked is the verdict of a link whose target was not checked
	// (not an absolute URL, or the run's check stage did not reach it).
	Unchecked audit.Verdict = "unchecked"
)

// index joins the parts of a Dataset once, for every output format.
type index struct {
	ds *Dataset
	// err is the error of streaming the links (Dataset.EachLink), which
	// every writer returns.
	err error

	checkByTarget   map[int64]*audit.Check
	targetByID      map[int64]*Target
	targetIdx       map[int64]int   // target ID -> index in ds.Targets
	linksByTarget   map[int64][]int // target ID -> indexes in ds.Links
	linkIdx         map[int64]int   // link ID -> index in ds.Links
	findingsByLink  map[int64][]*audit.Finding
	snapshotsByLink map[int64][]*audit.SnapshotCheck
	mementosByLink  map[int64][]*audit.Memento
	mementosByTgt   map[int64][]*audit.Memento // every memento of a target's links, and target-level ones
	tgtMementos     map[int64][]*audit.Memento // target-level mementos only (LinkID 0)
	driftByLink     map[int64]*audit.Drift
	driftByTarget   map[int64]*audit.Drift // the largest drift of a target, link-level or not
	firstSeenDrift  map[int64]*audit.Drift // target-level drift against the first fingerprint
	targetByURL     map[string]int         // target URL -> index in ds.Targets
	suggestByLink   map[int64]*audit.Suggestion
	historyByTarget map[int64]*TargetHistory
	fixesByTarget   map[string]string // target URL -> replacement
	pagesPerTarget  map[int64]int     // distinct linking pages
	pageIdx         map[string]int    // page URL -> index in ds.Pages, built on first use (github.go)

	// links are the links the report details, which the link indexes
	// above (linksByTarget, linkIdx) and the embedded data refer to: every
	// link of the run (ds.Links itself) unless ds.EachLink streams more
	// than maxDetailLinks, then a subset (see keepLink) and partial is true.
	links     []Link
	partial   bool
	detailCap int // maxDetailLinks, or what HTMLOptions says
	// Counts over every link of the run, streamed or not.
	totalLinks    int
	linksPerTgt   map[int64]int // links per target
	linksPerPage  []int
	brokenPerPage []int
	coverage      coverage
	// snapshotRows counts the snapshot rows of every link (snapshotRows
	// lists those of ix.links); snapStates counts hyperlinks declaring
	// snapshots by their best snapshot's state (see snapshotState).
	snapshotRows int
	snapStates   [5]int
}

// snapshotState ranks a snapshot row for the coverage chart: 1 works, 2
// unchecked, 3 fetch error, 4 broken (0 is "declares none"); the lowest
// of a link's rows is the link's.
func snapshotState(r *snapshotRow) int {
	switch audit.SnapshotVerdict(r.verdict) {
	case audit.SnapshotOK:
		return 1
	case audit.SnapshotVerdict(Unchecked):
		return 2
	case audit.SnapshotError:
		return 3
	}
	return 4
}

// coverage counts hyperlinks (not embedded resources) by robustness data.
type coverage struct {
	hyper, robust, mset, both int
}

// maxDetailLinks bounds the links a report details (embedded in the HTML
// report's data, looked up by the other outputs): a run with more streams
// its links (Dataset.EachLink) and the report keeps those with something
// to show (findings, robustness data, archive results, diagnostics) and
// up to maxLinksPerTarget links of each target that needs fixing; every
// link is still listed by the outputs that list links (the HTML report's
// link pages, JSON, CSV). HTMLOptions.DetailLinks overrides it.
const maxDetailLinks = 50_000

// maxLinksPerTarget bounds the links kept per broken or moved target once
// a report details a subset.
const maxLinksPerTarget = 100

func newIndex(ds *Dataset) *index { return newIndexDetail(ds, maxDetailLinks) }

// newIndexDetail is newIndex detailing at most detail links of a streamed
// run (see maxDetailLinks).
func newIndexDetail(ds *Dataset, detail int) *index {
	ix := &index{
		ds:              ds,
		detailCap:       detail,
		checkByTarget:   make(map[int64]*audit.Check, len(ds.Checks)),
		targetByID:      make(map[int64]*Target, len(ds.Targets)),
		targetIdx:       make(map[int64]int, len(ds.Targets)),
		linksByTarget:   make(map[int64][]int, len(ds.Targets)),
		linkIdx:         map[int64]int{},
		findingsByLink:  map[int64][]*audit.Finding{},
		snapshotsByLink: map[int64][]*audit.SnapshotCheck{},
		mementosByLink:  map[int64][]*audit.Memento{},
		mementosByTgt:   map[int64][]*audit.Memento{},
		tgtMementos:     map[int64][]*audit.Memento{},
		driftByLink:     map[int64]*audit.Drift{},
		driftByTarget:   map[int64]*audit.Drift{},
		firstSeenDrift:  map[int64]*audit.Drift{},
		targetByURL:     make(map[string]int, len(ds.Targets)),
		suggestByLink:   map[int64]*audit.Suggestion{},
		historyByTarget: make(map[int64]*TargetHistory, len(ds.History)),
		fixesByTarget:   map[string]string{},
		pagesPerTarget:  make(map[int64]int, len(ds.Targets)),
	}
	for i := range ds.Checks {
		ix.checkByTarget[ds.Checks[i].TargetID] = &ds.Checks[i]
	}
	for i := range ds.Targets {
		ix.targetByID[ds.Targets[i].ID] = &ds.Targets[i]
		ix.targetIdx[ds.Targets[i].ID] = i
		if _, ok := ix.targetByURL[ds.Targets[i].URL]; !ok {
			ix.targetByURL[ds.Targets[i].URL] = i
		}
	}
	for i := range ds.Findings {
		f := &ds.Findings[i]
		if f.LinkID != 0 {
			ix.findingsByLink[f.LinkID] = append(ix.findingsByLink[f.LinkID], f)
		}
	}
	for i := range ds.SnapshotChecks {
		s := &ds.SnapshotChecks[i]
		ix.snapshotsByLink[s.LinkID] = append(ix.snapshotsByLink[s.LinkID], s)
	}
	for i := range ds.Mementos {
		m := &ds.Mementos[i]
		if m.LinkID != 0 {
			ix.mementosByLink[m.LinkID] = append(ix.mementosByLink[m.LinkID], m)
		} else if m.TargetID != 0 {
			ix.tgtMementos[m.TargetID] = append(ix.tgtMementos[m.TargetID], m)
		}
		if m.TargetID != 0 {
			ix.mementosByTgt[m.TargetID] = append(ix.mementosByTgt[m.TargetID], m)
		}
	}
	for i := range ds.Drifts {
		d := &ds.Drifts[i]
		if d.LinkID != 0 {
			if old := ix.driftByLink[d.LinkID]; old == nil || driftRank(d) > driftRank(old) {
				ix.driftByLink[d.LinkID] = d
			}
		} else if d.Kind == driftFirstSeen {
			if old := ix.firstSeenDrift[d.TargetID]; old == nil || driftRank(d) > driftRank(old) {
				ix.firstSeenDrift[d.TargetID] = d
			}
		}
		if old := ix.driftByTarget[d.TargetID]; old == nil || driftRank(d) > driftRank(old) {
			ix.driftByTarget[d.TargetID] = d
		}
	}
	for i := range ds.Suggestions {
		s := &ds.Suggestions[i]
		ix.suggestByLink[s.LinkID] = s
	}
	for i := range ds.History {
		ix.historyByTarget[ds.History[i].TargetID] = &ds.History[i]
	}
	for _, m := range ds.Fixes {
		if _, ok := ix.fixesByTarget[m.Target]; !ok {
			ix.fixesByTarget[m.Target] = m.Replacement
		}
	}
	ix.scanLinks()
	return ix
}

// eachLink calls fn for every link of the run in order: ds.Links, or what
// ds.EachLink streams.
func (ix *index) eachLink(fn func(*Link) error) error {
	if ix.ds.EachLink != nil {
		return ix.ds.EachLink(fn)
	}
	for i := range ix.ds.Links {
		if err := fn(&ix.ds.Links[i]); err != nil {
			return err
		}
	}
	return nil
}

// scanLinks goes over every link once: the counts per page and target,
// the robustness coverage, and the links the report details (ix.links).
func (ix *index) scanLinks() {
	ds := ix.ds
	ix.linksPerTgt = make(map[int64]int, len(ds.Targets))
	ix.linksPerPage = make([]int, len(ds.Pages))
	ix.brokenPerPage = make([]int, len(ds.Pages))
	lastPage := map[int64]int{}
	streamed := ds.EachLink != nil
	keptPerTarget := map[int64]int{}
	var snaps []snapshotRow
	err := ix.eachLink(func(l *Link) error {
		ix.totalLinks++
		snaps = ix.linkSnapshotRows(snaps[:0], -1, l)
		ix.snapshotRows += len(snaps)
		if len(snaps) > 0 && !l.Resource {
			best := 4
			for i := range snaps {
				best = min(best, snapshotState(&snaps[i]))
			}
			ix.snapStates[best]++
		}
		if l.TargetID != 0 {
			ix.linksPerTgt[l.TargetID]++
			if p, ok := lastPage[l.TargetID]; !ok || p != l.Page {
				// Links are in page order: a new page for this target.
				ix.pagesPerTarget[l.TargetID]++
				lastPage[l.TargetID] = l.Page
			}
		}
		v := ix.linkVerdict(l)
		if l.Page >= 0 && l.Page < len(ds.Pages) {
			ix.linksPerPage[l.Page]++
			if v.Broken() {
				ix.brokenPerPage[l.Page]++
			}
		}
		if !l.Resource {
			ix.coverage.hyper++
			switch {
			case l.Robust != nil && l.Mset != nil:
				ix.coverage.both++
			case l.Robust != nil:
				ix.coverage.robust++
			case l.Mset != nil:
				ix.coverage.mset++
			}
		}
		if !streamed {
			return nil
		}
		if !ix.partial && len(ix.links) < ix.detailCap {
			ix.links = append(ix.links, *l)
			return nil
		}
		if !ix.partial {
			// Too many to detail: keep those worth it, from now on too.
			ix.partial = true
			kept := ix.links[:0]
			for i := range ix.links {
				if ix.keepLink(&ix.links[i], keptPerTarget) {
					kept = append(kept, ix.links[i])
				}
			}
			clear(ix.links[len(kept):])
			ix.links = slices.Clip(kept)
		}
		if ix.keepLink(l, keptPerTarget) {
			ix.links = append(ix.links, *l)
		}
		return nil
	})
	if err != nil {
		ix.err = err
	}
	if !streamed {
		ix.links = ds.Links
	}
	for i := range ix.links {
		l := &ix.links[i]
		ix.linkIdx[l.ID] = i
		if l.TargetID != 0 {
			ix.linksByTarget[l.TargetID] = append(ix.linksByTarget[l.TargetID], i)
		}
	}
}

// keepLink reports whether a report detailing a subset of the links keeps
// l: a link with findings always (the findings are in memory already);
// one with robustness data, archive results, a suggestion or diagnostics,
// or one of the first maxLinksPerTarget links to a target that needs
// fixing, while fewer than maxDetailLinks are kept.
func (ix *index) keepLink(l *Link, perTarget map[int64]int) bool {
	if len(ix.findingsByLink[l.ID]) > 0 {
		perTarget[l.TargetID]++
		return true
	}
	if len(ix.links) >= ix.detailCap {
		return false
	}
	if l.Robust != nil || l.Mset != nil || len(l.Diagnostics) > 0 || len(ix.snapshotsByLink[l.ID]) > 0 ||
		len(ix.mementosByLink[l.ID]) > 0 || ix.driftByLink[l.ID] != nil || ix.suggestByLink[l.ID] != nil {
		return true
	}
	if c := ix.checkByTarget[l.TargetID]; c != nil && (c.Verdict.Broken() || c.Verdict == audit.VerdictMoved) &&
		perTarget[l.TargetID] < maxLinksPerTarget {
		perTarget[l.TargetID]++
		return true
	}
	return false
}

// linkVerdict is the verdict of one link: an invalid URL or a missing
// fragment is the link's own; otherwise it is its target's, or Unchecked.
func (ix *index) linkVerdict(l *Link) audit.Verdict {
	for _, f := range ix.findingsByLink[l.ID] {
		if f.Verdict == audit.VerdictFragmentMissing || f.Verdict == audit.VerdictInvalidURL {
			return f.Verdict
		}
	}
	if c := ix.checkByTarget[l.TargetID]; c != nil {
		return c.Verdict
	}
	return Unchecked
}

// nearestMemento returns the best memento found for a link: a
// representative one first, then the smallest distance. Only the link's own
// lookups count (another link to the same target asked for another
// datetime); failing those, a target-level memento (LinkID 0), and then
// linkScope is false. It returns nil when no archive had one.
func (ix *index) nearestMemento(l *Link) (m *audit.Memento, linkScope bool) {
	if m := bestMemento(ix.mementosByLink[l.ID]); m != nil {
		return m, true
	}
	if l.TargetID != 0 {
		return bestMemento(ix.tgtMementos[l.TargetID]), false
	}
	return nil, false
}

// targetMemento is nearestMemento for a target as a whole.
func (ix *index) targetMemento(targetID int64) *audit.Memento {
	if m := bestMemento(ix.mementosByTgt[targetID]); m != nil {
		return m
	}
	for _, li := range ix.linksByTarget[targetID] {
		if m := bestMemento(ix.mementosByLink[ix.links[li].ID]); m != nil {
			return m
		}
	}
	return nil
}

func bestMemento(ms []*audit.Memento) *audit.Memento {
	var best *audit.Memento
	for _, m := range ms {
		if m.URL == "" {
			continue
		}
		if best == nil || (m.Representative && !best.Representative) ||
			(m.Representative == best.Representative && m.Distance < best.Distance) {
			best = m
		}
	}
	return best
}

// bandOrder ranks drift bands from no change to a different page.
var bandOrder = map[string]int{audit.BandUnchanged: 1, audit.BandMinor: 2, audit.BandMajor: 3, audit.BandOffTopic: 4}

// driftRank orders drifts by how far the page moved: band first, then
// SimHash distance, then falling cosine similarity.
func driftRank(d *audit.Drift) float64 {
	r := float64(bandOrder[d.Band])*1000 + float64(d.SimHashDistance)
	if d.TextMeasured && d.Cosine == d.Cosine {
		r += 1 - d.Cosine
	}
	return r
}

// drifted reports whether a band counts as drifted in summaries.
func drifted(band string) bool { return band == audit.BandMajor || band == audit.BandOffTopic }

// brokenTargets returns the indexes in ds.Targets of the targets that need
// fixing (a broken verdict, moved, or linked with a missing #fragment),
// most widely linked first, then by URL.
func (ix *index) brokenTargets() []int {
	var out []int
	for i, t := range ix.ds.Targets {
		c := ix.checkByTarget[t.ID]
		if c != nil && (c.Verdict.Broken() || c.Verdict == audit.VerdictMoved) {
			out = append(out, i)
			continue
		}
		for _, li := range ix.linksByTarget[t.ID] {
			if ix.linkVerdict(&ix.links[li]) == audit.VerdictFragmentMissing {
				out = append(out, i)
				break
			}
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		ta, tb := ix.ds.Targets[a], ix.ds.Targets[b]
		return cmp.Or(
			cmp.Compare(ix.pagesPerTarget[tb.ID], ix.pagesPerTarget[ta.ID]),
			cmp.Compare(ta.URL, tb.URL))
	})
	return out
}

// invalidURLs counts the run's invalid-url findings (links, not targets).
func (ix *index) invalidURLs() int {
	n := 0
	for i := range ix.ds.Findings {
		if ix.ds.Findings[i].Verdict == audit.VerdictInvalidURL {
			n++
		}
	}
	return n
}

// verdictCounts counts the run's targets per verdict.
func (ix *index) verdictCounts() map[audit.Verdict]int {
	out := map[audit.Verdict]int{}
	for _, c := range ix.ds.Checks {
		out[c.Verdict]++
	}
	return out
}

// linkable reports whether u may be rendered as a live link: only http,
// https and mailto URLs with no control characters are.
func linkable(u string) bool {
	if u == "" || strings.ContainsFunc(u, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return false
	}
	// The one URL parser judges (a URL net/url rejects, "/a%zz", is a
	// link like any other).
	p, err := urls.ParseURL(u)
	if err != nil {
		return false
	}
	switch p.Scheme() {
	case "http", "https":
		return p.Hostname() != ""
	case "mailto":
		return true
	}
	return false
}

// redirectChain renders a check's redirect chain as "301 A -> 200 B".
func redirectChain(c *audit.Check) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range c.Redirects {
		b.WriteString(itoa(r.Status))
		b.WriteByte(' ')
		b.WriteString(r.From)
		b.WriteString(" -> ")
	}
	if c.Status != 0 || len(c.Redirects) > 0 {
		b.WriteString(itoa(c.Status))
		b.WriteByte(' ')
		if c.FinalURL != "" {
			b.WriteString(c.FinalURL)
		} else {
			b.WriteString(c.URL)
		}
	}
	return b.String()
}

// Drift kinds (audit.Drift.Kind).
const (
	driftMemento   = "memento"
	driftFirstSeen = "first-seen"
)
