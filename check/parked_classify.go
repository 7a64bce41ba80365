package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift"
)

// The parked-domain signals. A domain whose registration lapsed, or that
// its owner put up for sale, answers every URL with a lander: a parking
// service's page of ads, a "this domain is for sale" page, a registrar's
// expiry notice, a redirect to a marketplace's listing of the domain, or
// an empty page that only loads the parking code. Each is told by its own
// markers, each recorded as a signal named "parked" (audit.Soft404Signal)
// with its score; their sum with the drift signal reaching
// audit.Soft404Threshold makes the target parked:
//
//   - parking code (where "html"): a script, frame or refresh from a
//     parking host, an inline script naming one, a parking variable
//     (window.park, an AdSense for Domains publisher ID) or the Adblock
//     Plus site key parking landers carry: weightParkInfra. Google's ad
//     code for parked domains alone: weightParkAds.
//   - marketplace redirect (where "url", or "html" for a refresh or
//     script): the target was sent to a domain marketplace's page whose
//     path or query names the target's domain: weightParkListing, enough
//     alone. A link does not point there by mistake: such a page is what
//     a buyer of the domain sees.
//   - wwN redirect (where "html"): a refresh or script sending the browser
//     to ww1., ww25. ... of the domain, as parking networks do:
//     weightParkWW.
//   - marketplace link (where "html"): a link to a marketplace's page for
//     a domain, on a short page; more when it names the page's own domain.
//     A link to a registrar's page for the page's own domain (renew it,
//     its WHOIS record) weighs as a marketplace link.
//   - phrases (where "title", "h1", "text"): sale offers, registrar
//     notices and parking wording (soft404_phrases.go) in ten languages,
//     "{domain} is for sale" with the page's own domain. Title and heading
//     weigh weightParkTitle scaled by the text's length (lengthFactor), the
//     text weightParkShort, weightParkMid or weightParkLong.
//   - script-only (where "html"): at most scriptOnlyWords words of text
//     and parking code or a redirect above: weightParkScriptOnly. A page
//     that is a parking script and nothing else.
//   - drift (where "fingerprint"): see driftSignal.
//
// A target on a marketplace's, registrar's or parking service's own site
// (serviceOf) is never parked: a link to sedo.com's listing of a domain,
// or to a registrar's help on expired domains, points at what it meant to.
// The signals are recorded, and one more (where "url") cancels their sum.

// Weights and bounds of the parked-domain signals (docs/parked.md).
const (
	weightParkInfra      = 0.8
	weightParkAds        = 0.4
	weightParkListing    = 1.0
	weightParkWW         = 0.6
	weightParkLink       = 0.3
	weightParkLinkMid    = 0.1
	weightParkOwnLink    = 0.6
	weightParkOwnLinkMid = 0.3
	weightParkOwnLinkLon = 0.1
	weightParkTitle      = 0.5
	weightParkShort      = 0.5
	weightParkMid        = 0.2
	weightParkLong       = 0.05
	weightParkScriptOnly = 0.4
	weightDriftSharp     = 0.4
	weightDriftMajor     = 0.2
	weightNoDrift        = -1.0
	parkTextTokens       = 300 // words of the main text searched for parked-domain phrases
	scriptOnlyWords      = 20  // words of text a script-only lander has at most
	parkedPhrasesShown   = 3   // phrases a text signal names
)

// Kinds of lander, as the reason of a parked verdict names them (with the
// phrase groups groupSale, groupRegistrar, groupParking).
const (
	kindMarketplaceRedirect = "marketplace redirect"
	kindScriptOnly          = "script-only lander"
)

