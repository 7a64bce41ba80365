package check

import (
	"net"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/publicsuffix"
)

// Who sells and registers domains, and the names a target's domain goes by:
// what the parked-domain signals (parked_classify.go) need to tell a lander
// that replaced a site from a marketplace's or registrar's own page.

// marketplaceHosts are the domain marketplaces (and their subdomains). A
// target redirected to a page of theirs that names the target's domain
// was put up for sale; a link that points at one of their pages is a link
// to the marketplace, whatever the page says.
var marketplaceHosts = []string{
	"sedo.com", "dan.com", "afternic.com", "godaddy.com", "hugedomains.com", "buydomains.com",
	"undeveloped.com", "uniregistry.com", "atom.com", "squadhelp.com", "brandbucket.com",
	"domainmarket.com", "epik.com", "sav.com", "efty.com", "park.io", "flippa.com", "dynadot.com",
	"namecheap.com", "namesilo.com", "snapnames.com", "namejet.com", "dropcatch.com",
	"spaceship.com", "domainnamesales.com", "above.com",
}

// registrarHosts are registrars' own sites: their help pages speak of
// expiry, renewal and transfers, and are no registrar's notice on a lapsed
// domain.
var registrarHosts = []string{
	"networksolutions.com", "register.com", "enom.com", "tucows.com", "gandi.net", "ionos.com",
	"ionos.de", "ionos.fr", "ionos.es", "1and1.com", "ovh.com", "ovhcloud.com", "name.com",
	"hover.com", "porkbun.com", "strato.de", "united-domains.de", "onamae.com", "muumuu-domain.com",
	"hostinger.com", "gmo.jp", "sakura.ad.jp", "nic.ru", "reg.ru",
}

// hostIn returns the entry of list that host is, or is a subdomain of;
// "" when none.
func hostIn(host string, list []string) string {
	for _, h := range list {
		if host == h || strings.HasSuffix(host, "."+h) {
			return h
		}
	}
	return ""
}

// cleanHost is u's host name, lower case, without a trailing dot.
func cleanHost(u *url.URL) string {
	if u == nil {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}

// serviceOf returns the marketplace, registrar or parking service whose own
// site host is part of, or "".
func serviceOf(host string) string {
	for _, list := range [][]string{marketplaceHosts, registrarHosts, parkingHosts} {
		if h := hostIn(host, list); h != "" {
			return h
		}
	}
	return ""
}

// domainNames are the names of the domain a target is on, as a lander
// writes them: "old-trails.com is for sale", a marketplace listing at
// sedo.com/search/details/?domain=old-trails.com or, on HugeDomains,
// ?d=old-trails&e=com.
type domainNames struct {
	// site is the registrable domain ("old-trails.co.uk" of
	// www.old-trails.co.uk); label its first label ("old-trails").
	site, label string
	// runs are the token runs (phraseTokens) of the host without "www."
	// and of site, longest first.
	runs [][]string
}

// namesOf returns the names of the domains of the given URLs (the target
// and where it was redirected to, when on the same site); an IP address
// has none.
func namesOf(start, final *url.URL) domainNames {
	var n domainNames
	host := cleanHost(start)
	if host == "" || net.ParseIP(host) != nil {
		return n
	}
	n.site = registrable(host)
	n.label, _, _ = strings.Cut(n.site, ".")
	add := func(name string) {
		toks := phraseTokens(name)
		if len(toks) == 0 {
			return
		}
		for _, r := range n.runs {
			if equalTokenRuns(r, toks) {
				return
			}
		}
		n.runs = append(n.runs, toks)
	}
	add(strings.TrimPrefix(host, "www."))
	if f := cleanHost(final); f != "" && f != host && net.ParseIP(f) == nil && registrable(f) == n.site {
		add(strings.TrimPrefix(f, "www."))
	}
	add(n.site)
	// Longest first: a host's name before its registrable domain's, which
	// it may end with.
	for i := 1; i < len(n.runs); i++ {
		for j := i; j > 0 && len(n.runs[j]) > len(n.runs[j-1]); j-- {
			n.runs[j], n.runs[j-1] = n.runs[j-1], n.runs[j]
		}
	}
	return n
}

func equalTokenRuns(a, b []string) bool {
	return len(a) == len(b) && equalTokens(a, b)
}

// registrable is the registrable domain of host (its public suffix and
// one label more), host itself when it has none.
func registrable(host string) string {
	if s, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return s
	}
	return host
}

