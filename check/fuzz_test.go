package check

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

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
