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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift"
	"github.com/linkrot/linkrot/internal/pgtest"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/study"
)

// studyWorldSize is the number of references of the end-to-end world:
// a few thousand, fewer under the race detector (whose instrumented
// checker is ten times slower) or with -short.
func studyWorldSize() int { return studySize(3000, 300) }

// studySize is n, or small under the race detector or with -short: the
// instrumented SQLite and checker are ten times slower, and the tests
// must stay within a minute.
func studySize(n, small int) int {
	if raceEnabled || testing.Short() {
		return small
	}
	return n
}

// studyThresholds are the drift thresholds linkrot study uses by default.
func studyThresholds() drift.Thresholds {
	th := drift.DefaultThresholds()
	th.Exact = true
	return th
}

// wilson95 is the Wilson score interval at 95%, written out from Wilson
// (1927) / Newcombe (1998) method 3 for the test.
func wilson95(k, n int) (float64, float64) {
	const z = 1.959963984540054
	p, nn := float64(k)/float64(n), float64(n)
	c := (p + z*z/(2*nn)) / (1 + z*z/nn)
	h := z / (1 + z*z/nn) * math.Sqrt(p*(1-p)/nn+z*z/(4*nn*nn))
	return c - h, c + h
}

// studyRun runs linkrot study in this process.
func studyRun(t *testing.T, refs string, args ...string) (int, string, string) {
	t.Helper()
	return run(t, "", append([]string{"study", refs}, args...)...)
}

// checkStudyRows asserts every row of references.csv (wave 1) against the
// world's truth, and returns the expected rows.
func checkStudyRows(t *testing.T, w *studyWorld, out string) []map[string]string {
	t.Helper()
	rows := readCSV(t, filepath.Join(out, "references.csv"))
	if len(rows) != len(w.refs) {
		t.Fatalf("references.csv has %d rows, want %d (one per reference)", len(rows), len(w.refs))
	}
	th := studyThresholds()
	var want []map[string]string
	bad := 0
	for i, r := range w.refs {
		exp := w.expectRow(r, 7*24*time.Hour, th)
		want = append(want, exp)
		for k, v := range exp {
			if rows[i][k] != v {
				bad++
				if bad <= 20 {
					t.Errorf("reference %d (%s, %s) %s = %q, want %q", i, w.byURL[r.url].kind, r.url, k, rows[i][k], v)
				}
			}
		}
	}
	if bad > 20 {
		t.Errorf("%d wrong cells in all", bad)
	}
	return want
}

// checkStudySummary asserts summary.csv's overall, year and group rows of
// wave 1 against shares counted from the expected rows, with Wilson
// intervals computed here.
func checkStudySummary(t *testing.T, w *studyWorld, want []map[string]string, out string) {
	t.Helper()
	type share struct{ k, n int }
	type scope struct {
		n                        int
		rot, drift, refRot, repr share
	}
	scopes := map[string]*scope{}
	add := func(key string, r map[string]string) {
		s := scopes[key]
		if s == nil {
			s = &scope{}
			scopes[key] = s
		}
		s.n++
		if r["broken"] != "" {
			s.rot.n++
			if r["broken"] == "true" {
				s.rot.k++
			}
		}
		if r["broken"] == "false" && r["drift"] != "unmeasured" {
			s.drift.n++
			if r["drift"] == audit.BandMajor || r["drift"] == audit.BandOffTopic {
				s.drift.k++
			}
		}
		if r["reference_rot"] != "" {
			s.refRot.n++
			if r["reference_rot"] == "true" {
				s.refRot.k++
			}
		}
		s.repr.n++
		if r["representative"] == "true" {
			s.repr.k++
		}
	}
	for i, r := range want {
		add("overall/", r)
		add("year/"+strconv.Itoa(w.refs[i].citedFrom.Year()), r)
		add("group/"+w.refs[i].group, r)
	}
	got := readCSV(t, filepath.Join(out, "summary.csv"))
	seen := 0
	for _, g := range got {
		if g["wave"] != "1" {
			continue
		}
		key := g["scope"] + "/" + g["key"]
		s := scopes[key]
		if s == nil {
			t.Errorf("summary.csv has a row %s the truth has not", key)
			continue
		}
		seen++
		if g["n"] != strconv.Itoa(s.n) {
			t.Errorf("%s: n = %s, want %d", key, g["n"], s.n)
		}
		for name, sh := range map[string]share{"rot": s.rot, "drift": s.drift, "reference_rot": s.refRot, "representative": s.repr} {
			if g[name+"_k"] != strconv.Itoa(sh.k) || g[name+"_n"] != strconv.Itoa(sh.n) {
				t.Errorf("%s %s: %s/%s, want %d/%d", key, name, g[name+"_k"], g[name+"_n"], sh.k, sh.n)
				continue
			}
			if sh.n == 0 {
				if g[name] != "" || g[name+"_lo"] != "" {
					t.Errorf("%s %s: a share of nothing is written %q [%q]", key, name, g[name], g[name+"_lo"])
				}
				continue
			}
			lo, hi := wilson95(sh.k, sh.n)
			for col, v := range map[string]float64{name: float64(sh.k) / float64(sh.n), name + "_lo": lo, name + "_hi": hi} {
				f, err := strconv.ParseFloat(g[col], 64)
				if err != nil || math.Abs(f-v) > 1e-6 {
					t.Errorf("%s %s = %q, want %.6f", key, col, g[col], v)
				}
			}
		}
		if g["new_rot_n"] != "0" {
			t.Errorf("%s: new_rot in wave 1: %s", key, g["new_rot_n"])
		}
	}
	if seen != len(scopes) {
		t.Errorf("summary.csv has %d rows of wave 1, the truth %d scopes", seen, len(scopes))
	}
}

