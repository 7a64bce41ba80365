package check

import (
	"context"
	"crypto/rand"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift/textsim"
	"github.com/linkrot/linkrot/httpx"
	"golang.org/x/sync/singleflight"
)

// soft404Shingle is the shingle size of the soft-404 probe similarity:
// the similarity of two pages is the Jaccard index of the sets of hashed
// 3-word shingles of their main texts (textsim.MainText). It is measured
// twice, and the higher value counts: on the texts as they are, and on the
// texts without the words of the two URLs' paths and queries (the
// target's and the probe's together, removed from both texts alike), since
// a catch-all page echoes the URL asked for ("No results for blue widget
// deluxe"): a page identical to the probe's answer but for the echoed
// words is the probe's answer. The second measure needs at least 3 words
// left of each text and at most three quarters of either removed (a page
// made of its own URL's words is not judged by what is left of it), and is
// skipped when the texts' sizes bound it below probeWeakSimilarity. A
// target is a soft 404 by the probe alone when the similarity reaches
// Options.Soft404Threshold (default 0.9): a real page that shares a
// site's boilerplate with the not-found page still differs in more than a
// tenth of its shingles. From probeWeakSimilarity (0.6) up, the probe
// adds a weaker score (soft404_classify.go).
const soft404Shingle = 3

// probeTextMax caps the probe answer's words kept for the comparison.
const probeTextMax = 20000

// probeResult is what the probe of one host+directory found.
type probeResult struct {
	deferred *deferral // the probe met a pause or a host given up: not made
	url      string
	final    string // URL of the last response after redirects
	status   int    // 0 when the probe failed
	failure  string
	words    []string        // main-text words (at most probeTextMax)
	shingles []uint64        // of words (shingleSet)
	urlWords map[string]bool // words of the probe URL and its final URL
}

// probeCache runs one probe per host+directory for a run; concurrent
// callers for one key wait for the same probe (singleflight). A host whose
// probes in trustedProbes directories all answered a real 404 or 410
// answers unknown URLs honestly: its other directories are not probed,
// they get its last such probe (see hostProbes).
type probeCache struct {
	sf    singleflight.Group
	mu    sync.Mutex
	m     map[string]*probeResult
	hosts map[string]*hostProbes // by scheme://host
	count atomic.Int64           // probes made
}

// trustedProbes is how many directories of a host must answer their probe
// with a real 404 or 410, and none otherwise, before the host's other
// directories are no longer probed. A documentation tree has a directory
// per section, and a probe in each would double the requests of a run; a
// catch-all (the probe's target) answers 200 in the
// site's first directories probed, and then every directory of the host
// is probed. A catch-all only in a directory probed after the host was
// trusted is judged by the classifier's other signals, without the probe's
// similarity (as on any host that answers probes with a 404).
const trustedProbes = 3

// hostProbes is what the probes of one host found.
type hostProbes struct {
	notFound int          // probes answered 404 or 410
	other    bool         // a probe answered anything else (or failed)
	last     *probeResult // the last probe answered 404 or 410
}

func newProbeCache() *probeCache {
	return &probeCache{m: map[string]*probeResult{}, hosts: map[string]*hostProbes{}}
}

func (pc *probeCache) get(key string) *probeResult {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.m[key]
}

// trusted returns the last probe of a host trusted to answer unknown URLs
// with a real 404 (see trustedProbes), or nil.
func (pc *probeCache) trusted(host string) *probeResult {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if h := pc.hosts[host]; h != nil && !h.other && h.notFound >= trustedProbes {
		return h.last
	}
	return nil
}

