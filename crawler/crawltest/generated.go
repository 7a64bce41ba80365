package crawltest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// Generated is a synthetic site of n pages (/p/0 … /p/n-1), each about 4 KB
// of HTML with 20 links to other pages and 2 external links, every page
// reachable from /p/0. Served counts response bytes.
type Generated struct {
	*httptest.Server
	N     int
	Bytes atomic.Int64
}

// NewGenerated starts a generated site of n pages.
func NewGenerated(tb testing.TB, n int) *Generated {
	tb.Helper()
	g := &Generated{N: n}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	tb.Cleanup(g.Close)
	return g
}

func (g *Generated) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
	if err != nil || id < 0 || id >= g.N {
		http.NotFound(w, r)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><meta charset=utf-8><title>Page %d</title></head><body><h1>Page %d</h1>\n", id, id)
	// Links 2i+1 and 2i+2 make a binary tree (everything reachable); the
	// others jump around the site like navigation and related-post links.
	for k := 0; k < 20; k++ {
		var t int
		switch k {
		case 0:
			t = 2*id + 1
		case 1:
			t = 2*id + 2
		default:
			t = (id*7919 + k*104729) % g.N
		}
		if t >= g.N {
			t = (id + k) % g.N
		}
		fmt.Fprintf(&b, "<p>Paragraph %d of page %d, with <a href=\"/p/%d\">a link to page %d</a> and filler text to look like prose.</p>\n", k, id, t, t)
	}
	fmt.Fprintf(&b, `<p><a href="https://external.example/%d" data-originalurl="https://external.example/%d" data-versiondate="2024-11-20">cited</a> <a href="mailto:x@example.org">mail</a></p></body></html>`, id, id)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	n, _ := w.Write([]byte(b.String()))
	g.Bytes.Add(int64(n))
}
