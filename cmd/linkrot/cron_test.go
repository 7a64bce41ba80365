package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// TestCron_Nightly runs linkrot audit three times like a nightly cron job
// with --fail-on new, then looks at the result with diff, runs and prune,
// on SQLite and on PostgreSQL.
func TestCron_Nightly(t *testing.T) { forEachBackend(t, testCronNightly) }

func testCronNightly(t *testing.T, db string) {
	ctx := context.Background()
	s := newCronSite(t)
	args := []string{"audit", s.site.URL + "/", "--db", db, "--allow-private", "--timeout", "5s", "--retries", "0",
		"--no-archives", "--no-report", "--fail-on", "new", "--confirm-spacing", "0"}

	// Night 1: the dead links are new but not confirmed yet: exit 0, and
	// nothing on stderr (quiet off a terminal).
	code, stdout, stderr := run(t, "", args...)
	if code != exitOK || stderr != "" {
		t.Fatalf("night 1: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if strings.Contains(stdout, "Since run") {
		t.Errorf("night 1 compares with an earlier run:\n%s", stdout)
	}
	// Night 2: the second failure confirms /gone and the three /missing.
	code, stdout, stderr = run(t, "", args...)
	if code != exitFindings {
		t.Fatalf("night 2: exit %d, want %d\n%s%s", code, exitFindings, stdout, stderr)
	}
	if !strings.Contains(stdout, "Since run 1: 0 newly broken, 4 newly confirmed broken, 0 recovered") ||
		!strings.Contains(stdout, "confirmed  gone") {
		t.Errorf("night 2 summary:\n%s", stdout)
	}
	// Night 3: nothing new.
	code, stdout, _ = run(t, "", append(args, "--log-level", "info", "--log-format", "json")...)
	if code != exitOK {
		t.Fatalf("night 3: exit %d\n%s", code, stdout)
	}
	if !strings.Contains(stdout, "Since run 2: 0 newly broken, 0 newly confirmed broken") {
		t.Errorf("night 3 summary:\n%s", stdout)
	}

	// diff, JSON: run 1 to 2.
	code, out, stderr := run(t, "", "diff", "--db", db, "--from", "1", "--to", "2", "--format", "json")
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, stderr)
	}
	var d audit.RunDiff
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	// --no-archives still measures first-seen drift (no network needed):
	// drift is available, and nothing drifted.
	if d.From != 1 || d.To != 2 || len(d.NewlyConfirmed) != 4 || len(d.NewBroken) != 0 || !d.DriftAvailable || len(d.NewlyDrifted) != 0 ||
		d.NewlyConfirmed[0].URL != s.ext.URL+"/gone" || d.NewlyConfirmed[0].Pages != cronPages-1 {
		t.Errorf("diff 1..2 = %+v", d)
	}
	for _, key := range []string{`"new_broken": []`, `"recovered": []`, `"newly_moved": []`, `"newly_drifted": []`} {
		if !strings.Contains(out, key) {
			t.Errorf("diff JSON lacks %s:\n%s", key, out)
		}
	}
	// diff, text, defaults: the latest run against the one before.
	code, out, _ = run(t, "", "diff", "--db", db)
	if code != 0 || !strings.Contains(out, "Run 3 compared with run 2") || !strings.Contains(out, "Newly confirmed broken: 0") ||
		!strings.Contains(out, "Newly drifted: 0") {
		t.Errorf("diff text: exit %d\n%s", code, out)
	}
	// Against nothing, everything broken is new.
	code, out, _ = run(t, "", "diff", "--db", db, "--to", "1")
	if code != 0 || !strings.Contains(out, "no earlier run") || !strings.Contains(out, "New broken: 4") {
		t.Errorf("diff of the first run: exit %d\n%s", code, out)
	}
	if code, _, _ := run(t, "", "diff", "--db", db, "--from", "3", "--to", "2"); code != exitUsage {
		t.Errorf("diff --from after --to: exit %d", code)
	}

	// runs
	code, out, _ = run(t, "", "runs", "--db", db, "--format", "json")
	var runs []store.RunSummary
	if err := json.Unmarshal([]byte(out), &runs); code != 0 || err != nil {
		t.Fatalf("runs: exit %d, %v\n%s", code, err, out)
	}
	if len(runs) != 3 || runs[0].ID != 3 || runs[1].Confirmed != 4 || runs[0].Pages != cronPages-1 || runs[0].Broken != 4 {
		t.Errorf("runs = %+v", runs)
	}
	code, out, _ = run(t, "", "runs", "--db", db)
	if code != 0 || !strings.Contains(out, "CONFIRMED") || strings.Count(out, "complete") != 3 {
		t.Errorf("runs text:\n%s", out)
	}

	// prune: keep the last run; the history summary survives.
	if code, _, _ := run(t, "", "prune", "--db", db); code != exitUsage {
		t.Errorf("prune without a policy: exit %d", code)
	}
	code, out, _ = run(t, "", "prune", "--db", db, "--older-than", "90d")
	if code != 0 || !strings.Contains(out, "No run to remove") {
		t.Errorf("prune --older-than 90d: exit %d %q", code, out)
	}
	code, out, stderr = run(t, "", "prune", "--db", db, "--keep", "1", "--vacuum")
	if code != 0 || !strings.Contains(out, "Removed 2 runs: 2, 1") || !strings.Contains(out, "Vacuumed") {
		t.Fatalf("prune: exit %d %q %q", code, out, stderr)
	}
	store := openDB(t, db)
	sums, err := store.RunSummaries(ctx, 0)
	if err != nil || len(sums) != 1 || sums[0].ID != 3 {
		t.Fatalf("runs after prune = %+v, %v", sums, err)
	}
	checks, err := store.Checks(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, c := range checks {
		ids = append(ids, c.TargetID)
	}
	hist, err := store.TargetHistories(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	confirmed := 0
	for _, h := range hist {
		if h.Confirmed {
			confirmed++
			if h.FailedRuns != 3 || h.ConfirmedRun != 2 {
				t.Errorf("history after prune = %+v", h)
			}
		}
	}
	if confirmed != 4 {
		t.Errorf("%d confirmed targets after prune, want 4", confirmed)
	}
}

func TestCron_Usage(t *testing.T) {
	for _, args := range [][]string{
		{"audit", "http://127.0.0.1:1/", "--fail-on", "new,gone"},
		{"audit", "http://127.0.0.1:1/", "--confirm-after", "0"},
		{"audit", "http://127.0.0.1:1/", "--log-level", "loud"},
		{"prune", "--older-than", "soon"},
		{"audit", "http://127.0.0.1:1/", "--resume", "--resume-max-age", "soon"},
		{"crawl", "http://127.0.0.1:1/", "--resume-max-age", "-1d"},
		{"diff", "extra"},
		{"runs", "--format", "xml"},
		{"config"},
		{"config", "nope"},
	} {
		if code, _, stderr := run(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr)
		}
	}
	// --resume without a URL in an empty database: nothing to resume.
	db := filepath.Join(t.TempDir(), "x.db")
	if code, _, stderr := run(t, "", "audit", "--resume", "--db", db); code != exitUsage || !strings.Contains(stderr, "no interrupted run") {
		t.Errorf("--resume on an empty database: exit %d %s", code, stderr)
	}
}

