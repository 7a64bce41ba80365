package extract

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// URLs in a page are read by urls.Resolver, the WHATWG URL parser that
// the rest of linkrot uses too (see audit/normalize.go for the choice of
// library): what the extractor records is what the checker fetches.

// reverseSolidus is the WHATWG validation error for "\" read as "/".
const reverseSolidus = "The URL has a special scheme and it uses U+005C"

// resolverFor returns a Resolver for base (the zero Resolver, which
// resolves only absolute URLs, when base is nil or not absolute).
func resolverFor(base *url.URL) urls.Resolver {
	if base == nil || !base.IsAbs() {
		return urls.Resolver{}
	}
	r, err := urls.NewResolver(base.String())
	if err != nil {
		return urls.Resolver{}
	}
	return r
}

// fetchable reports whether a URL with scheme can be requested by linkrot
// (and serve as a document base URL).
func fetchable(scheme string) bool {
	return scheme == "http" || scheme == "https"
}

// urlDiags are the diagnostics of a URL that parsed: how it was read
// leniently (tab or newline removed, "\" read as "/") and a password in
// it (redacted). raw is the value as written, out the resolved URL.
func urlDiags(field, raw string, u urls.URL, warnings []string) []audit.Diagnostic {
	var diags []audit.Diagnostic
	var fixes []string
	if strings.ContainsAny(raw, "\t\n\r") {
		fixes = append(fixes, "tab and newline characters removed")
	}
	for _, w := range warnings {
		if strings.HasPrefix(w, reverseSolidus) {
			fixes = append(fixes, `"\" read as "/"`)
			break
		}
	}
	if h := u.Hostname(); isIPv4(h) && writesHost(raw) && !strings.Contains(raw, h) {
		// 0x7f.1, 2852039166, 0177.0.0.1, 127.1: resolvers read them as
		// IP addresses too, and so does linkrot (the SSRF policy sees the
		// address).
		fixes = append(fixes, fmt.Sprintf("the host is the IPv4 address %s written in another form", h))
	}
	if hasLonePercent(raw) {
		fixes = append(fixes, `a "%" not followed by two hex digits kept as written`)
	}
	if len(fixes) > 0 {
		diags = append(diags, newDiag(field, CodeLenientURL,
			"%s=%s is read as browsers read it (WHATWG URL Standard): %s; it resolves to %s",
			field, quoteValue(raw), strings.Join(fixes, ", "), quoteValue(u.String())))
	}
	if _, ok := u.Password(); ok {
		diags = append(diags, newDiag(field, CodeCredentialsInURL,
			"%s holds a password in its URL; it is redacted (%s) everywhere and never sent: linkrot checks the URL without credentials",
			field, urls.RedactedPassword))
	}
	return diags
}

// writesHost reports whether a reference may write a host of its own: it
// has a scheme or starts with two slashes. A relative reference takes its
// host from the base (whose own form the base's diagnostics judge).
func writesHost(raw string) bool {
	s := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1 // removed by the URL parser
		}
		return r
	}, strings.TrimLeft(raw, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	if len(s) >= 2 && (s[0] == '/' || s[0] == '\\') && (s[1] == '/' || s[1] == '\\') {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i > 0:
			return true
		default:
			return false
		}
	}
	return false
}

// hasLonePercent reports whether s has a "%" not followed by two hex
// digits.
func hasLonePercent(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			return true
		}
	}
	return false
}

// isIPv4 reports whether h is a dotted-decimal IPv4 address. A host
// holding anything but digits and dots is not one: netip.ParseAddr is
// not asked, since it allocates an error for every host name.
func isIPv4(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Is4()
}