// requestsOf returns every server's completed requests by path.
func (w *studyWorld) requests() map[string]int {
	out := map[string]int{}
	for name, s := range map[string]*countingServer{"web": w.web, "soft": w.soft, "parked": w.parked} {
		for k, v := range s.snapshot() {
			out[name+" "+k] = v
		}
	}
	for _, r := range w.arch.Requests() {
		out["archive "+r.Method+" "+r.Path]++
	}
	return out
}

func (w *studyWorld) resetCounts() {
	w.web.reset()
	w.soft.reset()
	w.parked.reset()
}

// TestStudy_EndToEnd runs linkrot study over HTTP on a loopback world of a
// few thousand references with known truth (live, 404, 410, soft-404,
// parked and drifted targets; an archive whose mementos sit inside the
// window, outside it, or nowhere; three malformed rows) and checks every
// row of references.csv, every share of summary.csv with its Wilson
// interval, the malformed rows on stderr and in study.json, that each
// distinct URL was checked and its TimeMap asked exactly once although
// every URL is cited twice, and index.html.
func TestStudy_EndToEnd(t *testing.T) {
	start := time.Now()
	w := newStudyWorld(t, studyWorldSize())
	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.csv")
	w.writeCSV(t, refs, true)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := studyRun(t, refs, w.args(filepath.Join(dir, "study.db"), out)...)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("%d references in %s\n%s", len(w.refs), time.Since(start).Round(time.Millisecond), stdout)
	n := len(w.refs)
	if want := fmt.Sprintf("%s references (%s distinct URLs) in refs.csv, 3 malformed rows skipped.", thousands(n), thousands(n/2)); !strings.Contains(stdout, want) {
		t.Errorf("stdout does not say %q:\n%s", want, stdout)
	}
	for _, line := range []string{"refs.csv:6: url is missing (skipped)", "refs.csv:7: url \"ftp://example.org/x\" is not an absolute http(s) URL", "refs.csv:8: cited_at: date \"the day before\""} {
		if !strings.Contains(stderr, line) {
			t.Errorf("stderr does not report the malformed row %q:\n%s", line, stderr)
		}
	}
	want := checkStudyRows(t, w, out)
	checkStudySummary(t, w, want, out)
	// Every kind of truth is in the world and in the rows.
	verdicts := map[string]int{}
	for _, r := range want {
		verdicts[r["live_verdict"]+"/"+r["drift"]+"/"+r["representative"]]++
	}
	for _, k := range []string{"ok/unchanged/true", "ok/off-topic/true", "ok/unmeasured/false", "not-found/unmeasured/true", "gone/unmeasured/false", "soft-404/unmeasured/true", "parked/unmeasured/true"} {
		if verdicts[k] == 0 {
			t.Errorf("the world has no reference %s: %v", k, verdicts)
		}
	}
	// study.json counts the malformed rows with their lines.
	var meta struct {
		Counts    map[string]int `json:"counts"`
		Malformed []struct {
			Line int `json:"line"`
		} `json:"malformed_rows"`
		Archives   []string `json:"archives"`
		WindowDays float64  `json:"window_days"`
		Waves      []struct {
			Number int `json:"number"`
			URLs   int `json:"urls_with_results"`
		} `json:"waves"`
	}
	b, err := os.ReadFile(filepath.Join(out, "study.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Counts["malformed"] != 3 || len(meta.Malformed) != 3 || meta.Malformed[0].Line != 6 || meta.Counts["references"] != n ||
		meta.Counts["distinct_urls"] != n/2 || !slices.Equal(meta.Archives, []string{"fx"}) || meta.WindowDays != 7 ||
		len(meta.Waves) != 1 || meta.Waves[0].URLs != n/2 {
		t.Errorf("study.json: %s", b)
	}
	// One check per distinct URL, one TimeMap per distinct URL, although
	// every URL is cited twice; a live page fetched again only to measure
	// drift, and each representative memento fetched once for it.
	checkStudyRequests(t, w, want, w.requests())
	html, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil || !strings.Contains(string(html), "<svg") || !strings.Contains(string(html), "PLOS ONE") {
		t.Errorf("index.html without its charts or groups (err %v)", err)
	}
}

// checkStudyRequests asserts the requests a complete study of the world
// made, by path: what must have been asked once was asked once.
func checkStudyRequests(t *testing.T, w *studyWorld, want []map[string]string, reqs map[string]int) {
	checkStudyRequestsProbes(t, w, want, reqs, 10)
}

// checkStudyRequestsProbes is checkStudyRequests with at most maxProbes
// soft-404 probes (a few per host in one process; the scale-out mode's
// workers probe per check unit).
func checkStudyRequestsProbes(t *testing.T, w *studyWorld, want []map[string]string, reqs map[string]int, maxProbes int) {
	t.Helper()
	measured := map[string]bool{}
	for i, r := range want {
		if r["drift"] != "unmeasured" {
			measured[w.refs[i].url] = true
		}
	}
	wantReqs := map[string]int{}
	for u, tr := range w.byURL {
		key := strings.TrimPrefix(u, "http://")
		path := key[strings.Index(key, "/"):]
		srv := map[string]string{"soft": "soft", "parked": "parked"}[tr.kind]
		if srv == "" {
			srv = "web"
		}
		wantReqs[srv+" GET "+path] = 1
		wantReqs["archive GET /timemap/link/"+u] = 1
		if measured[u] {
			wantReqs[srv+" GET "+path]++
		}
	}
	probes, mementos := 0, 0
	for k, n := range reqs {
		switch {
		case strings.HasPrefix(k, "archive GET /web/"):
			mementos += n
			if n != 1 {
				t.Errorf("%s: %d requests, want 1", k, n)
			}
			continue
		case wantReqs[k] == 0:
			probes += n // soft-404 probes: random paths
			continue
		}
		if n != wantReqs[k] {
			t.Errorf("%s: %d requests, want %d", k, n, wantReqs[k])
		}
	}
	for k, n := range wantReqs {
		if reqs[k] == 0 {
			t.Errorf("%s: never requested, want %d", k, n)
		}
	}
	if mementos != len(measured) {
		t.Errorf("%d memento fetches, want one per URL whose drift was measured (%d)", mementos, len(measured))
	}
	if probes > maxProbes {
		t.Errorf("%d requests outside the study's URLs, want at most %d soft-404 probes", probes, maxProbes)
	}
}

func thousands(n int) string { return study.Thousands(n) }

// TestStudy_Formats studies the same references given as CSV, JSON Lines,
// BibTeX and CSL-JSON: references.csv and summary.csv are the same (but
// for checked_at, the time each run started).
func TestStudy_Formats(t *testing.T) {
	n := studySize(200, 60)
	w := newStudyWorld(t, n)
	dir := t.TempDir()
	var refFile, refSummary string
	for i, f := range []struct {
		name  string
		write func(*testing.T, string)
	}{
		{"refs.csv", func(t *testing.T, p string) { w.writeCSV(t, p, false) }},
		{"refs.jsonl", w.writeJSONL},
		{"refs.bib", w.writeBibTeX},
		{"refs.json", w.writeCSL},
	} {
		p := filepath.Join(dir, f.name)
		f.write(t, p)
		out := filepath.Join(dir, "out-"+f.name)
		code, stdout, stderr := studyRun(t, p, w.args(filepath.Join(dir, f.name+".db"), out)...)
		if code != exitOK || !strings.Contains(stdout, fmt.Sprintf("%d references (%d distinct URLs) in %s, 0 malformed rows skipped.", n, n/2, f.name)) {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", f.name, code, stdout, stderr)
		}
		refs := withoutColumn(t, filepath.Join(out, "references.csv"), "checked_at")
		sum, err := os.ReadFile(filepath.Join(out, "summary.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			refFile, refSummary = refs, string(sum)
			checkStudyRows(t, w, out)
			continue
		}
		if refs != refFile {
			t.Errorf("%s: references.csv differs from the CSV input's", f.name)
		}
		if string(sum) != refSummary {
			t.Errorf("%s: summary.csv differs from the CSV input's:\n%s\nwant:\n%s", f.name, sum, refSummary)
		}
	}
}

// TestStudy_DryRun prints what the archive budgets imply and makes no
// request: not to the cited hosts, not to the archive, and it writes no
// database or output.
func TestStudy_DryRun(t *testing.T) {
	w := newStudyWorld(t, 100)
	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.csv")
	w.writeCSV(t, refs, false)
	db, out := filepath.Join(dir, "study.db"), filepath.Join(dir, "out")
	code, stdout, stderr := studyRun(t, refs, append(w.args(db, out), "--dry-run")...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "100 references (50 distinct URLs) in refs.csv") || !strings.Contains(stdout, "50 lookups at ") {
		t.Errorf("no estimate:\n%s", stdout)
	}
	if n := len(w.requests()); n != 0 {
		t.Errorf("--dry-run made %d requests: %v", n, w.requests())
	}
	for _, p := range []string{db, out} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("--dry-run wrote %s", p)
		}
	}

	// The Internet Archive's TimeMap budget (24 a minute) at 50,000
	// distinct URLs: more than a day, with the advice.
	var b strings.Builder
	b.WriteString("url,cited_at\n")
	for i := range 50000 {
		fmt.Fprintf(&b, "https://example.org/p/%d,2015-01-01\n", i)
	}
	big := filepath.Join(dir, "big.csv")
	os.WriteFile(big, []byte(b.String()), 0o644)
	code, stdout, stderr = studyRun(t, big, "--dry-run", "--archive", "ia", "--db", db)
	want := "50,000 lookups at 24 a minute on the Internet Archive: 35 hours; use a local CDX/WARC collection with --archive-warc or add archives"
	if code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, want %q in:\n%s\n%s", code, want, stdout, stderr)
	}
}

