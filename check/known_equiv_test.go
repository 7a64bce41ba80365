package check_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/urls"
)

// pageSink collects crawled pages.
type pageSink struct {
	mu    sync.Mutex
	pages []*audit.Page
}

func (s *pageSink) Add(p *audit.Page) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages = append(s.pages, p)
}

// equivSite is a site with a page for every kind of answer. hits counts
// requests per path.
type equivSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func (s *equivSite) snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.hits {
		out[k] = v
	}
	return out
}

const equivMaxBody = 256 << 10

var probeRE = regexp.MustCompile(`/[a-z2-7]{26}/?$`)

func newEquivSite(t *testing.T) *equivSite {
	s := &equivSite{hits: map[string]int{}}
	mux := http.NewServeMux()
	page := func(title, body string, extra ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			for i := 0; i+1 < len(extra); i += 2 {
				w.Header().Set(extra[i], extra[i+1])
			}
			fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
		}
	}
	redirect := func(to string, status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, status) }
	}
	status := func(code int, body string, extra ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(extra); i += 2 {
				w.Header().Set(extra[i], extra[i+1])
			}
			w.WriteHeader(code)
			fmt.Fprint(w, body)
		}
	}
	prose := func(n int, seed string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s word%d and another sentence number %d about gardens. ", seed, i%997, i)
		}
		return b.String()
	}
	links := []string{"/ok.html#s2", "/ok.html#nowhere", "/temp", "/old", "/perm-then-temp", "/missing", "/gone",
		"/teapot", "/auth", "/challenge", "/cf", "/deep/path/article", "/file.pdf", "/big.html", "/latin.html",
		"/shop/discontinued", "/multi", "/etag.html", "/blog/long.html", "/huge/gone-item", "/loop-a", "/busy", "/slow-down",
		"/again", "/empty.html"}
	var index strings.Builder
	for _, l := range links {
		fmt.Fprintf(&index, `<a href="%s">%s</a> `, l, l)
	}
	mux.HandleFunc("/{$}", page("Home", "<main><h1>Home</h1><p>Welcome to the garden club, where members share seeds and advice.</p></main>"+index.String()))
	mux.HandleFunc("/ok.html", page("OK", `<main><h1 id="top">Fine</h1><h2 id="s2">Two</h2><a name="legacy"></a><p>Roses, tulips and daffodils grow in our borders every spring.</p></main>`))
	mux.HandleFunc("/temp", redirect("/ok.html", http.StatusFound))
	mux.HandleFunc("/old", redirect("/mid", http.StatusMovedPermanently))
	mux.HandleFunc("/mid", redirect("/new.html", http.StatusPermanentRedirect))
	mux.HandleFunc("/perm-then-temp", redirect("/hop", http.StatusMovedPermanently))
	mux.HandleFunc("/hop", redirect("/new.html", http.StatusTemporaryRedirect))
	mux.HandleFunc("/new.html", page("New", "<p>The new home of an old page, with compost advice.</p>"))
	mux.HandleFunc("/missing", status(404, "not found"))
	mux.HandleFunc("/gone", status(410, "gone"))
	mux.HandleFunc("/teapot", status(418, "short and stout"))
	mux.HandleFunc("/auth", status(401, "login"))
	mux.HandleFunc("/challenge", status(403, "<html><head><title>Just a moment...</title></head></html>", "Content-Type", "text/html"))
	mux.HandleFunc("/cf", page("Wait", "<p>checking your browser</p>", "Cf-Mitigated", "challenge"))
	mux.HandleFunc("/deep/path/article", redirect("/", http.StatusFound))
	mux.HandleFunc("/file.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		fmt.Fprint(w, "%PDF-1.4 not really")
	})
	mux.HandleFunc("/big.html", page("Big", "<p>"+prose(6000, "big")+"</p>")) // past the body cap
	mux.HandleFunc("/latin.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=windows-1252")
		w.Write([]byte("<p>caf\xe9 cr\xe8me br\xfbl\xe9e <span id=\"d\xe9j\xe0\">x</span></p>"))
	})
	mux.HandleFunc("/shop/", page("Shop", "<main><h1>Not available</h1><p>This product is not in our catalogue any more. Browse the shop for similar items.</p></main>"))
	mux.HandleFunc("/multi", status(300, "<p>choose</p>", "Content-Type", "text/html"))
	mux.HandleFunc("/etag.html", page("Tagged", "<p>Validators here.</p>", "ETag", `"abc"`, "Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT", "Cache-Control", "max-age=60"))
	// A page with more main text than the crawl keeps (64 KiB), in a
	// directory whose unknown URLs answer a short 200 page: decided from
	// the kept prefix.
	mux.HandleFunc("/blog/long.html", page("Long", "<main>"+prose(1500, "long")+"</main>"))
	mux.HandleFunc("/blog/", page("Blog", "<main><p>Nothing here, sorry.</p></main>"))
	// A catch-all answering the same long page to every URL: the prefix
	// cannot decide, the target is fetched.
	mux.HandleFunc("/huge/", page("Huge", "<main>"+prose(1500, "huge")+"</main>"))
	mux.HandleFunc("/loop-a", redirect("/loop-b", http.StatusFound))
	mux.HandleFunc("/loop-b", redirect("/loop-a", http.StatusFound))
	mux.HandleFunc("/busy", status(503, "busy"))
	mux.HandleFunc("/slow-down", status(429, "slow down"))
	mux.HandleFunc("/again", redirect("/temp", http.StatusMovedPermanently)) // a chain through another page's hop
	mux.HandleFunc("/empty.html", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "text/html") })
	mux.HandleFunc("/", status(404, "no such page"))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// comparable is a check without what legitimately differs between a fetch
