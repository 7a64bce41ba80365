package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// checksByURL returns the latest run's checks by URL.
func checksByURL(t *testing.T, dbPath string) map[string]audit.Check {
	t.Helper()
	db := openDB(t, dbPath)
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := db.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]audit.Check{}
	for _, c := range checks {
		out[c.URL] = c
	}
	return out
}

// TestAudit_ExactSSRFScope: a site on loopback links to another loopback
// service (an admin port), redirects to it, links to the IPv4-mapped
// spelling of it and to the cloud metadata address. Without
// --allow-private only the audited origin is reached; with it the other
// loopback service too; link-local never.
func TestAudit_ExactSSRFScope(t *testing.T) {
	var adminHits atomic.Int64
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		adminHits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>admin</title><p>internal admin console with enough words to fingerprint it</p>")
	}))
	defer admin.Close()
	adminPort := admin.URL[strings.LastIndex(admin.URL, ":")+1:]
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<title>site</title><a href="/about">about</a> <a href="%s/admin">admin</a> <a href="/go-admin">go</a>
<a href="http://[::ffff:127.0.0.1]:%s/mapped">mapped</a> <a href="http://169.254.169.254/latest/meta-data/">metadata</a>
<a href="http://[::ffff:169.254.169.254]/latest/">mapped metadata</a>`, admin.URL, adminPort)
		case "/about":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<title>about</title><p>about this site</p>")
		case "/go-admin":
			http.Redirect(w, r, admin.URL+"/redirected", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	for _, tt := range []struct {
		name         string
		allowPrivate bool
	}{{"Strict", false}, {"AllowPrivate", true}} {
		t.Run(tt.name, func(t *testing.T) {
			adminHits.Store(0)
			dbPath := filepath.Join(t.TempDir(), "scope.db")
			args := []string{"audit", site.URL + "/", "--db", dbPath, "--no-archives", "--no-report", "--fail-on", "none",
				"--retries", "0", "--timeout", "5s", "--no-soft404"}
			if tt.allowPrivate {
				args = append(args, "--allow-private")
			}
			if code, stdout, stderr := run(t, "", args...); code != exitOK {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			checks := checksByURL(t, dbPath)
			verdict := func(u string) audit.Verdict { return checks[u].Verdict }
			if v := verdict(site.URL + "/about"); v != audit.VerdictOK {
				t.Errorf("the audited origin: %s, want ok", v)
			}
			// Targets are stored as the WHATWG URL Standard serialises
			// them: IPv4-mapped addresses in hex.
			for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[::ffff:a9fe:a9fe]/latest/"} {
				if c := checks[u]; c.Verdict != audit.VerdictRefused || !strings.Contains(c.Reason, "link-local") {
					t.Errorf("%s: %s (%s), want refused as link-local", u, c.Verdict, c.Reason)
				}
			}
			other := []string{admin.URL + "/admin", "http://[::ffff:7f00:1]:" + adminPort + "/mapped"}
			if !tt.allowPrivate {
				for _, u := range other {
					if c := checks[u]; c.Verdict != audit.VerdictRefused || !strings.Contains(c.Reason, "loopback") {
						t.Errorf("%s: %s (%s), want refused (loopback)", u, c.Verdict, c.Reason)
					}
				}
				if c := checks[site.URL+"/go-admin"]; c.Verdict != audit.VerdictRefused {
					t.Errorf("redirect to the admin port: %s (%s), want refused", c.Verdict, c.Reason)
				}
				if n := adminHits.Load(); n != 0 {
					t.Errorf("the other loopback service got %d requests, want none", n)
				}
				return
			}
			for _, u := range other {
				if v := verdict(u); v != audit.VerdictOK {
					t.Errorf("%s with --allow-private: %s, want ok", u, v)
				}
			}
			if c := checks[site.URL+"/go-admin"]; c.Verdict != audit.VerdictRedirected && c.Verdict != audit.VerdictOK {
				t.Errorf("redirect to the admin port with --allow-private: %s (%s)", c.Verdict, c.Reason)
			}
			if adminHits.Load() == 0 {
				t.Errorf("--allow-private: the other loopback service was never reached")
			}
		})
	}
}

// robotsSite is a site whose robots.txt disallows /private/ and a
// honeypot and asks Crawl-delay: delay. It records every request: count
// by path, arrival times and the most requests in flight at once.
type robotsSite struct {
	*httptest.Server
	mu       sync.Mutex
	hits     map[string]int
	arrivals []time.Time
	inFlight int
	maxIn    int
}

func newRobotsSite(t *testing.T, delay string, extra func(w http.ResponseWriter, r *http.Request) bool) *robotsSite {
	s := &robotsSite{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.arrivals = append(s.arrivals, time.Now())
		s.inFlight++
		s.maxIn = max(s.maxIn, s.inFlight)
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight--
			s.mu.Unlock()
		}()
		time.Sleep(20 * time.Millisecond) // overlap shows up as concurrency
		if extra != nil && extra(w, r) {
			return
		}
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\nDisallow: /honeypot\nCrawl-delay: %s\n", delay)
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<title>home</title><a href="/public">public</a> <a href="/private/report">private</a>
<a href="/honeypot">do not follow</a> <a href="/private/other#x">other</a>`)
		case "/public":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<title>public</title><p>a public page</p><a href="/">home</a>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// TestAudit_RobotsInEveryStage: URLs of the site that robots.txt
