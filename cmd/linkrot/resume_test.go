package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/sqlite"
)

// cronSite is a loopback site for the kill and lock tests: 16 pages in a
// binary tree (/p1 links to /p2 and /p3, ...), each linking to targets on
// a second host that only the checking stage fetches (ok, 404, 410 and a
// permanent redirect), and a fake Memento TimeGate that has no mementos. A
// trap on any path blocks the first request to it until released, and
// tells the test it was reached.
type cronSite struct {
	site, ext, archive *httptest.Server

	mu      sync.Mutex
	trap    string        // path ("/p9", "/t7", "/timegate/...") whose first request blocks
	reached chan struct{} // closed when the trap is reached
	release chan struct{} // close to let the trapped request go on
	crawled map[string]int
	checked map[string]int
}

const cronPages = 16

// isTargetPath reports whether p is exactly /tN, so that the soft-404
// probes (random paths) get a 404.
func isTargetPath(p string) bool {
	var n int
	_, err := fmt.Sscanf(p, "/t%d", &n)
	return err == nil && p == fmt.Sprintf("/t%d", n)
}

func newCronSite(t *testing.T) *cronSite {
	t.Helper()
	s := &cronSite{crawled: map[string]int{}, checked: map[string]int{}}
	s.ext = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		s.wait(r)
		switch p := r.URL.Path; {
		case p == "/gone":
			http.Error(w, "gone", http.StatusGone)
		case strings.HasPrefix(p, "/missing"):
			http.NotFound(w, r)
		case p == "/moved":
			http.Redirect(w, r, "/t1", http.StatusMovedPermanently)
		case isTargetPath(p):
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>%s</title><p>Target %s, a page with enough words to be a page.</p>", p, p)
		default:
			http.NotFound(w, r)
		}
	}))
	s.site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		s.wait(r)
		var n int
		if r.URL.Path == "/" {
			n = 1
		} else if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &n); err != nil || n < 1 || n >= cronPages ||
			r.URL.Path != fmt.Sprintf("/p%d", n) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Page %d</title><body>", n)
		for _, c := range []int{2 * n, 2*n + 1} {
			if c < cronPages {
				fmt.Fprintf(w, `<a href="/p%d">page %d</a> `, c, c)
			}
		}
		fmt.Fprintf(w, `<a href="%s/t%d">target %d</a> <a href="%s/gone">gone</a> <a href="%s/missing%d">missing</a> `,
			s.ext.URL, n, n, s.ext.URL, s.ext.URL, n%3)
		if n%4 == 0 {
			fmt.Fprintf(w, `<a href="%s/moved">moved</a> <a href="/p%d#top">self</a>`, s.ext.URL, n)
		}
		fmt.Fprint(w, "</body>")
	}))
	s.archive = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.wait(r)
		http.NotFound(w, r) // no memento for anything
	}))
	t.Cleanup(s.site.Close)
	t.Cleanup(s.ext.Close)
	t.Cleanup(s.archive.Close)
	return s
}

// count records a request: the checker sends Accept-Language, Colly does not.
func (s *cronSite) count(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Accept-Language") == "" {
		s.crawled[r.URL.Path]++
	} else {
		s.checked[r.URL.Path]++
	}
}

// setTrap arms a one-shot trap on path (a prefix for the archive).
func (s *cronSite) setTrap(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trap, s.reached, s.release = path, make(chan struct{}), make(chan struct{})
}

func (s *cronSite) wait(r *http.Request) {
	s.mu.Lock()
	trap := s.trap != "" && strings.HasPrefix(r.URL.Path, s.trap)
	var reached, release chan struct{}
	if trap {
		s.trap = "" // one shot
		reached, release = s.reached, s.release
	}
	s.mu.Unlock()
	if !trap {
		return
	}
	close(reached)
	select {
	case <-release:
	case <-r.Context().Done():
	}
}

// resetCounts forgets the requests so far.
func (s *cronSite) resetCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crawled, s.checked = map[string]int{}, map[string]int{}
}

func (s *cronSite) counts() (crawled, checked map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps2(s.crawled), maps2(s.checked)
}

