package check

import (
	"context"
	"net/http"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func TestIsLocale(t *testing.T) {
	for s, want := range map[string]bool{
		"en":         true,
		"DE":         true,
		"pt-br":      true,
		"pt_BR":      true,
		"en-US":      true,
		"es-419":     true,
		"zh_Hans":    true,
		"zh-hant":    true,
		"bh":         true,
		"ok":         false, // not a language
		"go":         false,
		"ai":         false,
		"tv":         false,
		"qq":         false,
		"xx":         false,
		"en-":        false,
		"en-u":       false,
		"en-12":      false,
		"en-1234":    false,
		"en-abcde":   false,
		"go-us":      false,
		"eng":        false, // three-letter codes are not path locales here
		"":           false,
		"e1":         false,
		"en-us-west": false,
	} {
		if got := isLocale(s); got != want {
			t.Errorf("isLocale(%q) = %v, want %v", s, got, want)
		}
	}
	if len(languageCodes) != 184 {
		t.Errorf("%d ISO 639-1 codes, want 184", len(languageCodes))
	}
}

func TestRedirectToRoot_Locales(t *testing.T) {
	tests := []struct {
		from, to string
		want     bool
	}{
		{"/moved", "/ok", false}, // /ok is a page, not a locale root
		{"/old", "/go", false},
		{"/product", "/ai/", false},
		{"/show", "/tv", false},
		{"/docs/page", "/pt_BR/", true},
		{"/docs/page", "/es-419/index.html", true},
		{"/docs/page", "/zh-Hans", true},
		{"/go", "/", true}, // "go" is a deep path, not a locale
		{"/fr", "/", false},
	}
	for _, tt := range tests {
		from, to := mustURL(t, "http://x"+tt.from), mustURL(t, "http://x"+tt.to)
		if got := redirectToRoot(from, to, []audit.Redirect{{Status: 301}}); got != tt.want {
			t.Errorf("redirectToRoot(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}

// TestCheckOne_MovedToTwoLetterPath: a permanent redirect to a two-letter
// path that is no language keeps its verdict moved and its replacement
// (the link-maintenance record).
func TestCheckOne_MovedToTwoLetterPath(t *testing.T) {
	s := newServer(t)
	for _, p := range []string{"/ok", "/go", "/ai", "/tv"} {
		s.handle("/moved"+p, redirect(p, http.StatusMovedPermanently))
		s.handle(p, html200(page))
	}
	s.handle("/moved/de", redirect("/de/", http.StatusMovedPermanently))
	s.handle("/de/", html200(page))
	c := New(testOptions())
	for _, p := range []string{"/ok", "/go", "/ai", "/tv"} {
		got := c.CheckOne(context.Background(), Target{URL: s.URL + "/moved" + p})
		if got.Verdict != audit.VerdictMoved || got.Replacement != s.URL+p {
			t.Errorf("/moved%s: verdict %q replacement %q, want moved to %s", p, got.Verdict, got.Replacement, s.URL+p)
		}
	}
	// A real locale root is still a redirect to the home page.
	if got := c.CheckOne(context.Background(), Target{URL: s.URL + "/moved/de"}); got.Verdict != audit.VerdictRedirectToRoot {
		t.Errorf("/moved/de: verdict %q, want redirect-to-root", got.Verdict)
	}
}
