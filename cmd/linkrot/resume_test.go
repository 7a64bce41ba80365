package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// cronSite is a loopback site for the kill and lock tests: 16 pages in a
// binary tree (/p1 links to /p2 and /p3, ...), each linking to targets on
// a second host that only the checking stage fetches (ok, 404, 410 and a
// permanent redirect), and a fixture web archive (archivetest) holding
// mementos of some targets, so that the archives stage finds snapshots,
// mementos, drift and suggestions, and sends Save Page Now requests for
// the live targets it holds nothing of (one of which never leaves
// "pending"). Even targets carry Robust Links attributes. The archive is
// reached through a front server that can trap requests and records the
// URLs sent to Save Page Now; the archive itself logs every request. A
// trap on any path blocks the first request to it until released, and
// tells the test it was reached.
type cronSite struct {
	site, ext *httptest.Server
	archive   *httptest.Server     // the front of arch: TimeGates, TimeMaps, Save Page Now
	arch      *archivetest.Archive // snapshots and mementos are fetched from it directly

	mu      sync.Mutex
	trap    string        // path ("/p9", "/t7", "/web/http", "/save/status/...") whose first request blocks
	reached chan struct{} // closed when the trap is reached
	release chan struct{} // close to let the trapped request go on
	stall   string        // with trap: a path whose requests block until release too
	crawled map[string]int
	checked map[string]int
	saved   []string       // URLs sent to Save Page Now, in order
	auth    map[string]int // Authorization headers received by the site and ext
}

const cronPages = 16

// cronOldMemento is when the archive captured the targets that declare a
// version date; cronRecentMemento, shared by every fixture of the test
// process so that reference and resumed runs see the same archive, is a
// capture near the time the runs first see their targets.
var (
	cronOldMemento    = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	cronRecentMemento = time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Hour)
)

// isTargetPath reports whether p is exactly /tN, so that the soft-404
// probes (random paths) get a 404.
func isTargetPath(p string) bool {
	var n int
	_, err := fmt.Sscanf(p, "/t%d", &n)
	return err == nil && p == fmt.Sprintf("/t%d", n)
}

func targetPage(p string) string {
	return fmt.Sprintf("<!doctype html><title>%s</title><p>Target %s, a page with enough words to be a page.</p>", p, p)
}

