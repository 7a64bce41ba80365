package maintain_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/maintain"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
	"github.com/linkrot/linkrot/urls"
)

type harness struct {
	addr string
	wdb  *sqlstore.DB
	rdb  *sqlstore.DB
	rc   *maintain.Receiver
	stop func()
}

type harnessOpts struct {
	receiver maintain.ReceiverOptions
	limits   maintain.LimitOptions
	header   time.Duration
	noVerify bool
	verifier *maintain.VerifierOptions
}

// startServer runs the whole receiving side on loopback over the
// database at path: listener, net/http, receiver and verifier.
func startServer(t testing.TB, path string, o harnessOpts) *harness {
	t.Helper()
	ctx := context.Background()
	wdb, err := engines.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := engines.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	o.receiver.AllowPrivate = true // ext is on loopback
	rc := maintain.NewReceiver(rdb, wdb, o.receiver)
	if o.limits.Rate == 0 {
		o.limits = maintain.LimitOptions{Rate: 1000, Burst: 1000, Conns: 100}
	}
	lim := maintain.NewLimiter(o.limits)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := maintain.NewListener(inner, rc, lim, maintain.ListenerOptions{HeaderTimeout: o.header})
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "dashboard") })
	srv := &http.Server{Handler: rc.Handler(lim, dash, maintain.HTTPOptions{}), ReadHeaderTimeout: time.Second}
	go srv.Serve(ln)
	verCtx, stopVer := context.WithCancel(ctx)
	verDone := make(chan struct{})
	if o.noVerify {
		close(verDone)
	} else {
		vo := maintain.VerifierOptions{AllowPrivate: true, HostDelay: -1, Poll: 20 * time.Millisecond, FetchTimeout: time.Second, MaxAttempts: 1}
		if o.verifier != nil {
			vo = *o.verifier
		}
		ver := maintain.NewVerifier(wdb, check.New(check.Options{AllowPrivate: true, Timeout: time.Second, Retries: -1, DisableSoft404: true}), vo)
		go func() { ver.Run(verCtx, rc.Queued(), 5*time.Second); close(verDone) }()
	}
	h := &harness{addr: inner.Addr().String(), wdb: wdb, rdb: rdb, rc: rc}
	stopped := false
	h.stop = func() {
		if stopped {
			return
		}
		stopped = true
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		ln.Wait(sctx)
		rc.Close()
		stopVer()
		<-verDone
		rdb.Close()
		wdb.Close()
	}
	t.Cleanup(h.stop)
	return h
}

// raw sends data on a new TCP connection and returns the status line and
// body of the answer.
func raw(t testing.TB, addr, data string) (status int, line, body string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, data); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Status, string(b)
}

// waitInbox waits until no notification is queued.
func waitInbox(t testing.TB, db *sqlstore.DB) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		c, err := db.WireCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c[audit.WireQueued] == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("notifications still queued after 15s")
}

