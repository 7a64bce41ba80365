package check

import (
	"regexp"
	"strings"
)

// What a parked lander's inline scripts give away: where they send the
// browser (scriptRedirects) and the variables of parking code
// (parkingScriptVar). Scripts are hostile input: both read them as text,
// bounded, and never run them.

// Bounds of scriptRedirects.
const (
	scriptRedirectsMax = 4    // targets returned per script
	scriptRedirectMax  = 2048 // bytes of one target kept
)

// scriptRedirects returns the string literals an inline script sends the
// browser to: `location = "…"`, `location.href = "…"`,
// `location.replace("…")` and `location.assign("…")`, "location" with any
// prefix (window., top., document., self.) or none. A literal followed by
// `+` is returned as the prefix it is ("http://ww1." of
// `"http://ww1." + location.host`). Reading the property
// (`if (location.href == "…")`), a string method on it
// (`location.href.replace(…)`) and any other expression are not
// redirects.
func scriptRedirects(src string) []string {
	var out []string
	const word = "location"
	for i := 0; i < len(src) && len(out) < scriptRedirectsMax; {
		j := strings.Index(src[i:], word)
		if j < 0 {
			break
		}
		start := i + j
		p := start + len(word)
		i = p
		if start > 0 && isIdentByte(src[start-1]) || p < len(src) && isIdentByte(src[p]) {
			continue // part of another name: "mylocation", "locations"
		}
		p = skipJSSpace(src, p)
		call := false
		switch {
		case hasIdent(src[p:], ".href"):
			p = skipJSSpace(src, p+len(".href"))
		case hasIdent(src[p:], ".replace"):
			p, call = skipJSSpace(src, p+len(".replace")), true
		case hasIdent(src[p:], ".assign"):
			p, call = skipJSSpace(src, p+len(".assign")), true
		}
		if call {
			if p >= len(src) || src[p] != '(' {
				continue
			}
		} else if p >= len(src) || src[p] != '=' || p+1 < len(src) && src[p+1] == '=' {
			continue
		}
		p = skipJSSpace(src, p+1)
		if lit, ok := jsString(src[p:]); ok && lit != "" {
			out = append(out, lit)
		}
	}
	return out
}

// hasIdent reports whether s starts with the property name (".href")
// followed by no further name character.
func hasIdent(s, name string) bool {
	return strings.HasPrefix(s, name) && (len(s) == len(name) || !isIdentByte(s[len(name)]))
}

// isIdentByte reports an ASCII character of a JavaScript name.
func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

func skipJSSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// jsString reads the string literal s starts with ('…', "…" or a template
// literal without substitutions, `…`), unescaping \x where x is any
// character but a line break, and cut to scriptRedirectMax bytes. ok is
// false when s does not start with one, or it is not closed. A template
// literal's text before its first ${ is returned as a prefix.
func jsString(s string) (lit string, ok bool) {
	if s == "" || s[0] != '"' && s[0] != '\'' && s[0] != '`' {
		return "", false
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), true
		case c == '\n' && q != '`':
			return "", false // an unclosed '…' or "…" literal ends at the line
		case c == '$' && q == '`' && i+1 < len(s) && s[i+1] == '{':
			return b.String(), true
		case c == '\\':
			i++
			if i >= len(s) {
				return "", false
			}
			c = s[i]
		}
		if b.Len() < scriptRedirectMax {
			b.WriteByte(c)
		}
	}
	return "", false
}

// parkingVars match the variables of parking code: Bodis's and its
// white-label partners' landers configure themselves with `window.park =
// "…"` (the lander, base64, read by a script with a random name), and
// every lander that shows Google's ads for parked domains (AdSense for
// Domains) passes a publisher ID of the domain-parking program ("dp-…",
// "ca-dp-…", "partner-dp-…") to them.
var parkingVars = []struct {
	name string
	re   *regexp.Regexp
}{
	{"window.park", regexp.MustCompile(`\bwindow\s*(?:\.\s*park|\[\s*["']park["']\s*\])\s*=[^=]`)},
	{"AdSense for Domains pubId", regexp.MustCompile(`\bpubId["']?\s*[:=]\s*["'](?:ca-|partner-)?dp-[A-Za-z0-9_-]+`)},
}

// parkingScriptVar returns the name of the parking variable an inline
// script sets, or "".
func parkingScriptVar(src string) string {
	if !strings.Contains(src, "park") && !strings.Contains(src, "pubId") {
		return ""
	}
	for _, v := range parkingVars {
		if v.re.MatchString(src) {
			return v.name
		}
	}
	return ""
}
