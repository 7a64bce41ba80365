package maintain_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/maintain"
	"github.com/linkrot/linkrot/store/engines"
)

func do(t testing.TB, method, u string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestHTTPFraming: the draft's methods in HTTP/1.1, the Source-URL as the
// request target (origin form here: Go's client sends it so), the other
// URLs in header fields.
func TestHTTPFraming(t *testing.T) {
	ext := newExt(t)
	h := startServer(t, newSiteDB(t, ext.URL), harnessOpts{})
	base := "http://" + h.addr
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		want               int
		reason             string
	}{
		// The Source-URL of a LINK is their page, so the request target
		// is sent in absolute form by hand below; here: our pages.
		{"UNLINKR", "UNLINKR", "/a", map[string]string{"Link-Target": ext.URL + "/gone", "Link-Replacement": ext.URL + "/new"}, 416, "Invalid source URI"},
		{"no target", "LINKMOD", "/a", nil, 400, "Bad Request"},
		{"bad target", "LINKMOD", "/a", map[string]string{"Link-Target": "x"}, 417, "Invalid target URI"},
		{"linkmod on UNLINK", "UNLINK", "/a", map[string]string{"Link-Target": site + "/a", "Linkmod": "yes"}, 400, "Bad Request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := do(t, c.method, base+c.path, c.hdr)
			if resp.StatusCode != c.want || resp.Header.Get(maintain.HeaderReason) != c.reason {
				t.Errorf("%d %q (%s), want %d %s", resp.StatusCode, resp.Header.Get(maintain.HeaderReason), body, c.want, c.reason)
			}
		})
	}
	// Absolute form: the request target is the Source-URL itself.
	abs := func(method, source string, hdr map[string]string) (int, string) {
		st, line, body := raw(t, h.addr, method+" "+source+" HTTP/1.1\r\nHost: "+h.addr+"\r\n"+hdrLines(hdr)+"\r\n")
		return st, line + " " + body
	}
	if st, s := abs("LINK", ext.URL+"/links", map[string]string{"Link-Target": site + "/a", "Linkmod": "yes"}); st != 200 {
		t.Errorf("LINK: %s", s)
	}
	if st, s := abs("UNLINKR", site+"/a", map[string]string{"Link-Target": ext.URL + "/gone", "Link-Replacement": ext.URL + "/new"}); st != 200 {
		t.Errorf("UNLINKR: %s", s)
	}
	if st, s := abs("UNLINKR", site+"/a", map[string]string{"Link-Target": ext.URL + "/elsewhere"}); st != 417 {
		t.Errorf("UNLINKR unknown link: %s", s)
	}
	if st, s := abs("LINKMOD", site+"/nope", map[string]string{"Link-Target": ext.URL + "/ok"}); st != 404 {
		t.Errorf("LINKMOD unknown page: %s", s)
	}
	// Behind an HTTP proxy the request target is a path: Link-Source
	// carries the Source-URL.
	if resp, body := do(t, "LINKMOD", base+"/whatever", map[string]string{"Link-Source": site + "/a", "Link-Target": ext.URL + "/ok"}); resp.StatusCode != 200 {
		t.Errorf("Link-Source: %d %s", resp.StatusCode, body)
	}
	waitInbox(t, h.wdb)
	bls, _ := h.wdb.Backlinks(context.Background())
	if len(bls) != 1 || bls[0].Draft || !bls[0].LinkMod {
		t.Errorf("backlinks = %+v", bls)
	}
}

func hdrLines(h map[string]string) string {
	var b strings.Builder
	for k, v := range h {
		b.WriteString(k + ": " + v + "\r\n")
	}
	return b.String()
}

