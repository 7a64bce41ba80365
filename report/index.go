package report

import (
	"cmp"
	"net/url"
	"slices"
	"strings"

	"github.com/linkrot/linkrot/audit"
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
}

func newIndex(ds *Dataset) *index {
	ix := &index{
		ds:              ds,
		checkByTarget:   make(map[int64]*audit.Check, len(ds.Checks)),
		targetByID:      make(map[int64]*Target, len(ds.Targets)),
		targetIdx:       make(map[int64]int, len(ds.Targets)),
		linksByTarget:   make(map[int64][]int, len(ds.Targets)),
		linkIdx:         make(map[int64]int, len(ds.Links)),
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
	lastPage := map[int64]int{}
	for i := range ds.Links {
		l := &ds.Links[i]
		ix.linkIdx[l.ID] = i
		if l.TargetID != 0 {
			ix.linksByTarget[l.TargetID] = append(ix.linksByTarget[l.TargetID], i)
			if p, ok := lastPage[l.TargetID]; !ok || p != l.Page {
				// Links are in page order: a new page for this target.
				ix.pagesPerTarget[l.TargetID]++
				lastPage[l.TargetID] = l.Page
			}
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
	return ix
}

// linkVerdict is the verdict of one link: a missing fragment is the link's
// own; otherwise it is its target's, or Unchecked.
func (ix *index) linkVerdict(l *Link) audit.Verdict {
	for _, f := range ix.findingsByLink[l.ID] {
		if f.Verdict == audit.VerdictFragmentMissing {
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
		if m := bestMemento(ix.mementosByLink[ix.ds.Links[li].ID]); m != nil {
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
			if ix.linkVerdict(&ix.ds.Links[li]) == audit.VerdictFragmentMissing {
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
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch strings.ToLower(p.Scheme) {
	case "http", "https":
		return p.Host != ""
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
