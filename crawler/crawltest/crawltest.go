// Package crawltest serves linkrot's fixture sites on loopback for tests:
// real HTTP servers (httptest) that behave like small web sites, with
// robots.txt, sitemaps (plain, index and gzipped), redirects, 404s, a
// non-HTML file and a windows-1252 page.
package crawltest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Dir returns the absolute path of testdata/sites/<name> in the repository.
func Dir(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "sites", name)
}

// Site is a running fixture site.
type Site struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

// Hits returns how many times path was requested.
func (s *Site) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// NewBasic serves testdata/sites/basic with these additions:
//   - /redirect-me answers 301 to /a.html;
//   - /latin1.html is served as "text/html" without a charset, so the
//     decoder must find <meta charset="windows-1252">;
//   - /sitemap.xml has {{BASE}} replaced by the server URL;
//   - /sitemap_index.xml lists /sitemap-pages.xml.gz, a gzipped copy of the
//     sitemap served as application/gzip without Content-Encoding;
//   - unknown paths answer 404.
func NewBasic(tb testing.TB) *Site {
	tb.Helper()
	dir := Dir("basic")
	s := &Site{hits: map[string]int{}}
	mux := http.NewServeMux()
	files := http.FileServer(http.Dir(dir))
	base := func() string { return s.URL }
	mux.HandleFunc("/redirect-me", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/a.html", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/latin1.html", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(filepath.Join(dir, "latin1.html"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write(b)
	})
	sitemap := func() []byte {
		b, _ := os.ReadFile(filepath.Join(dir, "sitemap.xml"))
		return bytes.ReplaceAll(b, []byte("{{BASE}}"), []byte(base()))
	}
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.Write(sitemap())
	})
	mux.HandleFunc("/sitemap-pages.xml.gz", func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(sitemap())
		zw.Close()
		w.Header().Set("Content-Type", "application/gzip")
		w.Write(buf.Bytes())
	})
	mux.HandleFunc("/sitemap_index.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>%s/sitemap-pages.xml.gz</loc></sitemap>
  <sitemap><loc>http://elsewhere.invalid/sitemap.xml</loc></sitemap>
</sitemapindex>`, base())
	})
	mux.Handle("/", files)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/index.html") {
			// Avoid FileServer's redirect of /index.html to ./ for clarity.
			r.URL.Path = strings.TrimSuffix(r.URL.Path, "index.html")
		}
		mux.ServeHTTP(w, r)
	}))
	tb.Cleanup(s.Close)
	return s
}
