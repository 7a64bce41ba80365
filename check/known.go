package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift/textsim"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/internal/cpuslot"
	"github.com/linkrot/linkrot/internal/pagefacts"
	"github.com/linkrot/linkrot/urls"
	"golang.org/x/net/html"
)

// A page of the audited site is fetched by the crawler; a check of its URL
// reuses that response instead of fetching the page again. The crawler
// records what a check needs (Observe, computed with the checker's own
// code over the bytes the checker would read), the run stores it with the
// page, and the checker judges a target with a Known exactly as if it had
// fetched it: same classification of status and redirect chain, same
// fingerprint and anchors, and the soft-404 probe (a request to another
// URL) compared with the crawl's main text.

// knownTextMax caps the main text kept of a crawled page for the soft-404
// comparison (PageEvidence.Text): 64 KiB of words, about 10,000. A page
// with more is compared on this prefix, which decides the verdict exactly
// unless the probe's text is itself about as long (see knownBody.decides);
// then the target is fetched after all.
const knownTextMax = 64 << 10

// Known is the response the crawl of the same run got for a target's URL:
// the checker judges the target from it without a request of its own (but
// for the soft-404 probe of its directory, a different URL). Build it with
// KnownIndex.
//
// A Known is not used (the target is fetched as usual, with retries) when
// its outcome is transient (429, 5xx), when its redirect chain is longer
// than Options.MaxRedirects, or when its fingerprint does not cover what
// the checker would read (another body cap).
type Known struct {
	// FinalURL is the URL of the final response (normalized); Redirects
	// the hops from the target's URL to it, normalized as the checker
	// records them.
	FinalURL  string
	Redirects []audit.Redirect
	// Status and ContentType are those of the final response.
	Status      int
	ContentType string
	// FetchedAt and Duration are when the crawl got the final response and
	// how long its request took (redirects included).
	FetchedAt time.Time
	Duration  time.Duration
	// Evidence is what the crawl recorded of the final response
	// (Observe). Its Anchors and Text may be left empty for Load.
	Evidence audit.PageEvidence
	// Load, when not nil, returns the anchors and main text of a 2xx HTML
	// page, which were left out of Evidence to save memory. It is called
	// at most once, from a worker, and only when they are needed.
	Load func(ctx context.Context) (anchors []string, text string, err error)
	// Offline says the crawl read the page from a local directory served
	// as the site (linkrot audit DIR --base URL), not from the network:
	// no soft-404 probe is made, since the live site at that URL is not
	// the site audited, and the directory's file server answers unknown
	// URLs with a real 404.
	Offline bool
}

// Observe computes, from a response the crawler got, the evidence a check
// of the same URL needs: the checker's evidence header fields and
// validators, its bot-challenge signal, and for a 2xx HTML response the
// fingerprint, anchors and main text of the first maxBody decoded bytes
// (the checker's Options.MaxBody; <= 0: defaultMaxBody), exactly as the
// checker would compute them. header is the response's header as the
// server sent it (Content-Type and Content-Encoding included); body the
// decoded body read, complete false when the reader stopped before its
// end; parsed, when not nil, the body as the caller decoded and parsed it
// (see ParsedHTML). Observe returns nil when the checker could not have
// read the body (an unsupported Content-Encoding): such a page is checked
// by fetching it.
func Observe(status int, header http.Header, body []byte, complete bool, maxBody int64, parsed *ParsedHTML) *audit.PageEvidence {
	if maxBody <= 0 {
		maxBody = defaultMaxBody
	}
	e := &audit.PageEvidence{
		BodyCap:      maxBody,
		Headers:      evidenceHeaders(header),
		ETag:         truncate(header.Get("ETag"), 200),
		LastModified: truncate(header.Get("Last-Modified"), 100),
	}
	// What session.attempt reads of the body.
	var limit int64
	switch {
	case status >= 200 && status < 300:
		limit = maxBody
	case status == http.StatusForbidden || status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		limit = min(maxBody, challengeBodyMax)
	}
	var read []byte
	isRead, truncated := false, false
	if mt := httpx.MediaType(header.Get("Content-Type")); limit > 0 && (mt == "" || httpx.IsHTMLType(mt)) {
		if ce := strings.ToLower(strings.TrimSpace(header.Get("Content-Encoding"))); ce != "" && ce != "identity" {
			return nil
		}
		if mt == "" {
			mt = httpx.MediaType(http.DetectContentType(body[:min(len(body), 512)]))
		}
		if httpx.IsHTMLType(mt) {
			n := min(int64(len(body)), limit)
			read, isRead = body[:n], true
			truncated = !complete || int64(len(body)) > limit
		}
	}
	e.Challenge = challenge(status, header, read)
	if isRead && status >= 200 && status < 300 {
		fp := fingerprintPage(read, header.Get("Content-Type"), true, parsed, true)
		e.HTML = true
		e.BodyBytes, e.BodyTruncated = int64(len(read)), truncated
		e.SHA256, e.SimHash, e.Words = fp.sha256, fp.simhash, fp.count
		e.Anchors = fp.anchors
		e.Text, e.TextCapped = fp.text, fp.capped
		e.Signals = fp.signals
	}
	return e
}

