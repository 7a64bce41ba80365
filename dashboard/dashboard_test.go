package dashboard

import (
	"bufio"
	"context"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/engines"
	"golang.org/x/net/html"
)

func get(t *testing.T, h http.Handler, target string) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	return rec.Code, rec.Body.String(), rec.Header()
}

// wellFormed parses the page and fails on markup the tokenizer rejects
// or an element left open that must be closed.
func wellFormed(t *testing.T, where, body string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(body))
	var stack []string
	void := map[string]bool{"meta": true, "input": true, "br": true, "img": true, "link": true, "hr": true}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				t.Fatalf("%s: %v", where, z.Err())
			}
			if len(stack) != 0 {
				t.Errorf("%s: unclosed elements %v", where, stack)
			}
			return
		case html.StartTagToken:
			name, _ := z.TagName()
			if !void[string(name)] {
				stack = append(stack, string(name))
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if len(stack) == 0 || stack[len(stack)-1] != string(name) {
				t.Fatalf("%s: </%s> closes %v", where, name, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// rowCount counts the body rows of the table with the given id that are
// not the empty-table row.
func rowCount(body, id string) int {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return -1
	}
	end := strings.Index(body[i:], "</table>")
	tbl := body[i : i+end]
	return strings.Count(tbl, "<tr>") - 1 - strings.Count(tbl, `<td colspan=`)
}

func TestDashboard_Pages(t *testing.T) {
	f := newFixture(t)
	h := New(f.openRO(t), Options{})
	gone := strconv.FormatInt(f.targets[gonePath], 10)
	for _, u := range []string{"/", "/broken", "/links", "/pages", "/broken?run=1", "/links?verdict=broken",
		"/target/" + gone, "/page?url=" + url.QueryEscape(site), "/search?q=site", "/search"} {
		code, body, hdr := get(t, h, u)
		if code != 200 {
			t.Errorf("GET %s = %d", u, code)
			continue
		}
		if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'sha256-") {
			t.Errorf("GET %s: CSP %q", u, csp)
		}
		wellFormed(t, u, body)
	}
	for u, want := range map[string]int{"/target/999999": 404, "/target/x": 400, "/broken?run=abc": 400, "/broken?run=99": 404,
		"/page?url=https%3A%2F%2Fnowhere.example%2F": 404, "/nope": 404, "/links?p=0": 400} {
		if code, body, _ := get(t, h, u); code != want {
			t.Errorf("GET %s = %d, want %d", u, code, want)
		} else {
			wellFormed(t, u, body)
		}
	}
}

// TestDashboard_InternalLinks follows every link the dashboard makes to
// itself, from the overview on: each answers 200 (a link checker's
// dashboard has no broken links).
func TestDashboard_InternalLinks(t *testing.T) {
	f := newFixture(t)
	h := New(f.openRO(t), Options{})
	seen := map[string]bool{"/": true}
	queue := []string{"/"}
	for len(queue) > 0 && len(seen) < 400 {
		u := queue[0]
		queue = queue[1:]
		code, body, _ := get(t, h, u)
		if code != 200 {
			t.Errorf("GET %s = %d", u, code)
			continue
		}
		z := html.NewTokenizer(strings.NewReader(body))
		for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
			if tt != html.StartTagToken {
				continue
			}
			if name, _ := z.TagName(); string(name) != "a" {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				if string(k) == "href" && strings.HasPrefix(string(v), "/") && !seen[string(v)] {
					seen[string(v)] = true
					queue = append(queue, string(v))
				}
				if !more {
					break
				}
			}
		}
	}
	if len(seen) < 20 {
		t.Errorf("only %d internal links found", len(seen))
	}
	for _, want := range []string{"/page?url=https%3a%2f%2fsite.example%2fabout&run=3", "/target/" + strconv.FormatInt(f.targets[gonePath], 10)} {
		if !seen[want] {
			t.Errorf("no link to %s", want)
		}
	}
}

