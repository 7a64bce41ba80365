package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
)

// windowLog counts, on the server side, the requests for a URL that
// arrive inside a window the server announced for that URL (a refusal's
// Retry-After): what a polite client never sends. The client sends the
// next request for a URL only after it has read the refusal, so no grace
// is needed.
type windowLog struct {
	mu         sync.Mutex
	until      map[string]time.Time
	violations []string
}

func newWindowLog() *windowLog { return &windowLog{until: map[string]time.Time{}} }

// arrive records a request for key and reports a violation.
func (l *windowLog) arrive(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if end, ok := l.until[key]; ok && time.Now().Before(end) {
		l.violations = append(l.violations, fmt.Sprintf("%s, %v before the end of its window", key, time.Until(end).Round(time.Millisecond)))
	}
}

// open records the window announced for key.
func (l *windowLog) open(key string, end time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if end.After(l.until[key]) {
		l.until[key] = end
	}
}

func (l *windowLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.violations...)
}

// TestAudit_LongRetryAfterOneURL is issue 24's site: the audited site (312
// pages) has one URL answering 429 with Retry-After: 86400 and another
// answering 503 with a Retry-After a day away; its pages link to a
// token-bucket host (refusing beyond 20 requests a second) and to a fine
// host. A full audit crawls and checks everything else: those two URLs end
// rate-limited with their retry time, in the database and in the report;
// no host is given up; the token-bucket host is paced (every target ok,
// few refusals); and no request arrives inside a window a server announced
// for its URL.
func TestAudit_LongRetryAfterOneURL(t *testing.T) {
	if testing.Short() {
		t.Skip("an audit of 312 pages and 450 targets")
	}
	const pages = 312
	win := newWindowLog()
	day := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	var siteHits sync.Map // path -> *atomic.Int64

	// The token-bucket host: 20 a second, burst 5; a refusal's window is
	// the whole seconds until a token is back, for the URL refused.
	const rate, burst = 20.0, 5.0
	var (
		bmu              sync.Mutex
		tokens           = burst
		tokAt            = time.Now()
		bOK, bNo, bTotal atomic.Int64
	)
	bucket := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bTotal.Add(1)
		win.arrive("bucket" + r.URL.Path)
		bmu.Lock()
		now := time.Now()
		tokens = math.Min(burst, tokens+now.Sub(tokAt).Seconds()*rate)
		tokAt = now
		if tokens >= 1 {
			tokens--
			bmu.Unlock()
			bOK.Add(1)
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintln(w, "a resource of the bucket host")
			return
		}
		secs := int64(math.Ceil((1 - tokens) / rate))
		bmu.Unlock()
		bNo.Add(1)
		win.open("bucket"+r.URL.Path, now.Add(time.Duration(secs)*time.Second))
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer bucket.Close()
	fine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "fine")
	}))
	defer fine.Close()

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := siteHits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		win.arrive("site" + r.URL.Path)
		switch p := r.URL.Path; {
		case p == "/busy":
			win.open("site"+p, time.Now().Add(86400*time.Second))
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		case p == "/maintenance":
			win.open("site"+p, day)
			w.Header().Set("Retry-After", day.Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		case p == "/robots.txt":
			http.NotFound(w, r)
			return
		case p == "/" || strings.HasPrefix(p, "/p"):
			i := -1
			if p != "/" {
				var err error
				if i, err = strconv.Atoi(strings.TrimPrefix(p, "/p")); err != nil || i < 0 || i >= pages-3 {
					http.NotFound(w, r)
					return
				}
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>Page %d</title><p>Page %d of the site.</p>\n", i, i)
			// A tree: page i links to pages 4i+1..4i+4, so the site is
			// reached in a few levels.
			for c := 4 * (i + 1); c < 4*(i+1)+4 && c < pages-3; c++ {
				fmt.Fprintf(w, "<a href=\"/p%d\">p%d</a>\n", c, c)
			}
			if i >= 0 {
				fmt.Fprintf(w, "<a href=\"%s/r%d\">bucket</a> <a href=\"%s/f%d\">fine</a>\n", bucket.URL, i%140, fine.URL, i%60)
			}
			if i%50 == 7 {
				fmt.Fprint(w, "<a href=\"/busy\">busy</a> <a href=\"/maintenance\">maintenance</a>\n")
			}
			return
		}
		http.NotFound(w, r)
	}))
	defer site.Close()

	dir := t.TempDir()
	db := filepath.Join(dir, "linkrot.db")
	reportDir := filepath.Join(dir, "report")
	start := time.Now()
	code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", db, "--allow-private", "--no-archives",
		"--report", reportDir, "--output", "json", "--fail-on", "none", "--max-retry-wait", "2s", "--retries", "4", "--max-time", "3m")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("audit in %v; bucket host: %d ok, %d refused", time.Since(start).Round(time.Millisecond), bOK.Load(), bNo.Load())

	d := openDB(t, db)
	ctx := context.Background()
	r, ps := latest(t, d)
	if r.Status != audit.RunComplete {
		t.Errorf("run %s (%s), want complete", r.Status, r.Error)
	}
	// Every page of the site was crawled; the two refused URLs are
	// recorded with their refusal.
	crawled := 0
	for _, p := range ps {
		switch {
		case strings.HasSuffix(p.RequestURL, "/busy"):
			if p.Status != 429 {
				t.Errorf("/busy page: status %d, fetch error %q", p.Status, p.FetchError)
			}
		case strings.HasSuffix(p.RequestURL, "/maintenance"):
			if p.Status != 503 {
				t.Errorf("/maintenance page: status %d, fetch error %q", p.Status, p.FetchError)
			}
		case p.Status == 200:
			crawled++
		default:
			t.Errorf("page %s: status %d, fetch error %q", p.RequestURL, p.Status, p.FetchError)
		}
	}
	if crawled != pages-2 {
		t.Errorf("%d pages crawled, want %d", crawled, pages-2)
	}
	checks, err := d.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	limited := 0
	for _, c := range checks {
		switch {
		case c.URL == site.URL+"/busy" || c.URL == site.URL+"/maintenance":
			limited++
			if c.Verdict != audit.VerdictRateLimited {
				t.Errorf("%s: %s (%s), want rate-limited", c.URL, c.Verdict, c.Reason)
			}
			at, ok := retryTime(c.Reason)
			if !ok || at.Before(day.Add(-time.Minute)) || at.After(day.Add(2*time.Minute)) {
				t.Errorf("%s: reason %q: retry time %v, want about %v", c.URL, c.Reason, at, day)
			}
		case c.Verdict != audit.VerdictOK:
			t.Errorf("%s: %s (%s) after %d attempts", c.URL, c.Verdict, c.Reason, c.Attempts)
		}
	}
	if limited != 2 {
		t.Errorf("%d checks of the refused URLs, want 2", limited)
	}
	if len(checks) < pages+140+60-3 {
		t.Errorf("%d checks, want at least %d", len(checks), pages+140+60-3)
	}
	for _, p := range []string{"/busy", "/maintenance"} {
		if n, _ := siteHits.Load(p); n == nil || n.(*atomic.Int64).Load() != 1 {
			t.Errorf("%s requested %v times, want once (the crawl's request; the check honours the window)", p, n)
		}
	}
	if v := win.list(); len(v) > 0 {
		t.Errorf("%d requests inside a window the server announced for their URL: %v", len(v), v)
	}
	// Paced within the bucket's budget: most requests are served.
	if bNo.Load() == 0 {
		t.Error("the bucket host never refused: the test tests nothing")
	}
	if bNo.Load()*2 > bTotal.Load() {
		t.Errorf("bucket host: %d of %d requests refused, want under half", bNo.Load(), bTotal.Load())
	}

	// The report shows when to retry.
	js, err := os.ReadFile(filepath.Join(reportDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Targets []struct {
			URL, Verdict, Reason string
		} `json:"targets"`
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, tg := range rep.Targets {
		if tg.URL == site.URL+"/busy" || tg.URL == site.URL+"/maintenance" {
			if _, ok := retryTime(tg.Reason); ok && tg.Verdict == "rate-limited" {
				shown++
			}
		}
	}
	if shown != 2 {
		t.Errorf("report.json shows the retry time of %d of the 2 refused URLs", shown)
	}
}

// retryTime reads "retry after <RFC 3339>" in a reason.
func retryTime(reason string) (time.Time, bool) {
	_, rest, ok := strings.Cut(reason, "retry after ")
	if !ok {
		return time.Time{}, false
	}
	f := strings.FieldsFunc(rest, func(r rune) bool { return r == ' ' || r == ';' || r == ')' })
	if len(f) == 0 {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339, f[0])
	return at, err == nil
}

// TestAudit_SiteWideLongRetryAfter: every page of the audited site but its
// home answers 429 with a day-long Retry-After. The limit covers the host:
// the site's pages are not given up, they wait, and the run stopped by
// --max-time says so plainly, on stderr and in the run's recorded error;
// the waiting host gets no request inside its window.
func TestAudit_SiteWideLongRetryAfter(t *testing.T) {
	var reqs atomic.Int64
	var pausedAt atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!doctype html><title>Home</title>")
			for i := range 30 {
				fmt.Fprintf(w, "<a href=\"/p%d\">p%d</a>\n", i, i)
			}
		default:
			reqs.Add(1)
			pausedAt.Store(time.Now().UnixNano())
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer site.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "linkrot.db")
	code, stdout, stderr := run(t, "", "audit", site.URL+"/", "--db", db, "--allow-private", "--no-archives", "--no-report",
		"--fail-on", "none", "--max-retry-wait", "500ms", "--max-time", "4s")
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d (interrupted)\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, stdout, stderr)
	}
	for _, want := range []string{"--max-time", "paused by its server until", "covers the host"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// The first wave (the crawl's concurrency), then one request after
	// each of two pauses: the limit covers the host, which then waits.
	if n := reqs.Load(); n > 4+2 {
		t.Errorf("%d refused requests, want at most 6", n)
	}
	if last := time.Unix(0, pausedAt.Load()); time.Since(last) < 2*time.Second {
		t.Errorf("the last refused request came %v before the end: the host did not wait", time.Since(last))
	}
	d := openDB(t, db)
	r, _ := latest(t, d)
	if r.Status != audit.RunInterrupted || !strings.Contains(r.Error, "paused by its server until") {
		t.Errorf("run %s, error %q: want interrupted with the host it waited for", r.Status, r.Error)
	}
}