// Observer returns Observe with the checker's body cap maxBody (its
// Options.MaxBody; <= 0: defaultMaxBody), in the form the crawler takes it
// (crawler.Options.Observe): parsed, when not nil, is the body as the
// crawler decoded and read it (see ParsedHTML). The pipeline wires the two
// stages with it, so that the crawler records each page's evidence as the
// checker would read it without importing the checker.
func Observer(maxBody int64) func(status int, header http.Header, body []byte, complete bool, parsed *ParsedHTML) *audit.PageEvidence {
	return func(status int, header http.Header, body []byte, complete bool, parsed *ParsedHTML) *audit.PageEvidence {
		return Observe(status, header, body, complete, maxBody, parsed)
	}
}

// responseFields are the response header fields Observe reads: the
// evidence fields, the validators, Content-Type and Content-Encoding.
var responseFields = append(slices.Clone(evidenceFields), "Content-Type", "Content-Encoding", "ETag", "Last-Modified")

// pageFingerprint is what a check takes from a 2xx HTML body.
type pageFingerprint struct {
	sha256  string
	simhash uint64
	count   int      // words of the main text
	words   []string // main-text words for the soft-404 comparison (a prefix when capped)
	capped  bool     // words (or text) is a prefix
	text    string   // with keepText: the words joined by spaces, at most KnownTextMax bytes
	anchors []string
	signals *audit.PageSignals // for the soft-404 classifier
}

// ParsedHTML is a body the caller already decoded and read (the
// crawler's extraction), offered to Observe so that it need not read it
// again: it is used when Decoded is exactly the document the checker
// would parse. Doc is its html.Parse (not modified since), or Facts what
// the crawler's one pass read of it (pagefacts.Facts): the same evidence
// without a tree.
type ParsedHTML = pagefacts.Parsed

// fingerprintPage fingerprints a 2xx HTML body (decoded, at most MaxBody
// bytes): SHA-256 of the bytes, SimHash and words of the main text, and
// with withAnchors the page's anchors. The document is parsed once, for
// the main text and the anchors; parsed is used instead when it is the
// same document. With keepText the words are returned joined, as much of
// them as KnownTextMax holds (text, capped), instead of as a slice.
func fingerprintPage(body []byte, contentType string, withAnchors bool, parsed *ParsedHTML, keepText bool) pageFingerprint {
	sum := sha256.Sum256(body)
	page := httpx.DecodeHTML(body, contentType)
	var doc *html.Node
	var facts *pagefacts.Facts
	if parsed != nil && (parsed.Doc != nil || parsed.Facts != nil) && bytes.Equal(page, parsed.Decoded) {
		doc, facts = parsed.Doc, parsed.Facts
		if facts != nil {
			doc = nil
		}
	} else if parsed != nil && parsed.Read != nil {
		facts = parsed.Read(page)
	}
	if doc == nil && facts == nil {
		if d, err := html.Parse(bytes.NewReader(page)); err == nil {
			doc = d
		}
	}
	fp := pageFingerprint{sha256: hex.EncodeToString(sum[:])}
	if keepText {
		// Streamed: textsim.Words and textsim.SimHash without the slice.
		var sh textsim.SimHasher
		// The text is joined in a reused buffer and copied once to its
		// exact size: a Builder grew (and copied) it several times.
		bp := textBufPool.Get().(*[]byte)
		b := (*bp)[:0]
		add := func(w []byte) {
			sh.AddBytes(w)
			fp.count++
			if fp.capped {
				return
			}
			if len(b) > 0 {
				if len(b)+1+len(w) > knownTextMax {
					fp.capped = true
					return
				}
				b = append(b, ' ')
			} else if len(w) > knownTextMax {
				fp.capped = true
				return
			}
			b = append(b, w...)
		}
		mainWords(facts, doc, page, add)
		fp.simhash, fp.text = sh.Sum(), string(b)
		*bp = b
		textBufPool.Put(bp)
	} else {
		fp.words = make([]string, 0, len(page)/16+1)
		mainWords(facts, doc, page, func(w []byte) { fp.words = append(fp.words, string(w)) })
		fp.simhash, fp.count = textsim.SimHash(fp.words), len(fp.words)
	}
	if facts != nil {
		fp.signals = signalsOf(facts)
	} else {
		fp.signals = pageSignals(doc)
	}
	if withAnchors {
		switch {
		case facts != nil:
			fp.anchors = facts.Anchors[:min(len(facts.Anchors), maxAnchors):min(len(facts.Anchors), maxAnchors)]
		case doc != nil:
			fp.anchors = anchorsOf(doc, maxAnchors)
		default:
			fp.anchors = anchors(page, maxAnchors)
		}
	}
	return fp
}