func newCronSite(t *testing.T) *cronSite {
	t.Helper()
	s := &cronSite{crawled: map[string]int{}, checked: map[string]int{}, auth: map[string]int{}}
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
		case isTargetPath(p), p == "/pending-forever":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, targetPage(p))
		default:
			http.NotFound(w, r)
		}
	}))
	s.arch = archivetest.New(t, archivetest.Options{})
	s.archive = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if q, err := url.ParseQuery(string(body)); err == nil && q.Get("url") != "" {
				s.mu.Lock()
				s.saved = append(s.saved, q.Get("url"))
				s.mu.Unlock()
			}
		}
		s.wait(r)
		s.arch.Server.Config.Handler.ServeHTTP(w, r)
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
		if n == 1 {
			fmt.Fprintf(w, `<a href="%s/pending-forever">an archive never captures this</a> `, s.ext.URL)
		}
		for _, c := range []int{2 * n, 2*n + 1} {
			if c < cronPages {
				fmt.Fprintf(w, `<a href="/p%d">page %d</a> `, c, c)
			}
		}
		robust := ""
		if n%2 == 0 {
			robust = fmt.Sprintf(` data-versiondate="2024-01-01" data-versionurl="%s"`, s.arch.URLOf(fmt.Sprintf("%s/t%d", s.ext.URL, n), cronOldMemento, ""))
		}
		fmt.Fprintf(w, `<a href="%s/t%d"%s>target %d</a> <a href="%s/gone">gone</a> <a href="%s/missing%d">missing</a> `,
			s.ext.URL, n, robust, n, s.ext.URL, s.ext.URL, n%3)
		if n%4 == 0 {
			fmt.Fprintf(w, `<a href="%s/moved">moved</a> <a href="/p%d#top">self</a>`, s.ext.URL, n)
		}
		fmt.Fprint(w, "</body>")
	}))
	// Mementos: the even targets (which declare them) in 2024, unchanged
	// since for every fourth, and a day and a half later (a datetime
	// mismatch) with other words for the others but /t6, whose declared
	// snapshot is missing; recent ones of every third odd target; the dead
	// /gone. The other live targets have none: --save-missing asks the
	// archive to capture them.
	for n := 1; n < cronPages; n++ {
		u := fmt.Sprintf("%s/t%d", s.ext.URL, n)
		switch {
		case n%4 == 0:
			s.arch.Add(archivetest.Memento{Original: u, Time: cronOldMemento, Body: targetPage(fmt.Sprintf("/t%d", n))})
		case n%2 == 0 && n%3 != 0:
			s.arch.Add(archivetest.Memento{Original: u, Time: cronOldMemento.Add(36 * time.Hour),
				Body: "<!doctype html><title>Other</title><p>Completely different words about lighthouses, ships, rocky coasts and foghorns at night.</p>"})
		case n%3 == 0 && n%2 == 1:
			s.arch.Add(archivetest.Memento{Original: u, Time: cronRecentMemento, Body: targetPage(fmt.Sprintf("/t%d", n))})
		}
	}
	s.arch.Add(archivetest.Memento{Original: s.ext.URL + "/gone", Time: cronOldMemento, Body: "<!doctype html><p>It was there.</p>"})
	t.Cleanup(s.site.Close)
	t.Cleanup(s.ext.Close)
	t.Cleanup(s.archive.Close)
	return s
}

// authCount returns how many requests carried the Authorization header a.
func (s *cronSite) authCount(a string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth[a]
}

// savedURLs returns the URLs sent to Save Page Now so far.
func (s *cronSite) savedURLs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.saved)
}

// count records a request: the checker sends Accept-Language, Colly does not.
func (s *cronSite) count(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := r.Header.Get("Authorization"); a != "" {
		s.auth[a]++
	}
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
	stall := s.stall != "" && r.URL.Path == s.stall
	if stall {
		release = s.release
	}
	s.mu.Unlock()
	if stall {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return
	}
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
	s.crawled, s.checked, s.saved, s.auth = map[string]int{}, map[string]int{}, nil, map[string]int{}
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
	args := []string{"audit", s.site.URL + "/", "--db", db, "--allow-private", "--per-host", "1", "--timeout", "5s",
		"--retries", "0", "--no-report", "--fail-on", "none"}
	if archives {
		a := s.archive.URL
		return append(args, "--archive", fmt.Sprintf("fx=%s/web/,timemap=%s/timemap/link/,rate=60000/min,save=%s/save,save-rate=60000/min", a, a, a),
			"--fetch-rate", "60000/min", "--save-missing", "--save-poll-interval", "5ms")
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
	// What the archives stage found, with the columns that do not depend
	// on when the run saw its targets.
	Snapshots   []string
	Mementos    []string
	Drifts      []string
	Suggestions []string
	Saves       []string
}

func readState(t *testing.T, path string) dbState {
	t.Helper()
	ctx := context.Background()
	db, err := engines.Open(ctx, path)
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
		archiveState(t, db, id, &st)
	}
	for _, l := range [][]string{st.Pages, st.Links, st.Checks, st.Findings, st.Maintenance, st.History,
		st.Snapshots, st.Mementos, st.Drifts, st.Suggestions, st.Saves} {
		slices.Sort(l)
	}
	return st
}