// TestWebmention: a source that links, one that does not, one that times
// out; invalid requests get 400 at once.
func TestWebmention(t *testing.T) {
	ext := newExt(t)
	h := startServer(t, newSiteDB(t, ext.URL), harnessOpts{})
	endpoint := "http://" + h.addr + maintain.WebmentionPath
	post := func(form url.Values) (int, string) {
		resp, err := http.PostForm(endpoint, form)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	a := site + "/a"
	for _, c := range []struct {
		name   string
		form   url.Values
		status int
	}{
		{"Links", url.Values{"source": {ext.URL + "/links"}, "target": {a}}, 202},
		{"DoesNotLink", url.Values{"source": {ext.URL + "/nolink"}, "target": {a}}, 202},
		{"TimesOut", url.Values{"source": {ext.URL + "/slow"}, "target": {a}}, 202},
		{"Gone", url.Values{"source": {ext.URL + "/gone"}, "target": {a}}, 202},
		{"NoSource", url.Values{"target": {a}}, 400},
		{"SameURL", url.Values{"source": {a}, "target": {a}}, 400},
		{"TargetElsewhere", url.Values{"source": {ext.URL + "/links"}, "target": {ext.URL + "/ok"}}, 400},
		{"TargetUnknown", url.Values{"source": {ext.URL + "/links"}, "target": {site + "/nope"}}, 400},
		{"SourceScheme", url.Values{"source": {"javascript:alert(1)"}, "target": {a}}, 400},
		{"TwoSources", url.Values{"source": {ext.URL + "/links", ext.URL + "/nolink"}, "target": {a}}, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			if st, body := post(c.form); st != c.status {
				t.Errorf("status %d (%s), want %d", st, body, c.status)
			}
		})
	}
	// Not a form: 400.
	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"source":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("JSON body: %d, want 400", resp.StatusCode)
	}
	// The endpoint is advertised on every response.
	if resp.Header.Get("Link") != `</webmention>; rel="webmention"` {
		t.Errorf("Link = %q", resp.Header.Get("Link"))
	}
	waitInbox(t, h.wdb)
	results := map[string]*audit.WireRequest{}
	for _, w := range wires(t, h.wdb) {
		results[strings.TrimPrefix(w.Source, ext.URL)] = w
	}
	if w := results["/links"]; w == nil || w.State != audit.WireDone {
		t.Errorf("linking source: %+v", w)
	}
	if w := results["/nolink"]; w == nil || w.State != audit.WireRejected || !strings.Contains(w.Result, "does not link") {
		t.Errorf("non-linking source: %+v", w)
	}
	if w := results["/slow"]; w == nil || w.State != audit.WireFailed || !strings.Contains(w.Result, "timeout") {
		t.Errorf("slow source: %+v", w)
	}
	if w := results["/gone"]; w == nil || w.State != audit.WireRejected || !strings.Contains(w.Result, "404") {
		t.Errorf("gone source: %+v", w)
	}
	bls, _ := h.wdb.Backlinks(context.Background())
	if len(bls) != 1 || bls[0].Source != ext.URL+"/links" || bls[0].Via != "webmention" {
		t.Fatalf("backlinks = %+v, want the linking source only", bls)
	}
	// An update: the source no longer links (Webmention 3.2.2 deletes).
	if st, _ := post(url.Values{"source": {ext.URL + "/links"}, "target": {a}}); st != 202 {
		t.Fatal(st)
	}
	waitInbox(t, h.wdb)
	if ok, _ := h.wdb.HasBacklink(context.Background(), ext.URL+"/links", a); !ok {
		t.Error("a repeated mention of a linking source dropped the backlink")
	}
}

// failingSite is a Site whose store fails.
type failingSite struct{}

var errStore = errors.New("disk on fire")

func (failingSite) SiteRun(context.Context) (*audit.Run, error) { return nil, errStore }
func (failingSite) SiteHosts(context.Context, int64) ([]string, error) {
	return nil, errStore
}
func (failingSite) PageInRun(context.Context, int64, string) (bool, error) { return false, errStore }
func (failingSite) PageLinksTo(context.Context, int64, string, string) (bool, error) {
	return false, errStore
}
func (failingSite) HasBacklink(context.Context, string, string) (bool, error) { return false, errStore }
func (failingSite) HasPendingLink(context.Context, string, string) (bool, error) {
	return false, errStore
}

type failingInbox struct{}

func (failingInbox) EnqueueWire(context.Context, []*audit.WireRequest) error { return errStore }

// TestReceiver_InternalError: a failing store answers 500, never 200.
func TestReceiver_InternalError(t *testing.T) {
	rc := maintain.NewReceiver(failingSite{}, failingInbox{}, maintain.ReceiverOptions{})
	defer rc.Close()
	a := rc.Handle(context.Background(), maintain.Request{Method: "LINK", Source: "http://a.example/", Target: site + "/a"}, "draft", "1.2.3.4")
	if a.Status != 500 {
		t.Errorf("got %d, want 500", a.Status)
	}
	for _, src := range []string{"http://10.1.2.3/", "http://[::1]:8080/", "http://[::ffff:127.0.0.1]/", "http://169.254.169.254/"} {
		if a := rc.Handle(context.Background(), maintain.Request{Method: "LINK", Source: src, Target: site + "/a"}, "draft", "x"); a.Status != 416 {
			t.Errorf("LINK from %s: %d, want 416 before anything else", src, a.Status)
		}
	}
	if a := rc.Recheck(context.Background(), site+"/a", "x"); a.Status != 500 {
		t.Errorf("recheck with failing inbox: %d, want 500", a.Status)
	}
	rc.Close()
	if a := rc.Recheck(context.Background(), site+"/a", "x"); a.Status != 503 {
		t.Errorf("after Close: %d, want 503", a.Status)
	}
	_ = time.Second
}

