package audit

import (
	"fmt"
	"net/url"
	"strings"
)

// NormalizeURL returns the form of a URL under which targets are
// deduplicated: scheme and host lower-cased, default ports dropped, an empty
// path made "/", the fragment removed, dot segments resolved. The query is
// kept byte for byte (its order can be meaningful). Non-hierarchical URLs
// (mailto:, javascript:, ...) are returned with only the scheme lower-cased
// and the fragment removed.
func NormalizeURL(raw string) (string, error) {
	// The fragment goes first, so white space before it is trimmed too and
	// normalizing is idempotent ("?q #x" and "?q" are the same target).
	s := raw
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return "", fmt.Errorf("normalize %q: %w", raw, err)
	}
	u.Fragment = ""
	u.RawFragment = ""
	u.Scheme = strings.ToLower(u.Scheme)
	if u.RawPath != "" && u.EscapedPath() != u.RawPath {
		// net/url drops a RawPath that holds characters it would escape
		// (space, "{", "|", raw non-ASCII) and re-encodes the decoded Path,
		// turning "%2F" into "/" and "%3B" into ";": another URL. Escape
		// only those characters and keep the rest as written.
		u.RawPath = escapePathChars(u.RawPath)
	}
	if u.Opaque != "" || u.Host == "" {
		return u.String(), nil
	}
	host := strings.ToLower(u.Host)
	if h, p, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		if (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") || p == "" {
			host = h
		}
	} else if strings.HasPrefix(host, "[") {
		if i := strings.LastIndex(host, "]:"); i >= 0 {
			p := host[i+2:]
			if (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") || p == "" {
				host = host[:i+1]
			}
		}
	}
	u.Host = host
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	} else {
		// ResolveReference removes dot segments.
		u = u.ResolveReference(&url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery, ForceQuery: u.ForceQuery})
	}
	return u.String(), nil
}

// escapePathChars percent-encodes the bytes of an escaped path that net/url
// does not accept literally in one, keeping existing escapes untouched.
func escapePathChars(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@/%[]", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