// record stores the probe p of a directory key of host. pc.mu is held.
func (pc *probeCache) record(host, key string, p *probeResult) {
	pc.m[key] = p
	h := pc.hosts[host]
	if h == nil {
		h = &hostProbes{}
		pc.hosts[host] = h
	}
	if p.failure == "" && (p.status == 404 || p.status == 410) {
		h.notFound++
		h.last = p
	} else {
		h.other = true
	}
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

// probe returns the (cached) probe of u's host and directory; or, for a
// directory not probed yet of a host trusted to answer unknown URLs with a
// real 404 (see trustedProbes), the host's last probe with shared true:
// the caller makes the directory's own probe (dirProbe) when the page
// looks like a soft 404 without it.
func (rs *runState) probe(ctx context.Context, u *url.URL) (p *probeResult, shared bool) {
	key, _ := probeFor(u)
	if p := rs.probes.get(key); p != nil {
		return p, false
	}
	if p := rs.probes.trusted(u.Scheme + "://" + u.Host); p != nil {
		return p, true
	}
	return rs.dirProbe(ctx, u), false
}

// dirProbe returns the (cached) probe of u's host and directory, made
// when needed.
func (rs *runState) dirProbe(ctx context.Context, u *url.URL) *probeResult {
	key, pu := probeFor(u)
	if p := rs.probes.get(key); p != nil {
		return p
	}
	host := u.Scheme + "://" + u.Host
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
				text := textsim.MainText(httpx.DecodeHTML(r.body, r.header.Get("Content-Type")))
				words := textsim.Words(text)
				p.words = words[:min(len(words), probeTextMax)]
			}
			p.shingles = shingleSet(p.words, soft404Shingle)
			p.urlWords = urlWords(pu, ch.final)
		}
		rs.c.log.Debug("soft-404 probe", "url", p.url, "status", p.status, "final", p.final, "failure", p.failure)
		if ctx.Err() == nil {
			rs.probes.mu.Lock()
			rs.probes.record(host, key, p)
			rs.probes.mu.Unlock()
		}
		return p, nil
	})
	return v.(*probeResult)
}

// soft404 runs the soft-404 classifier (soft404_classify.go) on a 2xx HTML
// target and records its evidence; it sets the verdict soft-404 or parked
// when the classifier says so. p is the probe of the target's directory,
// nil when none was made (a page read from a local directory).
//
// With shared, p is the probe of another directory of a host trusted to
// answer unknown URLs with a real 404: when the page shows a soft-404
// signal all the same, its own directory is probed and the page judged
// with that probe.
func (rs *runState) soft404(ctx context.Context, c *audit.Check, t Target, p *probeResult, shared bool, start *url.URL, ch *chain, fp *pageFingerprint) {
	in := &soft404Input{
		start: start, final: ch.final, redirects: ch.redirects,
		words: fp.words, count: fp.count, page: fp.signals, simhash: fp.simhash,
		probe: p, reference: t.Previous, probeThreshold: rs.o.Soft404Threshold,
	}
	res := classifySoft404(in)
	if shared && res.ev != nil && (res.ev.Score > 0 || res.ev.Parked > 0) {
		if own := rs.dirProbe(ctx, start); own.deferred == nil {
			in.probe = own
			res = classifySoft404(in)
		}
	}
	c.Soft404 = res.ev
	if res.verdict != "" {
		c.Verdict = res.verdict
		c.Replacement = ""
		c.Reason = res.reason
	}
}

// parkedRoot judges a target redirected to a home page by the
// parked-domain signals alone (no probe is made for it): a parking service
// sends every deep URL of a parked domain to its lander at "/", and a
// marketplace may list the domain on its front page. It reports whether
// the target is parked, c then holding the verdict and the evidence;
// otherwise c is left as it was (the target is redirect-to-root).
func (rs *runState) parkedRoot(c *audit.Check, t Target, start *url.URL, ch *chain, fp *pageFingerprint) bool {
	res := classifySoft404(&soft404Input{
		start: start, final: ch.final, redirects: ch.redirects,
		words: fp.words, count: fp.count, page: fp.signals, simhash: fp.simhash,
		reference: t.Previous, probeThreshold: rs.o.Soft404Threshold,
	})
	if res.verdict != audit.VerdictParked {
		return false
	}
	c.Soft404, c.Verdict, c.Replacement, c.Reason = res.ev, res.verdict, "", res.reason
	return true
}

