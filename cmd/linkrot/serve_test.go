package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/store/engines"
)

// serveSiteDB writes a database with one complete run of
// http://site.example/: page /a links to ext/slow and ext/gone.
func serveSiteDB(t *testing.T, ext string) string {
	t.Helper()
	return serveSiteDBAt(t, filepath.Join(t.TempDir(), "linkrot.db"), ext)
}

// serveSiteDBAt is serveSiteDB into the database path (a file or a
// postgres:// URL).
func serveSiteDBAt(t *testing.T, path, ext string) string {
	t.Helper()
	ctx := context.Background()
	db := openDB(t, path)
	r := &audit.Run{StartedAt: time.Now().UTC(), Mode: "site", Seeds: []string{"http://site.example/"}, Version: "test"}
	if err := db.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	p := &audit.Page{Extraction: audit.Extraction{URL: "http://site.example/a", Base: "http://site.example/a", Parsed: true,
		Links: []audit.Link{{Element: "a", Href: ext + "/slow"}, {Element: "a", Href: ext + "/gone"}}},
		RequestURL: "http://site.example/a", Status: 200, ContentType: "text/html"}
	if err := db.SavePages(ctx, r.ID, []*audit.Page{p}); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, r.ID, audit.RunComplete, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return path
}

// TestServeCommand_SIGTERM: serve answers both framings on one port and
// stops cleanly on SIGTERM: a draft request in flight is answered, a
// verification in progress past the drain time stays queued (nothing
// half-written), and the process exits 0.
func TestServeCommand_SIGTERM(t *testing.T) {
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}
		http.NotFound(w, r)
	}))
	defer ext.Close()
	path := serveSiteDB(t, ext.URL)
	c := startChild(t, "", "serve", "--db", path, "--listen", "127.0.0.1:0", "--log-level", "info",
		"--allow-private", "--drain-timeout", "300ms", "--fetch-timeout", "10s")
	var addr string
	timeout := time.After(60 * time.Second)
	for addr == "" {
		select {
		case l := <-c.lines:
			if _, a, ok := strings.Cut(l, "addr="); ok {
				addr = strings.Fields(a)[0]
			}
		case <-timeout:
			t.Fatalf("no address; stderr:\n%s", c.errText())
		}
	}
	// The dashboard and the Webmention Link header.
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "http://site.example/") || resp.Header.Get("Link") != `</webmention>; rel="webmention"` {
		t.Fatalf("GET / = %d, Link %q", resp.StatusCode, resp.Header.Get("Link"))
	}
	// An UNLINKR whose check will outlive the drain time.
	st := draft(t, addr, "UNLINKR http://site.example/a "+ext.URL+"/slow\r\n\r\n")
	if !strings.HasPrefix(st, "HTTP/1.1 200 Ok") {
		t.Fatalf("UNLINKR: %q", st)
	}
	time.Sleep(300 * time.Millisecond) // the verifier takes it
	// A draft request in flight when SIGTERM arrives: line sent, blank
	// line not yet.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "UNLINKR http://site.example/a "+ext.URL+"/gone\r\n")
	time.Sleep(100 * time.Millisecond)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	io.WriteString(conn, "\r\n")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(conn).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 200 Ok") {
		t.Errorf("in-flight request answered %q, want 200 Ok", line)
	}
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, c.errText())
	}
	if !strings.Contains(c.stdout.String(), "Stopped. Notifications:") {
		t.Errorf("stdout: %s", c.stdout.String())
	}
	db, err := engines.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws, err := db.WireRequests(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, w := range ws {
		states[strings.TrimPrefix(w.Target, ext.URL)] = w.State
	}
	// /slow was abandoned at the drain deadline: still queued for the
	// next start. /gone was accepted during shutdown: done or queued,
	// never lost.
	if len(ws) != 2 || states["/slow"] != audit.WireQueued || states["/gone"] == "" {
		t.Errorf("inbox after SIGTERM: %v", states)
	}
}

func draft(t *testing.T, addr, req string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, req)
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return line
}

