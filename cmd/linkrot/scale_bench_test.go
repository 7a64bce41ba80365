package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/store/engines"
)

// The scale benchmark's web: scalePages pages of scalePerPage links each
// (40 to other pages of the site, 10 to 5,000 pages on 50 other hosts, one
// to a missing page), 1,020,000 stored links in all.
const (
	scalePages   = 20_000
	scalePerPage = 51
)

// scaleWriteEnv names the database the test binary, re-executed by
// BenchmarkScale1M, writes the scale run into instead of running tests
// (see TestMain).
const scaleWriteEnv = "LINKROT_TEST_SCALE_WRITE"

// BenchmarkScale1M measures linkrot at a million stored links, each part
// in a child process of its own so that its peak RSS is its own
// (ProcessState.SysUsage): writing the run through the store's write path
// (SavePages in batches of 50 pages as the crawler's writer does, checks,
// findings derived by streaming the links), then `linkrot report` as HTML
// (index.html and link pages) and as JSON. It reports the peak RSS and
// time of each, the database size, and fails when a peak passes 400 MB.
//
//	go test -run='^$' -bench=Scale1M -benchtime=1x -timeout=30m ./cmd/linkrot
//
// With $LINKROT_BENCH_DB set, the database is written there once and
// kept (later runs only report).
func BenchmarkScale1M(b *testing.B) {
	const limitMB = 400
	dbPath := os.Getenv("LINKROT_BENCH_DB")
	if dbPath == "" {
		dbPath = filepath.Join(b.TempDir(), "scale.db")
	}
	// b.Loop resets the metrics reported before it: these are reported
	// after it.
	var writeMetrics [][2]any
	if _, err := os.Stat(dbPath); err != nil {
		rss, took, out := runChild(b, []string{scaleWriteEnv + "=" + dbPath}, "-test.run=^$")
		st, err := os.Stat(dbPath)
		if err != nil {
			b.Fatalf("writer: %v\n%s", err, out)
		}
		b.Logf("wrote %s: %s", dbPath, strings.TrimSpace(out))
		writeMetrics = [][2]any{{rss, "write-peak-RSS-MB"}, {took.Seconds(), "write-s"}, {float64(st.Size()) / 1e6, "db-MB"}}
		if rss > limitMB {
			b.Errorf("writing 1M links: peak RSS %.0f MB, want < %d MB", rss, limitMB)
		}
	}
	dir := b.TempDir()
	for b.Loop() {
		rss, took, out := runChild(b, []string{"LINKROT_TEST_CLI=1"}, "report", "--db", dbPath, "--out", filepath.Join(dir, "html"))
		b.ReportMetric(rss, "html-peak-RSS-MB")
		b.ReportMetric(took.Seconds(), "html-s")
		if rss > limitMB {
			b.Errorf("report html: peak RSS %.0f MB, want < %d MB", rss, limitMB)
		}
		index, err := os.Stat(filepath.Join(dir, "html", "index.html"))
		if err != nil {
			b.Fatalf("report html: %v\n%s", err, out)
		}
		b.ReportMetric(float64(index.Size())/1e6, "index-MB")
		pages, _ := filepath.Glob(filepath.Join(dir, "html", "links", "*.html"))
		if want := (scalePages*scalePerPage + 1999) / 2000; len(pages) != want {
			b.Errorf("report html: %d link pages, want %d", len(pages), want)
		}

		jsonPath := filepath.Join(dir, "report.json")
		rss, took, out = runChild(b, []string{"LINKROT_TEST_CLI=1"}, "report", "--db", dbPath, "--format", "json", "--out", jsonPath)
		b.ReportMetric(rss, "json-peak-RSS-MB")
		b.ReportMetric(took.Seconds(), "json-s")
		if rss > limitMB {
			b.Errorf("report json: peak RSS %.0f MB, want < %d MB", rss, limitMB)
		}
		st, err := os.Stat(jsonPath)
		if err != nil {
			b.Fatalf("report json: %v\n%s", err, out)
		}
		b.ReportMetric(float64(st.Size())/1e6, "json-MB")
	}
	for _, m := range writeMetrics {
		b.ReportMetric(m[0].(float64), m[1].(string))
	}
}

// runChild runs the test binary with env and args, and returns its peak
// RSS in MB, its wall time and its output; it fails b when the child
// fails.
func runChild(b *testing.B, env []string, args ...string) (float64, time.Duration, string) {
	b.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		b.Fatalf("%v %v: %v\n%s", env, args, err, out.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatal("no rusage of the child")
	}
	return float64(ru.Maxrss) / 1024, took, out.String() // Linux: KiB
}

