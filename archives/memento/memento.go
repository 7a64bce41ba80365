package memento

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// Candidate is a memento an archive named: its URI-M and Memento-Datetime.
type Candidate struct {
	URL      string
	Datetime time.Time
}

// Nearest returns the candidate closest to at (the earlier one on a tie)
// and whether there was any.
func Nearest(cands []Candidate, at time.Time) (Candidate, bool) {
	var best Candidate
	found := false
	var bestD time.Duration
	for _, c := range cands {
		d := absDuration(c.Datetime.Sub(at))
		if !found || d < bestD || d == bestD && c.Datetime.Before(best.Datetime) {
			best, bestD, found = c, d, true
		}
	}
	return best, found
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// LinkInfo is the Memento information of a Link header (or TimeMap):
// mementos with their datetimes, the original resource, TimeGate and
// TimeMaps.
type LinkInfo struct {
	Original string
	TimeGate string
	TimeMaps []string
	Mementos []Candidate
	// BadDatetimes counts memento links whose datetime is missing or not
	// an RFC 1123 GMT date; they are left out of Mementos.
	BadDatetimes int
}

// parseLinkInfo reads the Memento links out of parsed Link values (RFC
// 8288), resolved against base. rel is a set of tokens: "first last
// memento" is a memento as much as "memento" is.
func parseLinkInfo(links []urls.WebLink, base *url.URL) LinkInfo {
	if base != nil {
		links = urls.ResolveLinks(base, links)
	}
	var li LinkInfo
	for _, l := range links {
		switch {
		case l.HasRel("memento"):
			dt, err := ParseDatetime(l.Params["datetime"])
			if err != nil {
				li.BadDatetimes++
				continue
			}
			li.Mementos = append(li.Mementos, Candidate{URL: l.URI, Datetime: dt})
		case l.HasRel("original"):
			if li.Original == "" {
				li.Original = l.URI
			}
		case l.HasRel("timegate"):
			if li.TimeGate == "" {
				li.TimeGate = l.URI
			}
		}
		if l.HasRel("timemap") && !l.HasRel("self") {
			li.TimeMaps = append(li.TimeMaps, l.URI)
		}
	}
	return li
}

func headerLinkInfo(resp *Response) LinkInfo {
	links, _ := urls.ParseLinkHeader(resp.Header.Values("Link")...)
	return parseLinkInfo(links, resp.URL)
}

// Negotiation is what a TimeGate answered for a datetime.
type Negotiation struct {
	// Memento is the memento the TimeGate selected.
	Memento Candidate
	// Style is how it answered: "302" (RFC 7089 pattern 2.1, Location),
	// "200" (pattern 2.2/2.3, Content-Location and Memento-Datetime) or
	// "link" (200 without a memento, mementos listed in Link).
	Style string
	// Candidates are all mementos the answer's Link header listed with
	// datetimes (first, last, prev, next, ...), the selected one included.
	Candidates []Candidate
	Original   string
	TimeMaps   []string
}

// Negotiate asks archive a's TimeGate for the memento of uriR nearest to
// at (Accept-Datetime), accepting both 302-style and 200-style TimeGates.
// When the 302 answer does not say the datetime of the memento it
// redirects to (no Link entry for it, no Wayback timestamp in its URL), the
// memento is requested for its Memento-Datetime. An archive without a
// memento of uriR gives an error wrapping ErrNoMemento.
func (c *Client) Negotiate(ctx context.Context, a Archive, uriR string, at time.Time) (*Negotiation, error) {
	tg := a.TimeGateURL(uriR)
	resp, err := c.do(ctx, request{op: "timegate", url: tg, maxBody: 64 << 10, budget: true,
		header: http.Header{"Accept-Datetime": {FormatDatetime(at)}}})
	if err != nil {
		return nil, err
	}
	li := headerLinkInfo(resp)
	n := &Negotiation{Candidates: li.Mementos, Original: li.Original, TimeMaps: li.TimeMaps}
	fail := func(class string, format string, args ...any) error {
		return &Error{Op: "timegate", URL: tg, Class: class, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case resp.Status == http.StatusNotFound || resp.Status == http.StatusGone:
		return nil, fail("no-memento", "%w (status %d)", ErrNoMemento, resp.Status)
	case isRedirect(resp.Status):
		loc := resp.Header.Get("Location")
		if loc == "" {
			return nil, fail("protocol", "redirect without Location")
		}
		m, err := resp.URL.Parse(loc)
		if err != nil {
			return nil, fail("protocol", "invalid Location: %v", err)
		}
		n.Style = "302"
		n.Memento.URL = m.String()
		if dt, ok := datetimeOf(n.Memento.URL, li.Mementos); ok {
			n.Memento.Datetime = dt
		} else {
			mr, err := c.FetchMemento(ctx, n.Memento.URL, -1)
			if err != nil {
				return nil, err
			}
			if mr.Datetime.IsZero() {
				return nil, fail("protocol", "TimeGate redirected to %s, which answered %d without a valid Memento-Datetime",
					truncate(n.Memento.URL, 200), mr.Status)
			}
			n.Memento = Candidate{URL: mr.FinalURL, Datetime: mr.Datetime}
		}
	case resp.Status >= 200 && resp.Status <= 299:
		if md := resp.Header.Get("Memento-Datetime"); md != "" {
			dt, err := ParseDatetime(md)
			if err != nil {
				return nil, fail("protocol", "invalid Memento-Datetime: %v", err)
			}
			n.Style = "200"
			n.Memento = Candidate{URL: resp.URL.String(), Datetime: dt}
			if cl := resp.Header.Get("Content-Location"); cl != "" {
				if m, err := resp.URL.Parse(cl); err == nil {
					n.Memento.URL = m.String()
				}
			}
		} else if best, ok := Nearest(li.Mementos, at); ok {
			n.Style = "link"
			n.Memento = best
		} else {
			return nil, fail("protocol", "TimeGate answered %d without Memento-Datetime or memento links: not a Memento TimeGate", resp.Status)
		}
	case resp.Status == http.StatusBadRequest:
		return nil, fail("protocol", "TimeGate refused the request (400; malformed Accept-Datetime?)")
	case resp.Status == http.StatusTooManyRequests:
		return nil, fail("rate-limited", "%w", ErrRateLimited)
	default:
		return nil, fail(fmt.Sprintf("status-%d", resp.Status), "TimeGate answered %d", resp.Status)
	}
	if !containsURL(n.Candidates, n.Memento.URL) {
		n.Candidates = append(n.Candidates, n.Memento)
	}
	return n, nil
}

// datetimeOf finds the datetime of memento u: from a listed candidate with
// the same URL, else from a 14-digit Wayback timestamp in u.
func datetimeOf(u string, cands []Candidate) (time.Time, bool) {
	for _, c := range cands {
		if sameURL(c.URL, u) {
			return c.Datetime, true
		}
	}
	if w, ok := ParseWaybackURL(u); ok {
		return w.Time()
	}
	return time.Time{}, false
}

func containsURL(cands []Candidate, u string) bool {
	for _, c := range cands {
		if sameURL(c.URL, u) {
			return true
		}
	}
	return false
}

func sameURL(a, b string) bool {
	if a == b {
		return true
	}
	na, err1 := urls.NormalizeURL(a)
	nb, err2 := urls.NormalizeURL(b)
	return err1 == nil && err2 == nil && na == nb
}

// MementoResponse is what fetching a URI-M gave.
type MementoResponse struct {
	RequestURL string
	FinalURL   string
	Status     int
	// Datetime is the Memento-Datetime (zero when absent or invalid;
	// DatetimeError then says which).
	Datetime      time.Time
	DatetimeError string
	// Original is the Link rel="original" target, resolved.
	Original  string
	Redirects []audit.Redirect
	// Stop says why a redirect was not followed: it left the archive, or
	// the chain was too long or looped ("" when the chain ended).
	Stop      string
	Header    http.Header
	Body      []byte
	Truncated bool
}

// FetchMemento GETs a memento URL, following redirects while they stay on
// the same host or on a configured archive's host (closest-capture
// redirects of Wayback archives, archive-internal canonical URLs). maxBody
// < 0 reads no body, 0 reads up to Options.MaxBody.
func (c *Client) FetchMemento(ctx context.Context, uri string, maxBody int64) (*MementoResponse, error) {
	start, err := url.Parse(uri)
	if err != nil {
		return nil, &Error{Op: "memento", URL: uri, Class: "invalid-url", Err: err}
	}
	stay := func(u *url.URL) bool {
		return strings.EqualFold(u.Host, start.Host) || c.IsArchiveHost(u.Host)
	}
	resp, hops, stop, err := c.follow(ctx, request{op: "memento", url: uri, maxBody: maxBody, budget: true}, stay)
	if err != nil {
		return nil, err
	}
	m := &MementoResponse{
		RequestURL: uri,
		FinalURL:   resp.URL.String(),
		Status:     resp.Status,
		Redirects:  hops,
		Stop:       stop,
		Header:     resp.Header,
		Body:       resp.Body,
		Truncated:  resp.Truncated,
		Original:   headerLinkInfo(resp).Original,
	}
	if md := resp.Header.Get("Memento-Datetime"); md != "" {
		dt, err := ParseDatetime(md)
		if err != nil {
			m.DatetimeError = err.Error()
		} else {
			m.Datetime = dt
		}
	}
	return m, nil
}

// TimeMap summarises an archive's TimeMap of a resource.
type TimeMap struct {
	// Mementos are the distinct mementos listed, oldest first.
	Mementos []Candidate
	Original string
	// Pages is the number of TimeMap documents read (index and paging
	// TimeMaps followed); Truncated reports that the page cap, the
	// memento cap or a body cap was hit.
	Pages     int
	Truncated bool
}

// Caps of TimeMap.
const (
	maxTimeMapPages    = 20
	maxTimeMapDepth    = 3
	maxTimeMapMementos = 200000
	maxTimeMapBody     = 16 << 20
)

// TimeMap fetches archive a's TimeMap of uriR (application/link-format),
// following index and paging TimeMaps (links with rel="timemap", other
// than "self") to maxTimeMapDepth levels and maxTimeMapPages documents.
// An archive without a TimeMap of uriR (404) gives an error wrapping
// ErrNoMemento.
func (c *Client) TimeMap(ctx context.Context, a Archive, uriR string) (*TimeMap, error) {
	first := a.TimeMapURL(uriR)
	if first == "" {
		return nil, &Error{Op: "timemap", URL: a.Name, Class: "unsupported", Err: errors.New("archive has no TimeMap URL")}
	}
	tm := &TimeMap{}
	seen := map[string]bool{}
	byURL := map[string]bool{}
	type page struct {
		url   string
		depth int
	}
	queue := []page{{first, 0}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p.url] {
			continue
		}
		seen[p.url] = true
		if tm.Pages >= maxTimeMapPages {
			tm.Truncated = true
			break
		}
		resp, err := c.do(ctx, request{op: "timemap", url: p.url, maxBody: maxTimeMapBody, budget: true,
			header: http.Header{"Accept": {"application/link-format"}}})
		if err != nil {
			if tm.Pages > 0 {
				tm.Truncated = true
				break
			}
			return nil, err
		}
		switch {
		case resp.Status == http.StatusNotFound || resp.Status == http.StatusGone:
			if tm.Pages == 0 {
				return nil, &Error{Op: "timemap", URL: p.url, Class: "no-memento", Err: fmt.Errorf("%w (status %d)", ErrNoMemento, resp.Status)}
			}
			continue
		case resp.Status < 200 || resp.Status > 299:
			if tm.Pages == 0 {
				return nil, &Error{Op: "timemap", URL: p.url, Class: fmt.Sprintf("status-%d", resp.Status), Err: fmt.Errorf("TimeMap answered %d", resp.Status)}
			}
			tm.Truncated = true
			continue
		}
		li := ParseTimeMap(string(resp.Body), resp.URL)
		if tm.Pages == 0 && li.Original == "" && len(li.Mementos) == 0 && len(li.TimeMaps) == 0 {
			// Neither original, mementos nor further TimeMaps: a page
			// that is no TimeMap (an HTML error page, a login wall).
			return nil, &Error{Op: "timemap", URL: p.url, Class: "protocol",
				Err: fmt.Errorf("unparsable TimeMap (status %d, %d bytes, %d bad datetimes)", resp.Status, len(resp.Body), li.BadDatetimes)}
		}
		tm.Pages++
		tm.Truncated = tm.Truncated || resp.Truncated
		if tm.Original == "" {
			tm.Original = li.Original
		}
		for _, m := range li.Mementos {
			if byURL[m.URL] {
				continue
			}
			if len(tm.Mementos) >= maxTimeMapMementos {
				tm.Truncated = true
				break
			}
			byURL[m.URL] = true
			tm.Mementos = append(tm.Mementos, m)
		}
		if p.depth+1 <= maxTimeMapDepth {
			for _, next := range li.TimeMaps {
				if !seen[next] {
					queue = append(queue, page{next, p.depth + 1})
				}
			}
		} else if len(li.TimeMaps) > 0 {
			tm.Truncated = true
		}
	}
	sort.SliceStable(tm.Mementos, func(i, j int) bool { return tm.Mementos[i].Datetime.Before(tm.Mementos[j].Datetime) })
	return tm, nil
}

// ParseTimeMap reads an application/link-format TimeMap (RFC 7089 §5):
// the body is a Link header value, links separated by commas, white space
// and newlines allowed between them, resolved against base. Malformed
// links are skipped; every well-formed one counts.
func ParseTimeMap(body string, base *url.URL) LinkInfo {
	links, _ := urls.ParseLinkHeader(body)
	return parseLinkInfo(links, base)
}
