package linkrot_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/crawltest"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// The tests here run audits as linkrot audit does (Start, then the job),
// and check that what Open builds once binds every stage: the SSRF
// scope, the robots.txt gate and the Crawl-delay.

// auditSettings are linkrot audit's default settings for a site, without
// retries or archives.
func auditSettings(seed string) linkrot.Settings {
	return linkrot.Settings{
		Input:        linkrot.SiteInput(seed),
		PerHost:      4,
		Timeout:      5 * time.Second,
		MaxRedirects: 10,
		Crawl:        linkrot.CrawlSettings{MaxBody: 5 << 20},
		Check:        linkrot.CheckSettings{Workers: 64, MaxRetryWait: time.Minute, MaxBody: 2 << 20},
		Archives:     linkrot.ArchiveSettings{Off: true},
	}
}

// openStore opens a fresh store.
func openStore(t *testing.T) *sqlstore.DB {
	t.Helper()
	db, err := engines.Open(context.Background(), filepath.Join(t.TempDir(), "linkrot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// startAudit starts a run of set in store and runs it to its end.
func startAudit(t *testing.T, store *sqlstore.DB, set linkrot.Settings) *audit.Run {
	t.Helper()
	ctx := context.Background()
	job, err := linkrot.Start(ctx, store, set, linkrot.StartOptions{Command: audit.CommandAudit})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	if _, err := job.Audit(ctx, store, nil); err != nil {
		t.Fatal(err)
	}
	return job.Run
}

// checksByURL returns the latest run's checks by URL.
func checksByURL(t *testing.T, store *sqlstore.DB) map[string]audit.Check {
	t.Helper()
	ctx := context.Background()
	r, err := store.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := store.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]audit.Check{}
	for _, c := range checks {
		out[c.URL] = c
	}
	return out
}

// TestStart_ExactSSRFScope: a site on loopback links to another loopback
// service (an admin port), redirects to it, links to the IPv4-mapped
// spelling of it and to the cloud metadata address. Without
// --allow-private only the audited origin is reached; with it the other
// loopback service too; link-local never.
func TestStart_ExactSSRFScope(t *testing.T) {
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
			set := auditSettings(site.URL + "/")
			set.Check.NoSoft404, set.Check.AllowPrivate = true, tt.allowPrivate
			store := openStore(t)
			startAudit(t, store, set)
			checks := checksByURL(t, store)
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

// TestStart_RobotsInEveryStage: URLs of the site that robots.txt
// disallows are never requested, by the crawl or by the check (nor through
// a redirect from another host), and are recorded as skipped with the
// reason; --ignore-robots fetches them.
func TestStart_RobotsInEveryStage(t *testing.T) {
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
	set := auditSettings(site.URL + "/")
	set.Check.AllowPrivate = true
	store := openStore(t)
	run := startAudit(t, store, set)
	site.mu.Lock()
	for _, p := range []string{"/private/report", "/honeypot", "/private/via-redirect"} {
		if n := site.hits[p]; n != 0 {
			t.Errorf("%s: requested %d times, want never (robots.txt disallows it)", p, n)
		}
	}
	site.mu.Unlock()
	checks := checksByURL(t, store)
	for _, u := range []string{site.URL + "/private/report", site.URL + "/honeypot"} {
		if c := checks[u]; c.Verdict != audit.VerdictSkipped || c.Reason != "disallowed by robots.txt" {
			t.Errorf("%s: %s (%q), want skipped: disallowed by robots.txt", u, c.Verdict, c.Reason)
		}
	}
	if c := checks[ext.URL+"/elsewhere"]; !strings.Contains(c.Reason, "disallowed by robots.txt") {
		t.Errorf("redirect into a disallowed URL: %s (%q), want it not followed, with the reason", c.Verdict, c.Reason)
	}

	// The run's checks done again (linkrot check --run) obey robots.txt
	// too.
	job, err := linkrot.Open(context.Background(), store, run, set, linkrot.OpenOptions{CheckOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	if _, err := job.Audit(context.Background(), store, nil); err != nil {
		t.Fatal(err)
	}
	site.mu.Lock()
	if n := site.hits["/private/report"] + site.hits["/honeypot"]; n != 0 {
		t.Errorf("linkrot check requested disallowed URLs %d times", n)
	}
	site.mu.Unlock()

	// --ignore-robots: the user's own site, everything fetched.
	set.Crawl.IgnoreRobots = true
	startAudit(t, openStore(t), set)
	site.mu.Lock()
	defer site.mu.Unlock()
	if site.hits["/private/report"] == 0 || site.hits["/honeypot"] == 0 {
		t.Errorf("--ignore-robots: disallowed URLs not fetched: %v", site.hits)
	}
}

// TestStart_CrawlDelayAcrossStages: a host asking Crawl-delay: 1 never
// sees two requests closer than 1 s, nor two at once, across the crawl
// and the check of one audit (soft-404 probes included).
func TestStart_CrawlDelayAcrossStages(t *testing.T) {
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
	set := auditSettings(site.URL + "/")
	set.Timeout = 10 * time.Second
	start := time.Now()
	startAudit(t, openStore(t), set)
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

// TestStart_Resume: Start with Resume continues the latest interrupted
// run of the same command and settings; a run of the same settings that
// completed since makes the interrupted one stale: it is abandoned (the
// caller is told why) and a new run starts.
func TestStart_Resume(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	set := auditSettings("http://127.0.0.1:9/")
	set.Crawl.IgnoreRobots = true // nothing is fetched here
	start := func(resume bool, abandoned func(*audit.Run, string)) *linkrot.Job {
		t.Helper()
		job, err := linkrot.Start(ctx, store, set, linkrot.StartOptions{Command: audit.CommandAudit, Resume: resume, Abandoned: abandoned})
		if err != nil {
			t.Fatal(err)
		}
		job.Close()
		return job
	}
	interrupt := func(id int64) {
		t.Helper()
		if err := store.FinishRun(ctx, id, audit.RunInterrupted, time.Now().UTC(), ""); err != nil {
			t.Fatal(err)
		}
	}
	first := start(false, nil)
	if first.Resumed || first.Run.Mode != "site" || first.Run.Status != audit.RunRunning {
		t.Fatalf("a new run: %+v, resumed %v", first.Run, first.Resumed)
	}
	interrupt(first.Run.ID)
	again := start(true, nil)
	if !again.Resumed || again.Run.ID != first.Run.ID || again.Run.Status != audit.RunRunning {
		t.Fatalf("--resume: run %d (resumed %v, %s), want run %d resumed", again.Run.ID, again.Resumed, again.Run.Status, first.Run.ID)
	}
	interrupt(first.Run.ID)
	newer := start(false, nil)
	if err := store.FinishRun(ctx, newer.Run.ID, audit.RunComplete, time.Now().UTC(), ""); err != nil {
		t.Fatal(err)
	}
	if err := store.MarkStage(ctx, newer.Run.ID, audit.StageReport); err != nil { // its report written
		t.Fatal(err)
	}
	var gaveUp []int64
	var why string
	third := start(true, func(r *audit.Run, reason string) { gaveUp, why = append(gaveUp, r.ID), reason })
	if third.Resumed || third.Run.ID == first.Run.ID {
		t.Errorf("a stale run was resumed: run %d", third.Run.ID)
	}
	if len(gaveUp) != 1 || gaveUp[0] != first.Run.ID || !strings.Contains(why, fmt.Sprintf("run %d of the same settings completed since", newer.Run.ID)) {
		t.Errorf("abandoned %v (%q), want run %d because run %d completed", gaveUp, why, first.Run.ID, newer.Run.ID)
	}
}

// TestStart_DirectorySeed: a directory run stores its seed as the
// directory and its base URL, and its audited site is the base URL.
func TestStart_DirectorySeed(t *testing.T) {
	store := openStore(t)
	set := auditSettings("")
	set.Input = linkrot.DirectoryInput("public", "https://example.org/docs/")
	job, err := linkrot.Start(context.Background(), store, set, linkrot.StartOptions{Command: audit.CommandAudit})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	r := job.Run
	if r.Mode != "dir" || len(r.Seeds) != 1 || r.Seeds[0] != "public as https://example.org/docs/" {
		t.Errorf("run mode %q seeds %q", r.Mode, r.Seeds)
	}
	if got := r.SeedURLs(); len(got) != 1 || got[0] != "https://example.org/docs/" {
		t.Errorf("SeedURLs = %q", got)
	}
	if job.Robots != nil {
		t.Errorf("a local directory has a robots.txt gate")
	}
}

// TestRestoreHosts: the header values of a stored run's host rules come
// from the rules given now, with the same header names and, when the
// settings hold their hash, the same values; anything else is a
// *SettingsError.
func TestRestoreHosts(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	set := auditSettings("http://127.0.0.1:9/")
	set.Crawl.IgnoreRobots = true
	rule := func(value string) linkrot.HostSettings {
		var h linkrot.HostSettings
		h.Match, h.Headers = "staging.example.org", map[string]string{"Authorization": value}
		return h
	}
	set.Hosts = []linkrot.HostSettings{rule("Bearer one")}
	job, err := linkrot.Start(ctx, store, set, linkrot.StartOptions{Command: audit.CommandAudit})
	if err != nil {
		t.Fatal(err)
	}
	job.Close()
	run, stored, err := linkrot.LatestUnfinished(ctx, store, audit.CommandAudit)
	if err != nil {
		t.Fatal(err)
	}
	if run.ID != job.Run.ID || len(stored.Hosts) != 1 || stored.Hosts[0].Headers != nil || stored.Hosts[0].HeaderHash == "" {
		t.Fatalf("stored hosts = %+v (header values are never stored)", stored.Hosts)
	}
	got, err := linkrot.RestoreHosts(run.ID, stored.Hosts, []linkrot.HostSettings{rule("Bearer one")})
	if err != nil || got[0].Headers["Authorization"] != "Bearer one" {
		t.Errorf("restored %+v, %v", got, err)
	}
	var se *linkrot.SettingsError
	if _, err := linkrot.RestoreHosts(run.ID, stored.Hosts, nil); !errors.As(err, &se) || !strings.Contains(err.Error(), "--config FILE") {
		t.Errorf("without the rule: %v, want a settings error naming --config", err)
	}
	if _, err := linkrot.RestoreHosts(run.ID, stored.Hosts, []linkrot.HostSettings{rule("Bearer two")}); !errors.As(err, &se) || !strings.Contains(err.Error(), "other values") {
		t.Errorf("with other values: %v, want a settings error", err)
	}
}

// probePath matches a soft-404 probe: its last segment is 26 base32
// letters.
var probePath = regexp.MustCompile(`/[a-z2-7]{26}/?$`)

// TestOpen_CheckOnlyFromCrawl: the checks of a crawl-only run, done again
// (linkrot crawl, then linkrot check --run N), judge the site's pages from
// the crawl stored in the database: no request to them but the soft-404
// probes, and the verdicts a fetch gives.
func TestOpen_CheckOnlyFromCrawl(t *testing.T) {
	rot := crawltest.NewRot(t)
	ctx := context.Background()
	db := openStore(t)
	set := auditSettings(rot.URL + "/")
	crawl, err := linkrot.Start(ctx, db, set, linkrot.StartOptions{Command: audit.CommandCrawl, Open: linkrot.OpenOptions{CrawlOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crawl.Audit(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	crawl.Close()
	r := crawl.Run
	crawled := rot.AllHits()
	set.Timeout = time.Second
	job, err := linkrot.Open(ctx, db, r, set, linkrot.OpenOptions{CheckOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	sum, err := job.Audit(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checks == nil || sum.Checks.Findings == 0 {
		t.Fatalf("checks %+v: want findings", sum.Checks)
	}
	for path, n := range rot.AllHits() {
		switch before := crawled[path]; {
		case path == "/robots.txt" && n-before <= 1:
			// A new process reads robots.txt once: it binds the check of
			// the site's own URLs too.
		case before > 0 && n != before:
			t.Errorf("%s: requested %d more times by the check, want 0 (the crawl's response stands)", path, n-before)
		case before == 0 && !probePath.MatchString(path):
			t.Errorf("%s: requested by the check (%d times), want only soft-404 probes", path, n)
		}
	}
	checks, err := db.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]audit.Verdict{
		"/fine.html":                audit.VerdictOK,
		"/old-url":                  audit.VerdictMoved,
		"/gone":                     audit.VerdictGone,
		"/missing":                  audit.VerdictNotFound,
		"/temp":                     audit.VerdictRedirected,
		"/deep/path/article":        audit.VerdictRedirectToRoot,
		"/shop/discontinued-widget": audit.VerdictSoft404,
	}
	for _, c := range checks {
		path, ok := strings.CutPrefix(c.URL, rot.URL)
		if !ok {
			continue
		}
		if !c.FromCrawl {
			t.Errorf("%s: not judged from the crawl: %+v", path, c)
		}
		if v, ok := want[path]; ok && c.Verdict != v {
			t.Errorf("%s: verdict %s (%s), want %s", path, c.Verdict, c.Reason, v)
		}
		delete(want, path)
	}
	if len(want) > 0 {
		t.Errorf("no checks of %v", want)
	}
	findings, err := db.Findings(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	fragMissing := false
	for _, f := range findings {
		fragMissing = fragMissing || f.Verdict == audit.VerdictFragmentMissing && f.Fragment == "no-such-section"
	}
	if !fragMissing {
		t.Errorf("fragment-missing not found from the crawl's anchors: %+v", findings)
	}
}

// TestStart_DirFromCrawl: auditing a build directory as if it were
// served at --base judges the site's pages from the directory: the live
// site at that URL gets no request for them (no fetch, no soft-404 probe);
// only what the crawl did not read (resources, pages disallowed by
// robots.txt) is checked there.
func TestStart_DirFromCrawl(t *testing.T) {
	var mu sync.Mutex
	live := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		live[r.URL.Path]++
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	set := auditSettings("")
	set.Input = linkrot.DirectoryInput(crawltest.Dir("basic"), srv.URL+"/")
	set.Timeout = 2 * time.Second
	set.Check.Skip = []string{`^https?://(doi\.org|external\.example|www\.w3\.org)/`}
	db := openStore(t)
	r := startAudit(t, db, set)
	pages, err := db.Pages(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, p := range pages {
		if p.Status != 0 {
			read[strings.TrimPrefix(p.URL, srv.URL)] = true
		}
	}
	if len(read) < 5 {
		t.Fatalf("the crawl read %d pages of the directory", len(read))
	}
	mu.Lock()
	for path, n := range live {
		if read[path] || probePath.MatchString(path) {
			t.Errorf("the live site got %d requests for %s", n, path)
		}
	}
	mu.Unlock()
	checks, err := db.Checks(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]audit.Verdict{"/a.html": audit.VerdictOK, "/b/": audit.VerdictOK, "/missing.html": audit.VerdictNotFound}
	for _, c := range checks {
		path, ok := strings.CutPrefix(c.URL, srv.URL)
		if !ok {
			continue
		}
		if v, ok := want[path]; ok {
			if c.Verdict != v || !c.FromCrawl || c.Soft404 != nil {
				t.Errorf("%s: %s (%s), from crawl %v, soft-404 evidence %+v; want %s from the directory, no probe", path, c.Verdict, c.Reason, c.FromCrawl, c.Soft404, v)
			}
			delete(want, path)
		}
	}
	if len(want) > 0 {
		t.Errorf("no checks of %v", want)
	}
}
