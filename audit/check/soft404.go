package check

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/textsim"
	"golang.org/x/sync/singleflight"
)

// Soft404Shingle is the shingle size of the soft-404 similarity: the
// similarity of two pages is the Jaccard index of the sets of hashed
// 3-word shingles of their main texts (textsim.MainText), each text first
// stripped of the words of its own URL's path and query (soft-404 pages
// echo the URL asked for). A target is a soft 404 when the similarity to
// its probe reaches Options.Soft404Threshold (default 0.9): a real page
// that shares a site's boilerplate with the not-found page still differs
// in more than a tenth of its shingles.
const Soft404Shingle = 3

// probeResult is what the probe of one host+directory found.
type probeResult struct {
	deferred *deferral // the probe met a pause or a host given up: not made
	url      string
	final    string // URL of the last response after redirects
	status   int    // 0 when the probe failed
	failure  string
	words    int
	shingles map[uint64]struct{}
}

// probeCache runs one probe per host+directory for a run; concurrent
// callers for one key wait for the same probe (singleflight).
type probeCache struct {
	sf    singleflight.Group
	mu    sync.Mutex
	m     map[string]*probeResult
	count atomic.Int64 // probes made
}

func newProbeCache() *probeCache {
	return &probeCache{m: map[string]*probeResult{}}
}

func (pc *probeCache) get(key string) *probeResult {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.m[key]
}

// probeFor returns the cache key and a sibling URL of u that cannot exist:
// same scheme, host and directory, a random last segment (26 characters
// of base32), a trailing slash kept when u has one. Query and fragment are
// dropped.
func probeFor(u *url.URL) (key string, probe *url.URL) {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	suffix := ""
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		suffix = "/"
		p = strings.TrimSuffix(p, "/")
	}
	dir := p[:strings.LastIndex(p, "/")+1]
	base := u.Scheme + "://" + u.Host + dir
	pu, err := url.Parse(base + strings.ToLower(rand.Text()) + suffix)
	if err != nil {
		// dir comes from an escaped path: unreachable.
		pu = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/" + strings.ToLower(rand.Text())}
	}
	return base + "*" + suffix, pu
}

// probe returns the (cached) probe of u's host and directory.
func (rs *runState) probe(ctx context.Context, u *url.URL) *probeResult {
	key, pu := probeFor(u)
	if p := rs.probes.get(key); p != nil {
		return p
	}
	v, _, _ := rs.probes.sf.Do(key, func() (any, error) {
		if p := rs.probes.get(key); p != nil {
			return p, nil
		}
		rs.probes.count.Add(1)
		s := &session{rs: rs}
		ch := s.follow(ctx, pu, nil, 0)
		p := &probeResult{url: pu.String()}
		if s.deferred != nil {
			return &probeResult{url: p.url, deferred: s.deferred}, nil
		}
		r := ch.last
		switch {
		case ch.loop, ch.tooMany:
			p.failure = "probe redirects without end"
		case r.err != nil:
			p.failure = "probe failed: " + truncate(r.err.Error(), 200)
		case r.bodyErr != nil:
			p.failure = "probe body failed: " + truncate(r.bodyErr.Error(), 200)
		default:
			p.status = r.status
			p.final = ch.final.String()
			if r.html && r.body != nil {
				text := textsim.MainText(toUTF8(r.body, r.header.Get("Content-Type")))
				words := withoutURLWords(textsim.Words(text), pu, ch.final)
				p.words = len(words)
				p.shingles = textsim.Shingles(words, Soft404Shingle)
			}
		}
		rs.c.log.Debug("soft-404 probe", "url", p.url, "status", p.status, "final", p.final, "failure", p.failure)
		if ctx.Err() == nil {
			rs.probes.mu.Lock()
			rs.probes.m[key] = p
			rs.probes.mu.Unlock()
		}
		return p, nil
	})
	return v.(*probeResult)
}

// soft404 compares a 2xx HTML target with the probe of its directory (the
// directory of the URL linked to, so that a redirected target and its
// probe take the same road) and records the evidence; it sets the verdict
// soft-404 when:
//
//   - the probe was redirected to the same final URL as the target, the
//     target itself was redirected, and that URL is not a home page (both
//     land on one "not found" page; a home page is where language roots
//     and the like go, and a deep URL sent there is redirect-to-root); or
//   - the probe answered 2xx with main text at least Soft404Threshold
//     similar to the target's (see Soft404Shingle).
//
// Never when the probe answers 404 or 410 (the site reports missing pages
// honestly), fails, or answers anything but 2xx; nor when the probe lands
// on the target without the target having been redirected (the target is
// where unknown URLs are sent, usually a home page); nor when neither page
// has any text (script-rendered sites serve one empty shell for every URL:
// undecidable).
func (rs *runState) soft404(c *audit.Check, p *probeResult, start *url.URL, ch *chain, words []string) {
	ev := &audit.Soft404Evidence{ProbeURL: p.url, ProbeStatus: p.status}
	if p.final != p.url {
		ev.ProbeFinal = p.final
	}
	c.Soft404 = ev
	if p.status < 200 || p.status > 299 {
		return
	}
	words = withoutURLWords(words, start, ch.final)
	sim := textsim.Jaccard(textsim.Shingles(words, Soft404Shingle), p.shingles)
	ev.Similarity = math.Round(sim*1e4) / 1e4
	sameFinal := p.final == ch.final.String()
	var why string
	switch {
	case sameFinal && len(ch.redirects) > 0 && !isHome(ch.final.Path):
		why = "was redirected to the same page"
	case sameFinal:
		return
	case len(words) == 0 && p.words == 0:
		return
	case sim >= rs.o.Soft404Threshold:
		why = fmt.Sprintf("answered %d with text %.2f similar (threshold %.2f)", p.status, sim, rs.o.Soft404Threshold)
	default:
		return
	}
	c.Verdict = audit.VerdictSoft404
	c.Replacement = ""
	c.Reason = "probe " + truncate(p.url, 300) + " " + why
}

// withoutURLWords removes from words those of the URLs' paths and queries.
func withoutURLWords(words []string, urls ...*url.URL) []string {
	drop := map[string]bool{}
	for _, u := range urls {
		p, err := url.PathUnescape(u.EscapedPath())
		if err != nil {
			p = u.EscapedPath()
		}
		q, err := url.QueryUnescape(u.RawQuery)
		if err != nil {
			q = u.RawQuery
		}
		for _, w := range textsim.Words(p + " " + q) {
			drop[w] = true
		}
	}
	out := words[:0:0]
	for _, w := range words {
		if !drop[w] {
			out = append(out, w)
		}
	}
	return out
}