func TestDashboard_Overview(t *testing.T) {
	f := newFixture(t)
	_, body, _ := get(t, New(f.openRO(t), Options{}), "/")
	// One dot per run for each of broken, drifted and unprotected.
	if n := strings.Count(body, "<circle "); n != 9 {
		t.Errorf("trend chart has %d data points, want 9 (3 runs × 3 series)", n)
	}
	for _, s := range []string{`data-series="broken"`, `data-series="drifted"`, `data-series="unprotected"`, `id="t-runs"`} {
		if !strings.Contains(body, s) {
			t.Errorf("overview lacks %s", s)
		}
	}
	if rowCount(body, "t-runs") != 3 {
		t.Errorf("runs table has %d rows, want 3", rowCount(body, "t-runs"))
	}
	if strings.Contains(body, `id="live"`) || strings.Contains(body, "http-equiv=\"refresh\"") {
		t.Error("no run is running, yet the overview shows one in progress")
	}
}

func TestDashboard_Filters(t *testing.T) {
	f := newFixture(t)
	h := New(f.openRO(t), Options{})
	rows := func(u, table string) int {
		t.Helper()
		code, body, _ := get(t, h, u)
		if code != 200 {
			t.Fatalf("GET %s = %d", u, code)
		}
		return rowCount(body, table)
	}
	// Latest run: gone (gone), moved, evil (timeout), fine (fragment).
	for u, want := range map[string]int{
		"/broken":                              4,
		"/broken?verdict=moved":                1,
		"/broken?verdict=gone":                 1,
		"/broken?verdict=fragment-missing":     1,
		"/broken?host=ext.example":             1,
		"/broken?confirmed=confirmed":          1, // gone failed in runs 2 and 3
		"/broken?q=goes+away":                  1, // anchor text of a linking page
		"/broken?run=1":                        2, // run 1: moved and the timeout
		"/links":                               9,
		"/links?verdict=broken":                4, // two links to gone, the timeout, the fragment
		"/links?element=img":                   1,
		"/links?q=about":                       2,
		"/pages":                               2,
		"/pages?broken=with+broken+links":      2,
		"/pages?q=about":                       1,
		"/links?verdict=skipped&host=nohow":    0,
		"/broken?verdict=&host=&confirmed=&q=": 4, // the form without JavaScript sends every field
	} {
		if got := rows(u, strings.SplitN("t-"+strings.TrimPrefix(u, "/"), "?", 2)[0]); got != want {
			t.Errorf("GET %s: %d rows, want %d", u, got, want)
		}
	}
	// The selects keep the chosen value, so the form shows the filter.
	_, body, _ := get(t, h, "/broken?verdict=moved")
	if !strings.Contains(body, `<option value="moved" selected>`) {
		t.Error("the verdict filter does not show the chosen value")
	}
}

func TestDashboard_TargetHistory(t *testing.T) {
	f := newFixture(t)
	h := New(f.openRO(t), Options{})
	_, body, _ := get(t, h, "/target/"+strconv.FormatInt(f.targets[gonePath], 10))
	if n := rowCount(body, "t-checks"); n != 3 {
		t.Errorf("target page lists %d checks, want 3 (one per run)", n)
	}
	for _, v := range []string{">ok<", ">not-found<", ">gone<", "confirmed broken", archiveAt, "off-topic"} {
		if !strings.Contains(body, v) {
			t.Errorf("target page lacks %q", v)
		}
	}
	if n := rowCount(body, "t-linked"); n != 2 {
		t.Errorf("target page lists %d linking pages, want 2", n)
	}
	if strings.Count(body, `class="timeline"`) != 1 || strings.Count(body, `<span class="bad" title="run`) != 2 {
		t.Error("the timeline does not show the two failed checks")
	}
	// Site page: its links and their verdicts.
	_, body, _ = get(t, h, "/page?url="+url.QueryEscape(aboutURL))
	if rowCount(body, "t-page-links") != 1 || !strings.Contains(body, ">gone<") {
		t.Errorf("the about page does not list its one link to a gone target")
	}
}

