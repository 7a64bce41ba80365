package archives

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
)

// declared is one snapshot a link declares.
type declared struct {
	link     *stageLink
	source   string // "versionurl", "mset", "pwid"
	raw      string // as written
	url      string // to fetch ("" when it cannot be resolved)
	at       time.Time
	dateOnly bool
	fromURL  bool   // at was read from the URL's Wayback timestamp
	problem  string // why url is ""
	original string // the URI-R the snapshot must be a memento of
}

// declaredSnapshots lists the snapshots of l.
func (s *stage) declaredSnapshots(l *stageLink) []declared {
	var out []declared
	if r := l.Link.Robust; r != nil {
		for _, sn := range r.Snapshots {
			if isPWIDRef(sn.URL) {
				continue // audited as a pwid
			}
			out = append(out, declared{link: l, source: "versionurl", raw: sn.URL, url: sn.URL, at: sn.Datetime.Time, dateOnly: sn.DateOnly})
		}
	}
	if m := l.Link.Mset; m != nil {
		for _, c := range m.Copies {
			if isPWIDRef(c.URL) {
				continue
			}
			out = append(out, declared{link: l, source: "mset", raw: c.URL, url: c.URL, at: c.Datetime.Time, dateOnly: c.DateOnly})
		}
	}
	for _, p := range l.PWIDs {
		d := declared{link: l, source: "pwid", raw: p.Raw, at: p.Datetime.Time, original: p.Item}
		u, err := s.o.Registry.Resolve(p)
		if err != nil {
			d.problem = err.Error()
		} else {
			d.url = u
		}
		out = append(out, d)
	}
	for i := range out {
		d := &out[i]
		if d.url != "" && d.at.IsZero() {
			if w, ok := memento.ParseWaybackURL(d.url); ok {
				if t, ok := w.Time(); ok {
					d.at, d.fromURL = t, true
				}
			}
		}
	}
	return out
}

// capSnapshots keeps the max snapshots of one link nearest to its
// declared datetime (data-versiondate, else its first mset temporal
// reference; without either, the first max in document order) and
// returns the rest separately. max < 0 keeps all.
func capSnapshots(ds []declared, max int) (keep, skip []declared) {
	if max < 0 || len(ds) <= max {
		return ds, nil
	}
	var ref time.Time
	l := ds[0].link
	if r := l.Link.Robust; r != nil && !r.VersionDate.IsZero() {
		ref = r.VersionDate.Time
	} else if m := l.Link.Mset; m != nil && len(m.Temporal) > 0 {
		ref = m.Temporal[0].Time
	}
	order := make([]int, len(ds))
	for i := range order {
		order[i] = i
	}
	if !ref.IsZero() {
		dist := func(d declared) time.Duration {
			if d.at.IsZero() {
				return time.Duration(1<<63 - 1) // undated: last
			}
			return absDuration(d.at.Sub(ref))
		}
		sort.SliceStable(order, func(a, b int) bool { return dist(ds[order[a]]) < dist(ds[order[b]]) })
	}
	chosen := make([]bool, len(ds))
	for _, i := range order[:max] {
		chosen[i] = true
	}
	for i, d := range ds {
		if chosen[i] {
			keep = append(keep, d)
		} else {
			skip = append(skip, d)
		}
	}
	return keep, skip
}

func isPWIDRef(s string) bool {
	return len(s) >= 5 && (equalFoldPrefix(s, "pwid:") || equalFoldPrefix(s, "urn:pwid:"))
}

func equalFoldPrefix(s, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		a, b := s[i]|0x20, p[i]|0x20
		if a != b {
			return false
		}
	}
	return true
}

// expectedOriginal is the URI-R a link's snapshots must be mementos of:
// data-originalurl, else the link's target.
func expectedOriginal(l *stageLink) string {
	if r := l.Link.Robust; r != nil && r.OriginalURL != "" {
		return r.OriginalURL
	}
	if l.TargetURL != "" {
		return l.TargetURL
	}
	return l.Link.Href
}

// snapFetch is a declared snapshot fetched (without body or header).
type snapFetch struct {
	m   *memento.MementoResponse
	err error
	at  time.Time
}

// snapshots audits every declared snapshot, each distinct URL fetched
// once in the run.
func (s *stage) snapshots(ctx context.Context) {
	var all []declared
	for i := range s.in.Links {
		ds := s.declaredSnapshots(&s.in.Links[i])
		keep, skip := capSnapshots(ds, s.o.MaxSnapshots)
		all = append(all, keep...)
		for _, d := range skip {
			s.count(func(sum *Summary) { sum.SnapshotsNotChecked++ })
			if s.sink.SnapshotSkip != nil {
				s.sink.SnapshotSkip(audit.SnapshotSkip{RunID: s.in.RunID, LinkID: d.link.ID, Source: d.source,
					Declared: d.raw, Datetime: d.at,
					Reason: fmt.Sprintf("not checked: the link declares %d snapshots; the %d nearest to its declared datetime were checked (--max-snapshots)", len(ds), len(keep))})
			}
		}
	}
	var urls []string
	queued := map[string]bool{}
	for _, d := range all {
		if d.url == "" || queued[d.url] {
			continue
		}
		if _, ok := s.rs.snaps[d.url]; !ok {
			queued[d.url] = true
			urls = append(urls, d.url)
		}
	}
	results := make([]snapFetch, len(urls))
	s.parallel(ctx, len(urls), func(i int) {
		m, err := s.o.Client.FetchMemento(ctx, urls[i], -1)
		if m != nil {
			m.Header, m.Body, m.Redirects = nil, nil, nil // kept for the run: what the verdict reads
		}
		results[i] = snapFetch{m, err, s.o.Now().UTC()}
	})
	if ctx.Err() != nil {
		return
	}
	for i, u := range urls {
		s.rs.snaps[u] = results[i]
	}
	for _, d := range all {
		sc := audit.SnapshotCheck{
			RunID:            s.in.RunID,
			LinkID:           d.link.ID,
			Source:           d.source,
			Declared:         d.raw,
			URL:              d.url,
			DeclaredDatetime: d.at,
			DeclaredDateOnly: d.dateOnly,
			CheckedAt:        s.o.Now().UTC(),
		}
		if d.url == "" {
			sc.Verdict = audit.SnapshotError
			sc.Reason = truncate(d.problem, 300)
		} else {
			f := s.rs.snaps[d.url]
			sc.CheckedAt = f.at
			judgeSnapshot(&sc, f.m, f.err)
			if f.m != nil {
				compareSnapshot(&sc, d, f.m)
			}
		}
		s.count(func(sum *Summary) {
			sum.Snapshots[sc.Verdict]++
			if sc.DatetimeMismatch {
				sum.DatetimeMismatches++
			}
			if sc.OriginalMismatch {
				sum.OriginalMismatches++
			}
		})
		if s.sink.SnapshotCheck != nil {
			s.sink.SnapshotCheck(sc)
		}
	}
}