// archiveState adds the archives stage's rows of run id to st, links named
// by page and href, targets by URL.
func archiveState(t *testing.T, db *sqlstore.DB, id int64, st *dbState) {
	t.Helper()
	ctx := context.Background()
	refs, err := db.LinkRefs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	link := map[int64]string{}
	for _, r := range refs {
		link[r.LinkID] = r.PageURL + " -> " + r.Href
	}
	targets, err := db.Targets(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	target := map[int64]string{}
	for _, tg := range targets {
		target[tg.ID] = tg.URL
	}
	snaps, err := db.SnapshotChecks(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range snaps {
		st.Snapshots = append(st.Snapshots, fmt.Sprintf("%s|%s|%s|%s|%d|%v|%s|mismatch=%v", link[c.LinkID], c.Source, c.Declared,
			c.Verdict, c.Status, c.MementoDatetime.UTC(), c.Original, c.DatetimeMismatch))
	}
	ms, err := db.Mementos(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		st.Mementos = append(st.Mementos, fmt.Sprintf("%s|%s|%s|%s|%v|representative=%v|nearest=%v|%s", link[m.LinkID], m.Archive,
			m.WantedFrom, m.URL, m.Datetime.UTC(), m.Representative, m.Nearest, m.Error))
	}
	ds, err := db.Drifts(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		st.Drifts = append(st.Drifts, fmt.Sprintf("%s|%s|%s|%s|%s|words=%d/%d", link[d.LinkID], target[d.TargetID], d.Kind,
			d.ReferenceURL, d.Band, d.WordsReference, d.WordsLive))
	}
	sgs, err := db.Suggestions(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range sgs {
		st.Suggestions = append(st.Suggestions, fmt.Sprintf("%s|%s|%s|%s", link[g.LinkID], g.Reason, g.OriginalURL, g.VersionURL))
	}
	saves, err := db.SaveRequests(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range saves {
		st.Saves = append(st.Saves, fmt.Sprintf("%s|%s|%s", r.URL, r.Archive, r.Status))
	}
}

// normalize replaces the servers' addresses, which differ between the
// reference site and the killed one, by names.
func (s *cronSite) normalize(st dbState) dbState {
	r := strings.NewReplacer(s.site.URL, "SITE", s.ext.URL, "EXT", s.archive.URL, "ARCHIVE", s.arch.URL, "ARCHIVE")
	for _, l := range []*[]string{&st.Runs, &st.Pages, &st.Links, &st.Checks, &st.Findings, &st.Maintenance, &st.History,
		&st.Snapshots, &st.Mementos, &st.Drifts, &st.Suggestions, &st.Saves} {
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
	cmp("snapshot checks", got.Snapshots, want.Snapshots)
	cmp("mementos", got.Mementos, want.Mementos)
	cmp("drifts", got.Drifts, want.Drifts)
	cmp("suggestions", got.Suggestions, want.Suggestions)
	cmp("save requests", got.Saves, want.Saves)
}

// committed returns the request URLs of the pages and the URLs of the
// checks a database holds.
func committed(t *testing.T, path string) (pages, checks []string) {
	t.Helper()
	ctx := context.Background()
	db, err := engines.Open(ctx, path)
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

// waitFor polls cond until it holds or 10 seconds passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(25 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// latestRunRows returns how many rows of the latest run query counts.
func latestRunRows(t *testing.T, path string, query func(*sqlstore.DB, int64) (int, error)) int {
	t.Helper()
	ctx := context.Background()
	db, err := engines.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.LatestRun(ctx)
	if err != nil {
		return 0
	}
	n, err := query(db, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func snapshotRows(db *sqlstore.DB, id int64) (int, error) {
	s, err := db.SnapshotChecks(context.Background(), id)
	return len(s), err
}

func mementoRows(db *sqlstore.DB, id int64) (int, error) {
	s, err := db.Mementos(context.Background(), id)
	return len(s), err
}

func saveRows(db *sqlstore.DB, id int64) (int, error) {
	s, err := db.SaveRequests(context.Background(), id)
	return len(s), err
}

// TestAudit_KillAndResume kills linkrot audit with SIGKILL at several points
// of a real run against a loopback site and a fixture archive: during the
// crawl, during the checks, during archive lookups, while Save Page Now
// requests are under way, between stages (before history, before the
// report) and inside the report writer (written, not yet in place).
// linkrot audit --resume then finishes the run, and the database must
// equal the one an uninterrupted run produces: same pages, links,
// verdicts, findings, histories, snapshot checks, mementos, drift,
// suggestions and save requests, nothing twice; no page or target stored
// before the kill is fetched again, no archive request is sent again once
// the archives stage is done, no recorded save request is sent again, and
// the report is there at the end.
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
	has := func(rows []string, sub string) bool {
		return slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, sub) })
	}
	if len(want.Snapshots) < 4 || !has(want.Snapshots, "snapshot-ok") || !has(want.Snapshots, "snapshot-missing") ||
		!has(want.Mementos, "representative=true") || !has(want.Drifts, "|unchanged|") || !has(want.Drifts, "|off-topic|") ||
		!has(want.Suggestions, "broken-with-memento") || !has(want.Suggestions, "no-robustness-data") ||
		!has(want.Saves, "pending-forever|fx|pending") || !has(want.Saves, "|success") {
		t.Fatalf("reference archives stage too small to test:\nsnapshots %q\nmementos %q\ndrifts %q\nsuggestions %q\nsaves %q",
			want.Snapshots, want.Mementos, want.Drifts, want.Suggestions, want.Saves)
	}

	tests := []struct {
		name   string
		trap   string   // a path whose request blocks; "" for a stage
		stall  string   // with trap, a path of the external site whose requests block too
		stage  string   // a stage (or point, see stageHook) at which the process stops
		extra  []string // more flags
		report bool     // write the report
		// What the kill waits for, after the trap is reached.
		stored func(t *testing.T, db string) bool
	}{
		{name: "DuringCrawl", trap: "/p6", stored: func(t *testing.T, db string) bool { p, _ := committed(t, db); return len(p) > 0 }},
		// The run streams: while the crawl waits for /p6, the targets it
		// has discovered are checked and stored. Killed then, the run has
		// part of its pages and part of its checks.
		{name: "DuringCrawlWithChecks", trap: "/p6", stored: func(t *testing.T, db string) bool {
			p, c := committed(t, db)
			return len(p) > 0 && len(c) > 0
		}},
		{name: "DuringChecks", trap: "/t14", stored: func(t *testing.T, db string) bool { _, c := committed(t, db); return len(c) > 0 }},
		// The archives stage streams: the first TimeGate request (the
		// lookup of a broken target) is under way while /t14 is still
		// being checked. Killed then, the run has part of its checks and
		// no archive results; the resumed run finishes both.
		{name: "DuringStreamedLookups", trap: "/web/http", stall: "/t14", stored: func(t *testing.T, db string) bool {
			_, c := committed(t, db)
			return len(c) > 0
		}},
		{name: "DuringArchiveLookups", trap: "/web/http", stored: func(t *testing.T, db string) bool { return latestRunRows(t, db, snapshotRows) > 0 }},
		// One archive worker: the save requests go one by one, the first
		// (pending-forever, polled 6 times) is recorded while the second
		// hangs.
		{name: "DuringSaveRequests", trap: "/save/status/spn2-0002", extra: []string{"--archive-workers", "1"},
			stored: func(t *testing.T, db string) bool { return latestRunRows(t, db, saveRows) > 0 }},
		{name: "BeforeChecks", stage: "check"},
		{name: "BeforeHistory", stage: "history"},
		{name: "BeforeReport", stage: "report", report: true},
		{name: "DuringReport", stage: "report-written", report: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each has its own servers and database
			s := newCronSite(t)
			db := filepath.Join(t.TempDir(), "linkrot.db")
			reportDir := filepath.Join(t.TempDir(), "report")
			args := append(s.auditArgs(db, true), tt.extra...)
			resumeArgs := []string{"audit", "--resume", "--db", db, "--no-report", "--fail-on", "none"}
			if tt.report {
				args = append(slices.DeleteFunc(args, func(a string) bool { return a == "--no-report" }), "--report", reportDir)
				resumeArgs = []string{"audit", "--resume", "--db", db, "--report", reportDir, "--fail-on", "none"}
			}
			if tt.trap != "" {
				s.setTrap(tt.trap)
				s.mu.Lock()
				s.stall = tt.stall
				s.mu.Unlock()
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
				waitFor(t, "results stored before the trap", func() bool { return tt.stored(t, db) })
				time.Sleep(200 * time.Millisecond)
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
			case "DuringCrawlWithChecks":
				if len(pagesBefore) == 0 || len(pagesBefore) >= len(want.Pages) || len(checksBefore) == 0 || len(checksBefore) >= len(want.Checks) {
					t.Errorf("killed with %d of %d pages and %d of %d checks stored: not while crawling and checking",
						len(pagesBefore), len(want.Pages), len(checksBefore), len(want.Checks))
				}
			case "DuringChecks":
				if len(pagesBefore) != len(want.Pages) || len(checksBefore) == 0 || len(checksBefore) >= len(want.Checks) {
					t.Errorf("killed with %d of %d checks stored: not during the checks", len(checksBefore), len(want.Checks))
				}
			case "DuringStreamedLookups":
				if len(checksBefore) == 0 || len(checksBefore) >= len(want.Checks) {
					t.Errorf("killed with %d of %d checks stored: not during the checks", len(checksBefore), len(want.Checks))
				}
				if slices.Contains(checksBefore, s.ext.URL+"/t14") {
					t.Errorf("the stalled check of /t14 was stored before the kill")
				}
				if n := latestRunRows(t, db, snapshotRows) + latestRunRows(t, db, mementoRows); n != 0 {
					t.Errorf("%d archive results stored before the checks were done", n)
				}
			case "DuringReport":
				if _, err := os.Stat(filepath.Join(reportDir, "index.html")); err == nil {
					t.Errorf("the report was in place before the kill")
				}
			}
			savedBefore := s.savedURLs()
			archiveRequests := len(s.arch.Requests())
			s.resetCounts()

			code, stdout, stderr := run(t, "", resumeArgs...)
			resumed := "Resuming run 1"
			if tt.report {
				resumed = "Run 1 is complete but its report was not written"
			}
			if code != exitOK || !strings.Contains(stdout, resumed) {
				t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
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
			switch tt.name {
			case "BeforeHistory", "BeforeReport", "DuringReport":
				// The archives stage was done: not one request again.
				if n := len(s.arch.Requests()) - archiveRequests; n != 0 {
					t.Errorf("%d archive requests after the archives stage was done: %v", n, s.arch.Requests()[archiveRequests:])
				}
			case "DuringSaveRequests":
				if len(savedBefore) < 2 || !strings.HasSuffix(savedBefore[0], "/pending-forever") {
					t.Fatalf("saves before the kill: %q", savedBefore)
				}
				if again := s.savedURLs(); slices.Contains(again, savedBefore[0]) {
					t.Errorf("%s was sent to Save Page Now again after the resume: %q", savedBefore[0], again)
				}
			}
			if tt.report {
				if _, err := os.Stat(filepath.Join(reportDir, "index.html")); err != nil {
					t.Errorf("no report after the resume: %v", err)
				}
				if left, _ := filepath.Glob(filepath.Join(reportDir, ".linkrot-partial-*")); len(left) > 0 {
					t.Errorf("partial reports left: %q", left)
				}
				// Nothing is left to resume.
				if code, _, stderr := run(t, "", resumeArgs...); code != exitUsage || !strings.Contains(stderr, "no interrupted run") {
					t.Errorf("second resume: exit %d\n%s", code, stderr)
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
	killDuringCrawl(t, s, db, "audit", "--config", cfg)

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

// killDuringCrawl starts linkrot with args, waits until its crawl is
// blocked on /p6 with some pages stored in db, and kills it.
func killDuringCrawl(t *testing.T, s *cronSite, db string, args ...string) {
	t.Helper()
	s.setTrap("/p6")
	c := startChild(t, "", args...)
	select {
	case <-s.reached:
	case <-c.done:
		t.Fatalf("linkrot exited (%d) before the crawl reached /p6:\n%s", c.code, c.errText())
	case <-time.After(60 * time.Second):
		t.Fatalf("the crawl did not reach /p6; stderr:\n%s", c.errText())
	}
	waitFor(t, "pages stored", func() bool { p, _ := committed(t, db); return len(p) > 0 })
	c.kill(t)
	close(s.release)
}

// TestAudit_ResumeStale: --resume does not pick up an interrupted run that
// a newer complete run of the same settings made stale, nor one older than
// --resume-max-age: it abandons it (linkrot runs says so) and starts a new
// run.
func TestAudit_ResumeStale(t *testing.T) {
	ctx := context.Background()
	s := newCronSite(t)
	db := filepath.Join(t.TempDir(), "linkrot.db")
	args := s.auditArgs(db, false)

	killDuringCrawl(t, s, db, args...) // run 1
	if code, _, stderr := run(t, "", args...); code != exitOK {
		t.Fatalf("run 2: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "", "audit", "--resume", "--db", db, "--no-report", "--fail-on", "none")
	if code != exitOK || strings.Contains(stdout, "Resuming") ||
		!strings.Contains(stdout, "Not resuming run 1: run 2 of the same settings completed since. It is abandoned.") {
		t.Fatalf("resume after a newer complete run: exit %d\n%s%s", code, stdout, stderr)
	}
	store := openDB(t, db)
	sums, err := store.RunSummaries(ctx, 0)
	if err != nil || len(sums) != 3 {
		t.Fatalf("runs = %+v, %v", sums, err)
	}
	if r := sums[0]; r.ID != 3 || r.Status != audit.RunComplete || r.Pages != cronPages-1 {
		t.Errorf("run 3 = %+v", r)
	}
	if r := sums[2]; r.ID != 1 || !r.Abandoned || r.Status != audit.RunRunning {
		t.Errorf("run 1 = %+v, want abandoned", r)
	}
	code, out, _ := run(t, "", "runs", "--db", db)
	if code != 0 || strings.Count(out, "abandoned") != 1 || strings.Contains(out, "dead") {
		t.Errorf("runs:\n%s", out)
	}

	// Too old: run 4 is killed, and a resume allowing only a millisecond
	// of age abandons it too and starts run 5; with the URL given, the
	// same.
	killDuringCrawl(t, s, db, args...)
	code, stdout, stderr = run(t, "", append(args, "--resume", "--resume-max-age", "1ms")...)
	if code != exitOK || !strings.Contains(stdout, "Not resuming run 4: it started more than 1ms ago (--resume-max-age)") {
		t.Fatalf("resume of an old run: exit %d\n%s%s", code, stdout, stderr)
	}
	if r, err := store.LatestRun(ctx); err != nil || r.ID != 5 || r.Status != audit.RunComplete {
		t.Errorf("latest run = %+v, %v", r, err)
	}
	if code, _, stderr := run(t, "", "audit", "--resume", "--db", db); code != exitUsage || !strings.Contains(stderr, "no interrupted run") {
		t.Errorf("resume with only abandoned runs left: exit %d %s", code, stderr)
	}
}

// TestAudit_SecretHeaders: the value of a [[host]] header (a token) is
// sent but never stored: not in the database file, not in its WAL. A run
// that sent it resumes only when the configuration file gives the same
// value again; without the file it is a usage error naming the header.
func TestAudit_SecretHeaders(t *testing.T) {
	const token = "Bearer s3cr3t-T0KEN-4f9a"
	s := newCronSite(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "linkrot.db")
	settings := func(token string) string {
		return fmt.Sprintf(`db = "linkrot.db"
no-archives = true
no-report = true
per-host = 1
retries = 0
fail-on = "none"

[[host]]
match = "127.0.0.1"
headers = { Authorization = %q }
`, token)
	}
	cfg := filepath.Join(dir, "linkrot.toml")
	writeFile(t, cfg, fmt.Sprintf("url = %q\n", s.site.URL+"/")+settings(token))
	noURL := filepath.Join(dir, "resume.toml") // the same, without url: resume the stored input
	writeFile(t, noURL, settings(token))
	other := filepath.Join(dir, "other.toml")
	writeFile(t, other, settings("Bearer another-token"))

	killDuringCrawl(t, s, db, "audit", "--config", cfg)
	if s.authCount(token) == 0 {
		t.Fatal("the header was not sent")
	}
	noSecret := func() {
		t.Helper()
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			b, err := os.ReadFile(db + suffix)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("s3cr3t")) {
				t.Errorf("%s holds the token", filepath.Base(db+suffix))
			}
		}
	}
	noSecret()

	code, _, stderr := run(t, "", "audit", "--resume", "--db", db)
	if code != exitUsage || !strings.Contains(stderr, "Authorization") || !strings.Contains(stderr, "--config") {
		t.Errorf("resume without the header values: exit %d\n%s", code, stderr)
	}
	code, _, stderr = run(t, "", "audit", "--resume", "--config", other)
	if code != exitUsage || !strings.Contains(stderr, "other values") {
		t.Errorf("resume with other header values: exit %d\n%s", code, stderr)
	}
	s.resetCounts()
	code, stdout, stderr := run(t, "", "audit", "--resume", "--config", noURL)
	if code != exitOK || !strings.Contains(stdout, "Resuming run 1") {
		t.Fatalf("resume with the configuration file: exit %d\n%s%s", code, stdout, stderr)
	}
	if crawled, _ := s.counts(); len(crawled) == 0 || s.authCount(token) < len(crawled) {
		t.Errorf("the resumed crawl sent the header %d times for %d pages", s.authCount(token), len(crawled))
	}
	noSecret()
}

// TestCrawl_Resume: linkrot crawl stores its frontier like linkrot audit,
// so a killed crawl resumes with linkrot crawl --resume and no page is
// fetched twice.
func TestCrawl_Resume(t *testing.T) {
	s := newCronSite(t)
	db := filepath.Join(t.TempDir(), "linkrot.db")
	killDuringCrawl(t, s, db, "crawl", s.site.URL+"/", "--db", db, "--concurrency", "1")
	pagesBefore, _ := committed(t, db)
	if code, out, _ := run(t, "", "runs", "--db", db); code != 0 || !strings.Contains(out, "dead") {
		t.Errorf("runs with a killed crawl:\n%s", out)
	}
	s.resetCounts()
	code, stdout, stderr := run(t, "", "crawl", "--resume", "--db", db)
	if code != exitOK || !strings.Contains(stdout, "Resuming run 1") || !strings.Contains(stdout, fmt.Sprintf("Crawled %d pages", cronPages-1)) {
		t.Fatalf("crawl --resume: exit %d\n%s%s", code, stdout, stderr)
	}
	crawled, _ := s.counts()
	for _, u := range pagesBefore {
		if crawled[pathOf(u)] > 0 {
			t.Errorf("page %s crawled again", pathOf(u))
		}
	}
	store := openDB(t, db)
	sums, err := store.RunSummaries(context.Background(), 0)
	if err != nil || len(sums) != 1 || sums[0].Status != audit.RunComplete || sums[0].Pages != cronPages-1 {
		t.Errorf("runs = %+v, %v", sums, err)
	}
	// An audit does not resume a crawl.
	if code, _, stderr := run(t, "", "audit", "--resume", "--db", db); code != exitUsage {
		t.Errorf("audit --resume after a crawl: exit %d %s", code, stderr)
	}
}
