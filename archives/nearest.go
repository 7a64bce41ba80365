package archives

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
)

// want is a link's nearest-memento question: which resource, at which date.
type want struct {
	uriR string
	at   time.Time
	from string // "versiondate", "mset", "first-seen"
}

type lookupKey struct {
	uriR string
	at   int64
}

// lookup is one archive's answer to one question.
type lookup struct {
	archive   string
	memento   audit.Memento // URL, Datetime, Distance, Representative, Count, First, Last, Error
	found     bool
	noMemento bool // the archive has none (not an error)
	skipped   bool // not asked (private resource, public archive)
}

// near is a link's answers across archives.
type near struct {
	want    want
	lookups []lookup
	best    int // index into lookups of the nearest memento, -1 when none
}

// bestMemento returns the nearest memento across archives, or nil.
func (n *near) bestMemento() *audit.Memento {
	if n == nil || n.best < 0 {
		return nil
	}
	return &n.lookups[n.best].memento
}

// saveWanted reports whether to ask archive name to capture the link's
// resource: no archive found a memento of it, and that archive itself
// answered that it has none. What other archives answered (errors: an
// aggregator down, a rate limit) does not matter; a lookup that archive
// skipped (a private resource and a public archive) or failed is no
// answer, and sends nothing.
func (n *near) saveWanted(name string) bool {
	if n == nil {
		return false
	}
	none := false
	for _, l := range n.lookups {
		if l.found {
			return false
		}
		if l.archive == name && l.noMemento {
			none = true
		}
	}
	return none
}

// suggestible reports whether l is a hyperlink to another site without
// robustness data: a candidate for a "no-robustness-data" suggestion.
func (s *stage) suggestible(l *stageLink) bool {
	return !l.Link.Resource && (l.Link.Element == "a" || l.Link.Element == "area") &&
		l.Link.Robust == nil && l.Link.Mset == nil && len(l.PWIDs) == 0 &&
		isHTTP(l.TargetURL) && s.external(l.TargetURL)
}

// wantOf decides whether and what to ask the archives for l: its
// versiondate, else its first mset temporal reference, else, for a broken
// target or a suggestible live one, the date linkrot first saw the link
// (the same page linking to the same target; the target's first sight
// when that is unknown).
func (s *stage) wantOf(l *stageLink) (want, bool) {
	if w, ok := versionWant(l); ok {
		return w, true
	}
	if !isHTTP(l.TargetURL) {
		return want{}, false
	}
	if m := l.Link.Mset; m != nil && len(m.Temporal) > 0 && !m.Temporal[0].IsZero() {
		return want{uriR: l.TargetURL, at: m.Temporal[0].Time, from: "mset"}, true
	}
	c := s.in.Checks[l.TargetID]
	seen := s.in.LinkFirstSeen[l.ID]
	if seen.IsZero() {
		seen = s.in.FirstSeen[l.TargetID]
	}
	if seen.IsZero() {
		return want{}, false
	}
	if broken(c) || alive(c) && s.suggestible(l) {
		return want{uriR: l.TargetURL, at: seen, from: "first-seen"}, true
	}
	return want{}, false
}

// versionWant is the question of a link with a data-versiondate: its
// original (expectedOriginal) at that date.
func versionWant(l *stageLink) (want, bool) {
	if r := l.Link.Robust; r != nil && !r.VersionDate.IsZero() {
		u := expectedOriginal(l)
		if isHTTP(u) {
			return want{uriR: normalize(u), at: r.VersionDate.Time, from: "versiondate"}, true
		}
	}
	return want{}, false
}

