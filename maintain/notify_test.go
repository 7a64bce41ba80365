package maintain_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/maintain"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// recorder is a loopback receiver of notifications in both framings that
// records what it got.
type recorder struct {
	url string
	mu  sync.Mutex
	got []string
}

func newRecorder(t testing.TB) *recorder {
	t.Helper()
	r := &recorder{}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.url = "http://" + inner.Addr().String()
	ln := maintain.NewListener(inner, nil, maintain.NewLimiter(maintain.LimitOptions{}), maintain.ListenerOptions{
		Handle: func(_ context.Context, req maintain.Request, _ string) maintain.Answer {
			r.add("draft " + req.String())
			return maintain.Answer{Status: 200, Text: "ok"}
		}})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.add(fmt.Sprintf("http %s %s target=%s repl=%s", req.Method, req.RequestURI,
			req.Header.Get(maintain.HeaderTarget), req.Header.Get(maintain.HeaderReplacement)))
		w.Header().Set(maintain.HeaderReason, "Ok")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); ln.Wait(context.Background()) })
	return r
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.got
	r.got = nil
	sort.Strings(g)
	return g
}

// addBacklink stores a verified backlink the way the verifier does.
func addBacklink(t testing.TB, db *sqlstore.DB, b audit.Backlink) {
	t.Helper()
	ctx := context.Background()
	w := &audit.WireRequest{ReceivedAt: time.Now(), Framing: "http", Method: "LINK", Source: b.Source, Target: b.Target, Client: "127.0.0.1"}
	if err := db.EnqueueWire(ctx, []*audit.WireRequest{w}); err != nil {
		t.Fatal(err)
	}
	b.Via, b.VerifiedAt, b.Client = "link", time.Now(), "127.0.0.1"
	if err := db.FinishWire(ctx, w.ID, audit.WireDone, "verified", store.WireEffect{UpsertBacklink: &b}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestNotifier: UNLINKR for our moved page to every source of it (the
// draft framing only to the one that spoke it), LINKMOD for our changed
// page to the source that asked for it; a second notify sends nothing.
func TestNotifier(t *testing.T) {
	ext := newExt(t)
	path := newSiteDB(t, ext.URL)
	draftRecv, httpRecv := newRecorder(t), newRecorder(t)
	db, err := engines.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	addBacklink(t, db, audit.Backlink{Source: draftRecv.url + "/p1", Target: site + "/old", Draft: true})
	addBacklink(t, db, audit.Backlink{Source: httpRecv.url + "/p2", Target: site + "/old"})
	addBacklink(t, db, audit.Backlink{Source: httpRecv.url + "/p3", Target: site + "/changing", LinkMod: true})
	addBacklink(t, db, audit.Backlink{Source: httpRecv.url + "/p4", Target: site + "/changing"})
	addBacklink(t, db, audit.Backlink{Source: httpRecv.url + "/p5", Target: site + "/a", LinkMod: true})

	n := maintain.NewNotifier(db, maintain.NotifierOptions{AllowPrivate: true, HostDelay: -1, Timeout: 2 * time.Second})
	res, err := n.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sent) != 3 {
		t.Fatalf("sent %d: %+v", len(res.Sent), res.Sent)
	}
	wantDraft := []string{fmt.Sprintf("draft UNLINKR %s/p1 %s/old %s/new-home", draftRecv.url, site, site)}
	wantHTTP := []string{
		fmt.Sprintf("http LINKMOD %s/p3 target=%s/changing repl=", httpRecv.url, site),
		fmt.Sprintf("http UNLINKR %s/p2 target=%s/old repl=%s/new-home", httpRecv.url, site, site),
	}
	if got := draftRecv.take(); fmt.Sprint(got) != fmt.Sprint(wantDraft) {
		t.Errorf("draft receiver got\n%q\nwant\n%q", got, wantDraft)
	}
	if got := httpRecv.take(); fmt.Sprint(got) != fmt.Sprint(wantHTTP) {
		t.Errorf("HTTP receiver got\n%q\nwant\n%q", got, wantHTTP)
	}
	ns, err := db.Notifications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ns {
		if !x.Done || x.Status != 200 || x.Answer != "200 Ok" || x.Attempts != 1 {
			t.Errorf("recorded %+v", x)
		}
	}
	// Idempotent across runs: nothing is sent twice.
	res, err = n.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sent) != 0 || res.AlreadySent != 3 {
		t.Errorf("second notify: sent %+v, already %d", res.Sent, res.AlreadySent)
	}
	if got := append(draftRecv.take(), httpRecv.take()...); len(got) != 0 {
		t.Errorf("second notify reached the receivers: %q", got)
	}
}

// TestNotifier_Unreachable: a receiver that does not answer is recorded
// without an answer and tried again by the next notify, up to the limit.
func TestNotifier_Unreachable(t *testing.T) {
	ext := newExt(t)
	path := newSiteDB(t, ext.URL)
	db, err := engines.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String()
	l.Close()
	addBacklink(t, db, audit.Backlink{Source: dead + "/p", Target: site + "/old"})
	n := maintain.NewNotifier(db, maintain.NotifierOptions{AllowPrivate: true, HostDelay: -1, Timeout: time.Second, MaxAttempts: 2})
	for i, want := range []int{1, 1, 0} {
		res, err := n.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Sent) != want {
			t.Fatalf("run %d: sent %d, want %d", i+1, len(res.Sent), want)
		}
		if want == 0 && res.GaveUp != 1 {
			t.Errorf("run %d: gave up %d, want 1", i+1, res.GaveUp)
		}
	}
	ns, _ := db.Notifications(context.Background())
	if len(ns) != 1 || ns[0].Done || ns[0].Status != 0 || ns[0].Attempts != 2 {
		t.Errorf("recorded %+v", ns)
	}
}

// TestNotifier_NotAReceiver: a host that answers the draft framing with
// something other than a status line does not speak the protocol: the
// answer is recorded and the notification not sent again.
func TestNotifier_NotAReceiver(t *testing.T) {
	ext := newExt(t)
	path := newSiteDB(t, ext.URL)
	db, err := engines.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("<!DOCTYPE HTML>\n<p>Bad request\n"))
			c.Close()
		}
	}()
	addBacklink(t, db, audit.Backlink{Source: "http://" + l.Addr().String() + "/p", Target: site + "/old", Draft: true})
	n := maintain.NewNotifier(db, maintain.NotifierOptions{AllowPrivate: true, HostDelay: -1, Timeout: time.Second})
	res, err := n.Run(context.Background())
	if err != nil || len(res.Sent) != 1 || !res.Sent[0].Done || res.Sent[0].Framing != "draft" {
		t.Fatalf("first notify: %+v, %v", res, err)
	}
	if res, _ := n.Run(context.Background()); len(res.Sent) != 0 || res.AlreadySent != 1 {
		t.Errorf("second notify: %+v", res)
	}
}
