package crawler_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/crawler/crawltest"
)

// memSink collects pages in memory.
type memSink struct {
	mu    sync.Mutex
	pages []*audit.Page
}

func (m *memSink) Add(p *audit.Page) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pages = append(m.pages, p)
}

// byPath indexes pages by the path of their request URL.
func (m *memSink) byPath(t *testing.T) map[string]*audit.Page {
	t.Helper()
	out := map[string]*audit.Page{}
	for _, p := range m.pages {
		u, err := url.Parse(p.RequestURL)
		if err != nil {
			t.Fatalf("bad request URL %q", p.RequestURL)
		}
		if _, dup := out[u.Path]; dup {
			t.Errorf("page %s recorded twice", u.Path)
		}
		out[u.Path] = p
	}
	return out
}

func paths(m map[string]*audit.Page) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestCrawl_Basic(t *testing.T) {
	site := crawltest.NewBasic(t)
	sink := &memSink{}
	st, err := crawler.New(crawler.Options{}, sink).Crawl(context.Background(), []string{site.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	pages := sink.byPath(t)
	want := []string{"/", "/a.html", "/b/", "/b/c.html", "/b/d.html", "/doc.pdf", "/latin1.html", "/missing.html", "/private/secret.html", "/redirect-me"}
	if got := paths(pages); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("pages:\n got %v\nwant %v", got, want)
	}
	// Every page fetched once, even though a.html, / and b/ form cycles.
	for _, p := range []string{"/", "/a.html", "/b/"} {
		if n := site.Hits(p); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
	if n := site.Hits("/private/secret.html"); n != 0 {
		t.Errorf("robots.txt-disallowed page fetched %d times", n)
	}
	if p := pages["/private/secret.html"]; !strings.Contains(p.FetchError, "robots.txt") || p.Status != 0 {
		t.Errorf("private page: status %d, error %q; want robots.txt refusal", p.Status, p.FetchError)
	}
	if st.RobotsBlocked != 1 {
		t.Errorf("RobotsBlocked = %d, want 1", st.RobotsBlocked)
	}
	if n := site.Hits("/never-crawled.html"); n != 0 {
		t.Errorf("link of a disallowed page was crawled")
	}

	home := pages["/"]
	if home.Status != 200 || !home.Parsed || home.Title != "Basic fixture site" {
		t.Errorf("home: status %d parsed %v title %q", home.Status, home.Parsed, home.Title)
	}
	if len(home.Identifiers) != 1 || home.Identifiers[0].URL != "https://doi.org/10.1234/basic" {
		t.Errorf("home identifiers = %+v", home.Identifiers)
	}
	if len(home.PWIDs) != 1 || home.PWIDs[0].Source != "text" || home.PWIDs[0].ArchiveID != "archive.org" {
		t.Errorf("home pwids = %+v", home.PWIDs)
	}
	var robust, mset *audit.Link
	for i, l := range home.Links {
		if l.Robust != nil {
			robust = &home.Links[i]
		}
		if l.Mset != nil {
			mset = &home.Links[i]
		}
	}
	if robust == nil || len(robust.Robust.Snapshots) != 2 || robust.Robust.VersionDate.Format(time.RFC3339) != "2024-11-20T12:00:00Z" {
		t.Errorf("robust link = %+v", robust)
	}
	if mset == nil || len(mset.Mset.Temporal) != 1 || len(mset.Mset.Copies) != 1 {
		t.Errorf("mset link = %+v", mset)
	}

	if p := pages["/redirect-me"]; p.Status != 301 || len(p.Redirects) != 1 || !strings.HasSuffix(p.Redirects[0].To, "/a.html") {
		t.Errorf("redirect page: status %d redirects %+v", p.Status, p.Redirects)
	}
	if p := pages["/missing.html"]; p.Status != 404 || p.Parsed {
		t.Errorf("missing page: status %d parsed %v", p.Status, p.Parsed)
	}
	if p := pages["/doc.pdf"]; p.Status != 200 || p.Parsed || p.ContentType != "application/pdf" {
		t.Errorf("pdf: status %d parsed %v type %q", p.Status, p.Parsed, p.ContentType)
	}
	l1 := pages["/latin1.html"]
	if l1.Charset != "windows-1252" || l1.Title != "Café crème" {
		t.Errorf("latin1: charset %q title %q", l1.Charset, l1.Title)
	}
	if len(l1.Links) != 1 || l1.Links[0].Text != "Schöne Grüße – “quoted”" {
		t.Errorf("latin1 links = %+v", l1.Links)
	}
	a := pages["/a.html"]
	var bad *audit.Link
	for i := range a.Links {
		if a.Links[i].Robust != nil {
			bad = &a.Links[i]
		}
	}
	if bad == nil || !bad.Robust.VersionDate.IsZero() || !hasCode(bad.Diagnostics, "invalid-datetime") {
		t.Errorf("impossible date link = %+v", bad)
	}
	if st.OutOfScope == 0 {
		t.Errorf("external links should count as out of scope")
	}
}

func hasCode(ds []audit.Diagnostic, code string) bool {
	for _, d := range ds {
		if d.Code == code {
			return true
		}
	}
	return false
}

func TestCrawl_MaxDepthAndPages(t *testing.T) {
	site := crawltest.NewBasic(t)
	t.Run("Depth1", func(t *testing.T) {
		sink := &memSink{}
		if _, err := crawler.New(crawler.Options{MaxDepth: 1}, sink).Crawl(context.Background(), []string{site.URL + "/"}); err != nil {
			t.Fatal(err)
		}
		pages := sink.byPath(t)
		if _, ok := pages["/b/c.html"]; ok {
			t.Errorf("depth-2 page crawled with --max-depth 1: %v", paths(pages))
		}
		if _, ok := pages["/b/"]; !ok {
			t.Errorf("depth-1 page missing: %v", paths(pages))
		}
	})
	t.Run("Pages3", func(t *testing.T) {
		sink := &memSink{}
		st, err := crawler.New(crawler.Options{MaxPages: 3}, sink).Crawl(context.Background(), []string{site.URL + "/"})
		if err != nil {
			t.Fatal(err)
		}
		if len(sink.pages) != 3 || !st.BudgetHit {
			t.Errorf("got %d pages (budget hit %v), want 3", len(sink.pages), st.BudgetHit)
		}
	})
	t.Run("Exclude", func(t *testing.T) {
		sink := &memSink{}
		opts := crawler.Options{}
		opts.Exclude = append(opts.Exclude, mustRe(t, `/b/`))
		if _, err := crawler.New(opts, sink).Crawl(context.Background(), []string{site.URL + "/"}); err != nil {
			t.Fatal(err)
		}
		for p := range sink.byPath(t) {
			if strings.HasPrefix(p, "/b/") {
				t.Errorf("excluded page %s crawled", p)
			}
		}
	})
}

func TestCrawl_Sitemap(t *testing.T) {
	site := crawltest.NewBasic(t)
	for _, sm := range []string{"/sitemap.xml", "/sitemap_index.xml"} {
		t.Run(strings.TrimPrefix(sm, "/"), func(t *testing.T) {
			sink := &memSink{}
			if _, err := crawler.New(crawler.Options{}, sink).CrawlSitemaps(context.Background(), []string{site.URL + sm}, nil); err != nil {
				t.Fatal(err)
			}
			pages := sink.byPath(t)
			if p, ok := pages["/orphan.html"]; !ok || p.Status != 200 {
				t.Errorf("orphan page not reached through %s: %v", sm, paths(pages))
			}
			if _, ok := pages["/b/d.html"]; !ok {
				t.Errorf("crawl from sitemap seeds did not recurse: %v", paths(pages))
			}
		})
	}
}

func TestCrawl_List(t *testing.T) {
	site := crawltest.NewBasic(t)
	sink := &memSink{}
	_, err := crawler.New(crawler.Options{}, sink).CrawlList(context.Background(), []string{site.URL + "/", site.URL + "/orphan.html", site.URL + "/missing.html"})
	if err != nil {
		t.Fatal(err)
	}
	pages := sink.byPath(t)
	if got := strings.Join(paths(pages), " "); got != "/ /missing.html /orphan.html" {
		t.Errorf("list crawl pages = %s; want exactly the listed URLs", got)
	}
}

func TestCrawl_Dir(t *testing.T) {
	sink := &memSink{}
	_, err := crawler.New(crawler.Options{}, sink).CrawlDir(context.Background(), crawltest.Dir("basic"), "https://example.org/")
	if err != nil {
		t.Fatal(err)
	}
	pages := sink.byPath(t)
	home, ok := pages["/"]
	if !ok || home.URL != "https://example.org/" || home.Status != 200 || len(home.Links) == 0 {
		t.Fatalf("home from directory = %+v (pages %v)", home, paths(pages))
	}
	if _, ok := pages["/b/d.html"]; !ok {
		t.Errorf("nested page not crawled from directory: %v", paths(pages))
	}
	if p := pages["/redirect-me"]; p == nil || p.Status != 404 {
		t.Errorf("/redirect-me should be a 404 in the directory build: %+v", p)
	}
	if _, ok := pages["/private/secret.html"]; !ok {
		t.Errorf("robots.txt of the build should have been applied and recorded")
	}
	if strings.Contains(home.URL, "127.0.0.1") {
		t.Errorf("directory pages must carry the base URL, got %s", home.URL)
	}
}

func TestCrawl_HostileBodies(t *testing.T) {
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(bytes.Repeat([]byte("<p>a</p>"), 512<<10)) // 4 MiB of HTML, 16× the cap
	zw.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<a href="/bomb">bomb</a> <a href="/big">big</a> <a href="/loop1">loop</a> <a href="/slow">slow</a>`))
	})
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb.Bytes())
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		chunk := bytes.Repeat([]byte("x"), 1<<16)
		for i := 0; i < 800; i++ { // 50 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/loop1", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop2", 302) })
	mux.HandleFunc("/loop2", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop1", 302) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(200)
		for i := 0; i < 100; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	sink := &memSink{}
	opts := crawler.Options{MaxBody: 256 << 10, Timeout: 2 * time.Second, IgnoreRobots: true}
	if _, err := crawler.New(opts, sink).Crawl(context.Background(), []string{srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	pages := sink.byPath(t)
	for _, p := range []string{"/bomb", "/big"} {
		pg := pages[p]
		if pg == nil || !pg.Truncated || pg.Size != 256<<10 {
			t.Errorf("%s: want truncated at 256 KiB, got %+v", p, pg)
		}
	}
	if pg := pages["/loop1"]; pg == nil || pg.Status != 302 || len(pg.Redirects) < 2 {
		t.Errorf("redirect loop: %+v", pg)
	}
	if pg := pages["/slow"]; pg == nil || !strings.HasPrefix(pg.FetchError, "timeout") {
		t.Errorf("trickling body: want a timeout, got %+v", pg)
	}
}

func TestCrawl_RobotsUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Error(w, "boom", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`<a href="/x">x</a>`))
	}))
	defer srv.Close()
	sink := &memSink{}
	st, err := crawler.New(crawler.Options{}, sink).Crawl(context.Background(), []string{srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if st.RobotsBlocked != 1 || len(sink.pages) != 1 || sink.pages[0].Status != 0 {
		t.Errorf("robots.txt 503 must disallow everything (RFC 9309): %+v, pages %d", st, len(sink.pages))
	}
}

func TestCrawl_Interrupted(t *testing.T) {
	site := crawltest.NewBasic(t)
	ctx, cancel := context.WithCancel(context.Background())
	sink := &memSink{}
	opts := crawler.Options{OnPage: func(*audit.Page) { cancel() }}
	_, err := crawler.New(opts, sink).Crawl(ctx, []string{site.URL + "/"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(sink.pages) == 0 || len(sink.pages) > 5 {
		t.Errorf("interrupted crawl recorded %d pages", len(sink.pages))
	}
}

func TestCrawl_ListFollowsRedirects(t *testing.T) {
	site := crawltest.NewBasic(t)
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{}, sink).CrawlList(context.Background(), []string{site.URL + "/redirect-me"}); err != nil {
		t.Fatal(err)
	}
	if len(sink.pages) != 1 {
		t.Fatalf("%d pages", len(sink.pages))
	}
	p := sink.pages[0]
	if p.Status != 200 || !strings.HasSuffix(p.URL, "/a.html") || !strings.HasSuffix(p.RequestURL, "/redirect-me") ||
		len(p.Redirects) != 1 || p.Redirects[0].Status != 301 || len(p.Links) == 0 {
		t.Errorf("listed URL that redirects: %+v", p)
	}
}

func TestCrawl_RedirectFollowedAndRobotsOnHop(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("User-agent: *\nDisallow: /secret\n"))
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<a href="/old">old</a> <a href="/to-secret">s</a>`))
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/new", http.StatusMovedPermanently) })
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<p>new home</p>`))
	})
	var secretHits atomic.Int32
	mux.HandleFunc("/to-secret", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/secret", http.StatusFound) })
	mux.HandleFunc("/secret", func(w http.ResponseWriter, r *http.Request) { secretHits.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{}, sink).Crawl(context.Background(), []string{srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	pages := sink.byPath(t)
	if p := pages["/old"]; p == nil || p.Status != 200 || !strings.HasSuffix(p.URL, "/new") || len(p.Redirects) != 1 {
		t.Errorf("followed redirect: %+v", p)
	}
	if secretHits.Load() != 0 {
		t.Errorf("a redirect hop disallowed by robots.txt was fetched")
	}
	if p := pages["/to-secret"]; p == nil || p.Status != http.StatusFound {
		t.Errorf("redirect to a disallowed URL should stop at the 302: %+v", p)
	}
}

func TestCrawl_CrawlDelay(t *testing.T) {
	var (
		mu       sync.Mutex
		inFlight int
		peak     int
		starts   []time.Time
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nCrawl-delay: 0.2\n"))
			return
		}
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		starts = append(starts, time.Now())
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<a href="/1">1</a><a href="/2">2</a><a href="/3">3</a>`))
	}))
	defer srv.Close()
	sink := &memSink{}
	if _, err := crawler.New(crawler.Options{PerHost: 4}, sink).Crawl(context.Background(), []string{srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	if len(starts) != 4 || peak != 1 {
		t.Fatalf("%d requests, %d at once; want 4, one at a time under Crawl-delay", len(starts), peak)
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < 180*time.Millisecond {
			t.Errorf("request %d came %v after the previous one; Crawl-delay asks for 200ms", i, gap)
		}
	}
}