// nearest asks every archive for each distinct (resource, date) question
// once, and returns each link's answers by link ID. Questions answered
// before the chunks (runState.answered) are not asked again.
func (s *stage) nearest(ctx context.Context) map[int64]*near {
	wants := map[int64]want{}
	var keys []lookupKey
	seen := map[lookupKey]want{}
	for i := range s.in.Links {
		l := &s.in.Links[i]
		w, ok := s.wantOf(l)
		if !ok {
			continue
		}
		wants[l.ID] = w
		k := lookupKey{w.uriR, w.at.Unix()}
		if _, ok := seen[k]; ok {
			continue
		}
		seen[k] = w
		if _, ok := s.rs.answered[k]; !ok {
			keys = append(keys, k)
		}
	}
	byKey := s.ask(ctx, keys, seen)
	if ctx.Err() != nil {
		return nil
	}
	for k, ls := range s.rs.answered {
		if _, ok := seen[k]; ok {
			byKey[k] = ls
		}
	}
	out := map[int64]*near{}
	for i := range s.in.Links {
		l := &s.in.Links[i]
		w, ok := wants[l.ID]
		if !ok {
			continue
		}
		n := &near{want: w, best: -1}
		n.lookups = append(n.lookups, byKey[lookupKey{w.uriR, w.at.Unix()}]...)
		for k := range n.lookups {
			lk := &n.lookups[k]
			if lk.found && (n.best < 0 || lk.memento.Distance < n.lookups[n.best].memento.Distance) {
				n.best = k
			}
		}
		out[l.ID] = n
		s.count(func(sum *Summary) {
			sum.LinksLookedUp++
			if b := n.bestMemento(); b != nil {
				sum.LinksWithMemento++
				if b.Representative {
					sum.LinksRepresentative++
				}
			}
			for _, lk := range n.lookups {
				if lk.memento.Status == audit.LookupFailed {
					sum.LookupErrors++
					sum.LookupFailed[lk.archive]++
				}
				if lk.memento.Reused {
					sum.LookupsReused++
				}
			}
		})
		if s.sink.Memento == nil {
			continue
		}
		for k, lk := range n.lookups {
			m := lk.memento
			m.RunID, m.LinkID, m.TargetID = s.in.RunID, l.ID, l.TargetID
			// The link's own reason to ask (links sharing a question may
			// have different ones).
			m.WantedFrom = w.from
			m.Nearest = k == n.best
			s.sink.Memento(m)
		}
	}
	return out
}