// mainWords calls yield with each word of the page's main text, read
// from facts (the crawler's one pass), else from doc, else from page
// itself (its token scan of what the parser refuses), with URL passwords
// redacted (urls.RedactText): a page may show a URL with its password as
// text ("https://user:pw@host/"), and the words are hashed and kept (the
// stored text). The redaction works on the collapsed main text, which is
// the same on every path, and only when it holds an "@"; no word is
// allocated on its own (w is valid only during yield).
func mainWords(facts *pagefacts.Facts, doc *html.Node, page []byte, yield func(w []byte)) {
	var text string
	switch {
	case facts != nil:
		if bytes.IndexByte(facts.MainText, '@') < 0 {
			textsim.EachRawWordBytes(facts.MainText, yield)
			return
		}
		text = textsim.CollapseRaw(facts.MainText)
	case doc != nil:
		text = textsim.MainTextOf(doc)
	default:
		text = textsim.MainText(page)
	}
	if strings.IndexByte(text, '@') >= 0 {
		text = urls.RedactText(text)
	}
	// The collapsed text's words are its raw text's (textsim.CollapseRaw).
	textsim.EachRawWordBytes([]byte(text), yield)
}

// textBufPool holds the buffers fingerprintPage joins main texts in (at
// most KnownTextMax bytes each).
var textBufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 16<<10)
	return &b
}}

// splitWords splits the text fingerprintPage keeps (keepText): words never
// hold a space.
func splitWords(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(text, " ")
}

// knownBody is what judge takes from a Known instead of a body.
type knownBody struct {
	challenge string
	fp        pageFingerprint
	offline   bool // Known.Offline
}

// offline reports whether the chain's response was read from a local
// directory: no probe goes to the network for it.
func (ch *chain) offline() bool { return ch.known != nil && ch.known.offline }

// decides reports whether the soft-404 probe comparison with p can be
// made on the known text. A capped text is a prefix of the page's words:
// its shingles (raw, or without the URLs' words) are a subset of the whole
// page's, of which there are at least a. The Jaccard index of the whole
// page and the probe is at most |P|/a when the probe has |P| < a
// shingles, so when |P| < probeWeakSimilarity·a for both measures (see
// probeSimilarity) the probe adds nothing to the classifier's score, as
// the prefix's own similarity (also below |P|/a) says. Otherwise the
// prefix cannot tell and the target is fetched.
func (k *knownBody) decides(p *probeResult, start, final *url.URL, threshold float64) bool {
	if !k.fp.capped || p == nil || p.status < 200 || p.status > 299 {
		return true
	}
	bound := min(threshold, probeWeakSimilarity)
	if len(k.fp.words) < soft404Shingle {
		return false
	}
	a := len(shingleSet(k.fp.words, soft404Shingle))
	if float64(len(p.shingles)) >= bound*float64(a) {
		return false
	}
	drop := urlWords(start, final)
	for w := range p.urlWords {
		drop[w] = true
	}
	tw, _ := withoutWords(k.fp.words, drop)
	pw, _ := withoutWords(p.words, drop)
	if len(tw) < soft404Shingle {
		return false
	}
	af := len(shingleSet(tw, soft404Shingle))
	return float64(len(shingleSet(pw, soft404Shingle))) < bound*float64(af)
}

// challenge is challenge() for the chain's last response; a response
// known from the crawl carries the signal the crawl found in it.
func (ch *chain) challenge() string {
	if ch.known != nil {
		return ch.known.challenge
	}
	r := ch.last
	return challenge(r.status, r.header, r.body)
}

// fingerprint returns the fingerprint of the chain's 2xx HTML response:
// computed from its body, or taken from the crawl's evidence.
func (ch *chain) fingerprint(withAnchors bool) pageFingerprint {
	if ch.known != nil {
		return ch.known.fp
	}
	r := ch.last
	var fp pageFingerprint
	cpuslot.Do(func() { // CPU work: see internal/cpuslot
		fp = fingerprintPage(r.body, r.header.Get("Content-Type"), withAnchors, nil, false)
	})
	return fp
}

