package archives

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/drift/textsim"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/urls"
)

// livePage is a live page fetched again by the stage: its main text (for
// drift) and the identifiers it declares.
type livePage struct {
	url         string // the URL fetched
	final       string
	status      int
	contentType string
	text        string
	html        bool // a 2xx HTML page whose body was read
	identifiers []audit.Identifier
	err         error
	withBody    bool // fetched with its body
}

// liveSet is what liveFetch fetched: pages by the URL fetched, and the
// URL fetched for each external live target (identifiers).
type liveSet struct {
	pages  map[string]*livePage
	target map[int64]string
}

// targetPage returns the page fetched for target id, or nil.
func (ls *liveSet) targetPage(id int64) *livePage {
	if ls == nil {
		return nil
	}
	return ls.pages[ls.target[id]]
}

// driftLive returns the URL whose current state memento drift compares
// with link l's memento, and the target the measurement is stored under:
// its data-originalurl when that names another resource than its href
// (robust-links §4.2: href a snapshot, data-originalurl the live page),
// fetched by the stage whatever the live check found, stored under the
// original's target when a link of the run points there, else under the
// link's; otherwise the link's target, when its check found live HTML
// (fingerprinted). ok is false when there is no live side or no target
// to store the measurement under.
func (s *stage) driftLive(l *stageLink) (u string, target int64, ok bool) {
	if r := l.Link.Robust; r != nil && isHTTP(r.OriginalURL) && !sameResource(r.OriginalURL, l.TargetURL) {
		u, target = normalize(r.OriginalURL), l.TargetID
		if id := s.targetOf(u); id != 0 {
			target = id
		}
		return u, target, target != 0
	}
	if c := s.in.Checks[l.TargetID]; alive(c) && c.SHA256 != "" && l.TargetID != 0 {
		return checkURL(c), l.TargetID, true
	}
	return "", 0, false
}

// targetOf returns the ID of the run's target with normalized URL u (0:
// none): from the chunk's links, else from runState.targetIDs.
func (s *stage) targetOf(u string) int64 {
	s.targetsOnce.Do(func() {
		s.targets = map[string]int64{}
		for i := range s.in.Links {
			if l := &s.in.Links[i]; l.TargetURL != "" && l.TargetID != 0 {
				s.targets[l.TargetURL] = l.TargetID
			}
		}
	})
	if id := s.targets[u]; id != 0 {
		return id
	}
	return s.rs.targetIDs[u] // a target of another chunk
}

// driftLinks returns the links that get memento drift: a representative
// memento and a live side (driftLive).
func (s *stage) driftLinks(nr map[int64]*near) []*stageLink {
	var out []*stageLink
	for i := range s.in.Links {
		l := &s.in.Links[i]
		b := nr[l.ID].bestMemento()
		if _, _, ok := s.driftLive(l); ok && b != nil && b.Representative {
			out = append(out, l)
		}
	}
	return out
}

// liveFetch fetches, once each, the live pages that drift needs (with
// their bodies) and the live targets on other sites, for the identifiers
// they declare: HTML ones with their bodies (<link> elements), the others
// (PDFs, data sets) for their headers only (Signposting Link headers).
func (s *stage) liveFetch(ctx context.Context, nr map[int64]*near) *liveSet {
	full := map[string]bool{} // URL → body wanted
	for _, l := range s.driftLinks(nr) {
		u, _, _ := s.driftLive(l)
		full[u] = true
	}
	ls := &liveSet{pages: map[string]*livePage{}, target: map[int64]string{}}
	for i := range s.in.Links {
		l := &s.in.Links[i]
		c := s.in.Checks[l.TargetID]
		if !alive(c) || !isHTTP(l.TargetURL) || !s.external(l.TargetURL) {
			continue
		}
		u := checkURL(c)
		ls.target[l.TargetID] = u
		full[u] = full[u] || c.SHA256 != ""
	}
	// A page fetched by an earlier chunk is taken from the run state,
	// unless it was fetched without the body this chunk wants.
	urls := make([]string, 0, len(full))
	for u, body := range full {
		if p := s.rs.live[u]; p != nil && (p.withBody || !body) {
			ls.pages[u] = p
			continue
		}
		urls = append(urls, u)
	}
	slices.Sort(urls)
	pages := make([]*livePage, len(urls))
	s.parallel(ctx, len(urls), func(i int) {
		pages[i] = s.fetchLive(ctx, urls[i], full[urls[i]])
	})
	for i, u := range urls {
		if pages[i] != nil {
			ls.pages[u] = pages[i]
			if ctx.Err() == nil && (s.rs.keepLive == nil || s.rs.keepLive[u]) {
				s.rs.live[u] = pages[i]
			}
		}
	}
	return ls
}