// disallows are never requested, by the crawl or by the check (nor through
// a redirect from another host), and are recorded as skipped with the
// reason; --ignore-robots fetches them.
func TestAudit_RobotsInEveryStage(t *testing.T) {
	site := newRobotsSite(t, "0", nil)
	// Another host linking to the site: its redirect into a disallowed
	// URL is not followed either.
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, site.URL+"/private/via-redirect", http.StatusFound)
	}))
	defer ext.Close()
	home := site.Config.Handler
	site.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			site.mu.Lock()
			site.hits["/"]++
			site.mu.Unlock()
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<title>home</title><a href="/public">public</a> <a href="/private/report">private</a>
<a href="/honeypot">do not follow</a> <a href="%s/elsewhere">elsewhere</a>`, ext.URL)
			return
		}
		home.ServeHTTP(w, r)
	})
	dbPath := filepath.Join(t.TempDir(), "robots.db")
	if code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", dbPath, "--allow-private", "--no-archives", "--no-report",
		"--fail-on", "none", "--retries", "0", "--timeout", "5s"); code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	site.mu.Lock()
	for _, p := range []string{"/private/report", "/honeypot", "/private/via-redirect"} {
		if n := site.hits[p]; n != 0 {
			t.Errorf("%s: requested %d times, want never (robots.txt disallows it)", p, n)
		}
	}
	site.mu.Unlock()
	checks := checksByURL(t, dbPath)
	for _, u := range []string{site.URL + "/private/report", site.URL + "/honeypot"} {
		if c := checks[u]; c.Verdict != audit.VerdictSkipped || c.Reason != "disallowed by robots.txt" {
			t.Errorf("%s: %s (%q), want skipped: disallowed by robots.txt", u, c.Verdict, c.Reason)
		}
	}
	if c := checks[ext.URL+"/elsewhere"]; !strings.Contains(c.Reason, "disallowed by robots.txt") {
		t.Errorf("redirect into a disallowed URL: %s (%q), want it not followed, with the reason", c.Verdict, c.Reason)
	}

	// linkrot check alone (a new process) obeys robots.txt too.
	db := openDB(t, dbPath)
	r, _ := db.LatestRun(context.Background())
	if code, stdout, stderr := run(t, "", "check", "--db", dbPath, "--run", fmt.Sprint(r.ID), "--allow-private", "--no-archives", "--fail-on", "none", "--retries", "0"); code != exitOK {
		t.Fatalf("check exit %d: %s\n%s", code, stderr, stdout)
	}
	site.mu.Lock()
	if n := site.hits["/private/report"] + site.hits["/honeypot"]; n != 0 {
		t.Errorf("linkrot check requested disallowed URLs %d times", n)
	}
	site.mu.Unlock()

	// --ignore-robots: the user's own site, everything fetched.
	dbPath2 := filepath.Join(t.TempDir(), "ignore.db")
	if code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", dbPath2, "--ignore-robots", "--allow-private", "--no-archives", "--no-report",
		"--fail-on", "none", "--retries", "0", "--timeout", "5s"); code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	if site.hits["/private/report"] == 0 || site.hits["/honeypot"] == 0 {
		t.Errorf("--ignore-robots: disallowed URLs not fetched: %v", site.hits)
	}
}

// TestAudit_CrawlDelayAcrossStages: a host asking Crawl-delay: 1 never
// sees two requests closer than 1 s, nor two at once, across the crawl
// and the check of one audit (soft-404 probes included).
func TestAudit_CrawlDelayAcrossStages(t *testing.T) {
	// Pages in three directories: the check probes each directory for
	// soft 404s, with --per-host 4 they would go at once.
	site := newRobotsSite(t, "1", func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<title>home</title><a href="/d1/p">one</a> <a href="/d2/p">two</a> <a href="/private/x">private</a>`)
		case "/d1/p", "/d2/p":
			fmt.Fprint(w, `<title>page</title><p>a page in a directory</p>`)
		default:
			return false
		}
		return true
	})
	dbPath := filepath.Join(t.TempDir(), "delay.db")
	start := time.Now()
	if code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", dbPath, "--no-archives", "--no-report",
		"--fail-on", "none", "--retries", "0", "--timeout", "10s", "--per-host", "4"); code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	if site.maxIn > 1 {
		t.Errorf("%d requests at once, want one at a time", site.maxIn)
	}
	if len(site.arrivals) < 4 {
		t.Fatalf("only %d requests: the test shows nothing", len(site.arrivals))
	}
	for i := 1; i < len(site.arrivals); i++ {
		if gap := site.arrivals[i].Sub(site.arrivals[i-1]); gap < time.Second {
			t.Errorf("requests %d and %d arrived %v apart, want at least 1s (Crawl-delay)", i-1, i, gap)
		}
	}
	t.Logf("%d requests in %v: %v", len(site.arrivals), time.Since(start).Round(time.Millisecond), site.hits)
}

