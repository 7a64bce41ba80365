package check

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// layout wraps content in a site's boilerplate.
func layout(content string) string {
	return `<!DOCTYPE html><html><head><title>Example Shop</title><script>var tracking = 1;</script></head><body>
<header><a href="/">Example Shop</a></header><nav><a href="/a">Shoes</a> <a href="/b">Bags</a></nav>
<main>` + content + `</main><footer>Example Shop Ltd, 1 Main Street</footer></body></html>`
}

// notFoundPage is a soft-404 page that echoes the requested path, as many do.
func notFoundPage(path string) string {
	return layout(`<h1>Sorry!</h1><p>We could not find the page ` + path + ` you asked for. It may have moved, or never existed.
Try the search box or browse our categories instead.</p>`)
}

const article = `<h1>Walking boots, tested</h1><p>We took twelve pairs of walking boots up and down the
Pennines for a month of wet weekends. Only three kept our feet dry, and one of those gave everyone blisters.
Here is what we learned about leather, membranes, soles and lacing, and which pair we would buy again.</p>`

// probeRE matches the random last segment of a probe URL.
var probeRE = regexp.MustCompile(`/[a-z2-7]{26}/?$`)

func TestSoft404(t *testing.T) {
	// Unknown URLs answer 200 with a "not found" page.
	soft := newServer(t)
	var softProbes atomic.Int64
	soft.handle("/", func(w http.ResponseWriter, r *http.Request) {
		if probeRE.MatchString(r.URL.Path) {
			softProbes.Add(1)
		}
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/reviews/boots" {
			w.Write([]byte(layout(article)))
			return
		}
		w.Write([]byte(notFoundPage(r.URL.Path)))
	})
	// Unknown URLs answer a real 404.
	honest := newServer(t)
	honest.handle("/reviews/boots", html200(layout(article)))
	honest.handle("/reviews/empty", html200(layout("")))
	// Unknown URLs are redirected to the home page.
	toRoot := newServer(t)
	toRoot.handle("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(layout("<h1>Welcome to Example Shop</h1><p>New this week: boots, bags and more.</p>")))
		case "/reviews/boots":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(layout(article)))
		case "/en/":
			http.Redirect(w, r, "/", http.StatusFound)
		default:
			http.Redirect(w, r, "/", http.StatusFound)
		}
	})
	// Unknown URLs are redirected to one "not found" page.
	toPage := newServer(t)
	toPage.handle("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/notfound":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(notFoundPage("")))
		case "/reviews/boots":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(layout(article)))
		default:
			http.Redirect(w, r, "/notfound", http.StatusFound)
		}
	})
	// A script-rendered site: the same empty shell for every URL.
	spa := newServer(t)
	spa.handle("/", html200(`<!DOCTYPE html><html><head><script src="/app.js"></script></head><body><div id="root"></div><noscript>Enable JavaScript.</noscript></body></html>`))

	tests := []struct {
		name        string
		url         string
		want        audit.Verdict
		probeStatus int
		minSim      float64
		maxSim      float64
	}{
		{"SoftNotFound", soft.URL + "/reviews/bots", audit.VerdictSoft404, 200, 0.9, 1},
		{"SoftSiteRealPage", soft.URL + "/reviews/boots", audit.VerdictOK, 200, 0, 0.5},
		{"HonestSiteRealPage", honest.URL + "/reviews/boots", audit.VerdictOK, 404, 0, 0},
		{"HonestSiteEmptyPage", honest.URL + "/reviews/empty", audit.VerdictOK, 404, 0, 0},
		{"DeepURLToRoot", toRoot.URL + "/reviews/bots", audit.VerdictRedirectToRoot, 0, 0, 0},
		{"RootSiteRealPage", toRoot.URL + "/reviews/boots", audit.VerdictOK, 200, 0, 0.5},
		{"RootSiteHome", toRoot.URL + "/", audit.VerdictOK, 200, 0, 1},
		{"LocaleRootIsNotDeep", toRoot.URL + "/en/", audit.VerdictRedirected, 200, 0, 1},
		{"RedirectedToSamePage", toPage.URL + "/reviews/bots", audit.VerdictSoft404, 200, 0.9, 1},
		{"SamePageSiteRealPage", toPage.URL + "/reviews/boots", audit.VerdictOK, 200, 0, 0.5},
		{"ScriptRenderedUndecidable", spa.URL + "/app/route", audit.VerdictOK, 200, 1, 1},
	}
	c := New(testOptions())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.CheckOne(context.Background(), Target{URL: tt.url})
			if got.Verdict != tt.want {
				t.Fatalf("verdict %q (%s), want %q; evidence %+v", got.Verdict, got.Reason, tt.want, got.Soft404)
			}
			ev := got.Soft404
			if tt.want == audit.VerdictRedirectToRoot {
				if ev != nil {
					t.Errorf("probe made for a redirect to root: %+v", ev)
				}
				return
			}
			if ev == nil {
				t.Fatalf("no soft-404 evidence")
			}
			if !probeRE.MatchString(ev.ProbeURL) || !strings.HasPrefix(ev.ProbeURL, tt.url[:strings.LastIndex(strings.TrimSuffix(tt.url, "/"), "/")+1]) {
				t.Errorf("probe URL %q is not a random sibling of %q", ev.ProbeURL, tt.url)
			}
			if ev.ProbeStatus != tt.probeStatus || ev.Similarity < tt.minSim || ev.Similarity > tt.maxSim {
				t.Errorf("probe status %d similarity %v; want %d, in [%v, %v]", ev.ProbeStatus, ev.Similarity, tt.probeStatus, tt.minSim, tt.maxSim)
			}
		})
	}

	t.Run("Disabled", func(t *testing.T) {
		o := testOptions()
		o.DisableSoft404 = true
		before := softProbes.Load()
		for _, u := range []string{soft.URL + "/reviews/bots", toRoot.URL + "/reviews/bots"} {
			got := New(o).CheckOne(context.Background(), Target{URL: u})
			if got.Verdict == audit.VerdictSoft404 || got.Verdict == audit.VerdictRedirectToRoot || got.Soft404 != nil {
				t.Errorf("%s: %q %+v with soft-404 detection off", u, got.Verdict, got.Soft404)
			}
		}
		if softProbes.Load() != before {
			t.Errorf("probe requests made with soft-404 detection off")
		}
	})
}

