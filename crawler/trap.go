package crawler

// Crawl-trap guards. A site can generate URLs without end: a calendar
// linking each month to the next (/calendar?m=N → m=N+1), a session id in
// every link (?sid=<new random>), relative links that recurse (more/ →
// more/more/ …), facets and sorts multiplying query strings. The guards
// below stop each kind, on by default, and record what they cut as a
// finding of kind crawl-trap on the page whose link first hit the guard.
//
// Defaults and their sources (Heritrix 3's decide rules are the anchor;
// see "Crawl traps" in docs/crawling.md):
//
//   - repeated segments: a path segment, or a pair of segments, more than
//     2 times in a row is a trap (PathologicalPathDecideRule,
//     maxRepetitions 2: the regexp .*?/(.*?/)\1{2,}.*);
//   - path depth: more than 20 path segments (TooManyPathSegmentsDecideRule,
//     maxPathDepth 20, which counts the slashes of the path);
//   - URL length: more than 2083 bytes (UURI.MAX_URL_LENGTH, the limit
//     Heritrix's extractors use, Internet Explorer's historical maximum);
//   - query variants: more than 100 query strings of one path. Heritrix
//     has no such rule (its hop limit, TooManyHopsDecideRule maxHops 20,
//     is what ends a calendar there); linkrot counts variants instead, so
//     that a deep but finite site is still crawled whole;
//   - session ids: the parameters of DefaultSessionParams are dropped from
//     the crawl's visited-set key, so links differing only in them are one
//     page (Heritrix's canonicalization rules StripSessionIDs and
//     StripSessionCFIDs; Apache Nutch's regex-normalize.xml).
//
// Memory is bounded: the per-path variant counts grow with the crawled
// paths (as the visited set does), and at most maxTrapPatterns traps are
// kept, further patterns being folded into one per kind and host.

import (
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
)

// Defaults of the trap guards (see the file comment for their sources).
const (
	DefaultMaxSegmentRepeats = 2
	DefaultMaxPathSegments   = 20
	DefaultMaxQueryVariants  = 100
	DefaultMaxURLLength      = 2083
)

// DefaultSessionParams are the query parameters (matched without regard
// to case) that carry a session id rather than name a page. Sources:
// Heritrix StripSessionIDs (jsessionid, phpsessid, sid, aspsessionid*)
// and StripSessionCFIDs (cfid, cftoken); Apache Nutch regex-normalize.xml
// (sessionid, l/j/bv_ prefixed forms); the session parameters of Zen Cart
// (zenid), osCommerce (osCsid) and vBulletin (s); session_id and sessid as
// common hand-written forms. "sid" and "s" are ambiguous (a search box is
// often ?s=): they count only when their value looks like a token (see
// sessionValue). A ";jsessionid=…" path parameter (Java servlets) is
// dropped too.
var DefaultSessionParams = []string{
	"jsessionid", "phpsessid", "sessionid", "session_id", "sessid",
	"aspsessionid", "cfid", "cftoken", "zenid", "oscsid", "bv_sessionid",
	"sid", "s",
}

// maxTrapPatterns bounds the traps kept per crawl.
const maxTrapPatterns = 1000

// trapLimits are the guards' limits; a negative limit turns a guard off.
type trapLimits struct {
	repeats, segments, variants, length int
	session                             map[string]bool // lower-cased names; nil: off
}

func (o Options) trapLimits() trapLimits {
	def := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	l := trapLimits{
		repeats:  def(o.MaxSegmentRepeats, DefaultMaxSegmentRepeats),
		segments: def(o.MaxPathSegments, DefaultMaxPathSegments),
		variants: def(o.MaxQueryVariants, DefaultMaxQueryVariants),
		length:   def(o.MaxURLLength, DefaultMaxURLLength),
	}
	if !o.KeepSessionIDs {
		names := o.SessionParams
		if names == nil {
			names = DefaultSessionParams
		}
		l.session = map[string]bool{}
		for _, n := range names {
			l.session[strings.ToLower(n)] = true
		}
	}
	return l
}

// traps is the guards' state of one crawl. It is safe for concurrent use.
type traps struct {
	lim trapLimits

	mu       sync.Mutex
	variants map[string]*variantCount // scheme://host/path → query variants admitted
	sessions map[string]string        // session pattern → first URL crawled with it
	found    map[string]*audit.CrawlTrap
	order    []string
	flushed  map[string]int64 // Cut already handed to the sink
}

