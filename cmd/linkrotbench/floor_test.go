package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// padLinks is the extra links on each test page, all to /a.html with a
// fragment, so that the parts have some work.
const padLinks = 400

// testSite serves three HTML pages with known links, two broken pages, an
// image and a script; "/" redirects to "/index.html". It has, after
// fragments are dropped, 12+3*padLinks link occurrences to 10 targets
// (the pages included), and two broken URLs on its host; the plain
// checker extracts "/index.html" twice (as the seed and after "/").
func testSite(t *testing.T) *url.URL {
	t.Helper()
	var pad strings.Builder
	for k := range padLinks {
		fmt.Fprintf(&pad, `<p>Some words of text %d <a href="/a.html#p%d">again</a></p>`, k, k)
	}
	pages := map[string]string{
		"/index.html": `<a href="/a.html">a</a><a href="b.html#sec">b</a><a href="/missing.html">m</a>` +
			`<a href="mailto:x@example.com">mail</a><img src="img.png"><a href="https://example.com/ext">ext</a>`,
		"/a.html": `<a href="/index.html">home</a><a href="/">root</a><link rel="next" href="/b.html"><a href="/gone">gone</a>`,
		"/b.html": `<area href="/a.html#top"><script src="/app.js"></script>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case pages[p] != "":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s%s</body></html>", p, pages[p], pad.String())
		case p == "/":
			http.Redirect(w, r, "/index.html", http.StatusFound)
		case p == "/img.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG"))
		case p == "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			w.Write([]byte(`document.write('<a href="/never">x</a>')`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	seed, err := url.Parse(srv.URL + "/index.html")
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

func TestCrawl_HookFindsTheSame(t *testing.T) {
	seed := testSite(t)
	want := []string{seed.Scheme + "://" + seed.Host + "/gone", seed.Scheme + "://" + seed.Host + "/missing.html"}

	plainBroken := crawl(newClient(4), seed, 8, nil)
	slices.Sort(plainBroken)
	if !slices.Equal(plainBroken, want) {
		t.Errorf("nil hook: broken %q, want %q", plainBroken, want)
	}

	var (
		mu    sync.Mutex
		pages []string
	)
	hookBroken := crawl(newClient(4), seed, 8, func(u *url.URL, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(string(body), "</html>") {
			t.Errorf("%s: body cut short: %d bytes", u, len(body))
		}
		pages = append(pages, u.Path)
	})
	slices.Sort(hookBroken)
	if !slices.Equal(hookBroken, plainBroken) {
		t.Errorf("hook: broken %q, nil hook: %q", hookBroken, plainBroken)
	}
	slices.Sort(pages)
	if want := []string{"/a.html", "/b.html", "/index.html", "/index.html"}; !slices.Equal(pages, want) {
		t.Errorf("hook saw pages %q, want %q", pages, want)
	}
}

func TestMeasureFloor(t *testing.T) {
	pages := sitePages(testSite(t), 8, 4)
	f, err := measureFloor(pages, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if f.bodies != 4 || f.pages != 3 || f.links != 12+3*padLinks || f.targets != 10 {
		t.Errorf("extracted %d pages, stored %d pages, %d link rows, %d targets; want 4, 3, %d, 10", f.bodies, f.pages, f.links, f.targets, 12+3*padLinks)
	}
	for name, s := range map[string]cpuSpread{"extraction": f.tok, "tree": f.tree, "store": f.store} {
		if s.min <= 0 || s.max < s.min {
			t.Errorf("%s: CPU %v–%v", name, s.min, s.max)
		}
	}
}

func TestCountBack_Mismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	rows := []pageRow{{url: "http://h/", links: []string{"http://h/a", "http://h/a", "mailto:x@h"}}}
	if err := storeRows(path, rows); err != nil {
		t.Fatal(err)
	}
	if n, err := countBack(path, rows); err != nil || n != 3 {
		t.Fatalf("countBack = %d, %v; want 3 targets", n, err)
	}
	rows[0].links = append(rows[0].links, "http://h/b")
	if _, err := countBack(path, rows); err == nil {
		t.Error("countBack of rows not stored: no error")
	}
}

func TestStoreRows_ManyStatements(t *testing.T) {
	// 450 pages of 3 links: batches of 200 pages, statements of 100 rows
	// and of the rest (the last batch has 150 links).
	var rows []pageRow
	targets := map[string]bool{}
	for i := range 450 {
		r := pageRow{url: fmt.Sprintf("http://h/p/%d", i)}
		targets[r.url] = true
		for k := range 3 {
			r.links = append(r.links, fmt.Sprintf("http://h/p/%d", (i*7+k)%1000))
			targets[r.links[k]] = true
		}
		rows = append(rows, r)
	}
	path := filepath.Join(t.TempDir(), "f.db")
	if err := storeRows(path, rows); err != nil {
		t.Fatal(err)
	}
	if n, err := countBack(path, rows); err != nil || n != len(targets) {
		t.Fatalf("countBack = %d, %v; want %d targets", n, err, len(targets))
	}
}

func TestFloorParts_Print(t *testing.T) {
	f := floorParts{
		tok: cpuSpread{340 * time.Millisecond, 360 * time.Millisecond}, tree: cpuSpread{800 * time.Millisecond, 900 * time.Millisecond},
		store: cpuSpread{370 * time.Millisecond, 400 * time.Millisecond}, pages: 692, links: 95010, targets: 12345,
	}
	var b strings.Builder
	f.print(&b, 770*time.Millisecond, 460*time.Millisecond, 2)
	for _, want := range []string{"= 1.60 CPU-s", "692 pages, 95,010 link rows, 12,345 targets", "at least 0.80 s wall = 1.74×", "1.3× allows 1.20 CPU-s", "extraction 0.340 s (0.340–0.360)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("latency-free floor: %q lacks %q", b.String(), want)
		}
	}
	b.Reset()
	f.print(&b, 770*time.Millisecond, 2500*time.Millisecond, 2)
	if want := "below the plain checker's median wall 2.50 s: the floor is its wall, 1.00×"; !strings.Contains(b.String(), want) {
		t.Errorf("latency-bound floor: %q lacks %q", b.String(), want)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 95010: "95,010", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
