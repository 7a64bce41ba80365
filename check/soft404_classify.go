package check

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
)

// The soft-404 classifier. A 2xx HTML target is judged by named signals,
// each recorded as evidence on the check (audit.Soft404Signal: name,
// score, what matched and where) whether or not it decides:
//
//   - probe: a sibling URL that cannot exist is requested once per
//     directory (Bar-Yossef, Broder, Kumar and Tomkins, "Sic transit
//     gloria telae: towards an understanding of the Web's decay", WWW
//     2004; Meneses, Furuta and Shipman, "Identifying 'soft 404' error
//     pages: analyzing the lexical signatures of documents in distributed
//     collections", TPDL 2012). Same not-found page as the
//     probe (soft404Shingle), or both redirected to one page that is not
//     a home page: weightProbe. A similarity between probeWeakSimilarity
//     and the threshold adds up to weightProbeWeak. A probe answered 404
//     or 410 is recorded with score 0: it no longer rules the other
//     signals out.
//   - words: the page's own words saying "not found" (soft404_phrases.go)
//     in ten languages, weighed by WHERE they are (Google Search Central,
//     "HTTP status codes ... Soft 404 errors": a page that tells the
//     reader it does not exist while answering 200): a title
//     segment or <h1> that IS a not-found statement (weightTitle,
//     weightH1; one that merely contains a phrase, weightTitlePart,
//     weightH1Part), and the start of the main text (the first
//     textStartTokens words after the heading: weightTextShort for a
//     short page, less for longer ones). Title and heading weigh less on
//     longer pages too (lengthFactor): a not-found page is short, a page
//     ABOUT 404 errors is long. Two or more words of pages about errors
//     ("status code", "handler", "exception", "middleware" ...) at the
//     start of the text subtract weightAbout.
//   - error-url: the target was redirected and the chain ends on an
//     error-looking URL (/404, /not-found, /error, /errors/404.html,
//     ?error=404, ASP.NET's ?aspxerrorpath=): weightErrorURL.
//
// The target is a soft 404 when the sum of these scores reaches
// audit.Soft404Threshold (1).
//
//   - parked and drift: a lander's own markers (parked_classify.go):
//     parking-service code, marketplace redirects and links, for-sale
//     offers, registrar notices, a script-only page; and the drift from
//     the target's earlier fingerprint. Their sum reaching the threshold
//     makes the target parked, which wins over soft-404.

// Weights and bounds of the classifier (docs/checking.md "Soft-404 signals").
const (
	weightProbe         = 1.0
	weightProbeWeak     = 0.5
	probeWeakSimilarity = 0.6

	weightTitle     = 0.6
	weightTitlePart = 0.2
	weightH1        = 0.5
	weightH1Part    = 0.15
	weightTextShort = 0.5
	weightTextMid   = 0.25
	weightTextLong  = 0.1
	weightAbout     = -0.5
	textStartTokens = 60
	// shortText and midText bound a short and a medium main text in
	// words (a Chinese or Japanese character counts half a word).
	shortText = 150
	midText   = 400

	weightErrorURL = 1.0
)

// soft404Input is what the classifier reads of one 2xx HTML target.
type soft404Input struct {
	start, final *url.URL
	redirects    []audit.Redirect
	// words are the main-text words (textsim.Words), a prefix of them when
	// the text was capped; count is the number of all of them.
	words   []string
	count   int
	page    *audit.PageSignals
	simhash uint64
	// probe is the probe of the target's directory, nil when none was
	// made.
	probe *probeResult
	// reference is an earlier check of the target with its fingerprint,
	// or nil.
	reference      *audit.Check
	probeThreshold float64
}

// soft404Result is the classifier's outcome: the evidence, and the
// verdict to give ("" to keep the one of the status and redirects).
type soft404Result struct {
	ev      *audit.Soft404Evidence
	verdict audit.Verdict
	reason  string
}