// knownPlan is how Run schedules a target with a usable Known.
type knownPlan struct {
	// probeKey is the probe cache key of the target's directory when
	// judging it needs the soft-404 probe, "" when it needs no request.
	probeKey string
}

// planKnown returns the plan of a target whose Known is usable, or nil.
func (rs *runState) planKnown(t Target, u *url.URL) *knownPlan {
	if !rs.usableKnown(t) {
		return nil
	}
	k := t.Known
	p := &knownPlan{}
	if k.Status >= 200 && k.Status <= 299 && k.Evidence.HTML && k.Evidence.Challenge == "" && !rs.o.DisableSoft404 && !k.Offline {
		if final, err := netURL(k.FinalURL); err == nil && !redirectToRoot(u, final, k.Redirects) {
			p.probeKey, _ = probeFor(u)
		}
	}
	return p
}

// free reports whether checking t makes no request: its Known needs no
// probe, or the probe of its directory is done. Such a target does not
// make its host wait HostDelay before the next one.
func (rs *runState) free(t Target) bool {
	p := t.plan
	return p != nil && (p.probeKey == "" || rs.probes.get(p.probeKey) != nil)
}

// usableKnown reports whether t's Known stands for a fetch by the checker.
func (rs *runState) usableKnown(t Target) bool {
	k := t.Known
	if k == nil || k.FinalURL == "" || k.Status < 100 || k.Status > 999 {
		return false
	}
	if k.Status == http.StatusTooManyRequests || k.Status >= 500 && k.Status <= 599 {
		return false // transient: fetched, with retries
	}
	if len(k.Redirects) > rs.o.MaxRedirects {
		return false
	}
	if n := len(k.Redirects); n > 0 && k.Redirects[n-1].To != k.FinalURL {
		return false
	}
	e := &k.Evidence
	if e.HTML {
		// The fingerprint must cover what the checker would read: the
		// whole body within MaxBody, or exactly MaxBody of a longer one.
		if k.Status < 200 || k.Status > 299 {
			return false
		}
		if e.BodyTruncated && e.BodyBytes != rs.o.MaxBody || !e.BodyTruncated && e.BodyBytes > rs.o.MaxBody {
			return false
		}
	}
	if (k.Status == http.StatusForbidden || k.Status == http.StatusServiceUnavailable) &&
		min(e.BodyCap, challengeBodyMax) != min(rs.o.MaxBody, challengeBodyMax) {
		return false // the challenge was looked for in another length of the body
	}
	return true
}

// checkKnown judges t from its Known, as judge would have from a fetch. It
// reports false when t must be fetched instead: the Known is not usable,
// its text could not be loaded, or the soft-404 comparison needs more of
// the text than the crawl kept (or a probe met a pause: s.deferred). The
// session's slot is released as in check, only when
// it reports true.
func (rs *runState) checkKnown(ctx context.Context, s *session, t Target, u *url.URL) (audit.Check, bool) {
	if !rs.usableKnown(t) {
		return audit.Check{}, false
	}
	k := t.Known
	final, err := netURL(k.FinalURL)
	if err != nil {
		return audit.Check{}, false
	}
	e := k.Evidence
	kb := &knownBody{challenge: e.Challenge, offline: k.Offline}
	if e.HTML {
		anchors, text := e.Anchors, e.Text
		if k.Load != nil && (t.WantAnchors || !rs.o.DisableSoft404) {
			if anchors, text, err = k.Load(ctx); err != nil {
				rs.c.log.Warn("crawl evidence not loaded: the target is fetched", "url", t.URL, "err", err)
				return audit.Check{}, false
			}
		}
		kb.fp = pageFingerprint{sha256: e.SHA256, simhash: e.SimHash, count: e.Words,
			words: splitWords(text), capped: e.TextCapped, anchors: anchors, signals: e.Signals}
	}
	h := http.Header{}
	for name, v := range e.Headers {
		h.Set(name, v)
	}
	ch := &chain{
		redirects: slices.Clone(k.Redirects),
		final:     final,
		last: &response{url: final, status: k.Status, header: h, html: e.HTML,
			truncated: e.HTML && e.BodyTruncated, timings: audit.Timings{Total: k.Duration}},
		known: kb,
	}
	c := audit.Check{TargetID: t.ID, URL: t.URL, CheckedAt: k.FetchedAt.UTC(), FromCrawl: true}
	if k.FetchedAt.IsZero() {
		c.CheckedAt = time.Now().UTC()
	}
	rs.judge(ctx, &c, t, u, ch, s)
	if s.deferred != nil {
		return audit.Check{}, false
	}
	if ch.refetch {
		rs.c.log.Debug("soft-404 comparison needs more than the crawl's text: the target is fetched", "url", t.URL)
		return audit.Check{}, false
	}
	// The validators as the crawl read them (the first value of each
	// field, as a fetch reads them).
	c.ContentType = truncate(k.ContentType, 200)
	c.ETag, c.LastModified = e.ETag, e.LastModified
	return c, true
}