// withOwnName returns toks with every run of the domain's own name
// replaced by the token ownNameToken, so that the phrase tables can say
// "{domain} is for sale"; toks itself when the page does not name it.
func (n domainNames) withOwnName(toks []string) []string {
	if len(n.runs) == 0 {
		return toks
	}
	var out []string
	for i := 0; i < len(toks); {
		matched := 0
		for _, r := range n.runs {
			if i+len(r) <= len(toks) && equalTokens(toks[i:i+len(r)], r) {
				matched = len(r)
				break
			}
		}
		if matched == 0 {
			if out != nil {
				out = append(out, toks[i])
			}
			i++
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(toks)), toks[:i]...)
		}
		out = append(out, ownNameToken)
		i += matched
	}
	if out == nil {
		return toks
	}
	return out
}

// listingOf reports whether u is a marketplace's page for the domain of n:
// u on a marketplace host (marketplaceHosts), the domain's label a word of
// u's path or query. It returns the marketplace, or "".
func listingOf(u *url.URL, n domainNames) string {
	return pageFor(u, n, marketplaceHosts)
}

// registrarPageOf reports whether u is a registrar's page for the domain of
// n (a renewal, a WHOIS record: registrarHosts, or a marketplace that is a
// registrar too), as listingOf does. It returns the registrar, or "".
func registrarPageOf(u *url.URL, n domainNames) string {
	if r := pageFor(u, n, registrarHosts); r != "" {
		return r
	}
	return pageFor(u, n, marketplaceHosts)
}

// pageFor reports whether u is a page of one of hosts for the domain of n,
// the domain's label a word of u's path or query; it returns the host of
// hosts, or "".
func pageFor(u *url.URL, n domainNames, hosts []string) string {
	if u == nil || len(n.label) < 2 {
		return ""
	}
	host := cleanHost(u)
	m := hostIn(host, hosts)
	if m == "" || registrable(host) == n.site {
		return ""
	}
	p, q := pathAndQuery(u)
	words := strings.FieldsFunc(strings.ToLower(p+" "+q), func(r rune) bool {
		return r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		if w == n.label {
			return m
		}
	}
	return ""
}

// wwHost reports whether raw sends the browser to a "wwN." host of the
// domain of n (ww1.old-trails.com, ww25.old-trails.com), where parking
// networks send a lander's visitors to count them, or to a bare "wwN."
// prefix a script completes with the page's own host ("http://ww1." +
// location.host).
func wwHost(raw string, n domainNames) bool {
	u := authorityURL(raw)
	if u == nil {
		return false
	}
	first, rest, _ := strings.Cut(cleanHost(u), ".")
	if !isWWLabel(first) {
		return false
	}
	return rest == "" || n.site != "" && registrable(rest) == n.site
}

// isWWLabel reports a "wwN" host label: "ww1", "ww25" (not "www").
func isWWLabel(s string) bool {
	return len(s) >= 3 && len(s) <= 5 && s[:2] == "ww" && isASCIIDigits(s[2:])
}

// registrarLink reports whether an <a href> points at a registrar's site
// (registrarHosts) or a marketplace's (marketplaceHosts), to be kept as a
// page fingerprint ("renew:").
func registrarLink(raw string) bool {
	u := authorityURL(raw)
	if u == nil {
		return false
	}
	if u.RawQuery == "" && len(segments(u.Path)) == 0 {
		return false // a home page names no domain
	}
	host := cleanHost(u)
	return hostIn(host, registrarHosts) != "" || hostIn(host, marketplaceHosts) != ""
}

// gotoWorthKeeping reports whether a refresh or script target is one the
// classifier may weigh (a page fingerprint, see pageSignals): a page of a
// domain marketplace, or a "wwN." host.
func gotoWorthKeeping(raw string) bool {
	u := authorityURL(raw)
	if u == nil {
		return false
	}
	host := cleanHost(u)
	first, _, _ := strings.Cut(host, ".")
	return hostIn(host, marketplaceHosts) != "" || isWWLabel(first)
}

// ownNameToken stands for the domain's own name in the phrase tables
// ("{domain}") and in a page's tokens (domainNames.withOwnName). No text
// tokenises to it: tokens are letters and digits.
const ownNameToken = "\x00domain"