// parkedSignals scores the parked-domain signals (see the comment at the
// top) and names the kinds of lander they found, in the order found. None
// when the page shows no marker of a lander at all.
func parkedSignals(in *soft404Input, toks []string, length int) ([]audit.Soft404Signal, []string) {
	found := map[string][]string{} // parking features by kind (PageEvidence.Parking "kind:value")
	if in.page != nil {
		for _, f := range in.page.Parking {
			kind, v, _ := strings.Cut(f, ":")
			found[kind] = append(found[kind], v)
		}
	}
	infra, vars, ads, links := found["infra"], found["var"], found["ads"], found["link"]
	offers, renews, gotos := found["offer"], found["renew"], found["goto"]
	names := namesOf(in.start, in.final)
	var (
		out   []audit.Soft404Signal
		kinds []string
	)
	add := func(where, match string, score float64, kind string) {
		out = append(out, audit.Soft404Signal{Name: "parked", Where: where, Match: match, Score: round4(score)})
		if score > 0 && !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}

	// Parking code.
	service := append(slices.Clip(infra), vars...)
	switch {
	case len(service) > 0:
		add("html", "parking code from "+strings.Join(append(service, ads...), ", "), weightParkInfra, groupParking)
	case len(ads) > 0:
		add("html", "ad code for parked domains from "+strings.Join(ads, ", "), weightParkAds, groupParking)
	}

	// A redirect to a marketplace's listing of the domain.
	listed := false
	if len(in.redirects) > 0 {
		if m := listingOf(in.final, names); m != "" {
			add("url", "redirected to "+m+"'s listing of the domain: "+truncate(in.final.String(), 200), weightParkListing, kindMarketplaceRedirect)
			listed = true
		}
	}
	for _, g := range gotos {
		if listed {
			break
		}
		if m := listingOf(authorityURL(g), names); m != "" {
			add("html", "the page sends the browser to "+m+"'s listing of the domain: "+truncate(g, 200), weightParkListing, kindMarketplaceRedirect)
			listed = true
		}
	}
	for _, g := range gotos {
		if wwHost(g, names) {
			add("html", "the page sends the browser to a parking network's wwN host: "+truncate(g, 200), weightParkWW, groupParking)
			break
		}
	}

	// Links to a marketplace.
	if len(links) > 0 {
		own := ""
		for _, o := range offers {
			if listingOf(authorityURL(o), names) != "" {
				own = o
				break
			}
		}
		if own != "" {
			w := byLength(length, weightParkOwnLink, weightParkOwnLinkMid, weightParkOwnLinkLon)
			add("html", "link to a marketplace's listing of this domain: "+truncate(own, 200), w, groupSale)
		} else {
			w := byLength(length, weightParkLink, weightParkLinkMid, 0.0)
			add("html", "link to a domain marketplace: "+strings.Join(links, ", "), w, groupSale)
		}
	}

	// A link to a registrar's page for this domain (renew it, look it up).
	for _, r := range renews {
		if reg := registrarPageOf(authorityURL(r), names); reg != "" {
			w := byLength(length, weightParkLink, weightParkLinkMid, 0.0)
			add("html", "link to "+reg+"'s page for this domain: "+truncate(r, 200), w, groupRegistrar)
			break
		}
	}

	// The page's words.
	set := parkedSet()
	if in.page != nil {
		heads := append([]string{in.page.Title}, in.page.H1...)
		for i, h := range heads {
			if ms := set.find(names.withOwnName(phraseTokens(h))); len(ms) > 0 {
				where := "h1"
				if i == 0 {
					where = "title"
				}
				add(where, quoteIn(names.show(ms[0].p.text), h), weightParkTitle*lengthFactor(length), ms[0].p.group)
				break
			}
		}
	}
	if ms := set.find(names.withOwnName(toks[:min(len(toks), parkTextTokens)])); len(ms) > 0 {
		w := byLength(length, weightParkShort, weightParkMid, weightParkLong)
		var shown []string
		for _, m := range ms {
			if t := names.show(m.p.text); !slices.Contains(shown, t) && len(shown) < parkedPhrasesShown {
				shown = append(shown, t)
			}
		}
		add("text", strings.Join(shown, "; "), w, ms[0].p.group)
		for _, m := range ms[1:] {
			if !slices.Contains(kinds, m.p.group) {
				kinds = append(kinds, m.p.group)
			}
		}
	}

	// A page that is a parking script and nothing else.
	if length <= scriptOnlyWords && (len(service) > 0 || len(ads) > 0 || len(gotos) > 0) {
		add("html", fmt.Sprintf("script-only lander: %d words of text, and parking code or a redirect", length), weightParkScriptOnly, kindScriptOnly)
	}

	if len(out) == 0 {
		return nil, nil
	}
	if s, ok := driftSignal(in); ok {
		out = append(out, s)
	}
	if svc := serviceOf(cleanHost(in.start)); svc != "" {
		sum := 0.0
		for _, s := range out {
			sum += s.Score
		}
		if sum > 0 {
			out = append(out, audit.Soft404Signal{Name: "parked", Where: "url", Score: -round4(sum),
				Match: "the link points at " + svc + "'s own site (a marketplace, registrar or parking service): its page is what was linked, not a lander"})
			kinds = nil
		}
	}
	return out, kinds
}

// show writes a phrase of the tables with the domain's name for
// "{domain}".
func (n domainNames) show(phrase string) string {
	if n.site == "" {
		return phrase
	}
	return strings.ReplaceAll(phrase, "{domain}", n.site)
}

// driftSignal compares the page with its earlier fingerprint, if any
// (Target.Previous: SimHash and word count, banded with drift's
// bands). An off-topic page adds weightDriftSharp, a major change
// weightDriftMajor: the content was replaced. A page still like its
// earlier fingerprint (minor, unchanged) subtracts weightNoDrift when that
// check found the page fine (ok, redirected, moved) and showed no marker
// of a lander: it is what was linked. It scores 0 when the earlier check
// was already parked, broken otherwise (a soft 404), or showed markers of
// a lander below the threshold (an earlier linkrot weighed fewer): a
// lander that has not changed is still a lander.
func driftSignal(in *soft404Input) (audit.Soft404Signal, bool) {
	ref := in.reference
	if ref == nil || ref.SHA256 == "" || ref.Words == 0 && ref.SimHash == 0 {
		return audit.Soft404Signal{}, false
	}
	s := audit.Soft404Signal{Name: "drift", Where: "fingerprint"}
	when := "the earlier check"
	if ref.RunID != 0 {
		when = fmt.Sprintf("run %d", ref.RunID)
	}
	if ref.Verdict == audit.VerdictParked {
		s.Match = "already parked in " + when
		return s, true
	}
	m := drift.CompareFingerprints(ref.SimHash, ref.Words, in.simhash, in.count)
	band := drift.DefaultThresholds().Band(m)
	s.Match = fmt.Sprintf("%s since %s (SimHash distance %d, %d → %d words)", band, when, m.SimHash, m.WordsReference, m.WordsLive)
	switch band {
	case audit.BandOffTopic:
		s.Score = weightDriftSharp
	case audit.BandMajor:
		s.Score = weightDriftMajor
	default:
		switch {
		case ref.Verdict != audit.VerdictOK && ref.Verdict != audit.VerdictRedirected && ref.Verdict != audit.VerdictMoved:
			s.Match += "; it was " + string(ref.Verdict) + " then"
		case landerBefore(ref):
			s.Match += "; it showed markers of a lander then too"
		default:
			s.Score = weightNoDrift
		}
	}
	return s, true
}

// landerBefore reports whether a check recorded a positive parked-domain
// signal.
func landerBefore(c *audit.Check) bool {
	if c.Soft404 == nil {
		return false
	}
	for _, s := range c.Soft404.Signals {
		if s.Name == "parked" && s.Score > 0 {
			return true
		}
	}
	return false
}