func maps2(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// auditArgs are the arguments of the audits of the kill test.
func (s *cronSite) auditArgs(db string, archives bool) []string {
	args := []string{"audit", s.site.URL + "/", "--db", db, "--per-host", "1", "--timeout", "5s",
		"--retries", "0", "--no-report", "--fail-on", "none"}
	if archives {
		return append(args, "--archive", "fake="+s.archive.URL+"/timegate/,rate=60000/min",
			"--fetch-rate", "60000/min")
	}
	return append(args, "--no-archives")
}

// dbState is what the kill test compares: the stable content of a
// database's runs.
type dbState struct {
	Runs        []string
	Pages       []string
	Links       []string
	Checks      []string
	Findings    []string
	Maintenance []string
	History     []string
	Mementos    int
}

func readState(t *testing.T, path string) dbState {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
	var st dbState
	sums, err := db.RunSummaries(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	site := func(s string) string { return s } // URLs differ between servers only by port
	var ids []int64
	for _, r := range sums {
		st.Runs = append(st.Runs, fmt.Sprintf("%s pages=%d links=%d checked=%d broken=%d findings=%d",
			r.Status, r.Pages, r.Links, r.Checked, r.Broken, r.Findings))
		ids = append(ids, r.ID)
	}
	for _, id := range ids {
		pages, err := db.Pages(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			st.Pages = append(st.Pages, fmt.Sprintf("%s|%s|%d|%s|%d", site(p.URL), site(p.RequestURL), p.Status, p.Title, len(p.Links)))
			for i, l := range p.Links {
				st.Links = append(st.Links, fmt.Sprintf("%s|%d|%s|%s", site(p.URL), i, site(l.Href), l.Text))
			}
		}
		checks, err := db.Checks(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var tids []int64
		for _, c := range checks {
			st.Checks = append(st.Checks, fmt.Sprintf("%s|%s|%d|%s", site(c.URL), c.Verdict, c.Status, site(c.Replacement)))
			tids = append(tids, c.TargetID)
		}
		findings, err := db.Findings(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range findings {
			st.Findings = append(st.Findings, fmt.Sprintf("%s|%s|%s|%s", site(f.PageURL), site(f.Target), f.Verdict, f.Fragment))
		}
		recs, err := db.Maintenance(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range recs {
			st.Maintenance = append(st.Maintenance, fmt.Sprintf("%s|%s|%s", site(m.Source), site(m.Target), site(m.Replacement)))
		}
		hist, err := db.TargetHistories(ctx, tids)
		if err != nil {
			t.Fatal(err)
		}
		urls := map[int64]string{}
		for _, c := range checks {
			urls[c.TargetID] = c.URL
		}
		for tid, h := range hist {
			st.History = append(st.History, fmt.Sprintf("%s|failed=%d|hard=%d|confirmed=%v|last=%s",
				site(urls[tid]), h.FailedRuns, h.HardFailures, h.Confirmed, h.LastVerdict))
		}
		ms, err := db.Mementos(ctx, id)
		if err == nil {
			st.Mementos += len(ms)
		}
	}
	for _, l := range [][]string{st.Pages, st.Links, st.Checks, st.Findings, st.Maintenance, st.History} {
		slices.Sort(l)
	}
	return st
}

// normalize replaces the servers' addresses, which differ between the
// reference site and the killed one, by names.
func (s *cronSite) normalize(st dbState) dbState {
	r := strings.NewReplacer(s.site.URL, "SITE", s.ext.URL, "EXT", s.archive.URL, "ARCHIVE")
	for _, l := range []*[]string{&st.Runs, &st.Pages, &st.Links, &st.Checks, &st.Findings, &st.Maintenance, &st.History} {
		for i := range *l {
			(*l)[i] = r.Replace((*l)[i])
		}
		slices.Sort(*l)
	}
	return st
}

func diffState(t *testing.T, got, want dbState) {
	t.Helper()
	cmp := func(name string, g, w []string) {
		if slices.Equal(g, w) {
			return
		}
		var missing, extra []string
		for _, x := range w {
			if !slices.Contains(g, x) {
				missing = append(missing, x)
			}
		}
		for _, x := range g {
			if !slices.Contains(w, x) {
				extra = append(extra, x)
			}
		}
		t.Errorf("%s differ from the uninterrupted run: %d vs %d rows\nmissing: %q\nextra: %q", name, len(g), len(w), missing, extra)
	}
	cmp("runs", got.Runs, want.Runs)
	cmp("pages", got.Pages, want.Pages)
	cmp("links", got.Links, want.Links)
	cmp("checks", got.Checks, want.Checks)
	cmp("findings", got.Findings, want.Findings)
	cmp("maintenance", got.Maintenance, want.Maintenance)
	cmp("history", got.History, want.History)
	if got.Mementos != want.Mementos {
		t.Errorf("%d memento rows, want %d", got.Mementos, want.Mementos)
	}
}

// committed returns the request URLs of the pages and the URLs of the
// checks a database holds.
func committed(t *testing.T, path string) (pages, checks []string) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := db.Pages(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		pages = append(pages, p.RequestURL)
	}
	cs, err := db.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		checks = append(checks, c.URL)
	}
	return pages, checks
}

func pathOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
			return u[i+3+j:]
		}
	}
	return "/"
}

