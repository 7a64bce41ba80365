// Command comparereports audits the same sites with two linkrot binaries
// and compares their JSON reports (package reportcompare): pages, targets,
// verdicts, links and findings must be equal, times and ids aside. It
// exits 1 when a workload differs and 2 when it cannot run.
//
// Workloads (-workloads, comma-separated):
//   - web: the generated web of linkrotbench (-pages pages, served once by
//     `linkrotbench -serve`, both binaries audit the same instance);
//   - rot: the rot fixture (testdata/sites/rot with its soft-404 and slow
//     hosts, crawler/crawltest.NewRot);
//   - django: a documentation tree audited as a directory (-django).
//
// scripts/compare-reports.sh builds the binaries of two commits and runs it.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/linkrot/linkrot/crawler/crawltest"
	"github.com/linkrot/linkrot/internal/reportcompare"
)

func main() {
	before := flag.String("before", "", "linkrot binary of the earlier commit")
	after := flag.String("after", "", "linkrot binary of the later commit")
	bench := flag.String("bench", "", "linkrotbench binary (serves the generated web)")
	pages := flag.Int("pages", 1000, "pages of the generated web")
	django := flag.String("django", "/usr/share/doc/python-django-doc/html", "documentation tree audited as a directory")
	workloads := flag.String("workloads", "web,rot,django", "workloads to compare")
	out := flag.String("out", "", "keep the databases and reports here (default: a temporary directory)")
	flag.Parse()
	if *before == "" || *after == "" {
		fmt.Fprintln(os.Stderr, "usage: comparereports -before BIN -after BIN [-bench BIN] [-workloads web,rot,django]")
		os.Exit(2)
	}
	dir := *out
	if dir == "" {
		d, err := os.MkdirTemp("", "comparereports")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	differ := false
	for _, w := range strings.Split(*workloads, ",") {
		seed, extra, stop, err := start(w, *bench, *pages, *django)
		if err != nil {
			fail(fmt.Errorf("%s: %w", w, err))
		}
		var reports [2]string
		var codes [2]int
		for i, bin := range []string{*before, *after} {
			wd := filepath.Join(dir, w, []string{"before", "after"}[i])
			if err := os.MkdirAll(wd, 0o755); err != nil {
				fail(err)
			}
			t0 := time.Now()
			code, err := audit(bin, wd, seed, extra)
			if err != nil {
				stop()
				fail(fmt.Errorf("%s with %s: %w", w, bin, err))
			}
			codes[i] = code
			reports[i] = filepath.Join(wd, "report.json")
			fmt.Printf("%-7s %-6s exit %d in %s\n", w, []string{"before", "after"}[i], code, time.Since(t0).Round(time.Millisecond))
		}
		stop()
		d, err := compare(reports[0], reports[1])
		if err != nil {
			fail(fmt.Errorf("%s: %w", w, err))
		}
		if codes[0] != codes[1] {
			d = append(d, reportcompare.Difference{Path: "exit code", Before: fmt.Sprint(codes[0]), After: fmt.Sprint(codes[1])})
		}
		if len(d) == 0 {
			fmt.Printf("%-7s same targets, verdicts, links and findings\n", w)
			continue
		}
		differ = true
		fmt.Printf("%-7s %d differences:\n", w, len(d))
		for i, x := range d {
			if i == 20 {
				fmt.Printf("  … %d more\n", len(d)-20)
				break
			}
			fmt.Printf("  %s\n    before: %.300s\n    after:  %.300s\n", x.Path, x.Before, x.After)
		}
	}
	if differ {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "comparereports:", err)
	os.Exit(2)
}

// start serves a workload and returns its seed, the extra audit flags it
// needs and a function stopping it.
func start(w, bench string, pages int, django string) (string, []string, func(), error) {
	switch w {
	case "web":
		if bench == "" {
			return "", nil, nil, errors.New("-bench is required for the web workload")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bench, "-serve", "-pages", fmt.Sprint(pages))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			cancel()
			return "", nil, nil, err
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			cancel()
			return "", nil, nil, err
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			cancel()
			_ = cmd.Wait()
			return "", nil, nil, fmt.Errorf("linkrotbench -serve printed no seed: %w", err)
		}
		stop := func() { cancel(); _ = cmd.Wait() }
		return strings.TrimSpace(line), []string{"--allow-private"}, stop, nil
	case "rot":
		tb := &cleanups{}
		r := crawltest.NewRot(tb)
		return r.URL + "/", []string{"--allow-private"}, tb.run, nil
	case "django":
		if _, err := os.Stat(django); err != nil {
			return "", nil, nil, err
		}
		return django, nil, func() {}, nil
	}
	return "", nil, nil, fmt.Errorf("unknown workload %q", w)
}

// audit runs one audit in wd and returns its exit code.
func audit(bin, wd, seed string, extra []string) (int, error) {
	args := append([]string{"audit", seed, "--db", filepath.Join(wd, "linkrot.db"), "--no-archives", "--no-report",
		"--output", filepath.Join(wd, "report.json"), "--fail-on", "broken", "--log-level", "error"}, extra...)
	cmd := exec.Command(bin, args...)
	log, err := os.Create(filepath.Join(wd, "output.txt"))
	if err != nil {
		return 0, err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() > 1 {
			return ee.ExitCode(), fmt.Errorf("exit %d (see %s)", ee.ExitCode(), log.Name())
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

func compare(a, b string) ([]reportcompare.Difference, error) {
	var v [2]any
	for i, p := range []string{a, b} {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		v[i], err = reportcompare.Normalize(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return reportcompare.Diff(v[0], v[1]), nil
}

// cleanups stands in for testing.TB where the fixture wants one.
type cleanups struct{ fns []func() }

func (c *cleanups) Helper()          {}
func (c *cleanups) Cleanup(f func()) { c.fns = append(c.fns, f) }
func (c *cleanups) run() {
	for i := len(c.fns) - 1; i >= 0; i-- {
		c.fns[i]()
	}
}