// TestCron_FailOnNewSharedTarget: two sites in one database link to the
// same dead URL. Auditing site B confirms it (its second failure); the next
// audit of site A lists it as newly confirmed since A's previous run, and
// --fail-on new exits 1 with it: the exit code and the "Since" line agree.
// On SQLite and on PostgreSQL.
func TestCron_FailOnNewSharedTarget(t *testing.T) {
	forEachBackend(t, testCronFailOnNewSharedTarget)
}

func testCronFailOnNewSharedTarget(t *testing.T, db string) {
	dead := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(dead.Close)
	site := func(name string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><title>%s</title><a href="%s/dead">dead</a>`, name, dead.URL)
		}))
		t.Cleanup(s.Close)
		return s
	}
	a, b := site("A"), site("B")
	audit := func(s *httptest.Server) (int, string) {
		t.Helper()
		code, stdout, stderr := run(t, "", "audit", s.URL+"/", "--db", db, "--allow-private", "--retries", "0", "--no-archives", "--no-report",
			"--fail-on", "new", "--confirm-spacing", "0", "--no-soft404")
		if code != exitOK && code != exitFindings {
			t.Fatalf("audit %s: exit %d\n%s%s", s.URL, code, stdout, stderr)
		}
		return code, stdout
	}
	if code, out := audit(a); code != exitOK {
		t.Fatalf("run 1 (A): exit %d\n%s", code, out)
	}
	if code, out := audit(b); code != exitFindings {
		t.Fatalf("run 2 (B) confirms the dead link: exit %d\n%s", code, out)
	}
	code, out := audit(a)
	if !strings.Contains(out, "Since run 1: 0 newly broken, 1 newly confirmed broken") {
		t.Errorf("run 3 (A) summary:\n%s", out)
	}
	if code != exitFindings {
		t.Errorf("run 3 (A): exit %d, want %d: the Since line lists a newly confirmed target", code, exitFindings)
	}
}

// TestPrune_LogFormat: prune has --log-format, and a configuration file's
// log-format applies to it.
func TestPrune_LogFormat(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "linkrot.db")
	code, _, stderr := run(t, "", "prune", "--db", db, "--keep", "1", "--log-format", "json", "--log-level", "info")
	if code != 0 || !strings.HasPrefix(stderr, `{"time":`) || !strings.Contains(stderr, `"msg":"prune"`) {
		t.Errorf("prune --log-format json: exit %d\n%s", code, stderr)
	}
	cfg := filepath.Join(dir, "linkrot.toml")
	if err := os.WriteFile(cfg, []byte("db = \"linkrot.db\"\nlog-format = \"json\"\nlog-level = \"info\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, "", "prune", "--config", cfg, "--keep", "1")
	if code != 0 || !strings.HasPrefix(stderr, `{"time":`) {
		t.Errorf("prune with log-format in the configuration: exit %d\n%s", code, stderr)
	}
	if code, _, _ := run(t, "", "prune", "--db", db, "--keep", "1", "--log-format", "xml"); code != exitUsage {
		t.Errorf("prune --log-format xml: exit %d", code)
	}
}