func TestSoft404_ProbeOncePerDirectory(t *testing.T) {
	var probes, pages atomic.Int64
	probed := map[string]*atomic.Int64{"/a/": {}, "/b/": {}, "/c/d/": {}}
	s := newServer(t)
	s.handle("/", func(w http.ResponseWriter, r *http.Request) {
		if probeRE.MatchString(r.URL.Path) {
			probes.Add(1)
			dir := r.URL.Path[:strings.LastIndex(strings.TrimSuffix(r.URL.Path, "/"), "/")+1]
			if n, ok := probed[dir]; ok {
				n.Add(1)
			}
			http.NotFound(w, r)
			return
		}
		pages.Add(1)
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(layout("<p>page " + r.URL.Path + "</p>")))
	})
	var targets []Target
	for i := range 10 {
		targets = append(targets, Target{ID: int64(i), URL: fmt.Sprintf("%s/a/%d", s.URL, i)})
	}
	for i := range 5 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/b/%d", s.URL, i)})
		targets = append(targets, Target{URL: fmt.Sprintf("%s/c/d/%d/", s.URL, i)})
	}
	o := testOptions()
	o.Workers = 16
	o.PerHost = 8
	got := collect(t, New(o), targets)
	if len(got) != len(targets) {
		t.Fatalf("%d results, want %d", len(got), len(targets))
	}
	for u, c := range got {
		if c.Verdict != audit.VerdictOK || c.Soft404 == nil || c.Soft404.ProbeStatus != 404 {
			t.Errorf("%s: %q %+v, want ok with a 404 probe", u, c.Verdict, c.Soft404)
		}
	}
	// /c/d/0/ and its siblings share the directory /c/d/.
	if n := probes.Load(); n != 3 {
		t.Errorf("%d probe requests, want 3 (one per directory)", n)
	}
	for dir, n := range probed {
		if n.Load() != 1 {
			t.Errorf("directory %s probed %d times, want 1", dir, n.Load())
		}
	}
}