// writeScaleRun writes the scale benchmark's run into a new database at
// path through the store's write path, and says what it wrote.
func writeScaleRun(ctx context.Context, path string) error {
	db, err := engines.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	r := &audit.Run{StartedAt: start.UTC(), Mode: "site", Seeds: []string{"http://site.test/p/0"},
		Args: []string{"audit", "http://site.test/p/0"}, Version: "bench"}
	if err := db.CreateRun(ctx, r); err != nil {
		return err
	}
	site := func(i int) string { return "http://site.test/p/" + strconv.Itoa(i) }
	ext := func(i int) string {
		return "https://ext" + strconv.Itoa(i%50) + ".test/articles/" + strconv.Itoa(i) + ".html"
	}
	const batch = 50
	var pages []*audit.Page
	for i := range scalePages {
		p := &audit.Page{RequestURL: site(i), Depth: 1 + i%7, Status: 200, ContentType: "text/html",
			Charset: "utf-8", Size: 6000, FetchedAt: time.Now().UTC(), Duration: 3 * time.Millisecond}
		p.URL, p.Title = site(i), "Page "+strconv.Itoa(i)
		p.Links = make([]audit.Link, 0, scalePerPage)
		for k := range 40 {
			to := (i*7 + k*31 + 1) % scalePages
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: site(to),
				RawHref: "/p/" + strconv.Itoa(to), Text: "Page " + strconv.Itoa(to)})
		}
		for k := range 10 {
			u := ext((i*10 + k) % 5000)
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: u, RawHref: u, Text: "an article"})
		}
		miss := "http://site.test/missing/" + strconv.Itoa(i%1000)
		p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: miss, RawHref: "/missing/" + strconv.Itoa(i%1000), Text: "gone"})
		pages = append(pages, p)
		if len(pages) == batch {
			if err := db.SavePages(ctx, r.ID, pages); err != nil {
				return err
			}
			pages = pages[:0]
		}
	}
	if err := db.SavePages(ctx, r.ID, pages); err != nil {
		return err
	}
	wrote := time.Since(start)

	refs, err := db.Targets(ctx, r.ID)
	if err != nil {
		return err
	}
	broken := map[int64]*audit.Check{}
	var checks []audit.Check
	for _, t := range refs {
		c := audit.Check{RunID: r.ID, TargetID: t.ID, URL: t.URL, Verdict: audit.VerdictOK, Status: 200,
			CheckedAt: time.Now().UTC(), ContentType: "text/html", Attempts: 1}
		n, _ := strconv.Atoi(strings.TrimSuffix(t.URL[strings.LastIndexByte(t.URL, '/')+1:], ".html"))
		if strings.Contains(t.URL, "/missing/") || (strings.Contains(t.URL, "ext") && n%10 == 0) {
			c.Verdict, c.Status, c.Reason = audit.VerdictNotFound, 404, "HTTP 404"
		}
		checks = append(checks, c)
	}
	if err := db.SaveChecks(ctx, checks); err != nil {
		return err
	}
	for i := range checks {
		if checks[i].Verdict != audit.VerdictOK {
			broken[checks[i].TargetID] = &checks[i]
		}
	}
	pageList, pageIDs, err := db.PageList(ctx, r.ID)
	if err != nil {
		return err
	}
	urlOf := make(map[int64]string, len(pageIDs))
	for i, id := range pageIDs {
		urlOf[id] = pageList[i].URL
	}
	var findings []audit.Finding
	nf := 0
	err = db.EachLink(ctx, r.ID, func(l *store.StoredLink) error {
		c := broken[l.TargetID]
		if c == nil {
			return nil
		}
		findings = append(findings, audit.Finding{RunID: r.ID, PageURL: urlOf[l.PageID], LinkID: l.ID, Target: c.URL,
			Verdict: c.Verdict, Message: c.Reason})
		return nil
	})
	if err != nil {
		return err
	}
	for len(findings) > 0 {
		n := min(len(findings), 5000)
		if err := db.SaveFindings(ctx, findings[:n]); err != nil {
			return err
		}
		findings, nf = findings[n:], nf+n
	}
	if err := db.FinishRun(ctx, r.ID, audit.RunComplete, time.Now().UTC(), ""); err != nil {
		return err
	}
	var links int
	for _, t := range refs {
		links += t.LinkCount
	}
	fmt.Printf("%d pages, %d links, %d targets, %d checks, %d findings; links written in %v, all in %v\n",
		scalePages, links, len(refs), len(checks), nf, wrote.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return nil
}