// TestServeCommand_Token: the token is read from a file or the
// environment, never from the arguments, and must be long enough.
func TestServeCommand_Token(t *testing.T) {
	short := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(short, []byte("short\n"), 0o600)
	if code, _, errOut := run(t, "", "serve", "--token-file", short); code != exitUsage || !strings.Contains(errOut, "16 characters") {
		t.Errorf("short token: exit %d, %s", code, errOut)
	}
	if code, _, _ := run(t, "", "serve", "--token", "x"); code != exitUsage {
		t.Errorf("--token on the command line: exit %d, want usage", code)
	}
}

// TestNotifyCommand: nothing registered, nothing sent; a second run
// neither.
func TestNotifyCommand(t *testing.T) {
	path := serveSiteDB(t, "http://127.0.0.1:9")
	for i := 0; i < 2; i++ {
		code, out, errOut := run(t, "", "notify", "--db", path, "--allow-private")
		if code != exitOK || !strings.Contains(out, "Sent 0 notifications; 0 already sent") {
			t.Errorf("notify: exit %d\n%s%s", code, out, errOut)
		}
	}
	if code, _, _ := run(t, "", "notify", "--db", path, "--framing", "smoke-signals"); code != exitUsage {
		t.Errorf("bad framing: exit %d", code)
	}
}