func newTraps(lim trapLimits) *traps {
	return &traps{lim: lim, variants: map[string]*variantCount{}, sessions: map[string]string{},
		found: map[string]*audit.CrawlTrap{}, flushed: map[string]int64{}}
}

// variantCount is the query variants of one path admitted so far, and the
// first of them: where a calendar or facet trap starts.
type variantCount struct {
	n     int
	first string
}

// pathGuard applies the guards that look at one URL alone: length,
// repeated segments, depth. It returns the trap's kind, pattern and limit,
// or kind "" when u passes, and for repeated segments the URL where the
// trap starts (the first occurrence of the repeated unit).
func (t *traps) pathGuard(u *url.URL) (kind audit.TrapKind, pattern, start string, limit int) {
	origin := u.Scheme + "://" + u.Host
	if t.lim.length > 0 {
		if s := u.String(); len(s) > t.lim.length {
			first := firstSegments(u.EscapedPath(), 1)
			if len(first) > 41 {
				first = first[:41]
			}
			return audit.TrapURLTooLong, origin + first + "…", "", t.lim.length
		}
	}
	p := u.EscapedPath()
	if t.lim.repeats > 0 {
		if pat, first, ok := repeatedSegments(p, t.lim.repeats); ok {
			return audit.TrapRepeatedSegments, origin + pat, origin + first, t.lim.repeats
		}
	}
	if t.lim.segments > 0 && strings.Count(p, "/") > t.lim.segments {
		return audit.TrapTooDeep, origin + firstSegments(p, 3) + "…", "", t.lim.segments
	}
	return "", "", "", 0
}

// firstSegments returns the first n segments of path p with their
// slashes ("/a/b/c/").
func firstSegments(p string, n int) string {
	segs := strings.SplitN(strings.TrimPrefix(p, "/"), "/", n+1)
	if len(segs) > n {
		segs = segs[:n]
	}
	return "/" + strings.Join(segs, "/") + "/"
}

// repeatedSegments finds a segment, or a pair of segments, repeated more
// than max times in a row in path p, and returns the pattern
// "/prefix/(unit/){max+1,}" and the path of the unit's first occurrence
// ("/prefix/unit/").
func repeatedSegments(p string, max int) (pattern, first string, ok bool) {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(segs) > 0 && segs[len(segs)-1] == "" {
		segs = segs[:len(segs)-1] // a trailing slash ends the last segment
	}
	n := len(segs)
	for i := 0; i < n; i++ {
		for k := 1; k <= 2; k++ {
			if i+k*(max+1) > n {
				continue
			}
			reps := 1
			for j := i + k; j+k <= n && equalSegs(segs[i:i+k], segs[j:j+k]); j += k {
				reps++
			}
			if reps > max {
				prefix := "/" + strings.Join(segs[:i], "/")
				if i > 0 {
					prefix += "/"
				}
				unit := strings.Join(segs[i:i+k], "/")
				return prefix + "(" + unit + "/){" + strconv.Itoa(max+1) + ",}", prefix + unit + "/", true
			}
		}
	}
	return "", "", false
}

func equalSegs(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// stripSession returns u without its session-id parameters (query
// parameters named in the session list, and a ";jsessionid=" path
// parameter) and the name of the first one removed ("" when none was).
func (t *traps) stripSession(u *url.URL) (*url.URL, string) {
	if t.lim.session == nil {
		return u, ""
	}
	var name string
	c := *u
	if i := indexLower(c.Path, ";jsessionid="); i >= 0 && t.lim.session["jsessionid"] {
		c.Path = c.Path[:i]
		c.RawPath = ""
		name = "jsessionid"
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		kept := parts[:0:0]
		for _, part := range parts {
			k, v, _ := strings.Cut(part, "=")
			lk := strings.ToLower(k)
			if uk, err := url.QueryUnescape(lk); err == nil {
				lk = uk
			}
			if t.isSession(lk, v) {
				if name == "" {
					name = lk
				}
				continue
			}
			kept = append(kept, part)
		}
		c.RawQuery = strings.Join(kept, "&")
	}
	if name == "" {
		return u, ""
	}
	out := new(url.URL) // only now: c itself stays off the heap
	*out = c
	return out, name
}

// indexLower is strings.Index(strings.ToLower(s), substr) for a
// lower-case ASCII substr, without the copy when s is ASCII.
func indexLower(s, substr string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Index(strings.ToLower(s), substr)
		}
	}
	for i := 0; i+len(substr) <= len(s); i++ {
		j := 0
		for j < len(substr) && lowerASCII(s[i+j]) == substr[j] {
			j++
		}
		if j == len(substr) {
			return i
		}
	}
	return -1
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// isSession reports whether parameter k (lower-cased) with value v is a
// session id.
func (t *traps) isSession(k, v string) bool {
	if strings.HasPrefix(k, "aspsessionid") && t.lim.session["aspsessionid"] {
		return true // ASPSESSIONIDXXXXXXXX: the name carries a suffix
	}
	if !t.lim.session[k] {
		return false
	}
	if k == "sid" || k == "s" {
		return sessionValue(v)
	}
	return true
}

