package check

import (
	"bytes"
	"net/http"
	"strings"
)

// challenge reports whether a response is a bot-protection challenge
// rather than the resource, and names the signal ("" when it is not).
// Only documented or unmistakable signals count, so a page is never
// called blocked for mentioning a CDN:
//
//   - cf-mitigated: challenge, on any status: Cloudflare's documented
//     marker of every Challenge Page ("Detect a Challenge Page response",
//     developers.cloudflare.com).
//   - x-amzn-waf-action: challenge (status 202) or captcha (405): AWS WAF's
//     documented marker ("CAPTCHA and Challenge action behavior").
//   - x-vercel-mitigated: challenge: Vercel's challenge marker (429).
//   - For 403, 429 and 503 only, a body of Cloudflare's interstitial
//     without the header (older deployments): the title "Just a moment...",
//     a /cdn-cgi/challenge-platform/ script or the _cf_chl_opt object.
func challenge(status int, h http.Header, body []byte) string {
	if strings.EqualFold(strings.TrimSpace(h.Get("Cf-Mitigated")), "challenge") {
		return "cf-mitigated: challenge"
	}
	switch v := strings.ToLower(strings.TrimSpace(h.Get("X-Amzn-Waf-Action"))); v {
	case "challenge", "captcha":
		return "x-amzn-waf-action: " + v
	}
	if strings.EqualFold(strings.TrimSpace(h.Get("X-Vercel-Mitigated")), "challenge") {
		return "x-vercel-mitigated: challenge"
	}
	if status != http.StatusForbidden && status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return ""
	}
	if len(body) > challengeBodyMax {
		body = body[:challengeBodyMax]
	}
	for _, m := range challengeMarkers {
		if containsFold(body, m.text) {
			return m.signal
		}
	}
	return ""
}

var challengeMarkers = []struct{ text, signal string }{
	{"<title>just a moment...</title>", "challenge page title \"Just a moment...\""},
	{"/cdn-cgi/challenge-platform/", "Cloudflare challenge-platform script"},
	{"_cf_chl_opt", "Cloudflare challenge options"},
}

// containsFold reports whether b contains the lower-case ASCII needle,
// ignoring ASCII case.
func containsFold(b []byte, needle string) bool {
	n := len(needle)
	if n == 0 {
		return true
	}
	first := needle[0]
	for i := 0; i+n <= len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != first {
			continue
		}
		if bytes.EqualFold(b[i:i+n], []byte(needle)) {
			return true
		}
	}
	return false
}