// TestFixesCommand_Claims: an UNLINKR confirmed by serve's checks is a
// fix (in every format); one not borne out is listed apart, escaped.
func TestFixesCommand_Claims(t *testing.T) {
	ext := "http://ext.example"
	path := serveSiteDB(t, ext)
	db := openDB(t, path)
	ctx := context.Background()
	for i, c := range []audit.Claim{
		{RunID: 1, Source: "http://site.example/a", Target: ext + "/gone", Replacement: ext + "/new", Claimant: "192.0.2.7",
			TargetVerdict: audit.VerdictNotFound, TargetStatus: 404, ReplacementVerdict: audit.VerdictOK, Confirmed: true, Note: "confirmed: target not-found (404)"},
		{RunID: 1, Source: "http://site.example/a", Target: ext + "/slow", Claimant: "192.0.2.8\x1b[31m",
			TargetVerdict: audit.VerdictOK, TargetStatus: 200, Note: "not borne out: the target answers ok (200)"},
	} {
		c.ClaimedAt = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
		w := &audit.WireRequest{ReceivedAt: c.ClaimedAt, Framing: "draft", Method: "UNLINKR", Source: c.Source, Target: c.Target, Client: c.Claimant}
		if err := db.EnqueueWire(ctx, []*audit.WireRequest{w}); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishWire(ctx, w.ID, audit.WireDone, c.Note, store.WireEffect{Claim: &c}, c.ClaimedAt); err != nil {
			t.Fatal(i, err)
		}
	}
	code, out, errOut := run(t, "", "fixes", "--db", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Run 1: 1 links to update.",
		"→ " + ext + "/new  (404)",
		"UNLINKR from 192.0.2.7: confirmed: target not-found (404)",
		"1 UNLINKR claims received by linkrot serve that its checks did not bear out (not proposed):",
		`from 192.0.2.8\x1b[31m at 2026-01-02 03:04: not borne out`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("fixes output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("an escape sequence from a notification reached the terminal")
	}
	_, out, _ = run(t, "", "fixes", "--db", path, "--format", "unlinkr")
	if strings.TrimSpace(out) != "UNLINKR http://site.example/a "+ext+"/gone "+ext+"/new" {
		t.Errorf("unlinkr format: %q", out)
	}
}

// TestServeCommand_DashboardActions: the dashboard is mounted at "/";
// anonymous readers get no forms and no CSRF token; after logging in with
// the token, the target page's re-check form (target_id, csrf) queues a
// re-check, and its dismiss form (finding_id, csrf) hides the finding from
// the dashboard's links table until "show dismissed" is followed.
// TestServeCommand_DashboardActions runs on SQLite and on PostgreSQL (the
// dashboard's read-only pool and the writer of its actions).
func TestServeCommand_DashboardActions(t *testing.T) {
	forEachBackend(t, testServeCommandDashboardActions)
}

func testServeCommandDashboardActions(t *testing.T, path string) {
	ext := httptest.NewServer(http.NotFoundHandler())
	defer ext.Close()
	path = serveSiteDBAt(t, path, ext.URL)
	{
		// A finding on the link to ext/gone, for the dismiss form.
		ctx := context.Background()
		db := openDB(t, path)
		r, err := db.LatestRun(ctx)
		if err != nil {
			t.Fatal(err)
		}
		links, err := db.LinkRefs(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var fs []audit.Finding
		for _, l := range links {
			if strings.HasSuffix(l.Href, "/gone") {
				fs = append(fs, audit.Finding{RunID: r.ID, PageURL: l.PageURL, LinkID: l.LinkID, Target: l.Href,
					Verdict: audit.VerdictNotFound, Message: "link not-found: gone"})
			}
		}
		if len(fs) != 1 {
			t.Fatalf("links = %+v", links)
		}
		if err := db.SaveFindings(ctx, fs); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	tokFile := filepath.Join(t.TempDir(), "token")
	const tok = "a-long-enough-test-token"
	os.WriteFile(tokFile, []byte(tok+"\n"), 0o600)
	c := startChild(t, "", "serve", "--db", path, "--listen", "127.0.0.1:0", "--log-level", "info", "--token-file", tokFile, "--allow-private")
	var addr string
	timeout := time.After(60 * time.Second)
	for addr == "" {
		select {
		case l := <-c.lines:
			if _, a, ok := strings.Cut(l, "addr="); ok {
				addr = strings.Fields(a)[0]
			}
		case <-timeout:
			t.Fatalf("no address; stderr:\n%s", c.errText())
		}
	}
	base := "http://" + addr
	get := func(cl *http.Client, p string) string {
		resp, err := cl.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", p, resp.StatusCode)
		}
		return string(b)
	}
	anon := get(http.DefaultClient, "/target/1")
	if strings.Contains(anon, `name="csrf"`) {
		t.Error("an anonymous reader got a form with the CSRF token")
	}
	jar := newJar(t)
	cl := &http.Client{Jar: jar}
	resp, err := cl.PostForm(base+"/actions/login", url.Values{"token": {tok}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	page := get(cl, "/target/1")
	_, after, ok := strings.Cut(page, `name="csrf" value="`)
	if !ok {
		t.Fatalf("no re-check form after login:\n%s", page)
	}
	csrf, _, _ := strings.Cut(after, `"`)
	noRedirect := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noRedirect.PostForm(base+"/actions/recheck", url.Values{"target_id": {"1"}, "csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 {
		t.Fatalf("recheck: %d", resp.StatusCode)
	}
	resp, err = http.PostForm(base+"/actions/recheck", url.Values{"target_id": {"1"}, "csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("recheck without the session cookie: %d, want 401", resp.StatusCode)
	}
	// Dismiss the finding: the links table hides it, "show dismissed"
	// shows it marked.
	links := get(cl, "/links")
	_, after, ok = strings.Cut(links, `name="finding_id" value="`)
	if !ok || !strings.Contains(links, "link not-found: gone") {
		t.Fatalf("no dismiss form on /links:\n%s", links)
	}
	finding, _, _ := strings.Cut(after, `"`)
	resp, err = noRedirect.PostForm(base+"/actions/dismiss", url.Values{"finding_id": {finding}, "csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 {
		t.Fatalf("dismiss: %d", resp.StatusCode)
	}
	links = get(http.DefaultClient, "/links")
	if strings.Contains(links, "link not-found: gone") || !strings.Contains(links, "show dismissed (1)") {
		t.Errorf("after the dismissal /links still shows the finding, or no toggle:\n%s", links)
	}
	links = get(http.DefaultClient, "/links?dismissed=1")
	if !strings.Contains(links, "link not-found: gone") || !strings.Contains(links, `<span class="badge dismissed">dismissed</span>`) {
		t.Errorf("/links?dismissed=1 does not show the dismissed finding marked:\n%s", links)
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	db := openDB(t, path)
	ws, err := db.WireRequests(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].Method != audit.WireRecheck || ws[0].Framing != audit.FramingDashboard {
		t.Errorf("inbox = %+v", ws)
	}
}

func newJar(t *testing.T) http.CookieJar {
	j, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