// classifySoft404 runs every signal and sums the scores. The evidence is
// nil when there was no probe and no signal found anything.
func classifySoft404(in *soft404Input) soft404Result {
	ev := &audit.Soft404Evidence{}
	threshold := in.probeThreshold
	if threshold <= 0 || threshold > 1 {
		threshold = defaultSoft404Threshold
	}
	toks := foldTokens(in.words)
	length := effectiveLength(in.words, in.count)

	var sigs []audit.Soft404Signal
	if p := in.probe; p != nil {
		ev.ProbeURL, ev.ProbeStatus = p.url, p.status
		if p.final != p.url {
			ev.ProbeFinal = p.final
		}
		if s, ok := probeSignal(in, threshold, ev); ok {
			sigs = append(sigs, s)
		}
	}
	sigs = append(sigs, wordSignals(in.page, toks, length, urlNumbers(in.start))...)
	if s, ok := errorURLSignal(in); ok {
		sigs = append(sigs, s)
	}
	parked, kinds := parkedSignals(in, toks, length)

	for _, s := range sigs {
		ev.Score += s.Score
	}
	for _, s := range parked {
		ev.Parked += s.Score
	}
	ev.Score, ev.Parked = round4(max(ev.Score, 0)), round4(max(ev.Parked, 0))
	ev.Signals = append(sigs, parked...)
	if len(ev.Signals) == 0 {
		ev.Signals = nil
		if in.probe == nil {
			return soft404Result{} // nothing to record
		}
	}

	res := soft404Result{ev: ev}
	switch {
	case ev.Parked >= audit.Soft404Threshold:
		res.verdict = audit.VerdictParked
		res.reason = fmt.Sprintf("parked domain (score %.2f ≥ %.0f; %s): %s", ev.Parked, audit.Soft404Threshold,
			strings.Join(kinds, ", "), describe(parked))
	case ev.Score >= audit.Soft404Threshold:
		res.verdict = audit.VerdictSoft404
		res.reason = fmt.Sprintf("soft 404 (score %.2f ≥ %.0f): %s", ev.Score, audit.Soft404Threshold, describe(sigs))
	}
	return res
}

// describe lists the signals that weigh, for Check.Reason:
// "words (title): page not found: \"Page not found\" +0.60; ...".
func describe(sigs []audit.Soft404Signal) string {
	var parts []string
	for _, s := range sigs {
		if s.Score == 0 {
			continue
		}
		d := s.Name
		if s.Where != "" && s.Where != "probe" && s.Where != "url" {
			d += " (" + s.Where + ")"
		}
		if s.Match != "" {
			d += ": " + truncate(s.Match, 200)
		}
		parts = append(parts, fmt.Sprintf("%s %+.2f", d, s.Score))
	}
	return strings.Join(parts, "; ")
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// effectiveLength is the main text's length in words, a Chinese or
// Japanese character (a token of its own) counting half: count words of
// which words is a prefix.
func effectiveLength(words []string, count int) int {
	cjk := 0
	for _, w := range words {
		if r, n := utf8.DecodeRuneInString(w); n == len(w) && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			cjk++
		}
	}
	if len(words) > 0 && count > len(words) {
		cjk = cjk * count / len(words)
	}
	return max(count, len(words)) - cjk/2
}

// lengthFactor scales the title and heading scores by the length of the
// main text: 1 for a short page, 0.6 for a medium one, 0.3 for a long one.
func lengthFactor(length int) float64 {
	return byLength(length, 1, 0.6, 0.3)
}

// probeSignal scores the probe (see the comment at the top).
func probeSignal(in *soft404Input, threshold float64, ev *audit.Soft404Evidence) (audit.Soft404Signal, bool) {
	p := in.probe
	s := audit.Soft404Signal{Name: "probe", Where: "probe"}
	if p.failure != "" {
		s.Match = p.failure
		return s, true
	}
	if p.status < 200 || p.status > 299 {
		s.Match = fmt.Sprintf("probe answered %d: unknown URLs get an error status", p.status)
		return s, true
	}
	sim, raw, echo := probeSimilarity(in.words, in.start, in.final, p)
	ev.Similarity = round4(sim)
	sameFinal := p.final == in.final.String()
	switch {
	case sameFinal && len(in.redirects) > 0 && !isHome(in.final.Path):
		s.Score = weightProbe
		s.Match = "redirected to the same page as the probe: " + truncate(p.final, 200)
	case sameFinal:
		s.Match = "the probe lands on the target (where unknown URLs are sent)"
	case len(in.words) == 0 && len(p.words) == 0:
		s.Match = "neither page has text (a script-rendered site): undecidable"
	default:
		m := fmt.Sprintf("probe answered %d with text %.2f similar (threshold %.2f", p.status, sim, threshold)
		if echo >= 0 && echo > raw {
			m += fmt.Sprintf("; %.2f before removing the words of the two URLs", raw)
		}
		s.Match = m + ")"
		switch {
		case sim >= threshold:
			s.Score = weightProbe
		case sim >= probeWeakSimilarity && threshold > probeWeakSimilarity:
			s.Score = round4(weightProbeWeak * (sim - probeWeakSimilarity) / (threshold - probeWeakSimilarity))
		}
	}
	return s, true
}

