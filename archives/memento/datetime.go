package memento

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ParseDatetime reads a Memento-Datetime (or Accept-Datetime, or a Link
// datetime parameter) value: an RFC 1123 date in GMT, exactly the form of
// RFC 7089 §2.1 ("Wed, 30 May 2007 18:47:52 GMT"). Surrounding white space
// is ignored; anything else (RFC 850 or asctime dates, other zones, a
// missing weekday) is an error, since an archive that sends it does not
// speak Memento correctly and the value cannot be trusted to the second.
func ParseDatetime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, errors.New("empty datetime")
	}
	if len(s) > 64 {
		return time.Time{}, fmt.Errorf("datetime %.64q…: too long", s)
	}
	if !strings.HasSuffix(s, " GMT") {
		return time.Time{}, fmt.Errorf("datetime %q: not an RFC 1123 date in GMT", s)
	}
	t, err := time.Parse(http.TimeFormat, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("datetime %q: not an RFC 1123 date in GMT", s)
	}
	// time.Parse accepts a weekday that does not match the date; RFC 1123
	// dates carry it as a check.
	if !strings.HasPrefix(s, t.Weekday().String()[:3]+",") {
		return time.Time{}, fmt.Errorf("datetime %q: weekday does not match the date", s)
	}
	return t.UTC(), nil
}

// FormatDatetime writes t as an RFC 1123 GMT date (Accept-Datetime).
func FormatDatetime(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// Timestamp14 writes t as the 14-digit YYYYMMDDhhmmss timestamp of Wayback
// URLs.
func Timestamp14(t time.Time) string { return t.UTC().Format("20060102150405") }

// ParseTimestamp14 reads a 14-digit Wayback timestamp. Anything but 14
// ASCII digits forming a valid date and time is an error (partial
// timestamps name no instant: the archive redirects them to a capture).
func ParseTimestamp14(s string) (time.Time, error) {
	if len(s) != 14 || !allDigits(s) {
		return time.Time{}, fmt.Errorf("timestamp %q: want 14 digits", s)
	}
	t, err := time.Parse("20060102150405", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q: %w", s, err)
	}
	return t, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// SameUTCDay reports whether a and b fall on the same UTC calendar day.
func SameUTCDay(a, b time.Time) bool {
	ay, am, ad := a.UTC().Date()
	by, bm, bd := b.UTC().Date()
	return ay == by && am == bm && ad == bd
}
