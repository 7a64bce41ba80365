package robust

import (
	"context"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/archive"
	"github.com/linkrot/linkrot/audit/check"
	"github.com/linkrot/linkrot/audit/drift"
	"github.com/linkrot/linkrot/audit/textsim"
)

// livePage is a live target fetched again by the stage: its main text (for
// drift) and the identifiers it declares.
type livePage struct {
	url         string // the URL fetched
	final       string
	status      int
	text        string
	html        bool
	identifiers []audit.Identifier
	err         error
}

// driftLinks returns the links that get memento drift: a representative
// memento and a live HTML target.
func (s *stage) driftLinks(nr map[int64]*near) []*Link {
	var out []*Link
	for i := range s.in.Links {
		l := &s.in.Links[i]
		b := nr[l.ID].bestMemento()
		c := s.in.Checks[l.TargetID]
		if b != nil && b.Representative && alive(c) && c.SHA256 != "" {
			out = append(out, l)
		}
	}
	return out
}

// liveFetch fetches, once each, the live targets that drift needs and the
// external live HTML targets whose identifiers are wanted.
func (s *stage) liveFetch(ctx context.Context, nr map[int64]*near) map[int64]*livePage {
	want := map[int64]bool{}
	for _, l := range s.driftLinks(nr) {
		want[l.TargetID] = true
	}
	for i := range s.in.Links {
		l := &s.in.Links[i]
		c := s.in.Checks[l.TargetID]
		if alive(c) && c.SHA256 != "" && s.external(l.TargetURL) {
			want[l.TargetID] = true
		}
	}
	ids := make([]int64, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	pages := make([]*livePage, len(ids))
	s.parallel(ctx, len(ids), func(i int) {
		c := s.in.Checks[ids[i]]
		u := c.FinalURL
		if u == "" {
			u = c.URL
		}
		pages[i] = s.fetchLive(ctx, u)
	})
	out := make(map[int64]*livePage, len(ids))
	for i, id := range ids {
		if pages[i] != nil {
			out[id] = pages[i]
		}
	}
	return out
}

func (s *stage) fetchLive(ctx context.Context, u string) *livePage {
	p := &livePage{url: u}
	resp, _, _, err := s.o.Client.Fetch(ctx, u, s.o.MaxBody)
	if err != nil {
		p.err = err
		return p
	}
	p.final, p.status = resp.URL.String(), resp.Status
	ct := resp.Header.Get("Content-Type")
	links, _ := audit.ParseLinkHeader(resp.Header.Values("Link")...)
	for _, l := range audit.ResolveLinks(resp.URL, links) {
		for _, rel := range []string{"identifier", "cite-as"} {
			if l.HasRel(rel) {
				p.identifiers = append(p.identifiers, audit.Identifier{URL: l.URI, Rel: rel, Source: "header"})
			}
		}
	}
	if resp.Status < 200 || resp.Status > 299 || !isHTMLType(ct, resp.Body) {
		return p
	}
	body := check.DecodeHTML(resp.Body, ct)
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

// mementoDrift compares live pages with their representative mementos,
// fetched in raw mode (Wayback id_) so that banners and rewritten links do
// not count as drift.
func (s *stage) mementoDrift(ctx context.Context, nr map[int64]*near, live map[int64]*livePage) {
	type key struct {
		target int64
		url    string
	}
	links := s.driftLinks(nr)
	var keys []key
	index := map[key]int{}
	for _, l := range links {
		k := key{l.TargetID, nr[l.ID].bestMemento().URL}
		if _, ok := index[k]; !ok {
			index[k] = len(keys)
			keys = append(keys, k)
		}
	}
	type result struct {
		ok      bool
		raw     string
		m       drift.Measures
		refText string
		live    string
	}
	results := make([]result, len(keys))
	s.parallel(ctx, len(keys), func(i int) {
		k := keys[i]
		lp := live[k.target]
		if lp == nil || lp.err != nil || !lp.html {
			s.log.Debug("drift: live page not usable", "target", k.target)
			return
		}
		raw := archive.RawURL(k.url)
		mr, err := s.o.Client.FetchMemento(ctx, raw, s.o.MaxBody)
		// Only a memento is a reference: an answer without
		// Memento-Datetime may be anything (a live page, a login wall).
		if err != nil || mr.Status < 200 || mr.Status > 299 || len(mr.Body) == 0 || mr.Datetime.IsZero() {
			s.log.Debug("drift: memento not usable", "url", raw, "err", err)
			return
		}
		ref := textsim.MainText(check.DecodeHTML(mr.Body, mr.Header.Get("Content-Type")))
		results[i] = result{ok: true, raw: raw, m: drift.Compare(ref, lp.text, s.o.Shingle), refText: ref, live: lp.text}
	})
	if ctx.Err() != nil {
		return
	}
	for _, l := range links {
		b := nr[l.ID].bestMemento()
		r := results[index[key{l.TargetID, b.URL}]]
		if !r.ok {
			s.count(func(sum *Summary) { sum.DriftErrors++ })
			continue
		}
		d := s.driftRecord(r.m)
		d.LinkID, d.TargetID, d.Kind = l.ID, l.TargetID, "memento"
		d.ReferenceURL, d.ReferenceTime = r.raw, b.Datetime
		d.LiveURL = live[l.TargetID].final
		d.ExcerptReference, d.ExcerptLive = drift.Excerpts(r.refText, r.live, 25)
		s.count(func(sum *Summary) { sum.Bands[d.Band]++ })
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

// isHTMLType reports whether a body is HTML: by Content-Type, or sniffed
// (net/http's algorithm) when there is none.
func isHTMLType(ct string, body []byte) bool {
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}