// wordSignals scores the page's own words (see the comment at the top).
//
// named are the numbers the page's own URL carries as path or query tokens
// (urlNumbers): a title or heading that says only such a number ("Page
// 404" at /p/404, "Chapter 410" at /chapters/410) names the page by its
// URL and says nothing about an error.
func wordSignals(page *audit.PageSignals, toks []string, length int, named []string) []audit.Soft404Signal {
	set := notFoundSet()
	factor := lengthFactor(length)
	var out []audit.Soft404Signal
	positive := false
	add := func(where, match string, score float64) {
		out = append(out, audit.Soft404Signal{Name: "words", Where: where, Match: match, Score: round4(score)})
		positive = positive || score > 0
	}
	var h1Toks []string
	if page != nil {
		if full, part := statement(set, page.Title, true, named); full != "" {
			add("title", quoteIn(full, page.Title), weightTitle*factor)
		} else if part != "" {
			add("title", quoteIn(part, page.Title), weightTitlePart*factor)
		}
		for i, h := range page.H1 {
			if i == 0 {
				h1Toks = phraseTokens(h)
			}
			if full, part := statement(set, h, false, named); full != "" {
				add("h1", quoteIn(full, h), weightH1*factor)
				break
			} else if part != "" {
				add("h1", quoteIn(part, h), weightH1Part*factor)
				break
			}
		}
	}
	// The start of the main text, after the heading when it starts with it.
	skip := 0
	if len(h1Toks) > 0 && len(toks) >= len(h1Toks) && slices.Equal(toks[:len(h1Toks)], h1Toks) {
		skip = len(h1Toks)
	}
	startToks := toks[skip:min(len(toks), skip+textStartTokens)]
	for _, m := range set.find(startToks) {
		if m.p.kind != kindStrong {
			continue
		}
		w := byLength(length, weightTextShort, weightTextMid, weightTextLong)
		add("text-start", m.p.text, w)
		break
	}
	if positive {
		var about []string
		for _, m := range aboutSet().find(toks[:min(len(toks), skip+textStartTokens)]) {
			if !slices.Contains(about, m.p.text) {
				about = append(about, m.p.text)
			}
		}
		if len(about) >= 2 {
			add("text-start", "about errors, not an error: "+strings.Join(about[:min(len(about), 4)], ", "), weightAbout)
		}
	}
	return out
}

// urlNumbers returns the all-digit tokens of u's path and query ("/p/404"
// and "?page=410" carry 404 and 410), nil for a nil u.
func urlNumbers(u *url.URL) []string {
	if u == nil {
		return nil
	}
	var out []string
	isDigit := func(r rune) bool { return r >= '0' && r <= '9' }
	for _, text := range []string{u.Path, u.RawQuery} {
		for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !isDigit(r) }) {
			out = append(out, tok)
		}
	}
	return out
}

// onlyNumbers reports whether every word of phrase is one of nums ("404"
// and "404 404" with 404 in nums).
func onlyNumbers(phrase string, nums []string) bool {
	words := strings.Fields(phrase)
	if len(words) == 0 || len(nums) == 0 {
		return false
	}
	for _, w := range words {
		if !slices.Contains(nums, w) {
			return false
		}
	}
	return true
}

// quoteIn describes a phrase found in a title or heading.
func quoteIn(phrase, in string) string {
	return phrase + ": " + strconv.Quote(truncate(in, 120))
}

// titleSeparators split a title into segments (the page's own title, the
// site's name, a section).
var titleSeparators = strings.NewReplacer("|", "\x00", " - ", "\x00", "–", "\x00", "—", "\x00",
	"·", "\x00", "»", "\x00", "«", "\x00", "::", "\x00", " / ", "\x00", ":", "\x00", "•", "\x00")

// statement looks for a not-found statement in a title (split into
// segments) or a heading: full is the phrase of a segment that is all
// phrases and fillers with at least one strong phrase (or one weak phrase
// and nothing else but fillers); part is a strong phrase in a segment
// with other words. Both are "" when there is none. A segment whose only
// phrase is a number among named (the numbers of the page's own URL, see
// wordSignals) is no statement.
func statement(set *phraseSet, text string, split bool, named []string) (full, part string) {
	segs := []string{text}
	if split {
		segs = strings.Split(titleSeparators.Replace(text), "\x00")
	}
	for _, seg := range segs {
		toks := phraseTokens(seg)
		if len(toks) == 0 {
			continue
		}
		covered := 0
		strong, weak := "", ""
		for _, m := range set.find(toks) {
			covered += len(m.p.tokens)
			switch m.p.kind {
			case kindStrong:
				if strong == "" {
					strong = m.p.text
				}
			case kindWeak:
				if weak == "" {
					weak = m.p.text
				}
			}
		}
		all := covered == len(toks)
		switch {
		case all && strong != "":
			return strong, ""
		case all && weak != "" && !onlyNumbers(weak, named):
			return weak, ""
		case strong != "" && part == "":
			part = strong
		}
	}
	return "", part
}

