package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/crawltest"
)

func TestAuditCommand_Verdicts(t *testing.T) {
	rot := crawltest.NewRot(t)
	dbPath := filepath.Join(t.TempDir(), "rot.db")
	code, stdout, stderr := run(t, "", "audit", rot.URL+"/", "--db", dbPath, "--timeout", "1s", "--retries", "0", "--no-archives")
	if code != exitFindings {
		t.Fatalf("exit %d, want %d (broken links found); stderr:\n%s\nstdout:\n%s", code, exitFindings, stderr, stdout)
	}
	for _, want := range []string{"Checked ", "not-found", "Top broken targets:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	db := openDB(t, dbPath)
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != audit.RunComplete {
		t.Errorf("run status %s", r.Status)
	}
	checks, err := db.Checks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]audit.Check{}
	for _, c := range checks {
		verdicts[strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(c.URL, rot.URL), rot.Soft.URL), rot.Slow.URL)] = c
	}
	want := map[string]audit.Verdict{
		"/fine.html":             audit.VerdictOK,
		"/old-url":               audit.VerdictMoved,
		"/gone":                  audit.VerdictGone,
		"/missing":               audit.VerdictNotFound,
		"/temp":                  audit.VerdictRedirected,
		"/deep/path/article":     audit.VerdictRedirectToRoot,
		"/articles/real-looking": audit.VerdictSoft404,
		"/articles/":             audit.VerdictOK,
		"/slow":                  audit.VerdictTimeout,
		"http://169.254.169.254/latest/meta-data/": audit.VerdictRefused,
		"mailto:webmaster@example.org":             audit.VerdictSkipped,
	}
	for path, v := range want {
		c, ok := verdicts[path]
		if !ok {
			t.Errorf("%s: no check (have %d checks)", path, len(checks))
			continue
		}
		if c.Verdict != v {
			t.Errorf("%s: verdict %s (%s), want %s", path, c.Verdict, c.Reason, v)
		}
	}
	if c := verdicts["/old-url"]; !strings.HasSuffix(c.Replacement, "/new-url.html") {
		t.Errorf("moved target replacement = %q", c.Replacement)
	}
	if c := verdicts["/articles/real-looking"]; c.Soft404 == nil || c.Soft404.ProbeStatus != 200 || c.Soft404.Similarity < 0.5 {
		t.Errorf("soft-404 evidence = %+v", c.Soft404)
	}
	if c := verdicts["/fine.html"]; c.SHA256 == "" || c.SimHash == 0 {
		t.Errorf("fine page has no fingerprint: %+v", c)
	}
	// /fine.html?from=many is linked 100 times from many.html: the crawler
	// fetched it once as a page of the site and the checker once as a target.
	if n := rot.Hits("/fine.html?from=many"); n != 2 {
		t.Errorf("/fine.html?from=many fetched %d times, want 2 (crawl + check)", n)
	}
	// /fine.html also ends the /temp redirect chain: 3 fetches at most.
	if n := rot.Hits("/fine.html"); n > 3 {
		t.Errorf("/fine.html fetched %d times, want at most 3", n)
	}

	findings, err := db.Findings(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var fragMissing, fragOK bool
	for _, f := range findings {
		if f.Verdict == audit.VerdictFragmentMissing {
			fragMissing = fragMissing || f.Fragment == "no-such-section"
			fragOK = fragOK || f.Fragment == "section-2"
		}
	}
	if !fragMissing || fragOK {
		t.Errorf("fragment findings wrong (missing found %v, existing flagged %v): %+v", fragMissing, fragOK, findings)
	}

	// linkrot fixes lists the UNLINKR triple for the moved link.
	code, out, _ := run(t, "", "fixes", "--db", dbPath, "--format", "json")
	if code != 0 {
		t.Fatalf("fixes exit %d", code)
	}
	var fixes []audit.Maintenance
	if err := json.Unmarshal([]byte(out), &fixes); err != nil {
		t.Fatal(err)
	}
	if len(fixes) != 1 || fixes[0].Source != rot.URL+"/" || !strings.HasSuffix(fixes[0].Target, "/old-url") || !strings.HasSuffix(fixes[0].Replacement, "/new-url.html") {
		t.Errorf("fixes = %+v", fixes)
	}
	code, out, _ = run(t, "", "fixes", "--db", dbPath, "--format", "unlinkr")
	if code != 0 || !strings.HasPrefix(out, "UNLINKR "+rot.URL+"/ ") {
		t.Errorf("unlinkr output = %q", out)
	}

	// A second audit (a new run) with --max-age reuses the non-transient
	// results of the first and checks again only what failed transiently.
	// (/gone is still requested by the crawler: it is a page of the site.)
	slowBefore := rot.SlowHits()
	code, _, stderr = run(t, "", "audit", rot.URL+"/", "--db", dbPath, "--max-age", "1h", "--timeout", "1s", "--retries", "0", "--no-archives", "--no-report")
	if code != exitFindings {
		t.Fatalf("second audit exit %d: %s", code, stderr)
	}
	if rot.SlowHits() == slowBefore {
		t.Errorf("--max-age: the transient timeout was reused instead of checked again")
	}
	r2, err := db.LatestRun(ctx)
	if err != nil || r2.ID == r.ID {
		t.Fatalf("second run = %+v, %v", r2, err)
	}
	checks2, err := db.Checks(ctx, r2.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks2 {
		switch {
		case strings.HasSuffix(c.URL, "/gone"):
			if !c.Reused || c.ReusedFrom != r.ID || c.Verdict != audit.VerdictGone {
				t.Errorf("/gone in run 2 = %+v, want reused from run %d", c, r.ID)
			}
		case strings.HasSuffix(c.URL, "/slow"):
			if c.Reused {
				t.Errorf("transient /slow was reused: %+v", c)
			}
		}
	}
}

func TestAuditCommand_FailOn(t *testing.T) {
	rot := crawltest.NewRot(t)
	dbPath := filepath.Join(t.TempDir(), "rot.db")
	code, _, stderr := run(t, "", "audit", rot.URL+"/fine.html", "--db", dbPath, "--fail-on", "none", "--max-depth", "0", "--no-archives")
	if code != exitOK {
		t.Errorf("--fail-on none: exit %d (%s)", code, stderr)
	}
	if code, _, _ := run(t, "", "audit", rot.URL+"/", "--db", dbPath, "--fail-on", "bogus", "--no-archives"); code != exitUsage {
		t.Errorf("--fail-on bogus: exit %d, want usage error", code)
	}
}