// ask asks every archive each question of keys (wants gives the
// question of each key) and returns the answers by key, one per archive
// in the order of Options.Archives (nil when ctx is cancelled).
func (s *stage) ask(ctx context.Context, keys []lookupKey, wants map[lookupKey]want) map[lookupKey][]lookup {
	type job struct {
		key     lookupKey
		w       want
		archive memento.Archive
	}
	var jobs []job
	for _, k := range keys {
		for _, a := range s.o.Archives {
			jobs = append(jobs, job{key: k, w: wants[k], archive: a})
		}
	}
	known := s.rs.known
	results := make([]lookup, len(jobs))
	// Each archive gets its own workers, so a slow archive's budget never
	// holds up a fast one's: the archives answer in parallel, each at its
	// own pace, and the stage takes as long as the slowest.
	var wg sync.WaitGroup
	for _, a := range s.o.Archives {
		var idx []int
		for i, j := range jobs {
			if j.archive.Name == a.Name {
				idx = append(idx, i)
			}
		}
		wg.Go(func() {
			s.parallel(ctx, len(idx), func(n int) {
				i := idx[n]
				if m, ok := known[knownKey{jobs[i].archive.Name, jobs[i].w.uriR, jobs[i].w.at.Unix()}]; ok {
					results[i] = reuse(m, jobs[i].w)
					return
				}
				if r, ok := s.o.pre.take(ctx, jobs[i].archive, jobs[i].w); ok {
					results[i] = r // asked ahead, while the checks ran
					return
				}
				results[i] = s.lookup(ctx, jobs[i].archive, jobs[i].w)
			})
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	byKey := make(map[lookupKey][]lookup, len(keys))
	for i, j := range jobs {
		byKey[j.key] = append(byKey[j.key], results[i])
	}
	return byKey
}

// lookup asks one archive for the memento of w.uriR nearest to w.at.
func (s *stage) lookup(ctx context.Context, a memento.Archive, w want) lookup {
	res := s.lookupOnce(ctx, a, w)
	m := &res.memento
	m.URIR = w.uriR
	switch {
	case res.found:
		m.Status = audit.LookupFound
	case res.noMemento:
		m.Status = audit.LookupNoMemento
	case res.skipped:
		m.Status = audit.LookupNotAsked
	default:
		m.Status = audit.LookupFailed
		if m.Error == "" {
			m.Error = "lookup failed"
		}
	}
	return res
}

// knownKey identifies a lookup across runs.
type knownKey struct {
	archive string
	uriR    string
	at      int64
}

// knownLookups indexes Options.Known: found and no-memento answers only
// (a failed lookup is asked again), the newest per question.
func (s *stage) knownLookups() map[knownKey]audit.Memento {
	out := map[knownKey]audit.Memento{}
	for _, m := range s.o.Known {
		if m.Status != audit.LookupFound && m.Status != audit.LookupNoMemento || m.URIR == "" {
			continue
		}
		k := knownKey{m.Archive, m.URIR, m.Wanted.Unix()}
		if old, ok := out[k]; !ok || m.CheckedAt.After(old.CheckedAt) {
			out[k] = m
		}
	}
	return out
}

// reuse turns an earlier run's answer into this run's lookup.
func reuse(m audit.Memento, w want) lookup {
	res := lookup{archive: m.Archive}
	r := &res.memento
	r.Archive, r.Wanted, r.WantedFrom, r.URIR = m.Archive, w.at.UTC(), w.from, w.uriR
	r.URL, r.Datetime, r.Distance, r.Representative = m.URL, m.Datetime, m.Distance, m.Representative
	r.Count, r.First, r.Last, r.Error, r.CheckedAt = m.Count, m.First, m.Last, m.Error, m.CheckedAt
	r.Status, r.Reused = m.Status, true
	res.found = m.Status == audit.LookupFound
	res.noMemento = m.Status == audit.LookupNoMemento
	return res
}

func (s *stage) lookupOnce(ctx context.Context, a memento.Archive, w want) lookup {
	res := lookup{archive: a.Name}
	m := &res.memento
	m.Archive, m.Wanted, m.WantedFrom = a.Name, w.at.UTC(), w.from
	if localHost(hostOf(w.uriR)) && !a.Local && !localHost(hostOf(a.TimeGate)) {
		// An intranet or loopback URL is in no public archive, and asking
		// one would leak it. A local collection leaks nothing.
		res.skipped = true
		m.Error = "not asked: a private or loopback address is not sent to a public archive"
		m.CheckedAt = s.o.Now().UTC()
		return res
	}
	var cands []memento.Candidate
	timemapFailed := false
	neg, err := s.o.Client.Negotiate(ctx, a, w.uriR, w.at)
	switch {
	case err == nil:
		cands = append(cands, neg.Memento)
		cands = append(cands, neg.Candidates...)
	case errors.Is(err, memento.ErrNoMemento):
		res.noMemento = true
		m.Error = "no memento"
	default:
		m.Error = errText(err)
	}
	if s.o.TimeMaps && a.TimeMap != "" {
		tm, terr := s.o.Client.TimeMap(ctx, a, w.uriR)
		switch {
		case terr == nil:
			m.Count = len(tm.Mementos)
			if len(tm.Mementos) > 0 {
				m.First = tm.Mementos[0].Datetime
				m.Last = tm.Mementos[len(tm.Mementos)-1].Datetime
			}
			cands = append(cands, tm.Mementos...)
		case errors.Is(terr, memento.ErrNoMemento):
		default:
			m.Error = joinReason(m.Error, "timemap: "+errText(terr))
			timemapFailed = true
		}
	}
	m.CheckedAt = s.o.Now().UTC()
	// Prefer the memento closest to the wanted date, from whatever the
	// archive listed, not the one its TimeGate happened to pick.
	best, ok := memento.Nearest(cands, w.at)
	if !ok {
		if timemapFailed {
			// "No memento" from the TimeGate is no answer when the TimeMap
			// could not be read: the lookup failed.
			res.noMemento = false
		}
		return res
	}
	res.found, res.noMemento = true, false
	if m.Error == "no memento" {
		m.Error = ""
	}
	m.URL = best.URL
	m.Datetime = best.Datetime.UTC()
	m.Distance = absDuration(best.Datetime.Sub(w.at))
	m.Representative = m.Distance <= s.o.MaxDistance
	return res
}

// localHost reports whether host (host[:port]) names this machine or a
// private network: localhost names, and loopback, private, link-local or
// unique-local address literals.
func localHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()
}