// TestStudy_SecondWave studies the world, lets some live pages die, and
// studies the same list on the same database again: the outputs hold
// both waves, per reference and in the summary, with the new rot of
// wave 2.
func TestStudy_SecondWave(t *testing.T) {
	w := newStudyWorld(t, studySize(400, 100))
	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.csv")
	w.writeCSV(t, refs, false)
	db, out := filepath.Join(dir, "study.db"), filepath.Join(dir, "out")
	if code, stdout, stderr := studyRun(t, refs, w.args(db, out)...); code != exitOK {
		t.Fatalf("wave 1: exit %d\n%s\n%s", code, stdout, stderr)
	}
	wave1 := withoutColumn(t, filepath.Join(out, "references.csv"), "checked_at")
	died := w.kill()
	if len(died) == 0 {
		t.Fatal("no page died")
	}
	code, stdout, stderr := studyRun(t, refs, w.args(db, out)...)
	if code != exitOK || !strings.Contains(stdout, "(wave 2)") {
		t.Fatalf("wave 2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	rows := readCSV(t, filepath.Join(out, "references.csv"))
	if len(rows) != 2*len(w.refs) {
		t.Fatalf("%d rows, want 2 per reference (%d)", len(rows), 2*len(w.refs))
	}
	var w1 []map[string]string
	newRot := 0
	for i, r := range w.refs {
		a, b := rows[2*i], rows[2*i+1]
		if a["wave"] != "1" || b["wave"] != "2" || a["id"] != r.id || b["id"] != r.id {
			t.Fatalf("rows %d, %d: waves %s, %s of %s, %s; want 1 and 2 of %s", 2*i, 2*i+1, a["wave"], b["wave"], a["id"], b["id"], r.id)
		}
		w1 = append(w1, a)
		switch {
		case died[r.url]:
			newRot++
			if a["broken"] != "false" || b["broken"] != "true" || b["live_verdict"] != "not-found" || b["reference_rot"] != "true" {
				t.Errorf("%s died between the waves: wave 1 %v, wave 2 %v", r.url, a, b)
			}
		default:
			for _, col := range []string{"live_verdict", "broken", "memento_url", "representative", "drift", "reference_rot"} {
				if a[col] != b[col] {
					t.Errorf("%s: %s changed between the waves: %q -> %q", r.url, col, a[col], b[col])
				}
			}
		}
	}
	// Wave 1's rows are what they were.
	var b strings.Builder
	for _, r := range w1 {
		r["checked_at"] = ""
		js, _ := json.Marshal(r)
		b.Write(append(js, '\n'))
	}
	if b.String() != wave1 {
		t.Error("wave 1's rows changed when wave 2 was added")
	}
	sum := readCSV(t, filepath.Join(out, "summary.csv"))
	found := false
	for _, s := range sum {
		if s["wave"] == "2" && s["scope"] == "overall" {
			found = true
			if s["new_rot_k"] != strconv.Itoa(newRot) {
				t.Errorf("wave 2 new_rot_k = %s, want %d", s["new_rot_k"], newRot)
			}
		}
	}
	if !found {
		t.Error("summary.csv has no overall row of wave 2")
	}
	var meta struct {
		Waves []struct {
			Number int `json:"number"`
		} `json:"waves"`
	}
	js, _ := os.ReadFile(filepath.Join(out, "study.json"))
	if json.Unmarshal(js, &meta) != nil || len(meta.Waves) != 2 || meta.Waves[1].Number != 2 {
		t.Errorf("study.json waves: %s", js)
	}
}

// studyStored counts what the latest run of a study database holds: its
// checks and its memento rows.
func studyStored(t *testing.T, path string) (checks, mementos, drifts int) {
	t.Helper()
	ctx := context.Background()
	db, err := engines.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.LatestRun(ctx)
	if err != nil {
		return 0, 0, 0
	}
	cs, err := db.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := db.Mementos(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := db.Drifts(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	return len(cs), len(ms), len(ds)
}

// TestStudy_KillAndResume runs linkrot study as a child process, kills it
// with SIGKILL midway (while a check hangs, with every other check
// stored; while a drift fetch of the study's archives stage hangs, with
// every other URL's TimeMap answered and stored), and runs it again with
// the same list and database: the outputs equal an uninterrupted run's,
// and counted on the servers, no URL was checked twice and no TimeMap
// asked twice.
func TestStudy_KillAndResume(t *testing.T) {
	n := studySize(400, 100)
	ref := newStudyWorld(t, n)
	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.csv")
	ref.writeCSV(t, refs, true)
	refOut := filepath.Join(dir, "ref-out")
	if code, stdout, stderr := studyRun(t, refs, ref.args(filepath.Join(dir, "ref.db"), refOut)...); code != exitOK {
		t.Fatalf("uninterrupted study: exit %d\n%s\n%s", code, stdout, stderr)
	}
	wantRefs := withoutColumn(t, filepath.Join(refOut, "references.csv"), "checked_at")
	wantSum, err := os.ReadFile(filepath.Join(refOut, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]bool{}
	for _, r := range readCSV(t, filepath.Join(refOut, "references.csv")) {
		if r["drift"] != "unmeasured" {
			measured[r["url"]] = true
		}
	}
	tests := []struct {
		name      string
		tm        bool   // the trap is on the TimeMap server
		trap      string // a path whose request hangs
		trapAfter int    // requests of it let through first
		stored    func(checks, mementos, drifts int) bool
	}{
		// /gone/7 is checked once: the check hangs, the others are
		// stored.
		{name: "DuringChecks", trap: "/gone/7", stored: func(c, m, d int) bool { return c == n/2-1 && m == 0 }},
		// The TimeMap of /page/0 hangs; the other URLs' mementos (a row
		// per citation) are stored.
		{name: "DuringTimeMaps", tm: true, trap: "/timemap/link/{web}/page/0", stored: func(c, m, d int) bool { return c == n/2 && m == n-2 && d == 0 }},
		// /page/0 is fetched twice: checked, then fetched for drift. That
		// fetch hangs; every memento and the other drift measures are
		// stored.
		{name: "DuringDrift", trap: "/page/0", trapAfter: 1, stored: func(c, m, d int) bool { return c == n/2 && m == n && d == len(measured)-1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newStudyWorld(t, n)
			// The same references on this world's servers.
			dir := t.TempDir()
			refs := filepath.Join(dir, "refs.csv")
			w.writeCSV(t, refs, true)
			db, out := filepath.Join(dir, "study.db"), filepath.Join(dir, "out")
			srv := w.web
			if tt.tm {
				srv = w.tm
			}
			srv.mu.Lock()
			srv.trap, srv.trapAfter = strings.ReplaceAll(tt.trap, "{web}", w.web.URL), tt.trapAfter
			srv.mu.Unlock()
			c := startChild(t, "", append([]string{"study", refs}, w.args(db, out)...)...)
			select {
			case <-srv.reached:
			case <-c.done:
				t.Fatalf("linkrot finished (exit %d) before reaching %s:\n%s", c.code, tt.trap, c.errText())
			case <-time.After(60 * time.Second):
				t.Fatalf("trap %s not reached", tt.trap)
			}
			waitFor(t, "everything but the trapped URL stored", func() bool { return tt.stored(studyStored(t, db)) })
			c.kill(t)
			checks, mementos, drifts := studyStored(t, db)
			t.Logf("killed with %d checks, %d memento rows and %d drift measures stored", checks, mementos, drifts)
			if _, err := os.Stat(filepath.Join(out, "references.csv")); err == nil {
				t.Fatal("the outputs were written before the kill")
			}
			before := w.requests()
			srv.mu.Lock()
			srv.trap = ""
			srv.mu.Unlock()
			code, stdout, stderr := studyRun(t, refs, w.args(db, out)...)
			if code != exitOK || !strings.Contains(stdout, "Resuming study run 1") || !strings.Contains(stdout, "(wave 1)") {
				t.Fatalf("resumed study: exit %d\n%s\n%s", code, stdout, stderr)
			}
			// The same outputs as the uninterrupted study's, once the
			// servers' ports are the reference world's.
			got := withoutColumn(t, filepath.Join(out, "references.csv"), "checked_at")
			got = w.asWorld(got, ref)
			if got != wantRefs {
				t.Error("references.csv differs from the uninterrupted study's")
			}
			sum, _ := os.ReadFile(filepath.Join(out, "summary.csv"))
			if string(sum) != string(wantSum) {
				t.Errorf("summary.csv differs from the uninterrupted study's:\n%s\nwant:\n%s", sum, wantSum)
			}
			// Counted over both processes: every URL checked once, every
			// TimeMap asked once, as in one uninterrupted run.
			all := w.requests()
			checkStudyRequests(t, w, readCSV(t, filepath.Join(out, "references.csv")), all)
			t.Logf("%d requests before the kill, %d in all", len(before), len(all))
		})
	}
}

// asWorld rewrites the server addresses of w in s into those of ref.
func (w *studyWorld) asWorld(s string, ref *studyWorld) string {
	return strings.NewReplacer(w.web.URL, ref.web.URL, w.soft.URL, ref.soft.URL, w.parked.URL, ref.parked.URL,
		w.arch.URL, ref.arch.URL, w.tm.URL, ref.tm.URL).Replace(s)
}

// TestStudy_ScaleOut runs linkrot study --nats with two linkrot worker
// processes on a shared database (a SQLite file; PostgreSQL): the
// workers check the cited URLs as check units of the scale-out mode, the
// study's archives stage and outputs run in the coordinating process,
// and every row is the truth's, every URL checked once.
func TestStudy_ScaleOut(t *testing.T) {
	ns := startNATS(t)
	for _, engine := range []string{"SQLiteFile", "PostgreSQL"} {
		t.Run(engine, func(t *testing.T) {
			w := newStudyWorld(t, studySize(200, 60))
			dir := t.TempDir()
			refs := filepath.Join(dir, "refs.csv")
			w.writeCSV(t, refs, false)
			db := filepath.Join(dir, "shared.db")
			if engine == "PostgreSQL" {
				db = pgtest.DSN(t)
			}
			openDB(t, db).Close() // the database exists before the workers open it
			natsURL := ns.ClientURL()
			var workers []*child
			for range 2 {
				c := startChild(t, "", "worker", "--nats", natsURL, "--db", db, "--workers", "4", "--log-level", "info")
				c.waitLine(t, "worker started")
				workers = append(workers, c)
			}
			out := filepath.Join(dir, "out")
			code, stdout, stderr := studyRun(t, refs, append(w.args(db, out), "--nats", natsURL)...)
			if code != exitOK {
				t.Fatalf("linkrot study --nats: exit %d\n%s\n%s\nworker:\n%s", code, stdout, stderr, workers[0].errText())
			}
			want := checkStudyRows(t, w, out)
			// The coordinator checks nothing itself (Work replaces its
			// checks), so right verdicts are the workers'.
			checkStudyRequestsProbes(t, w, want, w.requests(), len(w.byURL))
			for _, c := range workers {
				c.cmd.Process.Signal(syscall.SIGTERM)
				<-c.done
			}
		})
	}
}

// TestStudy_Politeness: a study checks through the run's politeness
// scheduler, as linkrot audit does: at most --per-host requests in
// flight to a host, and a 429 with Retry-After waited out before the
// URL is asked again (then judged ok, not rate-limited).
func TestStudy_Politeness(t *testing.T) {
	var (
		mu              sync.Mutex
		inFlight, most  int
		first429, retry = map[string]time.Time{}, map[string]time.Time{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		// /doc/3 answers 429 once.
		limited := true
		if r.URL.Path == "/doc/3" {
			if _, ok := first429[r.URL.Path]; !ok {
				first429[r.URL.Path], limited = time.Now(), false
			} else if _, ok := retry[r.URL.Path]; !ok {
				retry[r.URL.Path] = time.Now()
			}
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		time.Sleep(20 * time.Millisecond)
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/doc/"))
		if err != nil { // a soft-404 probe
			http.NotFound(w, r)
			return
		}
		if !limited {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, studyPage("A page", livingText(n)))
	}))
	t.Cleanup(srv.Close)
	var b strings.Builder
	b.WriteString("url,cited_at\n")
	for i := range 12 {
		fmt.Fprintf(&b, "%s/doc/%d,2019-05-0%d\n", srv.URL, i, 1+i%9)
	}
	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.csv")
	os.WriteFile(refs, []byte(b.String()), 0o644)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := studyRun(t, refs, "--db", filepath.Join(dir, "s.db"), "--out", out, "--allow-private", "--no-archives",
		"--per-host", "2", "--timeout", "5s", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, r := range readCSV(t, filepath.Join(out, "references.csv")) {
		if r["live_verdict"] != "ok" || r["broken"] != "false" {
			t.Errorf("%s: %s (broken %s), want ok after waiting out the 429", r["url"], r["live_verdict"], r["broken"])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 2 {
		t.Errorf("at most %d requests in flight to one host, want the --per-host 2 reached and held", most)
	}
	if len(first429) != 1 {
		t.Fatalf("the 429 was not sent: %v", first429)
	}
	for p, at := range first429 {
		if again, ok := retry[p]; !ok || again.Sub(at) < 900*time.Millisecond {
			t.Errorf("%s asked again %v after its 429 with Retry-After: 1", p, again.Sub(at))
		}
	}
}
