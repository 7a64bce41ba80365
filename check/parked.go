package check

import (
	"net/url"
	"strings"
)

// Parked and hijacked domains. A domain whose registration lapsed is
// typically bought by a domainer and pointed at a parking service, which
// serves the same advertising or "for sale" lander for every URL (the
// parking services and their page templates are surveyed by Vissers,
// Joosen and Nikiforakis, "Parking Sensors: Analyzing and Detecting Parked
// Domains", NDSS 2015; the hosts below are those services' and the domain
// marketplaces' own). A link to such a domain answers 200 and is rotten.
//
// Fingerprints, by where they are found in the markup (PageSignals.Parking,
// "kind:host"):
//
//   - infra: a <script>, <iframe>, <frame>, <embed> or <object> loaded from
//     a parking host, a <meta http-equiv=refresh> or an inline script
//     sending the browser to one. Real pages do not load parking code.
//   - link: an <a href> to a domain marketplace's page for a domain
//     (sedo.com/search/details, dan.com/buy-domain, afternic.com/domain,
//     godaddy.com/domainsearch, hugedomains.com/domain_profile ...). A
//     real article may link there too, so a link counts only on a short
//     page (see classifyParked).

// parkingHosts are the hosts (and their subdomains) of parking services
// whose code a parked lander loads.
var parkingHosts = []string{
	"sedoparking.com", "parkingcrew.net", "parkingcrew.com", "bodis.com", "bodiscdn.com",
	"above.com", "trafficz.com", "parklogic.com", "domainsponsor.com",
	"skenzo.com", "dsparking.com", "ztomy.com", "searchvity.com", "cashparking.com",
	"rookmedia.net", "namedrive.com", "smartname.com", "theparkingplace.com",
	"parkingpanel.com", "domainparkingserver.net", "namebrightstatic.com",
	"parkingpage.namecheap.com", "dan.com", "afternic.com", "hugedomains.com",
	"uniregistry.com", "undeveloped.com", "domainmarket.com", "buydomains.com",
	"fabulous.com", "parked.com", "dsnextgen.com", "efty.com",
}

// parkingPaths are host+path prefixes of parking code on shared hosts
// (GoDaddy serves its parked lander from its CDN, wsimg.com).
var parkingPaths = []string{
	"wsimg.com/parking-lander", "img1.wsimg.com/parking-lander", "godaddy.com/park",
	"sedo.com/park", "sedo.com/services/parking",
}

// parkedAdPaths are host+path prefixes of the ad code Google serves for
// parked domains (AdSense for Domains, "caf.js"): the code of nearly every
// parking service's lander, but not of the parking service alone (see
// parkedSignals: it weighs less than a parking host).
var parkedAdPaths = []string{"google.com/adsense/domains"}

// marketplacePaths are host+path prefixes of domain marketplaces' pages
// for one domain: "buy this domain" links.
var marketplacePaths = []string{
	"sedo.com/search/details", "sedo.com/checkdomainoffer", "sedo.com/domain", "dan.com/buy-domain",
	"dan.com/domain", "afternic.com/domain", "afternic.com/forsale", "godaddy.com/domainsearch",
	"godaddy.com/domain-value-appraisal", "hugedomains.com/domain_profile", "hugedomains.com/domain",
	"buydomains.com/", "undeveloped.com/", "uniregistry.com/market", "atom.com/name",
	"squadhelp.com/name", "brandbucket.com/names", "domainmarket.com/buynow", "epik.com/domain",
	"sav.com/domain", "above.com/marketplace", "bodis.com/domain", "namecheap.com/domains/marketplace",
}

// parkingHostOf reports the parking host or path an URL (absolute, or
// protocol-relative) points at, or "".
func parkingHostOf(raw string) string {
	u := authorityURL(raw)
	if u == nil {
		return ""
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	for _, h := range parkingHosts {
		if host == h || strings.HasSuffix(host, "."+h) {
			return h
		}
	}
	hp := host + strings.ToLower(u.EscapedPath())
	for _, p := range parkingPaths {
		if hasHostPathPrefix(hp, p) {
			return p
		}
	}
	return ""
}

// parkedAdOf reports the ad code for parked domains (parkedAdPaths) a
// script URL loads, or "".
func parkedAdOf(raw string) string {
	u := authorityURL(raw)
	if u == nil {
		return ""
	}
	hp := cleanHost(u) + strings.ToLower(u.EscapedPath())
	for _, p := range parkedAdPaths {
		if hasHostPathPrefix(hp, p) {
			return p
		}
	}
	return ""
}

// parkedAdInScript reports the ad code for parked domains an inline script
// loads (a loader naming caf.js), or "".
func parkedAdInScript(src string) string {
	s := strings.ToLower(src)
	for _, p := range parkedAdPaths {
		if i := strings.Index(s, p); i >= 0 && (i == 0 || !isHostByte(s[i-1]) || s[i-1] == '.') {
			return p
		}
	}
	return ""
}

// marketplaceOf reports the marketplace page an <a href> points at, or "".
func marketplaceOf(raw string) string {
	u := authorityURL(raw)
	if u == nil {
		return ""
	}
	hp := strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")) + strings.ToLower(u.EscapedPath())
	for _, p := range marketplacePaths {
		if hasHostPathPrefix(hp, p) {
			return p
		}
	}
	return ""
}

// authorityURL parses raw, an absolute or protocol-relative URL, when it
// has a host; nil otherwise.
func authorityURL(raw string) *url.URL {
	if !strings.Contains(raw, "//") {
		return nil // no authority: url.Parse leaves Host empty
	}
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "//") {
		raw = "http:" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	return u
}

// hasHostPathPrefix reports whether hostPath ("www.sedo.com/search/...")
// starts with prefix ("sedo.com/search") on a host boundary.
func hasHostPathPrefix(hostPath, prefix string) bool {
	for {
		if strings.HasPrefix(hostPath, prefix) {
			return true
		}
		// Drop the first label of the host and try again.
		dot := strings.IndexByte(hostPath, '.')
		slash := strings.IndexByte(hostPath, '/')
		if dot < 0 || slash >= 0 && dot > slash {
			return false
		}
		hostPath = hostPath[dot+1:]
	}
}

// parkingInScript returns the parking host an inline script names, or "".
func parkingInScript(src string) string {
	s := strings.ToLower(src)
	for _, h := range parkingHosts {
		if i := strings.Index(s, h); i >= 0 && (i == 0 || !isHostByte(s[i-1]) || s[i-1] == '.') &&
			(i+len(h) == len(s) || !isHostByte(s[i+len(h)])) {
			return h
		}
	}
	for _, p := range parkingPaths {
		if strings.Contains(s, p) {
			return p
		}
	}
	return ""
}

func isHostByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.'
}