// sessionValue reports whether v looks like a session token: at least 16
// characters of letters, digits, '-' and '_' (Heritrix asks for 32
// alphanumerics; vBulletin's s= is 32 hex digits), so that ?s=search or
// ?sid=42 name pages.
func sessionValue(v string) bool {
	if len(v) < 16 {
		return false
	}
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}

// variant counts a new query variant of u's path (u has a query) and
// reports whether it is within the limit; over the limit it returns the
// pattern to record and the first variant crawled (where the trap starts).
func (t *traps) variant(u *url.URL) (pattern, start string, ok bool) {
	if t.lim.variants <= 0 || u.RawQuery == "" {
		return "", "", true
	}
	key := u.Scheme + "://" + strings.ToLower(u.Host) + u.EscapedPath()
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.variants[key]
	if v == nil {
		v = &variantCount{first: u.String()}
		t.variants[key] = v
	}
	if v.n >= t.lim.variants {
		return key + "?…", v.first, false
	}
	v.n++
	return "", "", true
}

// sessionPattern is the pattern of session-id links of u's host.
func sessionPattern(u *url.URL, param string) string {
	return u.Scheme + "://" + u.Host + "/…?" + param + "=…"
}

// sessionSeen notes u, a URL carrying session parameter param, as crawled
// (the first one per pattern is where the trap starts).
func (t *traps) sessionSeen(u *url.URL, param string) {
	p := sessionPattern(u, param)
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.sessions[p]; !ok && len(t.sessions) < maxTrapPatterns {
		t.sessions[p] = u.String()
	}
}

// sessionStart returns the first URL crawled with the session pattern.
func (t *traps) sessionStart(pattern string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[pattern]
}

// cut records that the guard of kind cut u; page is where the trap starts
// (the first page of the pattern when known, else the page whose link hit
// the guard). It reports whether this is a new trap.
func (t *traps) cut(kind audit.TrapKind, pattern, page string, u *url.URL, limit int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := string(kind) + " " + pattern
	tr := t.found[key]
	if tr == nil && len(t.found) >= maxTrapPatterns {
		// Too many patterns: fold the rest into one per kind and host.
		pattern = u.Scheme + "://" + u.Host + "/… (further patterns)"
		key = string(kind) + " " + pattern
		tr = t.found[key]
	}
	isNew := tr == nil
	if tr == nil {
		ex := u.String()
		if len(ex) > 300 {
			ex = ex[:300] + "…"
		}
		tr = &audit.CrawlTrap{Kind: kind, Pattern: pattern, PageURL: page, Example: ex, Limit: limit}
		t.found[key] = tr
		t.order = append(t.order, key)
	}
	tr.Cut++
	return isNew
}

// list returns the traps found so far with their total Cut.
func (t *traps) list() []audit.CrawlTrap {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]audit.CrawlTrap, 0, len(t.order))
	for _, k := range t.order {
		out = append(out, *t.found[k])
	}
	return out
}

// delta returns what was cut since the last delta: each trap with the
// Cut not yet reported.
func (t *traps) delta() []audit.CrawlTrap {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []audit.CrawlTrap
	for _, k := range t.order {
		tr := t.found[k]
		if d := tr.Cut - t.flushed[k]; d > 0 {
			c := *tr
			c.Cut = d
			out = append(out, c)
			t.flushed[k] = tr.Cut
		}
	}
	return out
}
