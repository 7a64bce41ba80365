package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAudit_EveryLinkKind audits a build directory whose page holds one
// broken URL of each element and attribute a browser fetches or follows
// (the missing files below): each is reported exactly once, with its
// element and attribute, in the JSON report and in SARIF. Working URLs
// of the same kinds give nothing (a media fragment is no anchor), and a
// dns-prefetch and a preconnect to an origin whose every URL, its home
// page included, answers 404 are neither requested nor reported.
func TestAudit_EveryLinkKind(t *testing.T) {
	var deadHits atomic.Int64
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadHits.Add(1)
		http.NotFound(w, r)
	}))
	defer dead.Close()
	site := httptest.NewServer(http.HandlerFunc(http.NotFound)) // the directory's base: never asked
	defer site.Close()

	dir := t.TempDir()
	page := `<!doctype html>
<html><head><title>Every kind</title>
<meta http-equiv="refresh" content="30; URL='missing-refresh.html'">
<link rel="dns-prefetch" href="` + dead.URL + `">
<link rel="preconnect" href="` + dead.URL + `/" crossorigin>
<link rel="stylesheet" href="ok.css">
</head><body>
<p id="here">Media and embeds:</p>
<video src="missing-video.webm" poster="missing-poster.jpg"><track src="missing-track.vtt" kind="captions"></video>
<video src="ok.webm#t=10" poster="ok.png#xywh=0,0,10,10"></video>
<audio src="missing-audio.ogg"></audio>
<embed src="missing-embed.svg">
<object data="missing-object.pdf"></object>
<input type="image" src="missing-input.png" alt="Send">
<img src="ok.png" srcset="ok.png 1x,
     missing-srcset.png 2x" alt="logo">
<picture><source srcset="ok.png 100w, missing-source.webp 200w"><img src="ok.png#icon" alt=""></picture>
<blockquote cite="missing-blockquote.html">A quotation.</blockquote>
<p><q cite="missing-q.html">short</q> <del cite="missing-del.html">old</del> <ins cite="missing-ins.html">new</ins>
<q cite="ok.html#here">fine</q> <a href="ok.html">ok</a></p>
</body></html>
`
	files := map[string]string{"index.html": page, "ok.html": `<p id="here">ok</p>`, "ok.png": "png", "ok.webm": "webm", "ok.css": "p{}"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dbPath := filepath.Join(t.TempDir(), "kinds.db")
	sarifPath := filepath.Join(t.TempDir(), "kinds.sarif")
	code, stdout, stderr := run(t, "", "audit", dir, "--base", site.URL+"/", "--db", dbPath, "--allow-private",
		"--timeout", "2s", "--retries", "0", "--no-archives", "--no-report", "--fail-on", "none", "--sarif", sarifPath)
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	if n := deadHits.Load(); n != 0 {
		t.Errorf("the connection hints' origin got %d requests", n)
	}

	// want: the element and attribute of each broken link, by file.
	want := map[string]string{
		"missing-video.webm": "video src", "missing-poster.jpg": "video poster", "missing-track.vtt": "track src",
		"missing-audio.ogg": "audio src", "missing-embed.svg": "embed src", "missing-object.pdf": "object data",
		"missing-input.png": "input src", "missing-refresh.html": "meta content", "missing-srcset.png": "img srcset",
		"missing-source.webp": "source srcset", "missing-blockquote.html": "blockquote cite", "missing-q.html": "q cite",
		"missing-del.html": "del cite", "missing-ins.html": "ins cite",
	}
	fileOf := func(target string) string { return target[strings.LastIndex(target, "/")+1:] }

	code, out, stderr := run(t, "", "report", "--db", dbPath, "--format", "json")
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var doc struct {
		Findings []struct {
			Target, Verdict, Element, Attr, Kind string
			LinkID                               *int64 `json:"link_id"`
		} `json:"findings"`
		Links []struct {
			ID                        int64
			Element, Attr, Href, Kind string
			TargetID                  *int64 `json:"target_id"`
		} `json:"links"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range doc.Findings {
		got[fileOf(f.Target)] = append(got[fileOf(f.Target)], fmt.Sprintf("%s %s %s", f.Element, f.Attr, f.Verdict))
	}
	for file, ea := range want {
		if g := got[file]; len(g) != 1 || g[0] != ea+" not-found" {
			t.Errorf("JSON findings of %s: %q, want one %q", file, g, ea+" not-found")
		}
		delete(got, file)
	}
	if len(got) > 0 {
		t.Errorf("unexpected JSON findings: %v", got)
	}

	// The hints are links of the report, without a target.
	hints := 0
	for _, l := range doc.Links {
		if strings.HasPrefix(l.Href, dead.URL) {
			hints++
			if l.TargetID != nil || l.Element != "link" || l.Attr != "href" || l.Kind != "hint" {
				t.Errorf("connection hint %s: %s %s %s, target %v", l.Href, l.Element, l.Attr, l.Kind, l.TargetID)
			}
		}
	}
	if hints != 2 {
		t.Errorf("%d connection hints among the links, want 2", hints)
	}

	// SARIF: one result per broken link, with element and attribute, at
	// the link's line.
	b, err := os.ReadFile(sarifPath)
	if err != nil {
		t.Fatal(err)
	}
	var sarif struct {
		Runs []struct {
			Results []struct {
				RuleID     string `json:"ruleId"`
				Message    struct{ Text string }
				Properties map[string]any
				Locations  []struct {
					PhysicalLocation struct {
						Region struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b, &sarif); err != nil {
		t.Fatal(err)
	}
	var sgot []string
	for _, r := range sarif.Runs[0].Results {
		target, _ := r.Properties["target"].(string)
		line := 0
		if len(r.Locations) > 0 {
			line = r.Locations[0].PhysicalLocation.Region.StartLine
		}
		if line == 0 {
			t.Errorf("SARIF result %q has no line", r.Message.Text)
		}
		if want := "<" + fmt.Sprint(r.Properties["element"], " ", r.Properties["attr"]) + "> "; !strings.HasPrefix(r.Message.Text, want) {
			t.Errorf("SARIF message %q does not start with %q", r.Message.Text, want)
		}
		sgot = append(sgot, fmt.Sprintf("%s %v %v %s", fileOf(target), r.Properties["element"], r.Properties["attr"], r.RuleID))
	}
	var swant []string
	for file, ea := range want {
		swant = append(swant, file+" "+ea+" not-found")
	}
	sort.Strings(sgot)
	sort.Strings(swant)
	if strings.Join(sgot, "\n") != strings.Join(swant, "\n") {
		t.Errorf("SARIF results:\n%s\nwant:\n%s", strings.Join(sgot, "\n"), strings.Join(swant, "\n"))
	}
}

// TestExtractCommand_EveryLinkKind: `linkrot extract` prints each new
// kind of link with its element, attribute and position, a srcset
// candidate at its own URL.
func TestExtractCommand_EveryLinkKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.html")
	html := "<meta http-equiv=refresh content=\"0;url=/next\">\n<video poster=p.jpg></video>\n<img srcset=\"a.png 1x,\n b.png 2x\">\n" +
		"<link rel=dns-prefetch href=https://cdn.example>\n<q cite=\"/q\">q</q><input type=image src=go.png alt=Go>\n"
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "", "extract", "--base", "https://ex.org/d/", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Links []struct {
			Element, Attr, Href string
			Line, Column        int
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range doc.Links {
		got = append(got, fmt.Sprintf("%s %s %s %d:%d", l.Element, l.Attr, l.Href, l.Line, l.Column))
	}
	want := []string{
		"meta content https://ex.org/next 1:41",
		"video poster https://ex.org/d/p.jpg 2:15",
		"img srcset https://ex.org/d/a.png 3:14",
		"img srcset https://ex.org/d/b.png 4:2",
		"link href https://cdn.example/ 5:29",
		"q cite https://ex.org/q 6:10",
		"input src https://ex.org/d/go.png 6:41",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("extract links:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