// fetchLive fetches u: headers only unless withBody. Identifiers come
// from the Link header, and from <link> elements of an HTML body.
func (s *stage) fetchLive(ctx context.Context, u string, withBody bool) *livePage {
	p := &livePage{url: u, withBody: withBody}
	maxBody := s.o.MaxBody
	if !withBody {
		maxBody = -1
	}
	resp, _, _, err := s.o.Client.Fetch(ctx, u, maxBody)
	if err != nil {
		p.err = err
		return p
	}
	p.final, p.status = resp.URL.String(), resp.Status
	ct := resp.Header.Get("Content-Type")
	p.contentType = ct
	links, _ := urls.ParseLinkHeader(resp.Header.Values("Link")...)
	for _, l := range urls.ResolveLinks(resp.URL, links) {
		for _, rel := range []string{"identifier", "cite-as"} {
			if l.HasRel(rel) {
				p.identifiers = append(p.identifiers, audit.Identifier{URL: l.URI, Rel: rel, Source: "header"})
			}
		}
	}
	if !withBody || resp.Status < 200 || resp.Status > 299 || !httpx.IsHTML(ct, resp.Body) {
		return p
	}
	body := httpx.DecodeHTML(resp.Body, ct)
	p.html = true
	p.text = textsim.MainText(body)
	if s.o.Identifiers != nil {
		for _, id := range s.o.Identifiers(body, ct, resp.URL, resp.Header) {
			if id.Source == "html" {
				p.identifiers = append(p.identifiers, id)
			}
		}
	}
	return p
}

// unusable says why a live page is no drift measurement's live side, or
// "" when it is one.
func (p *livePage) unusable() string {
	switch {
	case p == nil:
		return "live page not fetched"
	case p.err != nil:
		return "live page: " + errText(p.err)
	case p.status < 200 || p.status > 299:
		return fmt.Sprintf("live page answered status %d", p.status)
	case !p.html:
		ct := p.contentType
		if ct == "" {
			ct = "none"
		}
		return "live page is not HTML (Content-Type " + truncate(ct, 100) + ")"
	}
	return ""
}

// driftKey is one memento drift measurement: a live page against a
// memento.
type driftKey struct {
	live    string
	memento string
	archive string
	uriR    string
	at      time.Time
}

// driftResult is a memento drift measurement made.
type driftResult struct {
	ok      bool
	why     string // when not ok
	raw     string
	note    string
	m       drift.Measures
	refText string
	live    string
}

