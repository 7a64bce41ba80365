package politeness

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxWait bounds every parsed wait, so absurd values saturate instead of
// overflowing a time.Duration.
const maxWait = 100 * 365 * 24 * time.Hour

// ParseRetryAfter reads a Retry-After value (RFC 9110 section 10.2.3):
// delta-seconds or an HTTP-date. A decimal number of seconds ("1.5"),
// which some servers send, is accepted and rounded up. It returns the
// wait from now (0 for a date in the past) and whether the value was
// valid. Huge numbers saturate.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		return parseSeconds(v)
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if d := t.Sub(now); d > 0 {
		return min(d, maxWait), true
	}
	return 0, true
}

// parseSeconds reads a non-negative number of seconds, integer or decimal,
// rounded up to the millisecond.
func parseSeconds(v string) (time.Duration, bool) {
	dot := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0 && i < len(v)-1:
			dot = true
		default:
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && f != math.Inf(1) {
		return 0, false
	}
	if f >= maxWait.Seconds() {
		return maxWait, true
	}
	return time.Duration(math.Ceil(f*1000)) * time.Millisecond, true
}

// Quota is what a server said about the requests it will still accept.
type Quota struct {
	// Remaining is how many more requests the server accepts before Reset.
	Remaining int
	// Reset is the wait from now until the quota is renewed.
	Reset time.Duration
}

// epochCutoff tells a Unix time from a number of seconds in
// X-RateLimit-Reset: 10^9 seconds is 2001-09-09, and no server asks a
// client to wait 31 years.
const epochCutoff = 1_000_000_000

// ParseRateLimit reads the rate-limit fields a server volunteers, in the
// forms seen in the wild, most specific first:
//
//   - RateLimit: "name";r=<remaining>;t=<reset> (IETF
//     draft-ietf-httpapi-ratelimit-headers, structured fields; the lowest
//     remaining of several policies wins);
//   - RateLimit: limit=<n>, remaining=<n>, reset=<seconds> (the draft's
//     earlier combined form);
//   - RateLimit-Remaining and RateLimit-Reset (the draft's first, separate
//     fields, reset in seconds);
//   - X-RateLimit-Remaining with X-RateLimit-Reset (seconds, or a Unix time
//     in seconds or milliseconds as GitHub and others send) or
//     X-RateLimit-Reset-After (seconds); X-Rate-Limit-* spellings too.
//
// It reports false when no usable pair (a remaining count and a reset) is
// present. Malformed values are ignored, never trusted.
func ParseRateLimit(h http.Header, now time.Time) (Quota, bool) {
	if q, ok := parseCombined(h.Values("RateLimit")); ok {
		return q, true
	}
	if q, ok := pair(h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset"), now, false); ok {
		return q, true
	}
	for _, p := range []string{"X-RateLimit-", "X-Rate-Limit-"} {
		rem := h.Get(p + "Remaining")
		if rem == "" {
			continue
		}
		if q, ok := pair(rem, h.Get(p+"Reset"), now, true); ok {
			return q, true
		}
		if q, ok := pair(rem, h.Get(p+"Reset-After"), now, false); ok {
			return q, true
		}
	}
	return Quota{}, false
}

// pair combines a remaining count and a reset value.
func pair(rem, reset string, now time.Time, epochOK bool) (Quota, bool) {
	n, ok := parseCount(rem)
	if !ok {
		return Quota{}, false
	}
	d, ok := parseReset(reset, now, epochOK)
	if !ok {
		return Quota{}, false
	}
	return Quota{Remaining: n, Reset: d}, true
}

// parseCount reads a non-negative integer, saturating at MaxInt32.
func parseCount(v string) (int, bool) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 40 {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > math.MaxInt32 {
		return math.MaxInt32, true
	}
	return int(n), true
}

// parseReset reads a reset: seconds from now, or (epochOK) a Unix time in
// seconds or milliseconds.
func parseReset(v string, now time.Time, epochOK bool) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 40 || v[0] < '0' || v[0] > '9' {
		return 0, false
	}
	d, ok := parseSeconds(v)
	if !ok {
		return 0, false
	}
	if epochOK && d >= epochCutoff*time.Second {
		secs, _ := strconv.ParseFloat(v, 64)
		if secs >= epochCutoff*1000 {
			secs /= 1000 // milliseconds
		}
		at := time.Unix(0, 0).Add(time.Duration(min(secs, maxWait.Seconds()) * float64(time.Second)))
		if at.Before(now) {
			return 0, true
		}
		return min(at.Sub(now), maxWait), true
	}
	return d, true
}

// parseCombined reads the RateLimit field in either of the draft's combined
// forms. With several policies the tightest one (least remaining) wins.
func parseCombined(values []string) (Quota, bool) {
	var best Quota
	found := false
	take := func(q Quota) {
		if !found || q.Remaining < best.Remaining || q.Remaining == best.Remaining && q.Reset > best.Reset {
			best, found = q, true
		}
	}
	for _, v := range values {
		if len(v) > 4096 {
			continue
		}
		if strings.Contains(v, ";") || strings.HasPrefix(strings.TrimSpace(v), `"`) {
			// Structured: "name";r=50;t=30, "other";r=1;t=5
			for item := range strings.SplitSeq(v, ",") {
				var rem, reset string
				params := strings.Split(item, ";")
				for _, p := range params[1:] {
					k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
					switch strings.TrimSpace(k) {
					case "r":
						rem = val
					case "t":
						reset = val
					}
				}
				if q, ok := pair(rem, reset, time.Time{}, false); ok {
					take(q)
				}
			}
			continue
		}
		// limit=100, remaining=50, reset=30
		var rem, reset string
		for p := range strings.SplitSeq(v, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "remaining":
				rem = val
			case "reset":
				reset = val
			}
		}
		if q, ok := pair(rem, reset, time.Time{}, false); ok {
			take(q)
		}
	}
	return best, found
}