// TestAudit_KillAndResume kills linkrot audit with SIGKILL at several points
// of a real run against a loopback site: during the crawl, during the
// checks, during archive lookups, between stages (before history, before
// the report). linkrot audit --resume then finishes the run, and the
// database must equal the one an uninterrupted run produces: same pages,
// links, verdicts, findings and histories, nothing twice, and no page or
// target stored before the kill fetched again.
func TestAudit_KillAndResume(t *testing.T) {
	ref := newCronSite(t)
	refDB := filepath.Join(t.TempDir(), "ref.db")
	if code, _, stderr := run(t, "", ref.auditArgs(refDB, true)...); code != exitOK {
		t.Fatalf("reference audit: exit %d\n%s", code, stderr)
	}
	want := ref.normalize(readState(t, refDB))
	if len(want.Pages) != cronPages-1 || len(want.Checks) < 20 || len(want.Findings) == 0 || len(want.Maintenance) == 0 {
		t.Fatalf("reference run too small to test: %d pages, %d checks, %d findings, %d maintenance",
			len(want.Pages), len(want.Checks), len(want.Findings), len(want.Maintenance))
	}

	tests := []struct {
		name     string
		trap     string // a path whose request blocks; "" for a stage
		stage    string // a stage at which the process stops
		settle   time.Duration
		archives bool
	}{
		{name: "DuringCrawl", trap: "/p6", settle: 200 * time.Millisecond},
		{name: "DuringChecks", trap: "/t14", settle: 200 * time.Millisecond},
		{name: "DuringArchiveLookups", trap: "/timegate/", settle: 200 * time.Millisecond, archives: true},
		{name: "BeforeChecks", stage: "check"},
		{name: "BeforeHistory", stage: "history", archives: true},
		{name: "BeforeReport", stage: "report", archives: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newCronSite(t)
			db := filepath.Join(t.TempDir(), "linkrot.db")
			args := s.auditArgs(db, true)
			if tt.stage == "report" {
				args = append(slices.DeleteFunc(args, func(a string) bool { return a == "--no-report" }),
					"--report", filepath.Join(t.TempDir(), "report"))
			}
			if tt.trap != "" {
				s.setTrap(tt.trap)
			}
			c := startChild(t, tt.stage, args...)
			if tt.trap != "" {
				select {
				case <-s.reached:
				case <-c.done:
					t.Fatalf("linkrot finished (exit %d) before reaching %s:\n%s", c.code, tt.trap, c.errText())
				case <-time.After(60 * time.Second):
					t.Fatalf("trap %s not reached", tt.trap)
				}
				// Let the writers commit what came before the trap (they
				// flush every 500 ms), then a little more.
				deadline := time.Now().Add(10 * time.Second)
				for time.Now().Before(deadline) {
					if p, c := committed(t, db); (tt.name == "DuringCrawl" && len(p) > 0) || len(c) > 0 {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				time.Sleep(tt.settle)
			} else {
				c.waitLine(t, "linkrot-test: stage "+tt.stage)
			}
			c.kill(t)
			if tt.trap != "" {
				close(s.release)
			}
			pagesBefore, checksBefore := committed(t, db)
			t.Logf("killed with %d pages and %d checks stored", len(pagesBefore), len(checksBefore))
			switch tt.name {
			case "DuringCrawl":
				if len(pagesBefore) == 0 || len(pagesBefore) >= len(want.Pages) {
					t.Errorf("killed with %d of %d pages stored: not during the crawl", len(pagesBefore), len(want.Pages))
				}
			case "DuringChecks":
				if len(pagesBefore) != len(want.Pages) || len(checksBefore) == 0 || len(checksBefore) >= len(want.Checks) {
					t.Errorf("killed with %d of %d checks stored: not during the checks", len(checksBefore), len(want.Checks))
				}
			}
			s.resetCounts()

			if tt.stage == "report" {
				// The run was complete before the report: nothing to resume,
				// the database is final (linkrot report rebuilds reports).
				if code, _, stderr := run(t, "", "audit", "--resume", "--db", db); code != exitUsage || !strings.Contains(stderr, "no interrupted run") {
					t.Errorf("resume of a complete run: exit %d, %s", code, stderr)
				}
			} else {
				code, stdout, stderr := run(t, "", "audit", "--resume", "--db", db, "--no-report", "--fail-on", "none")
				if code != exitOK || !strings.Contains(stdout, "Resuming run 1") {
					t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
			}
			diffState(t, s.normalize(readState(t, db)), want)

			crawled, checked := s.counts()
			for _, u := range pagesBefore {
				if n := crawled[pathOf(u)]; n > 0 {
					t.Errorf("page %s was stored before the kill and crawled again (%d times)", pathOf(u), n)
				}
			}
			for _, u := range checksBefore {
				if n := checked[pathOf(u)]; n > 0 && strings.HasPrefix(u, s.ext.URL) {
					t.Errorf("target %s was checked before the kill and fetched again (%d times)", u, n)
				}
			}
		})
	}
}

// TestAudit_ConcurrentRuns runs two linkrot processes on one database. The
// second refuses, naming the first; with --wait it waits, then runs. The
// runs do not interleave and the database stays sound.
func TestAudit_ConcurrentRuns(t *testing.T) {
	s := newCronSite(t)
	db := filepath.Join(t.TempDir(), "linkrot.db")
	s.setTrap("/p5")
	first := startChild(t, "", s.auditArgs(db, false)...)
	select {
	case <-s.reached:
	case <-first.done:
		t.Fatalf("first linkrot exited (%d):\n%s", first.code, first.errText())
	case <-time.After(60 * time.Second):
		t.Fatal("first linkrot did not reach /p5")
	}

	// Refused, with the holder named.
	code, _, stderr := run(t, "", s.auditArgs(db, false)...)
	if code != exitLocked {
		t.Fatalf("second audit: exit %d, want %d\n%s", code, exitLocked, stderr)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", first.cmd.Process.Pid), "in use", "audit", "run 1", "--wait"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("refusal %q does not mention %q", stderr, want)
		}
	}
	// Readers are not blocked meanwhile.
	if code, out, stderr := run(t, "", "runs", "--db", db); code != 0 || !strings.Contains(out, "in use by linkrot pid") {
		t.Errorf("runs during a run: exit %d\n%s%s", code, out, stderr)
	}

	// A second process with --wait waits for the first.
	second := startChild(t, "", append(s.auditArgs(db, false), "--wait")...)
	second.waitLine(t, "waiting for another linkrot")
	close(s.release)
	if code := first.wait(t); code != exitOK {
		t.Errorf("first audit: exit %d\n%s", code, first.errText())
	}
	if code := second.wait(t); code != exitOK {
		t.Errorf("waiting audit: exit %d\n%s", code, second.errText())
	}

	ctx := context.Background()
	store := openDB(t, db)
	r1, err := store.Run(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := store.Run(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Status != audit.RunComplete || r2.Status != audit.RunComplete {
		t.Errorf("statuses %s and %s", r1.Status, r2.Status)
	}
	if r2.StartedAt.Before(r1.FinishedAt) {
		t.Errorf("the runs overlap: run 2 started %v, run 1 finished %v", r2.StartedAt, r1.FinishedAt)
	}
	for _, r := range []*audit.Run{r1, r2} {
		st, err := store.RunStats(ctx, r.ID)
		if err != nil || st.Pages != cronPages-1 {
			t.Errorf("run %d: %+v, %v", r.ID, st, err)
		}
	}
	if err := store.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestAudit_ResumeFromConfig kills a run started from a configuration file
// that says resume = true: the next scheduled run (same file) continues it
// instead of starting another, while a run with other settings starts anew.
func TestAudit_ResumeFromConfig(t *testing.T) {
	s := newCronSite(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "linkrot.db")
	cfg := filepath.Join(dir, "linkrot.toml")
	writeFile(t, cfg, fmt.Sprintf(`url = %q
db = "linkrot.db"
resume = true
no-archives = true
no-report = true
per-host = 1
retries = 0
fail-on = "none"
`, s.site.URL+"/"))
	s.setTrap("/p6")
	c := startChild(t, "", "audit", "--config", cfg)
	<-s.reached
	time.Sleep(600 * time.Millisecond)
	c.kill(t)
	close(s.release)

	// Other settings: a new run, the interrupted one left alone.
	code, stdout, stderr := run(t, "", "audit", "--config", cfg, "--max-depth", "1")
	if code != exitOK || strings.Contains(stdout, "Resuming") {
		t.Fatalf("audit with other settings: exit %d\n%s%s", code, stdout, stderr)
	}
	// The same file: run 1 is resumed.
	code, stdout, stderr = run(t, "", "audit", "--config", cfg)
	if code != exitOK || !strings.Contains(stdout, "Resuming run 1") {
		t.Fatalf("scheduled audit: exit %d\n%s%s", code, stdout, stderr)
	}
	store := openDB(t, db)
	sums, err := store.RunSummaries(context.Background(), 0)
	if err != nil || len(sums) != 2 {
		t.Fatalf("runs = %+v, %v", sums, err)
	}
	for _, r := range sums {
		if r.Status != audit.RunComplete {
			t.Errorf("run %d is %s", r.ID, r.Status)
		}
	}
	if sums[1].ID != 1 || sums[1].Pages != cronPages-1 || sums[0].Pages != 3 {
		t.Errorf("runs = %+v", sums)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
