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

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/dashboard"
)

// kindsHTML is a page with a link of every kind a stage could trip on:
// URLs that do not parse (stored without a target), fragment-only links,
// opaque schemes, an empty href, Robust Links and mset attributes missing
// or invalid (also on a link whose own URL is invalid), a broken link and
// a moved one. The link texts name the kinds.
const kindsHTML = `<!doctype html><html><head><title>Every kind of link</title></head><body><main>
<p id="here">Links of every kind.</p>
<p><a href="http://example.com:99999/">bad port</a></p>
<p><a href="http://[::1">open ipv6</a></p>
<p><a href="http://[::1#sec">open ipv6 fragment</a></p>
<p><a href="#here">fragment ok</a> <a href="#missing">fragment missing</a></p>
<p><a href="mailto:someone@example.com">mail</a> <a href="javascript:void(0)">script</a>
<img src="data:image/png;base64,iVBORw0KGgo=" alt="data image"> <a href="tel:+15551234">phone</a></p>
<p><a href="">empty href</a></p>
<p><a href="{{SITE}}/other" data-versionurl="http://example.com:99999/x" data-versiondate="2024-03-01">versionurl invalid</a></p>
<p><a href="{{SITE}}/other" data-versionurl="{{FX}}/web/20240301120000/{{SITE}}/other" data-versiondate="yesterday">versiondate invalid</a></p>
<p><a href="{{SITE}}/other" data-versionurl="{{FX}}/web/20240301120000/{{SITE}}/other" data-versiondate="2024-03-01">originalurl missing</a></p>
<p><a href="http://[::1" data-originalurl="http://[::1" data-versionurl="http://[::1/x" data-versiondate="never">robust on invalid</a></p>
<p><a href="{{SITE}}/other" mset="{{{ not an mset">mset invalid</a></p>
<p><a href="http://example.com:99999/" mset="{{FX}}/web/20240301120000/{{SITE}}/other 2024-03-01">mset on invalid</a></p>
<p><a href="{{SITE}}/gone">gone</a> <a href="{{SITE}}/old">old</a> <a href="{{SITE}}/other#top">other</a></p>
</main></body></html>`

// notargetSite serves kindsHTML at /, a page at /other (its memento is in
// the archive), 404 at /gone and a permanent redirect /old -> /other.
func notargetSite(t *testing.T) (site *httptest.Server, fx *archivetest.Archive) {
	t.Helper()
	fx = archivetest.New(t, archivetest.Options{})
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, strings.NewReplacer("{{SITE}}", site.URL, "{{FX}}", fx.URL).Replace(kindsHTML))
		case "/other":
			fmt.Fprint(w, archPage(textStable))
		case "/old":
			http.Redirect(w, r, "/other", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	fx.Add(archivetest.Memento{Original: site.URL + "/other", Time: ts("2024-03-01T12:00:00Z"), Body: archPage(textStable)})
	return site, fx
}

// invalidLinks are the link texts of kindsHTML whose URL does not parse,
// with what the reason of each must say.
var invalidLinks = map[string]string{
	"bad port":           "port",
	"open ipv6":          "IPv6",
	"open ipv6 fragment": "IPv6",
	"robust on invalid":  "IPv6",
	"mset on invalid":    "port",
}

