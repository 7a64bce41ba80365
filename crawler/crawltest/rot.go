package crawltest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Rot is the fixture for checking: testdata/sites/rot served on loopback
// with a second host that answers soft 404s and a third that never answers
// in time.
type Rot struct {
	*Site
	Soft *httptest.Server // unknown URLs answer 200 "not found"
	Slow *httptest.Server // answers after 5 s

	slowHits atomic.Int64
}

// SlowHits returns how many requests the slow host received.
func (r *Rot) SlowHits() int { return int(r.slowHits.Load()) }

// NewRot starts the rot fixture. The main site routes:
//   - /old-url: 301 to /new-url.html (200), a moved resource;
//   - /gone: 410; /missing and any unknown path: 404;
//   - /temp: 302 to /fine.html;
//   - /deep/path/article: 302 to / (a deep URL redirected to the home page);
//   - /shop/ and everything below it: 200, a catch-all route whose unknown
//     URLs (/shop/discontinued-widget, linked from the home page) answer a
//     "not found" page with status 200: a soft 404 on the audited site.
func NewRot(tb interface {
	Helper()
	Cleanup(func())
}) *Rot {
	tb.Helper()
	dir := Dir("rot")
	r := &Rot{}
	r.Soft = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch req.URL.Path {
		case "/", "/articles/":
			fmt.Fprint(w, `<!doctype html><html><head><title>Articles</title></head><body><main><h1>All our articles</h1><p>Read about gardening, cooking, travel and history in our archive of long-form essays written by our editors since 2009.</p></main></body></html>`)
		default:
			// A soft 404: status 200, a "not found" page that echoes the path.
			fmt.Fprintf(w, `<!doctype html><html><head><title>Oops</title></head><body><main><h1>Sorry!</h1><p>We could not find %s on this server. It may have been moved or deleted. Try the search box or go back to the home page.</p></main></body></html>`, req.URL.Path)
		}
	}))
	r.Slow = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.slowHits.Add(1)
		select {
		case <-req.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	files := http.FileServer(http.Dir(dir))
	mux := http.NewServeMux()
	mux.HandleFunc("/old-url", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "/new-url.html", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/new-url.html", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>New home of the old URL</title></head><body><p>Moved here.</p></body></html>`)
	})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, req *http.Request) { http.Error(w, "gone", http.StatusGone) })
	mux.HandleFunc("/temp", func(w http.ResponseWriter, req *http.Request) { http.Redirect(w, req, "/fine.html", http.StatusFound) })
	mux.HandleFunc("/deep/path/article", func(w http.ResponseWriter, req *http.Request) { http.Redirect(w, req, "/", http.StatusFound) })
	mux.HandleFunc("/shop/", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if req.URL.Path == "/shop/" {
			fmt.Fprint(w, `<!doctype html><html><head><title>Shop</title></head><body><main><h1>Our shop</h1><p>Garden tools, seeds and books, shipped within two days to most countries of the world.</p></main></body></html>`)
			return
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>Shop</title></head><body><main><h1>Product not available</h1><p>The product %s is not in our catalogue any more. Browse the shop for similar items or contact us.</p></main></body></html>`, req.URL.Path)
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, req *http.Request) {
		b, err := os.ReadFile(filepath.Join(dir, "index.html"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		b = bytes.ReplaceAll(b, []byte("{{SOFT}}"), []byte(r.Soft.URL))
		b = bytes.ReplaceAll(b, []byte("{{SLOW}}"), []byte(r.Slow.URL))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	})
	mux.Handle("/", files)
	r.Site = &Site{hits: map[string]int{}}
	r.Site.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Site.mu.Lock()
		r.Site.hits[req.URL.Path+queryMark(req)]++
		r.Site.mu.Unlock()
		mux.ServeHTTP(w, req)
	}))
	tb.Cleanup(r.Site.Close)
	tb.Cleanup(r.Soft.Close)
	tb.Cleanup(r.Slow.Close)
	return r
}

func queryMark(req *http.Request) string {
	if req.URL.RawQuery == "" {
		return ""
	}
	return "?" + req.URL.RawQuery
}
