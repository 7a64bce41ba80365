package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingSite answers every path with 200 (404 under /gone/) and counts
// requests per path.
type countingSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newCountingSite() *countingSite {
	s := &countingSite{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/gone/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	}))
	return s
}

// take returns the hits since the last call and resets them.
func (s *countingSite) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hits
	s.hits = map[string]int{}
	return h
}

func total(h map[string]int) int {
	n := 0
	for _, v := range h {
		n += v
	}
	return n
}

const (
	benchFiles   = 2000
	benchLinks   = 15 // per file: 30,000 links
	benchTargets = 4000
)

// benchDoc is docs file i: a heading, then 15 links on their own lines:
// 11 to external targets (1 in 100 broken), 3 to other files (two with a
// heading anchor), 1 image.
func benchDoc(i int, site string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Page %d\n\n## Section %d\n\n", i, i)
	for k := 0; k < 11; k++ {
		t := (i*11 + k) % benchTargets
		dir := "t"
		if t%100 == 7 {
			dir = "gone"
		}
		fmt.Fprintf(&b, "- Reference %d of page %d: [target %d](%s/%s/%d)\n", k, i, t, site, dir, t)
	}
	fmt.Fprintf(&b, "- Next: [page](p%d.md#section-%d)\n", (i+1)%benchFiles, (i+1)%benchFiles)
	fmt.Fprintf(&b, "- Previous: [page](p%d.md#page-%d)\n", (i+benchFiles-1)%benchFiles, (i+benchFiles-1)%benchFiles)
	fmt.Fprintf(&b, "- Index: [home](../README.md)\n")
	fmt.Fprintf(&b, "\n![diagram](%s/t/img-%d.png)\n", site, i%50)
	return b.String()
}

// BenchmarkCI_PullRequest measures the CI use of linkrot on a generated
// documentation repository of 2,000 Markdown files with 30,000 links
// (4,000 external targets on an httptest server that counts requests):
// a first run fills the database; then a change touching 20 files (each
// gets a new link to a new target) is checked with --fail-on introduced
// --baseline main~1 --max-age 1d on that database, as a pull request's
// run with the database in the CI cache. The second run must send
// requests only for the targets it has no recent verdict for. Reported:
// wall time and requests of both runs.
//
//	go test ./cmd/linkrot -run '^$' -bench CI_PullRequest -benchtime 1x
func BenchmarkCI_PullRequest(b *testing.B) {
	git, err := exec.LookPath("git")
	if err != nil {
		b.Fatalf("git needed: %v", err)
	}
	site := newCountingSite()
	defer site.Close()
	gitRun := func(dir string, args ...string) {
		cmd := exec.Command(git, append([]string{"-C", dir, "-c", "user.email=b@example.org", "-c", "user.name=B"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for range b.N {
		b.StopTimer()
		repo := b.TempDir()
		gitRun(repo, "init", "-q", "-b", "main")
		write := func(name, content string) {
			p := filepath.Join(repo, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		write("README.md", "# Docs\n\n[first page](docs/p0.md)\n")
		for i := 0; i < benchFiles; i++ {
			write(fmt.Sprintf("docs/p%d.md", i), benchDoc(i, site.URL))
		}
		gitRun(repo, "add", "-A")
		gitRun(repo, "commit", "-q", "-m", "docs")
		db := filepath.Join(b.TempDir(), "ci.db")
		common := []string{"audit", repo, "--db", db, "--no-report", "--no-archives", "--allow-private", "--retries", "0",
			"--per-host", "16", "--max-age", "1d", "--quiet"}
		site.take()
		b.StartTimer()

		start := time.Now()
		code, out, errOut := runBench(append(common, "--fail-on", "none")...)
		first := time.Since(start)
		if code != 0 {
			b.Fatalf("first run: exit %d\n%s\n%s", code, out, errOut)
		}
		firstHits := site.take()

		b.StopTimer()
		// The change: 20 files get a new link to a new target and one
		// edited line (its old target stays reused: verdict recent).
		for i := 0; i < 20; i++ {
			n := i * 97
			doc := benchDoc(n, site.URL)
			doc = strings.Replace(doc, "- Reference 0 of page", "- Edited reference 0 of page", 1)
			doc += fmt.Sprintf("\nSee also [new %d](%s/new/%d).\n", i, site.URL, i)
			write(fmt.Sprintf("docs/p%d.md", n), doc)
		}
		gitRun(repo, "commit", "-q", "-a", "-m", "change")
		b.StartTimer()

		start = time.Now()
		code, out, errOut = runBench(append(common, "--fail-on", "introduced", "--baseline", "main~1")...)
		second := time.Since(start)
		secondHits := site.take()
		b.StopTimer()
		// The edited lines' broken targets are introduced (an edited line
		// is new): exit 1 is expected when one of them is broken.
		if code != 0 && code != 1 {
			b.Fatalf("second run: exit %d\n%s\n%s", code, out, errOut)
		}
		newTargets, old := 0, 0
		for p, n := range secondHits {
			switch {
			case strings.HasPrefix(p, "/new/"):
				newTargets += n
			case firstHits[p] > 0:
				old += n // a target checked in the first run, fetched again
			}
		}
		if newTargets != 20 || old != 0 {
			b.Errorf("second run: %d requests to the 20 new targets, %d to targets with a recent verdict (want 20 and 0); all: %v", newTargets, old, secondHits)
		}
		b.ReportMetric(first.Seconds(), "first-run-s")
		b.ReportMetric(float64(total(firstHits)), "first-run-requests")
		b.ReportMetric(second.Seconds(), "pr-run-s")
		b.ReportMetric(float64(total(secondHits)), "pr-run-requests")
		b.Logf("first run %v, %d requests; PR run %v, %d requests (%d to new targets, others: %v)",
			first.Round(time.Millisecond), total(firstHits), second.Round(time.Millisecond), total(secondHits), newTargets, otherHits(secondHits))
		b.StartTimer()
	}
}

// otherHits lists the requests of a run that were not to new targets.
func otherHits(h map[string]int) map[string]int {
	o := map[string]int{}
	for p, n := range h {
		if !strings.HasPrefix(p, "/new/") {
			o[p] = n
		}
	}
	return o
}

func runBench(args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}