func TestDashboard_Search(t *testing.T) {
	f := newFixture(t)
	h := New(f.openRO(t), Options{})
	_, body, _ := get(t, h, "/search?q=EXT.example")
	if !strings.Contains(body, movedURL) || strings.Contains(body, fineURL+"<") {
		t.Error("search for ext.example: wrong targets")
	}
	// LIKE wildcards and quotes are plain characters: '_' finds only the
	// javascript: target that has one.
	_, body, _ = get(t, h, "/search?q=_")
	if n := strings.Count(body, `<li><a href="/target/`); n != 1 || !strings.Contains(body, "javascript:window.__xss=3</a>") {
		t.Errorf("search _ found %d targets", n)
	}
	for _, q := range []string{"%", "'; DROP TABLE runs;--"} {
		_, body, _ := get(t, h, "/search?q="+url.QueryEscape(q))
		if !strings.Contains(body, "No target URL contains that.") {
			t.Errorf("search %q matched something", q)
		}
	}
	_, body, _ = get(t, h, "/search?q=about")
	if !strings.Contains(body, `id="s-pages"`) || !strings.Contains(body, "crawled last in run #3") {
		t.Error("search does not find the about page in the latest run")
	}
	if code, _, _ := get(t, h, "/search?q="+strings.Repeat("a", maxQuery+1)); code != 400 {
		t.Errorf("an overlong query answered %d, want 400", code)
	}
}

func TestDashboard_HostileTextStaysText(t *testing.T) {
	f := newFixture(t)
	h := New(f.openRO(t), Options{})
	for _, u := range []string{"/", "/broken", "/links", "/pages", "/page?url=" + url.QueryEscape(site),
		"/page?url=" + url.QueryEscape(aboutURL), "/target/" + strconv.FormatInt(f.targets[evilURL], 10), "/search?q=evil"} {
		_, body, _ := get(t, h, u)
		for _, bad := range []string{"<script>window.__xss", "<img src=x", `href="javascript:`, "</title><script>"} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s: hostile markup %q is live", u, bad)
			}
		}
		// Exactly one script element: the dashboard's own.
		if n := strings.Count(body, "<script"); n != 1 {
			t.Errorf("GET %s: %d script elements", u, n)
		}
	}
	_, body, _ := get(t, h, "/links")
	if !strings.Contains(body, "&lt;script&gt;window.__xss=1&lt;/script&gt;click me") {
		t.Error("the hostile anchor text is not shown as text")
	}
	// The javascript: target links to its dashboard page, never to itself.
	if !strings.Contains(body, `">javascript:window.__xss=3</a>`) {
		t.Error("the javascript: target is not shown as text")
	}
	_, body, _ = get(t, h, "/target/"+strconv.FormatInt(f.targets[hostileHref], 10))
	if !strings.Contains(body, `<span class="url nolink">javascript:window.__xss=3</span>`) {
		t.Error("the javascript: target page does not show its URL as plain text")
	}
}

func TestDashboard_Actions(t *testing.T) {
	f := newFixture(t)
	db := f.openRO(t)
	target := "/target/" + strconv.FormatInt(f.targets[gonePath], 10)
	_, body, _ := get(t, New(db, Options{}), target)
	if strings.Contains(body, "/actions/") || strings.Contains(body, "<form class=\"inline\"") {
		t.Error("action forms rendered without ActionsEnabled")
	}
	_, body, _ = get(t, New(db, Options{ActionsEnabled: true, CSRFToken: "tok<&>", Prefix: "/dash/"}), target)
	for _, want := range []string{`action="/dash/actions/recheck"`, `name="target_id" value="` + strconv.FormatInt(f.targets[gonePath], 10) + `"`,
		`action="/dash/actions/dismiss"`, `name="finding_id" value="`, `name="csrf" value="tok&lt;&amp;&gt;"`} {
		if !strings.Contains(body, want) {
			t.Errorf("target page with actions lacks %s", want)
		}
	}
}

