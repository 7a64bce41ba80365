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
	srv := httptest.NewServer(testSiteHandler())
	t.Cleanup(srv.Close)
	seed, err := url.Parse(srv.URL + "/index.html")
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

// testSiteHandler serves testSite's pages.
func testSiteHandler() http.Handler {
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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	})
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
	for _, withTree := range []bool{false, true} {
		f, err := measureFloor(pages, t.TempDir(), withTree)
		if err != nil {
			t.Fatal(err)
		}
		if f.bodies != 4 || f.pages != 3 || f.links != 12+3*padLinks || f.targets != 10 {
			t.Errorf("tree %v: extracted %d pages, stored %d pages, %d link rows, %d targets; want 4, 3, %d, 10", withTree, f.bodies, f.pages, f.links, f.targets, 12+3*padLinks)
		}
		parts := map[string]cpuSpread{"extraction": f.tok, "store": f.store}
		if withTree {
			parts["tree"] = f.tree
		} else if f.tree != (cpuSpread{}) {
			t.Errorf("no tree asked for, tree measured: %v", f.tree)
		}
		for name, s := range parts {
			if s.min <= 0 || s.max < s.min {
				t.Errorf("tree %v: %s: CPU %v–%v", withTree, name, s.min, s.max)
			}
		}
		if f.withTree != withTree {
			t.Errorf("withTree = %v, want %v", f.withTree, withTree)
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

func TestFloorParts_FloorCPU(t *testing.T) {
	f := floorParts{tok: cpuSpread{min: 300 * time.Millisecond}, tree: cpuSpread{min: 800 * time.Millisecond}, store: cpuSpread{min: 100 * time.Millisecond}}
	// One tokenizer pass: the plain checker's CPU, its pass included, and
	// the store.
	if got, want := f.floorCPU(time.Second), 1100*time.Millisecond; got != want {
		t.Errorf("one pass: floor %v, want %v", got, want)
	}
	// A tree per page replaces the plain checker's pass.
	f.withTree = true
	if got, want := f.floorCPU(time.Second), 1600*time.Millisecond; got != want {
		t.Errorf("tree: floor %v, want %v", got, want)
	}
}

func TestFloorParts_Print(t *testing.T) {
	f := floorParts{
		tok: cpuSpread{340 * time.Millisecond, 360 * time.Millisecond}, tree: cpuSpread{800 * time.Millisecond, 900 * time.Millisecond},
		store: cpuSpread{370 * time.Millisecond, 400 * time.Millisecond}, pages: 692, links: 95010, targets: 12345,
	}
	tests := []struct {
		name      string
		withTree  bool
		beside    floorBeside
		want, not []string
	}{{
		name:   "one pass, latency-free",
		beside: floorBeside{plainCPU: 770 * time.Millisecond, plainWall: 460 * time.Millisecond, cores: 2},
		want: []string{"floor (one tokenizer pass per page): plain CPU 0.77 s (median; its own tokenizer pass, 0.34 s, included)",
			"+ storing 692 pages, 95,010 link rows, 12,345 targets 0.37 s = 1.14 CPU-s",
			"includes: the plain checker's whole run (its requests and its one tokenizer pass per page)",
			"at least 0.57 s wall = 1.24× the plain checker's median wall 0.46 s", "1.5× allows 1.38 CPU-s",
			"extraction 0.340 s (0.340–0.360), store 0.370 s (0.370–0.400)"},
		not: []string{"tree", "muffet"},
	}, {
		name:     "tree, latency-free",
		withTree: true,
		beside:   floorBeside{plainCPU: 770 * time.Millisecond, plainWall: 460 * time.Millisecond, cores: 2},
		want: []string{"floor (-floor-tree: one html.Parse tree per page): plain CPU 0.77 s (median) − its extraction 0.34 s + one tree per page 0.80 s",
			"= 1.60 CPU-s", "692 pages, 95,010 link rows, 12,345 targets", "less its tokenizer pass, one html.Parse tree per page",
			"at least 0.80 s wall = 1.74×", "tree 0.800 s (0.800–0.900)"},
		not: []string{"muffet"},
	}, {
		name:   "one pass, latency-bound, beside muffet",
		beside: floorBeside{plainCPU: 770 * time.Millisecond, plainWall: 2500 * time.Millisecond, muffetWall: 5 * time.Second, cores: 2},
		want: []string{"below the plain checker's median wall 2.50 s: the floor is its wall, 1.00×",
			"muffet's median wall 5.00 s: floor/muffet 0.50×"},
	}, {
		name:   "one pass, beside a faster muffet",
		beside: floorBeside{plainCPU: 3 * time.Second, plainWall: 1 * time.Second, muffetWall: 1 * time.Second, cores: 2},
		want:   []string{"= 3.37 CPU-s", "at least 1.69 s wall = 1.69×", "floor/muffet 1.69×"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := f
			f.withTree = tt.withTree
			var b strings.Builder
			f.print(&b, tt.beside)
			for _, want := range tt.want {
				if !strings.Contains(b.String(), want) {
					t.Errorf("%q lacks %q", b.String(), want)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(b.String(), not) {
					t.Errorf("%q has %q", b.String(), not)
				}
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 95010: "95,010", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