func wires(t testing.TB, db *sqlstore.DB) []*audit.WireRequest {
	t.Helper()
	ws, err := db.WireRequests(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestListener_DraftFraming speaks the draft's request lines over raw TCP:
// every method, every status code the draft names, malformed lines.
func TestListener_DraftFraming(t *testing.T) {
	ext := newExt(t)
	path := newSiteDB(t, ext.URL)
	h := startServer(t, path, harnessOpts{receiver: maintain.ReceiverOptions{}})
	a := site + "/a"
	cases := []struct {
		name, line string
		want       int
		reason     string
	}{
		{"LINK", "LINK " + ext.URL + "/links " + a, 200, "Ok"},
		{"LINK LINKMOD", "LINK  " + ext.URL + "/links-rel\t" + a + " linkmod", 200, "Ok"},
		{"LINK target elsewhere", "LINK " + ext.URL + "/links " + ext.URL + "/ok", 417, "Invalid target URI"},
		{"LINK target unknown page", "LINK " + ext.URL + "/links " + site + "/nope", 404, "Not found"},
		{"LINK source not http", "LINK ftp://x.example/ " + a, 416, "Invalid source URI"},
		{"LINK source metadata address", "LINK http://169.254.169.254/latest " + a, 416, "Invalid source URI"},
		{"LINKMOD target unspecified address", "LINKMOD " + a + " http://0.0.0.0/", 417, "Invalid target URI"},
		{"LINK target not a URL", "LINK " + ext.URL + "/links :::", 417, "Invalid target URI"},
		{"LINK bad third token", "LINK " + ext.URL + "/links " + a + " PLEASE", 400, "Bad Request"},
		{"UNLINK unknown", "UNLINK " + ext.URL + "/other " + a, 416, "Invalid source URI"},
		{"UNLINKR not our page", "UNLINKR " + ext.URL + "/ok " + ext.URL + "/gone", 416, "Invalid source URI"},
		{"UNLINKR page unknown", "UNLINKR " + site + "/nope " + ext.URL + "/gone", 404, "Not found"},
		{"UNLINKR no such link", "UNLINKR " + a + " " + ext.URL + "/never", 417, "Invalid target URI"},
		{"UNLINKR", "UNLINKR " + a + " " + ext.URL + "/gone " + ext.URL + "/new", 200, "Ok"},
		{"UNLINKR not borne out", "UNLINKR " + a + " " + ext.URL + "/ok", 200, "Ok"},
		{"LINKMOD", "LINKMOD " + a + " " + ext.URL + "/ok", 200, "Ok"},
		{"LINKMOD three URLs", "LINKMOD " + a + " " + ext.URL + "/ok " + ext.URL + "/new", 400, "Bad Request"},
		{"one URL", "UNLINK " + a, 400, "Bad Request"},
		{"five tokens", "UNLINKR a b c d", 400, "Bad Request"},
		{"control character", "LINK http://x.example/\x01 " + a, 400, "Bad Request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, line, body := raw(t, h.addr, c.line+"\r\nUser-Agent: test\r\n\r\n")
			if st != c.want || !strings.HasSuffix(line, c.reason) {
				t.Errorf("%q: got %q (%s), want %d %s", c.line, line, strings.TrimSpace(body), c.want, c.reason)
			}
		})
	}
	waitInbox(t, h.wdb)
	// The LINKs were verified: the sources link to /a.
	bls, err := h.wdb.Backlinks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(bls) != 2 || !bls[0].Draft || bls[0].Target != a {
		t.Fatalf("backlinks = %+v, want the two verified LINKs", bls)
	}
	linkmod := map[string]bool{}
	for _, b := range bls {
		linkmod[b.Source] = b.LinkMod
	}
	if !linkmod[ext.URL+"/links-rel"] || linkmod[ext.URL+"/links"] {
		t.Errorf("LINKMOD flags = %v", linkmod)
	}
	// UNLINK of a known backlink, then it is gone; UNLINK is idempotent
	// only while the link is known: a second one is 416.
	if st, line, _ := raw(t, h.addr, "UNLINK "+ext.URL+"/links "+a+"\r\n\r\n"); st != 200 {
		t.Fatalf("UNLINK known: %s", line)
	}
	waitInbox(t, h.wdb)
	if ok, _ := h.wdb.HasBacklink(context.Background(), ext.URL+"/links", a); ok {
		t.Error("UNLINK left the backlink")
	}
	if st, line, _ := raw(t, h.addr, "UNLINK "+ext.URL+"/links "+a+"\r\n\r\n"); st != 416 {
		t.Errorf("UNLINK again: %s, want 416", line)
	}
	// The UNLINKRs were checked, never applied blindly: the claim about
	// ext/gone is confirmed (404) and listed by Maintenance (linkrot
	// fixes); the one about ext/ok is recorded but not confirmed.
	claims, err := h.wdb.Claims(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 2 {
		t.Fatalf("claims = %+v", claims)
	}
	for _, c := range claims {
		switch c.Target {
		case normalized(ext.URL + "/gone"), ext.URL + "/gone":
			if !c.Confirmed || c.TargetVerdict != audit.VerdictNotFound || c.ReplacementVerdict != audit.VerdictOK || c.Claimant != "127.0.0.1" {
				t.Errorf("gone claim = %+v", c)
			}
		default:
			if c.Confirmed || c.TargetVerdict != audit.VerdictOK {
				t.Errorf("ok claim = %+v", c)
			}
		}
	}
	recs, err := h.wdb.Maintenance(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Origin != "unlinkr" || recs[0].Replacement != ext.URL+"/new" || recs[0].Status != 404 {
		t.Errorf("maintenance = %+v, want the confirmed claim only", recs)
	}
	// LINKMOD queued a drift check of the target.
	lcs, err := h.wdb.LiveChecks(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var sawLinkmod bool
	for _, lc := range lcs {
		if lc.Reason == audit.LiveLinkmod && lc.Verdict == audit.VerdictOK && lc.SHA256 != "" {
			sawLinkmod = true
		}
	}
	if !sawLinkmod {
		t.Errorf("no LINKMOD live check in %+v", lcs)
	}
}

func normalized(u string) string {
	n, err := urls.NormalizeURL(u)
	if err != nil {
		return u
	}
	return n
}

// TestListener_NoLinkmod: LINK ... LINKMOD answers 207 when LINKMOD calls
// are disabled, and the link is still recorded.
func TestListener_NoLinkmod(t *testing.T) {
	ext := newExt(t)
	h := startServer(t, newSiteDB(t, ext.URL), harnessOpts{receiver: maintain.ReceiverOptions{NoLinkMod: true}})
	st, line, _ := raw(t, h.addr, "LINK "+ext.URL+"/links "+site+"/a LINKMOD\r\n\r\n")
	if st != 207 || !strings.HasSuffix(line, "No Linkmod") {
		t.Fatalf("got %q, want 207 No Linkmod", line)
	}
	waitInbox(t, h.wdb)
	bls, _ := h.wdb.Backlinks(context.Background())
	if len(bls) != 1 || bls[0].LinkMod {
		t.Errorf("backlinks = %+v", bls)
	}
}

// TestListener_Hostile: oversized lines, garbage, slow clients, and plain
// HTTP beside the draft framing on the same port.
func TestListener_Hostile(t *testing.T) {
	ext := newExt(t)
	h := startServer(t, newSiteDB(t, ext.URL), harnessOpts{header: 500 * time.Millisecond})
	t.Run("Oversized", func(t *testing.T) {
		line := "LINK http://x.example/" + strings.Repeat("a", maintain.MaxLineLen) + " " + site + "/a\r\n\r\n"
		if st, l, _ := raw(t, h.addr, line); st != 400 {
			t.Errorf("got %q, want 400", l)
		}
	})
	t.Run("OversizedHeaders", func(t *testing.T) {
		req := "LINK " + ext.URL + "/links " + site + "/a\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 100)+"\r\n", 100) + "\r\n"
		if st, l, _ := raw(t, h.addr, req); st != 400 {
			t.Errorf("got %q, want 400", l)
		}
	})
	t.Run("Garbage", func(t *testing.T) {
		if st, l, _ := raw(t, h.addr, "UNLINKR \x00\xff\xfe junk\r\n\r\n"); st != 400 {
			t.Errorf("got %q, want 400", l)
		}
	})
	t.Run("Slowloris", func(t *testing.T) {
		c, err := net.Dial("tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		// One byte every 100ms: the total deadline (500ms) cuts it off,
		// however steadily it trickles.
		msg := "LINK " + ext.URL + "/links " + site + "/a\r\n\r\n"
		var werr error
		for i := 0; i < len(msg) && werr == nil && time.Since(start) < 3*time.Second; i++ {
			_, werr = c.Write([]byte{msg[i]})
			time.Sleep(100 * time.Millisecond)
		}
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		b, _ := io.ReadAll(c)
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("slow client held the connection for %v", el)
		}
		if len(b) > 0 && !strings.HasPrefix(string(b), "HTTP/1.1 400") {
			t.Errorf("answer %q, want 400 or nothing", b)
		}
	})
	t.Run("SlowHTTP", func(t *testing.T) {
		c, err := net.Dial("tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		start := time.Now()
		io.ReadAll(c) // net/http's ReadHeaderTimeout closes it
		if el := time.Since(start); el > 4*time.Second {
			t.Errorf("slow HTTP client held the connection for %v", el)
		}
	})
	t.Run("HTTPBeside", func(t *testing.T) {
		resp, err := http.Get("http://" + h.addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != "dashboard" {
			t.Errorf("GET / = %d %q", resp.StatusCode, b)
		}
		if l := resp.Header.Get("Link"); l != `</webmention>; rel="webmention"` {
			t.Errorf("Link = %q", l)
		}
	})
	t.Run("HalfClose", func(t *testing.T) {
		c, err := net.Dial("tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "LINK "+ext.URL+"/nolink "+site+"/a")
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		b, _ := io.ReadAll(c)
		if !strings.HasPrefix(string(b), "HTTP/1.1 200 Ok") {
			t.Errorf("answer %q", b)
		}
	})
}

// TestListener_RateLimit: a client over its budget gets 429; the budget is
// per address.
func TestListener_RateLimit(t *testing.T) {
	ext := newExt(t)
	h := startServer(t, newSiteDB(t, ext.URL), harnessOpts{limits: maintain.LimitOptions{Rate: 0.001, Burst: 2, Conns: 4}, noVerify: true})
	var got []int
	for i := 0; i < 4; i++ {
		st, _, _ := raw(t, h.addr, fmt.Sprintf("LINK %s/links?%d %s/a\r\n\r\n", ext.URL, i, site))
		got = append(got, st)
	}
	if fmt.Sprint(got) != "[200 200 429 429]" {
		t.Errorf("statuses %v, want [200 200 429 429]", got)
	}
	if n := len(wires(t, h.wdb)); n != 2 {
		t.Errorf("%d queued, want 2", n)
	}
}