func TestDashboard_ReadOnly(t *testing.T) {
	f := newFixture(t)
	db := f.openRO(t)
	ctx := context.Background()
	if err := db.CreateRun(ctx, &audit.Run{Mode: "site", Version: "test"}); err == nil {
		t.Fatal("CreateRun through the read-only handle succeeded")
	}
	if err := db.FinishRun(ctx, f.runs[0], audit.RunFailed, time.Now(), "x"); err == nil {
		t.Fatal("FinishRun through the read-only handle succeeded")
	}
	// A writer on the same file keeps working while the dashboard reads,
	// and the dashboard sees its commits.
	w, err := engines.Open(ctx, f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	h := New(db, Options{})
	run := &audit.Run{Mode: "site", Seeds: []string{site}, Version: "test"}
	if err := w.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	_, body, _ := get(t, h, "/")
	if !strings.Contains(body, "Run #"+strconv.FormatInt(run.ID, 10)+" in progress") || !strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("the overview does not show the new run in progress")
	}
	if err := w.FinishRun(ctx, run.ID, audit.RunComplete, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	if _, body, _ := get(t, h, "/"); strings.Contains(body, "in progress<") && strings.Contains(body, `id="live"`) {
		t.Error("the finished run is still shown in progress")
	}
}

func TestDashboard_Events(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	w, err := engines.Open(ctx, f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	run := &audit.Run{Mode: "site", Seeds: []string{site}, Version: "test"}
	if err := w.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	// A server WriteTimeout shorter than the stream: the stream extends
	// its write deadline.
	srv := httptest.NewUnstartedServer(New(f.openRO(t), Options{PollInterval: 20 * time.Millisecond}))
	srv.Config.WriteTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, "GET", srv.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	next := func() (string, string) {
		t.Helper()
		var ev, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev != "":
				return ev, data
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return "", ""
	}
	id := strconv.FormatInt(run.ID, 10)
	if ev, data := next(); ev != "progress" || !strings.Contains(data, `"run":`+id) || !strings.Contains(data, `"pages":0`) {
		t.Fatalf("first event %s %s", ev, data)
	}
	// Longer than the WriteTimeout: the stream is still open.
	time.Sleep(500 * time.Millisecond)
	// The run stores a page: the next event counts it.
	p := &audit.Page{Extraction: audit.Extraction{URL: site, Parsed: true}, Status: 200}
	if err := w.SavePages(ctx, run.ID, []*audit.Page{p}); err != nil {
		t.Fatal(err)
	}
	if ev, data := next(); ev != "progress" || !strings.Contains(data, `"pages":1`) {
		t.Fatalf("after a page: %s %s", ev, data)
	}
	if err := w.FinishRun(ctx, run.ID, audit.RunComplete, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	if ev, data := next(); ev != "done" || data != `{"run":`+id+`}` {
		t.Fatalf("after the run ended: %s %s", ev, data)
	}
	if ev, _ := next(); ev != "idle" {
		t.Fatalf("then %s, want idle", ev)
	}
}

// TestDashboard_RedactsPasswords: a database written before the store
// redacted URL passwords may hold some; no page shows them.
func TestDashboard_RedactsPasswords(t *testing.T) {
	f := newFixture(t)
	raw, err := sql.Open("sqlite", "file:"+f.path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "https://user:hunter2@secret.example/x"
	for _, q := range []string{
		`UPDATE targets SET url = '` + secret + `' WHERE id = ` + strconv.FormatInt(f.targets[movedURL], 10),
		`UPDATE pages SET url = '` + secret + `/page', title = 'see ` + secret + `' WHERE url = '` + aboutURL + `'`,
		`UPDATE checks SET final_url = '` + secret + `/final' WHERE target_id = ` + strconv.FormatInt(f.targets[movedURL], 10),
		`UPDATE runs SET seeds = '["` + secret + `"]'`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	h := New(f.openRO(t), Options{})
	for _, u := range []string{"/", "/broken", "/links", "/pages", "/search?q=secret", "/search?q=hunter2",
		"/target/" + strconv.FormatInt(f.targets[movedURL], 10), "/page?url=" + url.QueryEscape("https://user:***@secret.example/x/page")} {
		code, body, _ := get(t, h, u)
		if code != 200 {
			t.Errorf("GET %s = %d", u, code)
		}
		if strings.Contains(body, "hunter2") && !strings.HasSuffix(u, "hunter2") {
			t.Errorf("GET %s shows the password", u)
		}
		if strings.HasSuffix(u, "hunter2") && (!strings.Contains(body, "No target URL contains that.") || !strings.Contains(body, "No page URL contains that.")) {
			t.Error("search finds URLs through their password")
		}
		if u == "/broken" && !strings.Contains(body, "user:***@secret.example") {
			t.Errorf("GET %s: the redacted URL is missing", u)
		}
	}
}