// errorURLSignal scores a redirect chain ending on an error-looking URL.
func errorURLSignal(in *soft404Input) (audit.Soft404Signal, bool) {
	if len(in.redirects) == 0 || in.final == nil {
		return audit.Soft404Signal{}, false
	}
	part := errorURLPart(in.final)
	if part == "" || errorURLPart(in.start) != "" {
		return audit.Soft404Signal{}, false
	}
	return audit.Soft404Signal{Name: "error-url", Where: "url", Score: weightErrorURL,
		Match: "redirected to " + truncate(in.final.String(), 200) + " (" + part + ")"}, true
}

// errorPathNames are path segment names (extension, '-' and '_' removed,
// lower case) of error pages.
var errorPathNames = map[string]bool{
	"404": true, "410": true, "notfound": true, "pagenotfound": true, "error404": true,
	"404error": true, "http404": true, "404page": true, "page404": true, "notfoundpage": true,
	"filenotfound": true, "pagemissing": true, "missingpage": true, "nopage": true,
	"seitenichtgefunden": true, "nichtgefunden": true, "pageintrouvable": true, "introuvable": true,
	"paginanoencontrada": true, "noencontrada": true, "paginanontrovata": true, "nontrovata": true,
	"paginanietgevonden": true, "nietgevonden": true, "paginanaoencontrada": true,
	"naoencontrada": true, "fehler404": true, "erreur404": true, "errore404": true, "erro404": true,
	"pagenotfounderror": true, "404notfound": true, "notfound404": true, "doesnotexist": true,
}

// errorDirNames are generic error page names: an error page as the last
// segment, or a directory of them before a status code ("/errors/404").
var errorDirNames = map[string]bool{
	"error": true, "errors": true, "erreur": true, "fehler": true, "errore": true, "fout": true,
	"erro": true, "errorpage": true, "errorpages": true, "httperror": true, "error.aspx": true,
}

// errorQueryKeys are query keys of error redirects (?error=404,
// ?code=404, ?status=404).
var errorQueryKeys = map[string]bool{
	"error": true, "err": true, "errorcode": true, "error_code": true, "code": true, "status": true,
	"statuscode": true, "status_code": true, "http_status": true, "httpstatus": true,
}

// errorURLPart reports the part of u that makes it an error page's URL
// ("/404", "/errors/404.html", "?error=404", "?aspxerrorpath="), or "".
func errorURLPart(u *url.URL) string {
	segs := segments(u.Path)
	for i, s := range segs {
		name := segmentName(s)
		if errorPathNames[name] {
			return "/" + s
		}
		if errorDirNames[name] {
			if i == len(segs)-1 {
				return "/" + s
			}
			if isErrorStatus(segmentName(segs[i+1])) {
				return "/" + s + "/" + segs[i+1]
			}
		}
	}
	if strings.HasPrefix(u.RawQuery, "404;") || strings.HasPrefix(u.RawQuery, "410;") {
		return "?" + u.RawQuery[:4] // IIS custom errors: "?404;http://host/page"
	}
	for k, vs := range u.Query() {
		lk := strings.ToLower(k)
		if lk == "aspxerrorpath" {
			return "?" + k + "="
		}
		if !errorQueryKeys[lk] {
			continue
		}
		for _, v := range vs {
			lv := strings.ToLower(strings.TrimSpace(v))
			if isErrorStatus(lv) || lv == "notfound" || lv == "not-found" || lv == "not_found" ||
				lk == "error" && (lv == "true" || lv == "1" || lv == "yes") {
				return "?" + k + "=" + v
			}
		}
	}
	return ""
}

// segmentName is a path segment lower-cased, without its extension and
// without '-', '_' and spaces.
func segmentName(s string) string {
	s = strings.ToLower(s)
	if i := strings.LastIndexByte(s, '.'); i > 0 && len(s)-i <= 6 {
		s = s[:i]
	}
	return strings.NewReplacer("-", "", "_", "", " ", "", "%20", "").Replace(s)
}

// isErrorStatus reports a 4xx or 5xx status code.
func isErrorStatus(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && len(s) == 3 && n >= 400 && n <= 599
}

// byLength picks a weight by the page's text length: short for at most
// shortText words, mid for at most midText, long beyond.
func byLength(length int, short, mid, long float64) float64 {
	switch {
	case length <= shortText:
		return short
	case length <= midText:
		return mid
	}
	return long
}
