package check

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/politeness"
)

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
		if pd, pok := politeness.ParseRetryAfter(s, now); pd != d || pok != ok {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v; the scheduler reads %v, %v", s, d, ok, pd, pok)
		}
	})
}

// TestParseRetryAfter: the checker reads Retry-After as the scheduler
// does (one parser): a decimal number of seconds is accepted, rounded up
// to the millisecond, where the checker's own parser used to reject it.
func TestParseRetryAfter(t *testing.T) {
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

func FuzzChallenge(f *testing.F) {
	f.Add(403, "cf-mitigated", "challenge", []byte("<title>Just a moment...</title>"))
	f.Add(503, "server", "cloudflare", []byte(`<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1"></script>`))
	f.Add(202, "x-amzn-waf-action", "challenge", []byte(""))
	f.Add(200, "content-security-policy", "script-src https://cdnjs.cloudflare.com/", []byte("<title>Just a moment...</title>"))
	f.Fuzz(func(t *testing.T, status int, k, v string, body []byte) {
		h := http.Header{}
		h.Add(k, v)
		sig := challenge(status, h, body)
		// Bodies count only for 403, 429 and 503; elsewhere only the
		// documented headers do.
		if sig != "" && status != 403 && status != 429 && status != 503 && challenge(status, http.Header{}, body) != "" {
			t.Fatalf("body alone made a %d a challenge: %q", status, sig)
		}
	})
}

func TestChallenge(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   bool
	}{
		{"CloudflareHeader", 403, http.Header{"Cf-Mitigated": {"challenge"}}, "", true},
		{"CloudflareHeaderOn200", 200, http.Header{"Cf-Mitigated": {"Challenge"}}, "", true},
		{"AWSChallenge", 202, http.Header{"X-Amzn-Waf-Action": {"challenge"}}, "", true},
		{"AWSCaptcha", 405, http.Header{"X-Amzn-Waf-Action": {"captcha"}}, "", true},
		{"Vercel", 429, http.Header{"X-Vercel-Mitigated": {"challenge"}}, "", true},
		{"JustAMoment503", 503, nil, "<html><head><TITLE>Just a moment...</TITLE>", true},
		{"ChallengePlatform429", 429, nil, `<script src="/cdn-cgi/challenge-platform/x.js">`, true},
		{"JustAMoment200", 200, nil, "<title>Just a moment...</title>", false},
		{"CDNInCSP", 200, http.Header{"Content-Security-Policy": {"script-src https://cdnjs.cloudflare.com/ https://www.google.com/recaptcha/"}}, "", false},
		{"Plain503", 503, http.Header{"Server": {"cloudflare"}}, "<h1>Service unavailable</h1>", false},
		{"OtherMitigation", 403, http.Header{"Cf-Mitigated": {"block"}}, "", false},
	}
	for _, tt := range tests {
		h := tt.header
		if h == nil {
			h = http.Header{}
		}
		if got := challenge(tt.status, h, []byte(tt.body)) != ""; got != tt.want {
			t.Errorf("%s: challenge = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func FuzzAnchors(f *testing.F) {
	f.Add([]byte(`<h1 id="a">x</h1><a name="b"></a><input name="c"><p id=a>`), 3)
	f.Add([]byte(`<a id="&amp;&#0;" name>`), 1)
	f.Fuzz(func(t *testing.T, page []byte, limit int) {
		limit = limit%50 + 1
		if limit <= 0 {
			limit += 50
		}
		got := anchors(page, limit)
		if len(got) > limit {
			t.Fatalf("%d anchors, limit %d", len(got), limit)
		}
		seen := map[string]bool{}
		for _, a := range got {
			if a == "" || seen[a] {
				t.Fatalf("empty or repeated anchor %q in %q", a, got)
			}
			seen[a] = true
		}
	})
}

// FuzzDecodeBody feeds arbitrary bytes as gzip or deflate bodies: decoding
// never panics and never yields more than the cap.
func FuzzDecodeBody(f *testing.F) {
	gz, zl := bombs()
	f.Add(gz[:min(len(gz), 4096)], "gzip")
	f.Add(zl[:min(len(zl), 4096)], "deflate")
	f.Add([]byte("\x78\x01raw"), "deflate")
	f.Add([]byte("plain"), "identity")
	f.Fuzz(func(t *testing.T, body []byte, encoding string) {
		const limit = 1 << 10
		resp := &http.Response{Header: http.Header{"Content-Encoding": {encoding}}, Body: io.NopCloser(bytes.NewReader(body))}
		raw := &errRecorder{r: resp.Body}
		dec, err := decoder(resp, raw)
		if err != nil {
			return
		}
		b, truncated, _ := readCapped(dec, limit, -1)
		if len(b) > limit || (truncated && len(b) != limit) {
			t.Fatalf("read %d bytes (truncated %v) with cap %d", len(b), truncated, limit)
		}
	})
}

func FuzzProbeFor(f *testing.F) {
	for _, s := range []string{"http://h/a/b", "https://h:1/a/b/", "http://h", "http://h/%2F/x?q#f", "http://[::1]:8/a;b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return
		}
		key, pu := probeFor(u)
		if pu.Host != u.Host || pu.Scheme != u.Scheme || !strings.HasPrefix(key, u.Scheme+"://"+u.Host+"/") {
			t.Fatalf("probeFor(%q) = %q, %q: another host", s, key, pu)
		}
		if !probeRE.MatchString(pu.Path) {
			t.Fatalf("probeFor(%q) = %q: no random last segment", s, pu)
		}
		redirectToRoot(u, pu, nil)
		isHome(u.Path)
	})
}
