package crawler

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestSitemap_LocURLs: <loc> values are read by the run's URL parser
// (WHATWG): white space trimmed, tab and newline removed, "\" read as "/";
// relative and invalid ones are skipped with a log line; passwords are
// redacted in the URLs returned and in the log.
func TestSitemap_LocURLs(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>
  %[1]s/a
</loc></url>
<url><loc>%[2]s\b\c</loc></url>
<url><loc>%[1]s/t&#9;ab</loc></url>
<url><loc>/relative</loc></url>
<url><loc>http://[::1/</loc></url>
<url><loc>mailto:a@example.org</loc></url>
<url><loc>http://user:s3cr3t@%[3]s/d</loc></url>
<url><loc>http://user:s3cr3t@exa mple.org/e</loc></url>
</urlset>`, srv.URL, strings.Replace(srv.URL, "http://", `http:\\`, 1), strings.TrimPrefix(srv.URL, "http://"))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	sm := &sitemapReader{client: srv.Client(), ua: "test", log: slog.New(slog.NewTextHandler(&logs, nil))}
	got, err := sm.Read(context.Background(), srv.URL+"/sitemap.xml")
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	want := []string{srv.URL + "/a", srv.URL + "/b/c", srv.URL + "/tab", "http://user:***@" + host + "/d"}
	if !slices.Equal(got, want) {
		t.Errorf("pages\n got %q\nwant %q", got, want)
	}
	if n := strings.Count(logs.String(), "sitemap <loc> skipped"); n != 4 {
		t.Errorf("%d skipped <loc> logged, want 4:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "s3cr3t") {
		t.Errorf("password in the log:\n%s", logs.String())
	}
}