// mementoDrift compares live pages with their representative mementos,
// fetched in raw mode (Wayback id_) so that banners and rewritten links do
// not count as drift. A measurement that cannot be made is recorded as a
// DriftFailure.
func (s *stage) mementoDrift(ctx context.Context, nr map[int64]*near, live *liveSet) {
	links := s.driftLinks(nr)
	var keys []driftKey
	index := map[driftKey]int{}
	for _, l := range links {
		u, _, _ := s.driftLive(l)
		b := nr[l.ID].bestMemento()
		k := driftKey{u, b.URL, b.Archive, nr[l.ID].want.uriR, b.Datetime}
		if _, ok := index[k]; !ok {
			index[k] = len(keys)
			keys = append(keys, k)
		}
	}
	type result = driftResult
	results := make([]result, len(keys))
	s.parallel(ctx, len(keys), func(i int) {
		k := keys[i]
		if r, ok := s.rs.drifts[k]; ok {
			results[i] = r // measured by an earlier chunk
			return
		}
		raw, note := k.memento, "raw"
		if a, ok := s.archiveByName(k.archive); ok {
			var isRaw bool
			if raw, isRaw = a.RawURL(k.memento, k.uriR, k.at); !isRaw {
				if a.Raw == memento.RawNone {
					note = fmt.Sprintf("not raw: archive %s has no raw replay form; measured on the replayed page (banner and rewritten links included)", a.Name)
				} else {
					note = fmt.Sprintf("not raw: the memento URL is not in archive %s's raw replay form (%s); measured on the replayed page", a.Name, a.Raw.Describe())
				}
			}
		} else {
			if r := memento.RawURL(k.memento); r != k.memento {
				raw = r
			} else {
				note = "not raw: no raw replay form known for this memento URL; measured on the replayed page"
			}
		}
		lp := live.pages[k.live]
		if why := lp.unusable(); why != "" {
			s.log.Debug("drift: live page not usable", "url", k.live, "why", why)
			results[i] = result{raw: raw, why: why}
			return
		}
		mr, err := s.o.Client.FetchMemento(ctx, raw, s.o.MaxBody)
		// Only a memento is a reference: an answer without
		// Memento-Datetime may be anything (a live page, a login wall).
		var why string
		switch {
		case err != nil:
			why = "memento: " + errText(err)
		case mr.Status < 200 || mr.Status > 299:
			why = fmt.Sprintf("memento answered status %d", mr.Status)
		case mr.Datetime.IsZero():
			why = "memento answered without Memento-Datetime: no reference"
		case len(mr.Body) == 0:
			why = "memento has an empty body"
		}
		if why != "" {
			s.log.Debug("drift: memento not usable", "url", raw, "why", why)
			results[i] = result{raw: raw, why: why}
			return
		}
		ref := textsim.MainText(httpx.DecodeHTML(mr.Body, mr.Header.Get("Content-Type")))
		results[i] = result{ok: true, raw: raw, note: note, m: drift.Compare(ref, lp.text, s.o.Shingle), refText: ref, live: lp.text}
	})
	if ctx.Err() != nil {
		return
	}
	for i, k := range keys {
		if s.rs.crossURIs[k.uriR] {
			s.rs.drifts[k] = results[i] // another chunk may measure it too
		}
	}
	for _, l := range links {
		b := nr[l.ID].bestMemento()
		u, target, _ := s.driftLive(l)
		r := results[index[driftKey{u, b.URL, b.Archive, nr[l.ID].want.uriR, b.Datetime}]]
		liveURL := u
		if lp := live.pages[u]; lp != nil && lp.final != "" {
			liveURL = lp.final
		}
		if !r.ok {
			s.count(func(sum *Summary) { sum.DriftErrors++ })
			if s.sink.DriftFailure != nil {
				s.sink.DriftFailure(audit.DriftFailure{RunID: s.in.RunID, LinkID: l.ID, TargetID: target, Kind: "memento",
					ReferenceURL: r.raw, LiveURL: liveURL, Reason: truncate(r.why, 300), MeasuredAt: s.o.Now().UTC()})
			}
			continue
		}
		d := s.driftRecord(r.m)
		d.LinkID, d.TargetID, d.Kind = l.ID, target, "memento"
		d.ReferenceURL, d.ReferenceTime = r.raw, b.Datetime
		d.LiveURL = liveURL
		d.ExcerptReference, d.ExcerptLive = drift.Excerpts(r.refText, r.live, 25)
		d.ReferenceNote = r.note
		s.count(func(sum *Summary) {
			sum.Bands[d.Band]++
			if r.note != "raw" {
				sum.DriftNotRaw++
			}
		})
		if s.sink.Drift != nil {
			s.sink.Drift(d)
		}
	}
}

func (s *stage) driftRecord(m drift.Measures) audit.Drift {
	return audit.Drift{
		RunID:           s.in.RunID,
		SimHashDistance: m.SimHash,
		Jaccard:         m.Jaccard,
		Dice:            m.Dice,
		Cosine:          m.Cosine,
		WordsReference:  m.WordsReference,
		WordsLive:       m.WordsLive,
		WordChange:      m.WordChange,
		TextMeasured:    m.TextMeasured,
		Band:            s.o.Thresholds.Band(m),
		MeasuredAt:      s.o.Now().UTC(),
	}
}

// firstSeenDrift compares each fingerprinted target of the run with the
// fingerprint of the first check linkrot made of it, in an earlier run:
// "this page changed since you linked it", without any archive.
func (s *stage) firstSeenDrift() {
	ids := make([]int64, 0, len(s.in.Checks))
	for id := range s.in.Checks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := s.in.Checks[id]
		ref := s.in.Reference[id]
		if c == nil || ref == nil || c.SHA256 == "" || ref.SHA256 == "" || ref.RunID == s.in.RunID || c.Reused && c.ReusedFrom == ref.RunID {
			continue
		}
		m := drift.CompareFingerprints(ref.SimHash, ref.Words, c.SimHash, c.Words)
		m.Identical = m.Identical || c.SHA256 == ref.SHA256
		d := s.driftRecord(m)
		d.TargetID, d.Kind = id, "first-seen"
		d.ReferenceURL, d.ReferenceTime = c.URL, ref.CheckedAt
		d.LiveURL = c.FinalURL
		if d.LiveURL == "" {
			d.LiveURL = c.URL
		}
		s.count(func(sum *Summary) { sum.FirstSeenBands[d.Band]++ })
		if s.sink.Drift != nil {
			s.sink.Drift(d)
		}
	}
}