// judgeSnapshot sets the verdict, status and reason of a snapshot fetch.
func judgeSnapshot(sc *audit.SnapshotCheck, m *memento.MementoResponse, err error) {
	if err != nil {
		sc.Verdict = audit.SnapshotError
		if errors.Is(err, memento.ErrNoMemento) {
			sc.Verdict = audit.SnapshotMissing
		}
		sc.Reason = errText(err)
		return
	}
	sc.Status = m.Status
	sc.FinalURL = m.FinalURL
	sc.MementoDatetime = m.Datetime
	sc.Original = m.Original
	hasDT := !m.Datetime.IsZero()
	switch {
	case m.Stop != "":
		switch {
		case strings.HasPrefix(m.Stop, "redirect loop"), strings.HasPrefix(m.Stop, "more than"):
			sc.Verdict = audit.SnapshotError
			sc.Reason = m.Stop
		case hasDT:
			// A memento of a redirect (RFC 7089 §4.5.4) whose Location
			// points out of the archive: the capture exists.
			sc.Verdict = audit.SnapshotOK
			sc.Reason = "memento of a redirect; " + m.Stop
		default:
			sc.Verdict = audit.NotAMemento
			sc.Reason = m.Stop
		}
	case m.Status == http.StatusNotFound || m.Status == http.StatusGone:
		sc.Verdict = audit.SnapshotMissing
		if hasDT {
			sc.Reason = fmt.Sprintf("the archive holds a capture of a %d answer (archived error page)", m.Status)
		} else {
			sc.Reason = fmt.Sprintf("status %d: the archive has no such memento", m.Status)
		}
	case m.Status >= 200 && m.Status <= 299:
		if hasDT {
			sc.Verdict = audit.SnapshotOK
			return
		}
		sc.Verdict = audit.NotAMemento
		if m.DatetimeError != "" {
			sc.Reason = "invalid Memento-Datetime: " + truncate(m.DatetimeError, 200)
		} else {
			sc.Reason = fmt.Sprintf("status %d without Memento-Datetime: a live page, or an archive without Memento support", m.Status)
		}
	case m.Status == http.StatusTooManyRequests:
		sc.Verdict = audit.SnapshotError
		sc.Reason = "rate limited by the archive (429)"
	case m.Status >= 500:
		sc.Verdict = audit.SnapshotError
		sc.Reason = fmt.Sprintf("archive error: status %d", m.Status)
	default:
		sc.Verdict = audit.SnapshotError
		sc.Reason = fmt.Sprintf("status %d", m.Status)
	}
}

// compareSnapshot compares what the archive answered with what the link
// declares: the datetime (exactly, or by UTC day for a date-only value),
// data-versiondate and data-originalurl.
func compareSnapshot(sc *audit.SnapshotCheck, d declared, m *memento.MementoResponse) {
	md := m.Datetime
	if md.IsZero() {
		return
	}
	if !d.at.IsZero() {
		sc.DeclaredDelta = md.Sub(d.at)
		if d.dateOnly {
			sc.DatetimeMismatch = !memento.SameUTCDay(md, d.at)
		} else {
			sc.DatetimeMismatch = !md.Equal(d.at)
		}
		if sc.DatetimeMismatch {
			what := "declared datetime"
			switch {
			case d.source == "pwid":
				what = "pwid archival time (the cited capture is gone)"
			case d.fromURL:
				what = "timestamp in the snapshot URL (the archive redirected to another capture)"
			case d.dateOnly:
				what = "declared date"
			}
			sc.Reason = joinReason(sc.Reason, fmt.Sprintf("Memento-Datetime %s differs from the %s %s by %s",
				md.Format(time.RFC3339), what, d.at.Format(time.RFC3339), roundDelta(sc.DeclaredDelta)))
		}
	}
	if r := d.link.Link.Robust; r != nil && !r.VersionDate.IsZero() {
		sc.VersionDateDelta = md.Sub(r.VersionDate.Time)
	}
	exp := d.original
	if exp == "" {
		exp = expectedOriginal(d.link)
	}
	if m.Original != "" && isHTTP(exp) && !sameResource(m.Original, exp) {
		sc.OriginalMismatch = true
		sc.Reason = joinReason(sc.Reason, fmt.Sprintf("the memento is of %s, not of %s", truncate(m.Original, 200), truncate(exp, 200)))
	}
}

func roundDelta(d time.Duration) string {
	d = absDuration(d)
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	}
	return d.Round(time.Second).String()
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
