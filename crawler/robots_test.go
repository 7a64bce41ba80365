package crawler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

func TestRobots(t *testing.T) {
	robotsTxt := "User-agent: *\nDisallow: /private/\nAllow: /private/open\nDisallow: /*.pdf$\nCrawl-delay: 2\n\nUser-agent: linkrot\nDisallow: /not-for-linkrot/\nCrawl-delay: 120\n"
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		ua        string
		path      string
		want      bool
		wantErr   bool
		wantDelay time.Duration
	}{
		{"Allowed", serveRobots(200, robotsTxt), "other", "/public", true, false, 2 * time.Second},
		{"Disallowed", serveRobots(200, robotsTxt), "other", "/private/x", false, false, 2 * time.Second},
		{"LongestMatchAllows", serveRobots(200, robotsTxt), "other", "/private/open", true, false, 2 * time.Second},
		{"Wildcard", serveRobots(200, robotsTxt), "other", "/a/b.pdf", false, false, 2 * time.Second},
		// The group naming linkrot applies, and its Crawl-delay is capped.
		{"OwnGroupCapped", serveRobots(200, robotsTxt), "linkrot/0.1", "/not-for-linkrot/x", false, false, 30 * time.Second},
		{"NotFoundAllowsAll", serveRobots(404, ""), "other", "/private/x", true, false, 0},
		{"ForbiddenAllowsAll", serveRobots(403, ""), "other", "/x", true, false, 0},
		{"ServerErrorDisallowsAll", serveRobots(503, ""), "other", "/x", false, false, 0},
		{"RedirectFollowed", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, "/real-robots.txt", http.StatusMovedPermanently)
				return
			}
			w.Write([]byte("User-agent: *\nDisallow: /\n"))
		}, "other", "/x", false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			r := newRobots(&http.Client{CheckRedirect: sameHostRedirects(maxRobotsRedirects)}, tt.ua)
			u, _ := url.Parse(srv.URL + tt.path)
			ok, err := r.Allowed(context.Background(), u)
			if ok != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("Allowed(%s) = %v, %v; want %v (err %v)", tt.path, ok, err, tt.want, tt.wantErr)
			}
			if d := r.CrawlDelay(context.Background(), u, 30*time.Second); d != tt.wantDelay {
				t.Errorf("CrawlDelay = %v, want %v", d, tt.wantDelay)
			}
		})
	}
	t.Run("Unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		u, _ := url.Parse(srv.URL + "/x")
		srv.Close() // connection refused
		ok, err := newRobots(http.DefaultClient, "x").Allowed(context.Background(), u)
		if ok || err == nil {
			t.Errorf("unreachable robots.txt: allowed %v, err %v; want disallowed with an error", ok, err)
		}
	})
}

func serveRobots(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

func TestReadMaybeGzipBomb(t *testing.T) {
	// A few KiB of gzip that inflate to 8 MiB, far beyond the 1 MiB cap.
	bomb := gzipOf(make([]byte, 8<<20))
	if _, err := readMaybeGzip(bytesReader(bomb), 1<<20); err != errSitemapTooBig {
		t.Errorf("gzip bomb: err = %v, want errSitemapTooBig", err)
	}
	if b, err := readMaybeGzip(bytesReader(gzipOf([]byte("<urlset/>"))), 1<<20); err != nil || string(b) != "<urlset/>" {
		t.Errorf("small gzip: %q, %v", b, err)
	}
}

func FuzzParseSitemap(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0"?><urlset><url><loc>https://ex.org/a</loc></url></urlset>`))
	f.Add([]byte(`<sitemapindex><sitemap><loc> https://ex.org/s.xml </loc></sitemap></sitemapindex>`))
	f.Add([]byte("https://ex.org/a\nhttps://ex.org/b\n"))
	f.Add([]byte(`<urlset><url><loc><![CDATA[https://ex.org/c]]></loc></url><url><loc>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		pages, children, _ := parseSitemap(body)
		if len(pages) > maxSitemapURLs {
			t.Fatalf("%d pages, more than the cap", len(pages))
		}
		for _, p := range append(pages, children...) {
			if p == "" {
				t.Fatal("empty URL returned")
			}
		}
	})
}