// KnownIndex finds, for a target URL, what the crawl of a run observed
// when it requested that URL: its final response, or a redirect whose
// destination the crawl requested in turn (possibly as another page). A
// crawl requests each normalized URL at most once, so every URL has at
// most one observation.
type KnownIndex struct {
	byURL map[string]*observation
	load  func(ctx context.Context, p *audit.Page) ([]string, string, error)
}

// observation is the answer the crawl got for one URL.
type observation struct {
	status   int
	location string      // normalized destination of a redirect
	page     *audit.Page // the page whose final response this is
}

// maxKnownHops bounds the chains KnownIndex follows (Options.MaxRedirects
// then decides whether a chain is used).
const maxKnownHops = 100

// NewKnownIndex indexes the pages of a run. A page that failed (FetchError,
// no response) is left out; so is a final response without Evidence (a
// crawl by an older linkrot), though its redirect hops are kept. load,
// when not nil, becomes each Known's Load: it returns the page's anchors
// and main text when the pages' Evidence was read without them.
func NewKnownIndex(pages []*audit.Page, load func(ctx context.Context, p *audit.Page) (anchors []string, text string, err error)) *KnownIndex {
	ix := &KnownIndex{byURL: make(map[string]*observation, len(pages)), load: load}
	add := func(raw string, o *observation) {
		if n, err := urls.NormalizeURL(raw); err == nil {
			if _, dup := ix.byURL[n]; !dup {
				ix.byURL[n] = o
			}
		}
	}
	for _, p := range pages {
		if p == nil || p.FetchError != "" || p.Status == 0 {
			continue
		}
		finalIsHop := false
		for i, h := range p.Redirects {
			if !isRedirect(h.Status) {
				continue // a 300 or similar with a Location: not followed
			}
			to, err := urls.NormalizeURL(h.To)
			if err != nil {
				break
			}
			add(h.From, &observation{status: h.Status, location: to})
			if i == len(p.Redirects)-1 && h.Status == p.Status && sameURL(h.From, p.URL) {
				finalIsHop = true // a redirect the crawl did not follow
			}
		}
		if !finalIsHop && !isRedirect(p.Status) && p.Evidence != nil {
			add(p.URL, &observation{status: p.Status, page: p})
		}
	}
	return ix
}

func sameURL(a, b string) bool {
	na, err1 := urls.NormalizeURL(a)
	nb, err2 := urls.NormalizeURL(b)
	return err1 == nil && err2 == nil && na == nb
}

// Lookup returns the crawl's response for a target URL (normalized by
// urls.NormalizeURL), following redirects the crawl observed, or nil when
// the crawl did not observe the URL's outcome to its end.
func (ix *KnownIndex) Lookup(target string) *Known {
	cur := target
	var hops []audit.Redirect
	seen := map[string]bool{cur: true}
	for {
		o := ix.byURL[cur]
		if o == nil {
			return nil
		}
		if p := o.page; p != nil {
			k := &Known{
				FinalURL:    cur,
				Redirects:   hops,
				Status:      p.Status,
				ContentType: p.ContentType,
				FetchedAt:   p.FetchedAt,
				Duration:    p.Duration,
				Evidence:    *p.Evidence,
			}
			if ix.load != nil && p.Evidence.HTML {
				k.Load = func(ctx context.Context) ([]string, string, error) { return ix.load(ctx, p) }
			}
			return k
		}
		if seen[o.location] || len(hops) >= maxKnownHops {
			return nil // a loop the crawl saw: the checker decides
		}
		hops = append(hops, audit.Redirect{From: cur, To: o.location, Status: o.status})
		seen[o.location] = true
		cur = o.location
	}
}

// netURL parses s by the one URL parser (urls.ParseURL) into the net/url
// value code here works on (urls.URL.NetURL): a crawled page at "/a%zz"
// is a final URL like any other.
func netURL(s string) (*url.URL, error) {
	u, err := urls.ParseURL(s)
	if err != nil {
		return nil, err
	}
	return u.NetURL(), nil
}