// TestNoTarget_EveryStage runs every stage over links of every kind,
// those without a target among them, on both backends: a whole audit
// with the archives stage against a loopback archive, twice (history,
// diff), then every report format, the dashboard's pages, and linkrot
// diff, fixes, suggest and runs. No stage may fail on such a link; each
// invalid URL is a finding on its link, at its position, with the reason.
func TestNoTarget_EveryStage(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db string) {
		site, fx := notargetSite(t)
		dir := t.TempDir()
		args := func(reportDir string, failOn string) []string {
			return []string{"audit", site.URL + "/", "--db", db, "--allow-private", "--timeout", "5s", "--retries", "0",
				"--archive", fx.Flag("fx", "6000/min"), "--fetch-rate", "6000/min", "--report", reportDir,
				"--output", "json", "--output", "sarif", "--fail-on", failOn}
		}
		// Run 1 fails on the invalid URLs alone.
		code, stdout, stderr := run(t, "", args(filepath.Join(dir, "r1"), "invalid-url")...)
		if code != exitFindings {
			t.Fatalf("run 1: exit %d, want %d\n%s%s", code, exitFindings, stdout, stderr)
		}
		if !strings.Contains(stdout, "5 invalid-url") || !strings.Contains(stdout, "1 fragment-missing") {
			t.Errorf("run 1 summary does not count the link verdicts:\n%s", stdout)
		}
		// Run 2 fails on nothing: exit 0, with the archives stage and the
		// history of a second run.
		code, stdout, stderr = run(t, "", args(filepath.Join(dir, "r2"), "none")...)
		if code != exitOK {
			t.Fatalf("run 2: exit %d, want %d\n%s%s", code, exitOK, stdout, stderr)
		}
		if !strings.Contains(stdout, "Snapshots:") {
			t.Errorf("run 2 summary has no archives stage:\n%s", stdout)
		}

		store, err := openStore(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		ctx := context.Background()
		r, err := store.LatestRun(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.ID != 2 || r.Status != audit.RunComplete {
			t.Fatalf("latest run %d is %s, want run 2 complete", r.ID, r.Status)
		}
		stages, err := store.Stages(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, stage := range []string{audit.StageCheck, audit.StageArchives} {
			if _, done := stages[stage]; !done {
				t.Errorf("stage %s of run 2 not done: %v", stage, stages)
			}
		}

		// The findings in the database: one per invalid link, the
		// missing fragment, the broken target; nothing for the others.
		refs, err := store.LinkRefs(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		textOf := map[int64]string{}
		linkOf := map[string]audit.LinkRef{}
		for _, l := range refs {
			text := l.Text
			if text == "" && l.Element == "img" {
				text = "data image"
			}
			textOf[l.LinkID] = text
			linkOf[text] = l
		}
		for text := range invalidLinks {
			if l, ok := linkOf[text]; !ok || l.TargetID != 0 {
				t.Errorf("link %q: %+v, want a stored link without a target", text, l)
			}
		}
		fs, err := store.Findings(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]audit.Finding{}
		for _, f := range fs {
			text := textOf[f.LinkID]
			if _, dup := got[text]; dup {
				t.Errorf("two findings on link %q", text)
			}
			got[text] = f
		}
		for text, reason := range invalidLinks {
			f, ok := got[text]
			switch {
			case !ok:
				t.Errorf("no finding on %q", text)
			case f.Verdict != audit.VerdictInvalidURL || !strings.HasPrefix(f.Message, "invalid URL: ") ||
				!strings.Contains(f.Message, reason) || f.Target != linkOf[text].Href || f.PageURL != site.URL+"/":
				t.Errorf("finding on %q: %+v, want invalid-url saying %q", text, f, reason)
			}
		}
		if f := got["fragment missing"]; f.Verdict != audit.VerdictFragmentMissing || f.Fragment != "missing" {
			t.Errorf("finding on the missing fragment: %+v", f)
		}
		if f := got["gone"]; f.Verdict != audit.VerdictNotFound {
			t.Errorf("finding on /gone: %+v", f)
		}
		if len(fs) != len(invalidLinks)+2 {
			t.Errorf("%d findings, want %d: %+v", len(fs), len(invalidLinks)+2, fs)
		}
		checks, err := store.Checks(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		verdictOf := map[string]audit.Verdict{}
		for _, c := range checks {
			verdictOf[c.URL] = c.Verdict
		}
		for _, u := range []string{"mailto:someone@example.com", "javascript:void(0)", "tel:+15551234"} {
			if verdictOf[u] != audit.VerdictSkipped {
				t.Errorf("check of %s: %q, want skipped", u, verdictOf[u])
			}
		}
		if verdictOf[site.URL+"/old"] != audit.VerdictMoved {
			t.Errorf("check of /old: %q", verdictOf[site.URL+"/old"])
		}

		// Every report format: produced, and each names the invalid link
		// and says why; those with positions give its line.
		const badHref = "http://example.com:99999/"
		reasons := []string{"invalid URL: ", "outside the range"}
		for _, format := range []string{"json", "csv", "junit", "markdown", "sarif", "github"} {
			code, out, stderr := run(t, "", "report", "--db", db, "--format", format)
			if code != exitOK {
				t.Errorf("report --format %s: exit %d: %s", format, code, stderr)
				continue
			}
			for _, want := range append([]string{badHref, "invalid-url"}, reasons...) {
				if !strings.Contains(out, want) {
					t.Errorf("report --format %s lacks %q:\n%.3000s", format, want, out)
				}
			}
		}
		code, out, stderr := run(t, "", "report", "--db", db, "--format", "json")
		if code != exitOK {
			t.Fatalf("report json: %d %s", code, stderr)
		}
		var doc struct {
			Links []struct {
				ID      int64  `json:"id"`
				Href    string `json:"href"`
				Verdict string `json:"verdict"`
				Line    int    `json:"line"`
				Column  int    `json:"column"`
			} `json:"links"`
			Findings []struct {
				LinkID  *int64 `json:"link_id"`
				Verdict string `json:"verdict"`
				Message string `json:"message"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		positioned := map[int64]bool{}
		for _, l := range doc.Links {
			if _, bad := invalidLinks[textOf[l.ID]]; bad {
				if l.Verdict != string(audit.VerdictInvalidURL) || l.Line < 1 || l.Column < 1 {
					t.Errorf("JSON link %q: verdict %s at %d:%d", textOf[l.ID], l.Verdict, l.Line, l.Column)
				}
				positioned[l.ID] = true
			}
		}
		n := 0
		for _, f := range doc.Findings {
			if f.Verdict == string(audit.VerdictInvalidURL) {
				n++
				if f.LinkID == nil || !positioned[*f.LinkID] || !strings.HasPrefix(f.Message, "invalid URL: ") {
					t.Errorf("JSON invalid-url finding not on a positioned invalid link: %+v", f)
				}
			}
		}
		if n != len(invalidLinks) {
			t.Errorf("JSON: %d invalid-url findings, want %d", n, len(invalidLinks))
		}
		// SARIF results carry the line of the link.
		code, out, _ = run(t, "", "report", "--db", db, "--format", "sarif")
		var sarif struct {
			Runs []struct {
				Results []struct {
					RuleID  string `json:"ruleId"`
					Message struct {
						Text string `json:"text"`
					} `json:"message"`
					Locations []struct {
						Physical struct {
							Region *struct {
								StartLine int `json:"startLine"`
							} `json:"region"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &sarif); err != nil || len(sarif.Runs) != 1 {
			t.Fatalf("SARIF (exit %d): %v", code, err)
		}
		n = 0
		for _, res := range sarif.Runs[0].Results {
			if res.RuleID != string(audit.VerdictInvalidURL) {
				continue
			}
			n++
			if len(res.Locations) != 1 || res.Locations[0].Physical.Region == nil || res.Locations[0].Physical.Region.StartLine < 2 ||
				!strings.Contains(res.Message.Text, "invalid URL: ") {
				t.Errorf("SARIF invalid-url result without its line or reason: %+v", res)
			}
		}
		if n != len(invalidLinks) {
			t.Errorf("SARIF: %d invalid-url results, want %d", n, len(invalidLinks))
		}
		// The HTML report, and the machine formats the audits wrote
		// beside it.
		htmlDir := filepath.Join(dir, "html")
		if code, _, stderr := run(t, "", "report", "--db", db, "--out", htmlDir); code != exitOK {
			t.Fatalf("report html: exit %d: %s", code, stderr)
		}
		for _, f := range []string{filepath.Join(htmlDir, "index.html"), filepath.Join(dir, "r2", "index.html"),
			filepath.Join(dir, "r2", "report.json"), filepath.Join(dir, "r2", "report.sarif")} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range append([]string{badHref}, reasons...) {
				if !strings.Contains(string(b), want) {
					t.Errorf("%s lacks %q", f, want)
				}
			}
		}

		// The dashboard's pages read the run.
		h := dashboard.New(store.DB, dashboard.Options{})
		for _, path := range []string{"/", "/broken", "/links", "/links?verdict=invalid-url", "/pages",
			"/page?url=" + site.URL + "/", "/search?q=example.com"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if rec.Code != http.StatusOK {
				t.Errorf("dashboard %s: %d\n%.500s", path, rec.Code, rec.Body.String())
			}
			if strings.HasPrefix(path, "/links") && !strings.Contains(rec.Body.String(), "invalid-url") {
				t.Errorf("dashboard %s does not show the invalid-url links", path)
			}
		}
		for _, l := range refs {
			if l.TargetID == 0 {
				continue
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", fmt.Sprintf("/target/%d", l.TargetID), nil))
			if rec.Code != http.StatusOK {
				t.Errorf("dashboard /target/%d: %d", l.TargetID, rec.Code)
			}
		}

		// The commands that read runs.
		for _, c := range [][]string{
			{"diff", "--db", db}, {"diff", "--db", db, "--format", "json"},
			{"fixes", "--db", db}, {"fixes", "--db", db, "--format", "json"}, {"fixes", "--db", db, "--format", "unlinkr"},
			{"suggest", "--db", db}, {"suggest", "--db", db, "--format", "json"}, {"suggest", "--db", db, "--format", "csv"},
			{"runs", "--db", db},
		} {
			code, out, stderr := run(t, "", c...)
			if code != exitOK {
				t.Errorf("%s: exit %d\n%s%s", strings.Join(c, " "), code, out, stderr)
			}
			if c[0] == "fixes" && !strings.Contains(out, site.URL+"/old") {
				t.Errorf("%s lacks the moved link:\n%s", strings.Join(c, " "), out)
			}
		}
	})
}
