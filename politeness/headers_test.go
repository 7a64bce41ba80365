package politeness

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 7 ", 7 * time.Second, true},
		{"1.5", 1500 * time.Millisecond, true},     // decimal: lenient
		{"0.0001", time.Millisecond, true},         // rounded up
		{"99999999999999999999999", maxWait, true}, // saturates
		{"Wed, 25 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Wed, 25 Nov 2026 11:00:00 GMT", 0, true},               // past
		{"Wednesday, 25-Nov-26 12:01:00 GMT", time.Minute, true}, // RFC 850
		{"", 0, false},
		{"-1", 0, false},
		{"1e3", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"soon", 0, false},
		{"12 s", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseRateLimit(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Add(kv[i], kv[i+1])
		}
		return out
	}
	tests := []struct {
		name string
		h    http.Header
		want Quota
		ok   bool
	}{
		{"DraftSeparate", h("RateLimit-Limit", "100", "RateLimit-Remaining", "0", "RateLimit-Reset", "30"), Quota{0, 30 * time.Second}, true},
		{"DraftCombined", h("RateLimit", "limit=100, remaining=5, reset=12"), Quota{5, 12 * time.Second}, true},
		{"DraftCombinedCase", h("RateLimit", "Limit=10,Remaining=0,Reset=2"), Quota{0, 2 * time.Second}, true},
		{"DraftStructured", h("RateLimit", `"default";r=50;t=30`), Quota{50, 30 * time.Second}, true},
		{"StructuredTightestWins", h("RateLimit", `"hour";r=500;t=3000, "minute";r=0;t=20`), Quota{0, 20 * time.Second}, true},
		{"StructuredTwoFields", h("RateLimit", `"a";r=3;t=10`, "RateLimit", `"b";r=1;t=4`), Quota{1, 4 * time.Second}, true},
		{"XEpoch", h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1700000060"), Quota{0, time.Minute}, true},
		{"XEpochMillis", h("X-RateLimit-Remaining", "3", "X-RateLimit-Reset", "1700000010000"), Quota{3, 10 * time.Second}, true},
		{"XEpochPast", h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1600000000"), Quota{0, 0}, true},
		{"XDelta", h("X-RateLimit-Remaining", "2", "X-RateLimit-Reset", "15"), Quota{2, 15 * time.Second}, true},
		{"XResetAfter", h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "1.25"), Quota{0, 1250 * time.Millisecond}, true},
		{"XRateLimitDash", h("X-Rate-Limit-Remaining", "1", "X-Rate-Limit-Reset", "5"), Quota{1, 5 * time.Second}, true},
		{"HugeRemaining", h("RateLimit-Remaining", "99999999999999999999", "RateLimit-Reset", "1"), Quota{1<<31 - 1, time.Second}, true},
		{"NoReset", h("X-RateLimit-Remaining", "0"), Quota{}, false},
		{"NegativeRemaining", h("RateLimit-Remaining", "-1", "RateLimit-Reset", "1"), Quota{}, false},
		{"GarbageReset", h("RateLimit-Remaining", "0", "RateLimit-Reset", "tomorrow"), Quota{}, false},
		{"GarbageCombined", h("RateLimit", "remaining=;reset=x"), Quota{}, false},
		{"None", h("Content-Type", "text/html"), Quota{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseRateLimit(tt.h, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzParseRateLimit: hostile headers never panic, and what is accepted
// is sane (remaining not negative, reset within bounds).
func FuzzParseRateLimit(f *testing.F) {
	for _, s := range []string{"limit=100, remaining=5, reset=12", `"default";r=50;t=30`, `"a";r=;t`, "0", "1700000060", "1.5", "Wed, 25 Nov 2026 12:00:30 GMT", ";;;,,,==", "remaining=0,reset=99999999999999999999"} {
		f.Add(s, s)
	}
	now := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, h := range []http.Header{
			{"Ratelimit": {a}},
			{"Ratelimit-Remaining": {a}, "Ratelimit-Reset": {b}},
			{"X-Ratelimit-Remaining": {a}, "X-Ratelimit-Reset": {b}},
			{"X-Ratelimit-Remaining": {a}, "X-Ratelimit-Reset-After": {b}},
		} {
			q, ok := ParseRateLimit(h, now)
			if ok && (q.Remaining < 0 || q.Reset < 0 || q.Reset > maxWait) {
				t.Fatalf("%v: %+v", h, q)
			}
		}
		if d, ok := ParseRetryAfter(a, now); ok && (d < 0 || d > maxWait) {
			t.Fatalf("Retry-After %q: %v", a, d)
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", " 5 ", "-1", "1.5", "99999999999999999999999",
		"Wed, 21 Oct 2015 07:28:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "soon"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseRetryAfter(s, now)
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, negative", s, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, false", s, d)
		}
	})
}

// TestParseRetryAfter_EveryStage: the reading the checker, the crawler,
// the archive client and the scheduler all get (there is one parser): a
// decimal number of seconds is accepted, rounded up to the millisecond.
func TestParseRetryAfter_EveryStage(t *testing.T) {
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 120 * time.Second, true},
		{" 0 ", 0, true},
		{"Wed, 21 Oct 2015 07:29:00 GMT", time.Minute, true},
		{"Wed, 21 Oct 2015 07:00:00 GMT", 0, true}, // in the past
		{"99999999999999999999999", 100 * 365 * 24 * time.Hour, true},
		{"-5", 0, false},
		{"1.5", 1500 * time.Millisecond, true},
		{"0.0001", time.Millisecond, true},
		{"1.", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		if got, ok := ParseRetryAfter(tt.in, now); got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
