package check

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// TestFollow_LocationWHATWG: a Location is resolved as browsers resolve it
// (tab and newline removed, "\" read as "/"), a password in it is never
// recorded nor sent.
func TestFollow_LocationWHATWG(t *testing.T) {
	s := newServer(t)
	auth := make(chan string, 8)
	raw := func(loc string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Location"] = []string{loc}
			w.WriteHeader(http.StatusFound)
		}
	}
	s.handle("/tab", raw("/fi\tnal"))
	s.handle("/backslash", raw(`\final`))
	host := strings.TrimPrefix(s.URL, "http://")
	s.handle("/creds", raw("http://user:s3cr3t@"+host+"/final"))
	s.handle("/final", func(w http.ResponseWriter, r *http.Request) {
		auth <- r.Header.Get("Authorization")
		html200("<p>final</p>")(w, r)
	})
	c := New(testOptions())
	got := collect(t, c, []Target{{URL: s.URL + "/tab"}, {URL: s.URL + "/backslash"}, {URL: s.URL + "/creds"}})
	for _, p := range []string{"/tab", "/backslash", "/creds"} {
		ch := got[s.URL+p]
		if ch.Verdict != audit.VerdictRedirected {
			t.Errorf("%s: verdict %s", p, ch.Verdict)
		}
		if len(ch.Redirects) != 1 {
			t.Fatalf("%s: redirects %+v", p, ch.Redirects)
		}
		to := ch.Redirects[0].To
		want := s.URL + "/final"
		if p == "/creds" {
			want = "http://user:***@" + host + "/final"
		}
		if to != want {
			t.Errorf("%s: redirect to %q, want %q", p, to, want)
		}
		if strings.Contains(ch.FinalURL, "s3cr3t") {
			t.Errorf("%s: final URL %q", p, ch.FinalURL)
		}
	}
	close(auth)
	for a := range auth {
		if a != "" {
			t.Errorf("credentials sent: Authorization %q", a)
		}
	}
}