// TestRecheck_Drift: a re-check (and a LINKMOD) is compared with the
// check before it: the second check of an unchanged page is unchanged.
func TestRecheck_Drift(t *testing.T) {
	ext := newExt(t)
	h := startServer(t, newSiteDB(t, ext.URL), harnessOpts{})
	for i := 0; i < 2; i++ {
		if a := h.rc.Recheck(context.Background(), ext.URL+"/ok", "test"); a.Status != 202 {
			t.Fatalf("recheck: %+v", a)
		}
		waitInbox(t, h.wdb)
	}
	lcs, err := h.wdb.LiveChecks(context.Background(), normalized(ext.URL+"/ok"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(lcs) != 2 || lcs[0].Band != audit.BandUnchanged || lcs[0].PrevSHA256 != lcs[1].SHA256 || lcs[1].Band != "" {
		t.Errorf("live checks = %+v", lcs)
	}
}

// TestVerifier_PersistedQueue: notifications left queued by a stopped
// server are processed at the next start.
func TestVerifier_PersistedQueue(t *testing.T) {
	ext := newExt(t)
	path := newSiteDB(t, ext.URL)
	h := startServer(t, path, harnessOpts{noVerify: true})
	if st, line, _ := raw(t, h.addr, "LINK "+ext.URL+"/links "+site+"/a\r\n\r\n"); st != 200 {
		t.Fatal(line)
	}
	h.stop()
	h = startServer(t, path, harnessOpts{})
	waitInbox(t, h.wdb)
	if ok, _ := h.wdb.HasBacklink(context.Background(), ext.URL+"/links", site+"/a"); !ok {
		t.Error("the queued LINK was not verified at the next start")
	}
}

// TestVerifier_HostBudget: beyond its hourly budget a host's
// notifications wait in the queue (deferred), they are not fetched.
func TestVerifier_HostBudget(t *testing.T) {
	ext := newExt(t)
	h := startServer(t, newSiteDB(t, ext.URL), harnessOpts{verifier: &maintain.VerifierOptions{AllowPrivate: true, HostDelay: -1,
		Poll: 20 * time.Millisecond, FetchTimeout: time.Second, MaxAttempts: 1, HostBudget: 2}})
	for i := 0; i < 4; i++ {
		if st, line, _ := raw(t, h.addr, "LINK "+ext.URL+"/links?"+string(rune('a'+i))+" "+site+"/a\r\n\r\n"); st != 200 {
			t.Fatal(line)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		done, deferred := 0, 0
		for _, w := range wires(t, h.wdb) {
			switch {
			case w.State == audit.WireDone:
				done++
			case w.State == audit.WireQueued && !w.NotBefore.IsZero() && strings.Contains(w.Result, "budget"):
				deferred++
			}
		}
		if done == 2 && deferred == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("done %d, deferred %d; want 2 and 2", done, deferred)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestListener_InternalErrorOverTCP: the draft framing's 500.
func TestListener_InternalErrorOverTCP(t *testing.T) {
	rc := maintain.NewReceiver(failingSite{}, failingInbox{}, maintain.ReceiverOptions{})
	defer rc.Close()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := maintain.NewListener(inner, rc, maintain.NewLimiter(maintain.LimitOptions{}), maintain.ListenerOptions{})
	defer ln.Close()
	st, line, _ := raw(t, inner.Addr().String(), "LINK http://a.example/ "+site+"/a\r\n\r\n")
	if st != 500 || line != "500 Internal Server Error" {
		t.Errorf("got %q, want 500 Internal Server Error", line)
	}
}

// TestReceiver_WhileAuditWrites: the receiver's read-only lookups and the
// inbox keep working while another connection (an audit) writes batches
// of 50 pages on the same file.
func TestReceiver_WhileAuditWrites(t *testing.T) {
	ext := newExt(t)
	path := newSiteDB(t, ext.URL)
	h := startServer(t, path, harnessOpts{noVerify: true})
	writer, err := engines.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r := &audit.Run{StartedAt: time.Now(), Mode: "site", Seeds: []string{site + "/"}, Version: "audit"}
			if err := writer.CreateRun(context.Background(), r); err != nil {
				t.Error(err)
				return
			}
			var pages []*audit.Page
			for j := 0; j < 50; j++ {
				u := fmt.Sprintf("%s/gen/%d/%d", site, i, j)
				pages = append(pages, &audit.Page{Extraction: audit.Extraction{URL: u, Base: u, Parsed: true,
					Links: []audit.Link{{Element: "a", Href: ext.URL + "/ok"}}}, RequestURL: u, Status: 200})
			}
			if err := writer.SavePages(context.Background(), r.ID, pages); err != nil {
				t.Error(err)
				return
			}
			// An audit writes in batches between fetches; SQLite's busy
			// handler is not fair, so a writer that never pauses would
			// starve every other one (docs/serve.md: answers wait for the write
			// lock up to the busy timeout).
			time.Sleep(10 * time.Millisecond)
		}
	}()
	for i := 0; i < 15; i++ {
		if st, line, _ := raw(t, h.addr, fmt.Sprintf("LINK %s/links?%d %s/a\r\n\r\n", ext.URL, i, site)); st != 200 {
			t.Errorf("during audit writes: %s", line)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if n := len(wires(t, h.wdb)); n != 15 {
		t.Errorf("%d queued, want 15", n)
	}
}
