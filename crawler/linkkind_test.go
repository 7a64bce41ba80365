package crawler_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/linkrot/linkrot/crawler"
)

// TestCrawl_FollowsPagesByKind: the crawl reads as pages the targets a
// browser shows as pages (links, a meta refresh, cites, an iframe), not
// the embedded resources (images, srcset candidates, posters, media), and
// never a connection hint's origin.
func TestCrawl_FollowsPagesByKind(t *testing.T) {
	var (
		mu   sync.Mutex
		hits = map[string]int{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><meta http-equiv="refresh" content="5; url=/refresh.html">
<link rel="preconnect" href="/hint/"><link rel="dns-prefetch" href="/dns/"></head><body>
<a href="/a.html">a</a><iframe src="/frame.html"></iframe>
<blockquote cite="/bq.html">q</blockquote><q cite="/q.html">q</q><del cite="/del.html">d</del><ins cite="/ins.html">i</ins>
<img src="/i.png" srcset="/i2.png 2x"><video src="/v.webm" poster="/p.jpg"><track src="/t.vtt"></video>
<object data="/o.html"></object><embed src="/e.html"><input type=image src="/in.html"></body></html>`)
		case "/robots.txt":
			http.NotFound(w, r)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<p>page</p>`)
		}
	}))
	defer srv.Close()
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{}, sink).Crawl(context.Background(), []string{srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	want := "/ /a.html /bq.html /del.html /frame.html /ins.html /q.html /refresh.html"
	if got := strings.Join(paths(sink.byPath(t)), " "); got != want {
		t.Errorf("pages crawled:\n got %s\nwant %s", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"/hint/", "/dns/", "/i.png", "/i2.png", "/v.webm", "/p.jpg", "/t.vtt", "/o.html", "/e.html", "/in.html"} {
		if hits[p] != 0 {
			t.Errorf("the crawl fetched %s", p)
		}
	}
}

// TestCrawlDir_SkipsConnectionHints: a directory crawl reads every file a
// page fetches (an image too), but not a connection hint's URL (files
// that are not documents, so not seeds of the crawl themselves).
func TestCrawlDir_SkipsConnectionHints(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"index.html": `<link rel="preconnect" href="/hint.bin"><link rel="dns-prefetch" href="/dns/x.bin"><img srcset="/i.png 2x">`,
		"hint.bin":   "hint", "dns/x.bin": "dns", "i.png": "png",
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{}, sink).CrawlDir(context.Background(), dir, "https://example.org/"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(paths(sink.byPath(t)), " "); got != "/ /i.png" {
		t.Errorf("files read: %s, want / /i.png", got)
	}
}