// and the crawl's response: attempts, timings, times, the random probe URL.
func comparable(c audit.Check) audit.Check {
	c.Attempts, c.Timings, c.CheckedAt, c.FromCrawl = 0, audit.Timings{}, time.Time{}, false
	if c.Soft404 != nil {
		c.Reason = strings.ReplaceAll(c.Reason, c.Soft404.ProbeURL, "(probe)")
		e := *c.Soft404
		e.ProbeURL = ""
		if e.ProbeFinal != "" {
			e.ProbeFinal = "(probe)"
		}
		c.Soft404 = &e
	}
	if len(c.Redirects) == 0 {
		c.Redirects = nil
	}
	return c
}

// TestKnown_SameAsFetch crawls a site with the real crawler, then checks
// every URL twice: judged from the crawl's response (check.Known) and by
// fetching it. The results must be the same; judged from the crawl, no
// request goes to the site but the soft-404 probes, except for the URLs
// whose crawl outcome is transient or unfinished, which are fetched.
func TestKnown_SameAsFetch(t *testing.T) {
	site := newEquivSite(t)
	sink := &pageSink{}
	_, err := crawler.New(crawler.Options{IgnoreRobots: true, Observe: check.Observer(equivMaxBody), Timeout: 5 * time.Second}, sink).
		Crawl(context.Background(), []string{site.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	ix := check.NewKnownIndex(sink.pages, nil)
	opts := check.Options{AllowPrivate: true, MaxBody: equivMaxBody, Retries: -1, Timeout: 5 * time.Second}

	// Transient answers, a loop the crawl stopped, and a soft-404 the kept
	// text cannot decide are fetched.
	fetchedAnyway := map[string]bool{"/loop-a": true, "/busy": true, "/slow-down": true, "/huge/gone-item": true}
	paths := []string{"/", "/ok.html", "/temp", "/old", "/perm-then-temp", "/missing", "/gone", "/teapot", "/auth",
		"/challenge", "/cf", "/deep/path/article", "/file.pdf", "/big.html", "/latin.html", "/shop/discontinued",
		"/multi", "/etag.html", "/blog/long.html", "/huge/gone-item", "/loop-a", "/busy", "/slow-down", "/again", "/empty.html"}
	wantVerdict := map[string]audit.Verdict{
		"/": audit.VerdictOK, "/ok.html": audit.VerdictOK, "/temp": audit.VerdictRedirected, "/old": audit.VerdictMoved,
		"/perm-then-temp": audit.VerdictMoved, "/missing": audit.VerdictNotFound, "/gone": audit.VerdictGone,
		"/teapot": audit.VerdictClientError, "/auth": audit.VerdictBlocked, "/challenge": audit.VerdictBlocked,
		"/cf": audit.VerdictBlocked, "/deep/path/article": audit.VerdictRedirectToRoot, "/file.pdf": audit.VerdictOK,
		"/big.html": audit.VerdictOK, "/latin.html": audit.VerdictOK, "/shop/discontinued": audit.VerdictSoft404,
		"/multi": audit.VerdictOK, "/etag.html": audit.VerdictOK, "/blog/long.html": audit.VerdictOK,
		"/huge/gone-item": audit.VerdictSoft404, "/loop-a": audit.VerdictRedirectLoop, "/busy": audit.VerdictServerError,
		"/slow-down": audit.VerdictRateLimited, "/again": audit.VerdictMoved, "/empty.html": audit.VerdictOK,
	}
	for _, path := range paths {
		target, err := urls.NormalizeURL(site.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		k := ix.Lookup(target)
		if k == nil && !fetchedAnyway[path] && path != "/loop-a" {
			t.Errorf("%s: the crawl's response is not known", path)
			for _, pg := range sink.pages {
				if strings.Contains(pg.URL, path) || strings.Contains(pg.RequestURL, path) {
					t.Logf("the crawl recorded %s (requested as %s): status %d, error %q, redirects %v, evidence %v", pg.URL, pg.RequestURL, pg.Status, pg.FetchError, pg.Redirects, pg.Evidence != nil)
				}
			}
			continue
		}
		before := site.snapshot()
		fromCrawl := check.New(opts).CheckOne(context.Background(), check.Target{URL: target, WantAnchors: true, Known: k})
		for p, n := range site.snapshot() {
			if d := n - before[p]; d > 0 && !probeRE.MatchString(p) && !fetchedAnyway[path] {
				t.Errorf("%s: judged from the crawl, %s was requested %d times", path, p, d)
			}
		}
		if fromCrawl.FromCrawl == fetchedAnyway[path] {
			t.Errorf("%s: from the crawl = %v (%s)", path, fromCrawl.FromCrawl, fromCrawl.Reason)
		}
		fetched := check.New(opts).CheckOne(context.Background(), check.Target{URL: target, WantAnchors: true})
		if fetched.Verdict != wantVerdict[path] {
			t.Errorf("%s: fetched verdict %s (%s), want %s", path, fetched.Verdict, fetched.Reason, wantVerdict[path])
		}
		got, want := comparable(fromCrawl), comparable(fetched)
		if path == "/blog/long.html" {
			// Compared on the kept prefix: the same verdict, the
			// similarity of the prefix (both far below the threshold).
			if got.Soft404 == nil || want.Soft404 == nil || got.Soft404.ProbeStatus != 200 ||
				got.Soft404.Similarity >= 0.1 || want.Soft404.Similarity >= 0.1 {
				t.Errorf("%s: soft-404 evidence %+v from the crawl, %+v fetched", path, got.Soft404, want.Soft404)
			} else {
				got.Soft404.Similarity = want.Soft404.Similarity
			}
		}
		if !reflect.DeepEqual(got, want) {
			gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
			for i := range gv.NumField() {
				if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
					t.Errorf("%s: %s from the crawl %#v, fetched %#v", path, gv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface())
				}
			}
		}
	}
}
