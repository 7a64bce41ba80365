package memento

import (
	"strings"
	"time"
)

// WaybackURL is a replay URL of a Wayback-style archive:
// <Prefix><Timestamp><Flags>/<Original>, where Prefix ends in "/web/",
// Timestamp is 1 to 14 digits of YYYYMMDDhhmmss and Flags a replay mode
// such as "id_" (identity: the original bytes, no banner, no rewriting),
// "if_", "js_", "cs_", "im_", "mp_" (shared/notes/archive-protocols.md A2).
type WaybackURL struct {
	Prefix    string // scheme, host and path up to and including "/web/"
	Timestamp string
	Flags     string
	Original  string // the archived URL, as written (query included)
}

// ParseWaybackURL splits a Wayback replay URL. It reports false when u has
// no "/web/<digits>[flags]/<absolute URL>" part. The original must start
// with a scheme ("http:", "https:", ...); Wayback's scheme-less form
// ("/web/2017/example.org/") is not recognised.
func ParseWaybackURL(u string) (WaybackURL, bool) {
	const marker = "/web/"
	// The first "/web/" after the authority: a query or an original URL
	// may contain "/web/" again.
	start := strings.Index(u, "://")
	if start < 0 {
		return WaybackURL{}, false
	}
	i := strings.Index(u[start+3:], marker)
	if i < 0 {
		return WaybackURL{}, false
	}
	i += start + 3
	prefix := u[:i+len(marker)]
	if strings.ContainsAny(prefix[start+3:], "?#") {
		return WaybackURL{}, false
	}
	rest := u[i+len(marker):]
	j := 0
	for j < len(rest) && j < 15 && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 || j > 14 {
		return WaybackURL{}, false
	}
	ts := rest[:j]
	rest = rest[j:]
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return WaybackURL{}, false
	}
	flags := rest[:slash]
	if !validFlags(flags) {
		return WaybackURL{}, false
	}
	orig := rest[slash+1:]
	if !hasScheme(orig) {
		return WaybackURL{}, false
	}
	return WaybackURL{Prefix: prefix, Timestamp: ts, Flags: flags, Original: orig}, true
}

// validFlags accepts "" or a replay mode: letters and digits ending in "_"
// ("id_", "if_", "cm1_"), at most 8 bytes.
func validFlags(f string) bool {
	if f == "" {
		return true
	}
	if len(f) > 8 || !strings.HasSuffix(f, "_") {
		return false
	}
	for i := 0; i < len(f)-1; i++ {
		c := f[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func hasScheme(s string) bool {
	i := strings.Index(s, ":")
	if i <= 0 {
		return false
	}
	for k := 0; k < i; k++ {
		c := s[k]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || k > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// String reassembles the URL.
func (w WaybackURL) String() string {
	return w.Prefix + w.Timestamp + w.Flags + "/" + w.Original
}

// Time returns the capture instant of a 14-digit timestamp; false for a
// partial one.
func (w WaybackURL) Time() (time.Time, bool) {
	t, err := ParseTimestamp14(w.Timestamp)
	return t, err == nil
}

// RawURL returns the identity-mode ("id_") form of a Wayback replay URL,
// whose body is the archived bytes without banner or link rewriting, so
// that neither counts as content drift. Other URLs are returned unchanged.
func RawURL(u string) string {
	w, ok := ParseWaybackURL(u)
	if !ok {
		return u
	}
	w.Flags = "id_"
	return w.String()
}
