package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// linkSite serves the targets of the CI tests: /ok answers 200, /gone-*
// 404, and it counts requests per path.
type linkSite struct {
	*httptest.Server
	hits sync64
}

type sync64 struct{ n atomic.Int64 }

func newLinkSite(t *testing.T) *linkSite {
	s := &linkSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.n.Add(1)
		if strings.HasPrefix(r.URL.Path, "/gone") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("fine"))
	}))
	t.Cleanup(s.Close)
	return s
}

// gitRepo makes a git repository in a temporary directory.
type gitRepo struct {
	t   *testing.T
	dir string
	git string
}

func newGitRepo(t *testing.T) *gitRepo {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("the baseline rule needs the git binary: %v", err)
	}
	r := &gitRepo{t: t, dir: t.TempDir(), git: git}
	r.run("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) run(args ...string) string {
	r.t.Helper()
	cmd := exec.Command(r.git, append([]string{"-C", r.dir, "-c", "user.email=ci@example.org", "-c", "user.name=CI"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (r *gitRepo) write(files map[string]string) {
	r.t.Helper()
	writeFiles(r.t, r.dir, files)
}

func (r *gitRepo) commit(msg string) {
	r.t.Helper()
	r.run("add", "-A")
	r.run("commit", "-q", "-m", msg)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAudit_FailOnIntroduced is the baseline rule on a git repository:
// a broken link the change adds fails the run, an old link whose target
// rotted is a warning with its history, and a paragraph moved to another
// file keeps its links old.
func TestAudit_FailOnIntroduced(t *testing.T) {
	site := newLinkSite(t)
	repo := newGitRepo(t)
	rotted := site.URL + "/gone-rotted"
	repo.write(map[string]string{
		"README.md":     "# Project\n\nSee the [guide](docs/guide.md#install).\n\nOur [paper](" + rotted + ") explains it.\n",
		"docs/guide.md": "# Guide\n\n## Install\n\nGet it [here](" + site.URL + "/ok).\n",
		".gitignore":    "build/\n",
		"build/x.md":    "[ignored](" + site.URL + "/gone-ignored)\n",
	})
	repo.commit("base")
	// The change: the paragraph with the rotted link moves to the guide,
	// a new broken link and a new good one are added.
	repo.write(map[string]string{
		"README.md":     "# Project\n\nSee the [guide](docs/guide.md#install).\n\nNew: [draft](" + site.URL + "/gone-new).\n",
		"docs/guide.md": "# Guide\n\n## Install\n\nGet it [here](" + site.URL + "/ok).\n\n  Our [paper](" + rotted + ") explains it.\n",
	})
	repo.commit("change")
	db := filepath.Join(t.TempDir(), "ci.db")
	summary := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	args := []string{"audit", repo.dir, "--db", db, "--no-report", "--no-archives", "--allow-private", "--retries", "0",
		"--sarif", filepath.Join(t.TempDir(), "x.sarif"), "--fail-on", "introduced", "--baseline", "main~1", "--format", "github"}
	code, out, errOut := run(t, "", args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (an introduced broken link)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	readme := filepath.ToSlash(filepath.Join(repo.dir, "README.md"))
	// Annotations name files relative to the repository root.
	wantErr := "::error file=README.md,line=5,col=6,title=linkrot%3A not-found::Link to " + site.URL + "/gone-new is broken"
	wantWarn := regexp.MustCompile(`(?m)^::warning file=docs/guide.md,line=7,col=7,title=linkrot%3A not-found::Link to ` +
		regexp.QuoteMeta(rotted) + ` is broken: .* \[old link, not introduced by this change; .*\]$`)
	if !strings.Contains(out, wantErr) || !wantWarn.MatchString(out) {
		t.Errorf("annotations: want\n%s\nand a warning matching %s\ngot:\n%s", wantErr, wantWarn, out)
	}
	if strings.Contains(out, "gone-ignored") {
		t.Errorf("a file .gitignore excludes was audited:\n%s", out)
	}
	if !strings.Contains(out, readme+":5:6: not-found "+site.URL+"/gone-new") {
		t.Errorf("terminal lacks path:line:col:\n%s", out)
	}
	sarif, err := os.ReadFile(args[len(args)-7])
	if err != nil || !strings.Contains(string(sarif), `"level": "warning"`) || !strings.Contains(string(sarif), `"startLine": 7`) {
		t.Errorf("--sarif (%v):\n%s", err, sarif)
	}
	b, err := os.ReadFile(summary)
	if err != nil || !strings.Contains(string(b), "**1 introduced by this change**, 1 old (warnings)") {
		t.Errorf("job summary (%v):\n%s", err, b)
	}

	// Fixing the new link leaves only the old one: a warning, exit 0.
	repo.write(map[string]string{"README.md": "# Project\n\nSee the [guide](docs/guide.md#install).\n\nNew: [draft](" + site.URL + "/ok).\n"})
	repo.commit("fix")
	code, out, errOut = run(t, "", append(args[:len(args)-4], "--baseline", "main~2", "--format", "github")...)
	if code != 0 || !wantWarn.MatchString(out) || strings.Contains(out, "::error") {
		t.Errorf("exit %d, want 0 with the old link as a warning\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// The second run shows the rotted link's history: two failed runs.
	if !strings.Contains(out, "2 consecutive failed runs") {
		t.Errorf("history missing:\n%s", out)
	}

	// --baseline-db: the previous run's database is the baseline.
	repo.write(map[string]string{"docs/new.md": "[x](" + site.URL + "/gone-db)\n"})
	code, out, _ = run(t, "", "audit", repo.dir, "--db", db, "--no-report", "--no-archives", "--allow-private", "--retries", "0",
		"--fail-on", "introduced", "--baseline-db", db)
	if code != 1 || !strings.Contains(out, "docs/new.md:1:1: not-found") || !strings.Contains(out, "(old: ") {
		t.Errorf("--baseline-db: exit %d\n%s", code, out)
	}
}

func TestAudit_FailOnIntroducedUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"audit", dir, "--fail-on", "introduced"},
		{"audit", dir, "--fail-on", "introduced,gone", "--baseline", "main"},
		{"audit", dir, "--baseline", "main", "--baseline-db", "x.db"},
		{"audit", dir, "--format", "sarif"},
		{"audit", dir, "--fail-on", "introduced", "--baseline", "main"}, // not a git repository
		{"audit", "https://example.org/", "--fail-on", "introduced", "--baseline", "main"},
	} {
		if code, _, errOut := run(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", args, code, errOut)
		}
	}
}

// TestAudit_MarkdownFile audits one Markdown file: its links are checked,
// the files it links to are read for their anchors only.
func TestAudit_MarkdownFile(t *testing.T) {
	site := newLinkSite(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"README.md":     "# Read me\n\n[guide](docs/guide.md#install) [nope](docs/guide.md#nope) [gone](missing.md)\n",
		"docs/guide.md": "## Install\n\n[unchecked](" + site.URL + "/gone-unchecked)\n",
	})
	t.Chdir(dir)
	db := filepath.Join(t.TempDir(), "f.db")
	code, out, errOut := run(t, "", "audit", "README.md", "--db", db, "--no-report", "--no-archives", "--allow-private", "--fail-on", "broken")
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"README.md:3:32: fragment-missing http://localhost/docs/guide.md#nope", "README.md:3:59: not-found http://localhost/missing.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "gone-unchecked") || site.hits.n.Load() != 0 {
		t.Errorf("links of a linked file were checked (%d requests):\n%s", site.hits.n.Load(), out)
	}
}