func TestRedirectToRoot(t *testing.T) {
	tests := []struct {
		from, to string
		want     bool
	}{
		{"/blog/2020/post", "/", true},
		{"/about", "/", true},
		{"/docs/page.html", "/index.html", true},
		{"/docs/page.html", "/en/", true},
		{"/docs/page.html", "/en-us/index.php", true},
		{"/docs/page.html", "/docs/", false}, // parent directory, not the home
		{"/docs/page.html", "/docs/new.html", false},
		{"/", "/", false},
		{"/index.html", "/", false},
		{"/en", "/en/", false},
		{"/de/", "/", false},
		{"/home", "/", false},
	}
	for _, tt := range tests {
		from, to := mustURL(t, "http://x"+tt.from), mustURL(t, "http://x"+tt.to)
		if got := redirectToRoot(from, to, []audit.Redirect{{Status: 301}}); got != tt.want {
			t.Errorf("redirectToRoot(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	if redirectToRoot(mustURL(t, "http://x/deep/page"), mustURL(t, "http://x/"), nil) {
		t.Errorf("redirectToRoot without redirects = true")
	}
}

func TestProbeFor(t *testing.T) {
	tests := []struct{ in, key, prefix, suffix string }{
		{"http://h/a/b", "http://h/a/*", "http://h/a/", ""},
		{"http://h/a/b/", "http://h/a/*/", "http://h/a/", "/"},
		{"http://h/", "http://h/*", "http://h/", ""},
		{"https://h:8443/a%20b/c?q=1", "https://h:8443/a%20b/*", "https://h:8443/a%20b/", ""},
	}
	for _, tt := range tests {
		key, pu := probeFor(mustURL(t, tt.in))
		s := pu.String()
		if key != tt.key || !strings.HasPrefix(s, tt.prefix) || !strings.HasSuffix(s, tt.suffix) || !probeRE.MatchString(pu.Path) {
			t.Errorf("probeFor(%s) = %q, %q; want key %q, %q + random + %q", tt.in, key, s, tt.key, tt.prefix, tt.suffix)
		}
	}
}

// TestSoft404_TrustedHost: once probes in trustedProbes directories of a
// host answered a real 404, its other directories are not probed; a host
// whose probe answered 200 somewhere is probed in every directory.
func TestSoft404_TrustedHost(t *testing.T) {
	serve := func(catchAll string) (*server, *atomic.Int64) {
		var probes atomic.Int64
		s := newServer(t)
		s.handle("/", func(w http.ResponseWriter, r *http.Request) {
			if probeRE.MatchString(r.URL.Path) {
				probes.Add(1)
				if !strings.HasPrefix(r.URL.Path, catchAll) {
					http.NotFound(w, r)
					return
				}
			}
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(layout("<p>page " + r.URL.Path + " of the site, with enough words to be a page of its own.</p>")))
		})
		return s, &probes
	}
	run := func(s *server) map[string]audit.Check {
		var targets []Target
		// One directory first (the checker sees it before the others),
		// then seven more.
		for d := range 8 {
			targets = append(targets, Target{URL: fmt.Sprintf("%s/d%d/page", s.URL, d)})
		}
		o := testOptions()
		o.Workers, o.PerHost = 1, 1 // in order
		return collect(t, New(o), targets)
	}
	honest, probes := serve("/nowhere/")
	for u, c := range run(honest) {
		if c.Verdict != audit.VerdictOK || c.Soft404 == nil || c.Soft404.ProbeStatus != 404 {
			t.Errorf("%s: %q %+v, want ok with a 404 probe", u, c.Verdict, c.Soft404)
		}
	}
	if n := probes.Load(); n != trustedProbes {
		t.Errorf("honest host: %d probes, want %d", n, trustedProbes)
	}
	catchAll, probes := serve("/d1/")
	got := run(catchAll)
	if n := probes.Load(); n != 8 {
		t.Errorf("host with a catch-all directory: %d probes, want 8 (every directory)", n)
	}
	if c := got[catchAll.URL+"/d1/page"]; c.Soft404 == nil || c.Soft404.ProbeStatus != 200 {
		t.Errorf("catch-all directory: %+v, want a 200 probe", c.Soft404)
	}
}

// TestSoft404_TrustedHostCatchAll: a catch-all directory of a host whose
// other directories answered their probes with a real 404 is probed all
// the same when its page looks like a soft 404, and the page is one.
func TestSoft404_TrustedHostCatchAll(t *testing.T) {
	var probes atomic.Int64
	s := newServer(t)
	s.handle("/", func(w http.ResponseWriter, r *http.Request) {
		isProbe := probeRE.MatchString(r.URL.Path)
		if isProbe {
			probes.Add(1)
		}
		switch {
		case strings.HasPrefix(r.URL.Path, "/blog/") && r.URL.Path != "/blog/welcome":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(notFoundPage(r.URL.Path)))
		case isProbe:
			http.NotFound(w, r)
		default:
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(layout(article)))
		}
	})
	var targets []Target
	for d := range 4 {
		targets = append(targets, Target{URL: fmt.Sprintf("%s/d%d/boots", s.URL, d)})
	}
	targets = append(targets, Target{URL: s.URL + "/blog/welcome"}, Target{URL: s.URL + "/blog/deleted-post"})
	o := testOptions()
	o.Workers, o.PerHost = 1, 1 // in order: the host is trusted before /blog/
	got := collect(t, New(o), targets)
	if c := got[s.URL+"/blog/deleted-post"]; c.Verdict != audit.VerdictSoft404 || c.Soft404 == nil || c.Soft404.ProbeStatus != 200 {
		t.Errorf("/blog/deleted-post: %q %+v, want soft-404 with its directory's 200 probe", c.Verdict, c.Soft404)
	}
	if c := got[s.URL+"/blog/welcome"]; c.Verdict != audit.VerdictOK {
		t.Errorf("/blog/welcome: %q (%s), want ok", c.Verdict, c.Reason)
	}
	if n := probes.Load(); n != trustedProbes+1 {
		t.Errorf("%d probes, want %d (the trusted directories, then /blog/ for its suspicious page)", n, trustedProbes+1)
	}
}