// urlWords returns the words of the URLs' paths and queries.
func urlWords(urls ...*url.URL) map[string]bool {
	drop := map[string]bool{}
	for _, u := range urls {
		if u == nil {
			continue
		}
		p, q := pathAndQuery(u)
		for _, w := range textsim.Words(p + " " + q) {
			drop[w] = true
		}
	}
	return drop
}

// withoutWords returns words without those in drop, and how many it
// removed.
func withoutWords(words []string, drop map[string]bool) ([]string, int) {
	out := make([]string, 0, len(words))
	for _, w := range words {
		if !drop[w] {
			out = append(out, w)
		}
	}
	return out, len(words) - len(out)
}

// probeSimilarity measures a target's main-text words against the
// probe's (see soft404Shingle): the higher of the similarity of the texts
// as they are (raw) and of the texts without the two URLs' words (echo,
// -1 when that measure does not apply).
func probeSimilarity(words []string, start, final *url.URL, p *probeResult) (sim, raw, echo float64) {
	ts := shingleSet(words, soft404Shingle)
	raw = jaccardSorted(ts, p.shingles)
	echo = -1
	drop := urlWords(start, final)
	for w := range p.urlWords {
		drop[w] = true
	}
	tw, tn := withoutWords(words, drop)
	pw, pn := withoutWords(p.words, drop)
	if len(tw) < 3 || len(pw) < 3 || 4*tn > 3*len(words) || 4*pn > 3*len(p.words) {
		return raw, raw, echo
	}
	// Every shingle of words without a removed word is one of tw's, so tw
	// has at least len(ts) - 3·tn shingles, pw at most len(pw): when that
	// bounds the Jaccard index below probeWeakSimilarity, the echo measure
	// cannot score and is not computed.
	if least := len(ts) - soft404Shingle*tn; least > 0 && float64(len(pw)) < probeWeakSimilarity*float64(least) {
		return raw, raw, echo
	}
	echo = jaccardSorted(shingleSet(tw, soft404Shingle), shingleSet(pw, soft404Shingle))
	return max(raw, echo), raw, echo
}

// FNV-1a 64-bit parameters, as textsim uses them.
const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3
)

// shingleSet returns the set textsim.Shingles(words, k) computes (the
// same hashes, FNV-1a of k words joined by the byte 0xFF) as a sorted
// slice without duplicates: several times cheaper to build than the map
// for the one comparison each target makes (BenchmarkSoft404Classify).
func shingleSet(words []string, k int) []uint64 {
	if k < 1 {
		k = 1
	}
	if len(words) < k {
		k = len(words)
	}
	if k == 0 {
		return nil
	}
	out := make([]uint64, 0, len(words)-k+1)
	for i := 0; i+k <= len(words); i++ {
		h := uint64(fnvOffset64)
		for j := i; j < i+k; j++ {
			if j > i {
				h ^= 0xFF
				h *= fnvPrime64
			}
			w := words[j]
			for p := 0; p < len(w); p++ {
				h ^= uint64(w[p])
				h *= fnvPrime64
			}
		}
		out = append(out, h)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccardSorted is textsim.Jaccard of two shingleSet results: 1 for two
// empty sets, 0 for one.
func jaccardSorted(a, b []uint64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// pathAndQuery returns u's path and query unescaped (each as written when
// its escapes are invalid).
func pathAndQuery(u *url.URL) (path, query string) {
	path, err := url.PathUnescape(u.EscapedPath())
	if err != nil {
		path = u.EscapedPath()
	}
	query, err = url.QueryUnescape(u.RawQuery)
	if err != nil {
		query = u.RawQuery
	}
	return path, query
}
