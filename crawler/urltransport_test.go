package crawler_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/crawler"
)

// TestCrawl_LocationWHATWG: the crawler follows a Location with a tab or
// backslashes as browsers do, and never sends a URL password (neither the
// seed's nor a redirect's).
func TestCrawl_LocationWHATWG(t *testing.T) {
	var srv *httptest.Server
	var auth []string
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			auth = append(auth, r.URL.Path+" "+a)
		}
		loc := map[string]string{
			"/tab":       "/fi\tnal",
			"/backslash": `\final2`,
			"/creds":     "http://user:s3cr3t@" + r.Host + "/final3",
		}
		if l, ok := loc[r.URL.Path]; ok {
			w.Header()["Location"] = []string{l}
			w.WriteHeader(http.StatusFound)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/final") {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<title>final</title>"))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	sink := &memSink{}
	seed := strings.Replace(srv.URL, "http://", "http://seed:s3cr3t@", 1)
	_, err := crawler.New(crawler.Options{}, sink).CrawlList(context.Background(),
		[]string{seed + "/tab", srv.URL + "/backslash", srv.URL + "/creds"})
	if err != nil {
		t.Fatal(err)
	}
	final := map[string]string{}
	for _, p := range sink.pages {
		final[p.RequestURL[strings.LastIndex(p.RequestURL, "/"):]] = p.URL
		if p.Status != 200 {
			t.Errorf("%s: status %d (%s)", p.RequestURL, p.Status, p.FetchError)
		}
	}
	for from, to := range map[string]string{"/tab": "/final", "/backslash": "/final2", "/creds": "/final3"} {
		if !strings.HasSuffix(final[from], to) {
			t.Errorf("%s ended at %q, want %s", from, final[from], to)
		}
	}
	if len(auth) > 0 {
		t.Errorf("credentials sent: %q", auth)
	}
}