// TestAudit_CrawlTraps: linkrot audit of a site with a calendar, a session
// id in every link and recursing relative links ends with the default
// guards, says so in the terminal summary, stores the traps and reports
// them in the machine outputs.
func TestAudit_CrawlTraps(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0\n")
		case p == "/":
			fmt.Fprint(w, `<title>home</title><a href="/calendar?m=0">calendar</a> <a href="/shop?sid=0123456789abcdef0123456789abcdef">shop</a> <a href="/more/">more</a>`)
		case p == "/calendar":
			var m int
			fmt.Sscan(r.URL.Query().Get("m"), &m)
			fmt.Fprintf(w, `<title>month %d</title><a href="/calendar?m=%d">next</a>`, m, m+1)
		case p == "/shop":
			fmt.Fprintf(w, `<title>shop</title><a href="/shop?sid=%032x">again</a>`, time.Now().UnixNano())
		case strings.HasPrefix(p, "/more/"):
			fmt.Fprint(w, `<title>more</title><a href="more/">more</a>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	dbPath := filepath.Join(t.TempDir(), "traps.db")
	code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", dbPath, "--no-archives", "--no-report", "--fail-on", "none",
		"--retries", "0", "--no-soft404", "--max-query-variants", "20")
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "Crawl traps: 3 found") || !strings.Contains(stdout, "query-variants") {
		t.Errorf("summary lacks the crawl traps:\n%s", stdout)
	}
	db := openDB(t, dbPath)
	r, err := db.LatestRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	traps, err := db.CrawlTraps(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[audit.TrapKind]audit.CrawlTrap{}
	for _, tr := range traps {
		kinds[tr.Kind] = tr
	}
	if tr := kinds[audit.TrapQueryVariants]; tr.Pattern != site.URL+"/calendar?…" || tr.Limit != 20 || tr.Cut < 1 {
		t.Errorf("calendar trap = %+v", tr)
	}
	if tr := kinds[audit.TrapSessionID]; tr.Cut < 1 || tr.PageURL == "" {
		t.Errorf("session trap = %+v", tr)
	}
	if tr := kinds[audit.TrapRepeatedSegments]; tr.Pattern != site.URL+"/(more/){3,}" {
		t.Errorf("recursion trap = %+v", tr)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := run(t, "", "report", "--db", dbPath, "--format", "json", "--out", out); code != exitOK {
		t.Fatalf("report exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"crawl_traps"`) || !strings.Contains(string(b), `"kind": "crawl-trap"`) {
		t.Errorf("json report lacks crawl_traps")
	}
}

type fixedDelay map[string]time.Duration

func (f fixedDelay) CrawlDelay(_ context.Context, u *url.URL) time.Duration { return f[u.Host] }

// TestCrawlDelayRules: an origin with a Crawl-delay gets a host rule of
// one check at a time, the delay apart, placed first; a [[host]] rule of
// the same host keeps its headers and its longer delay.
func TestCrawlDelayRules(t *testing.T) {
	gate := fixedDelay{"slow.example": 2 * time.Second, "polite.example:8080": time.Second, "fast.example": 0}
	user := []politeness.HostRule{
		{Match: "polite.example", Delay: 5 * time.Second, Headers: map[string]string{"Authorization": "x"}},
		{Match: "other.example", PerHost: 9},
	}
	got := crawlDelayRules(context.Background(), gate,
		[]string{"https://slow.example/", "http://polite.example:8080/", "http://fast.example/", "https://slow.example/"}, user)
	if len(got) != 4 {
		t.Fatalf("rules = %+v", got)
	}
	if r := got[0]; r.Match != "slow.example:443" || r.PerHost != 1 || r.Delay != 2*time.Second {
		t.Errorf("slow = %+v", r)
	}
	if r := got[1]; r.Match != "polite.example:8080" || r.PerHost != 1 || r.Delay != 5*time.Second || r.Headers["Authorization"] != "x" {
		t.Errorf("polite = %+v", r)
	}
	if got[2].Match != "polite.example" || got[3].Match != "other.example" {
		t.Errorf("the user's rules follow: %+v", got[2:])
	}
}
