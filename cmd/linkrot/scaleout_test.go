package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/pgtest"
	"github.com/linkrot/linkrot/store/engines"
)

// natsServer is an embedded NATS server with JetStream on loopback.
type natsServer struct {
	*server.Server
	opts server.Options
}

// startNATS starts an embedded NATS server, stopped when the test ends.
func startNATS(t testing.TB) *natsServer {
	t.Helper()
	ns := &natsServer{opts: server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true}}
	ns.start(t)
	ns.opts.Port = ns.Addr().(*net.TCPAddr).Port // a restart keeps it
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns
}

func (ns *natsServer) start(t testing.TB) {
	t.Helper()
	opts := ns.opts
	s, err := server.NewServer(&opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("NATS server not ready")
	}
	ns.Server = s
}

// restart stops the server and starts it again on the same port and
// store directory.
func (ns *natsServer) restart(t testing.TB) {
	t.Helper()
	ns.Shutdown()
	ns.WaitForShutdown()
	ns.start(t)
}

// hostMeter counts what one host of a test web receives: requests in
// flight (and their most), the start of every request, the 429 pauses it
// asked for.
type hostMeter struct {
	name    string
	latency time.Duration

	mu       sync.Mutex
	inFlight int
	most     int
	starts   []time.Time
	paths    []string
	pauses   [][2]time.Time // [sent 429, Retry-After over)
	refused  map[string]bool
}

func (m *hostMeter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight, m.most, m.starts, m.paths, m.pauses, m.refused = 0, 0, nil, nil, nil, map[string]bool{}
}

// wrap counts the requests of h.
func (m *hostMeter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.inFlight++
		m.most = max(m.most, m.inFlight)
		m.starts = append(m.starts, time.Now())
		m.paths = append(m.paths, r.URL.Path)
		m.mu.Unlock()
		defer func() {
			m.mu.Lock()
			m.inFlight--
			m.mu.Unlock()
		}()
		time.Sleep(m.latency)
		h.ServeHTTP(w, r)
	})
}

// scaleWeb is a generated web of several hosts: site A (the main seed,
// many pages), site D (a second seed whose robots.txt asks Crawl-delay:
// 1), B (other site: ok and gone targets) and R (answers each path 429
// with Retry-After: 1 first).
type scaleWeb struct {
	a, d, b, r             *httptest.Server
	ma, md, mb, mr         *hostMeter
	pagesA, pagesD, linksB int

	// trap, when set, is a path of A whose first request blocks until
	// release is closed; reached is closed when it arrives.
	tmu              sync.Mutex
	trap             string
	trapped          bool
	reached, release chan struct{}
}

// setTrap makes the first request of path block until release is closed.
func (w *scaleWeb) setTrap(path string) (reached, release chan struct{}) {
	w.tmu.Lock()
	defer w.tmu.Unlock()
	w.trap, w.trapped, w.reached, w.release = path, false, make(chan struct{}), make(chan struct{})
	return w.reached, w.release
}

func newScaleWeb(t testing.TB, pagesA int, latency time.Duration) *scaleWeb {
	w := &scaleWeb{pagesA: pagesA, pagesD: 4, linksB: 6}
	w.ma = &hostMeter{name: "A", latency: latency}
	w.md = &hostMeter{name: "D", latency: latency}
	w.mb = &hostMeter{name: "B", latency: latency}
	w.mr = &hostMeter{name: "R", latency: latency}
	for _, m := range []*hostMeter{w.ma, w.md, w.mb, w.mr} {
		m.reset()
	}
	html := func(rw http.ResponseWriter, body string) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, "<!doctype html><html><head><title>t</title></head><body><h1 id=top>page</h1>%s<p>%s</p></body></html>", body, strings.Repeat("Words of the page about link rot. ", 20))
	}
	w.b = httptest.NewServer(w.mb.wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch n, ok := strings.CutPrefix(r.URL.Path, "/ok"); {
		// Only /ok<n>: a soft-404 probe's random path may start with "ok"
		// too (it did: /okr4es24...), and must get the 404.
		case ok && n != "" && strings.Trim(n, "0123456789") == "":
			html(rw, "external ok "+r.URL.Path)
		case r.URL.Path == "/gone":
			http.Error(rw, "gone", http.StatusGone)
		default:
			http.NotFound(rw, r)
		}
	})))
	w.r = httptest.NewServer(w.mr.wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mr.mu.Lock()
		first := !w.mr.refused[r.URL.Path] && r.URL.Path != "/robots.txt"
		if first {
			w.mr.refused[r.URL.Path] = true
			now := time.Now()
			w.mr.pauses = append(w.mr.pauses, [2]time.Time{now, now.Add(time.Second)})
		}
		w.mr.mu.Unlock()
		if first {
			rw.Header().Set("Retry-After", "1")
			http.Error(rw, "slow down", http.StatusTooManyRequests)
			return
		}
		html(rw, "rate limited host "+r.URL.Path)
	})))
	w.d = httptest.NewServer(w.md.wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(rw, "User-agent: *\nCrawl-delay: 1\n")
		case "/":
			html(rw, `<a href="/d1">d1</a> <a href="/d2">d2</a>`)
		case "/d1", "/d2":
			html(rw, `<a href="/d3">d3</a> <a href="/">home</a> <a href="/dmissing">m</a>`)
		case "/d3":
			html(rw, `<a href="/d1#top">d1</a>`)
		default:
			http.NotFound(rw, r)
		}
	})))
	w.a = httptest.NewServer(w.ma.wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var i int
		w.tmu.Lock()
		first := w.trap != "" && r.URL.Path == w.trap && !w.trapped
		release := w.release
		if first {
			w.trapped = true
			close(w.reached)
		}
		w.tmu.Unlock()
		{
			if first {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
		}
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(rw, r)
			return
		case r.URL.Path == "/":
			i = 0
		case r.URL.Path == "/moved":
			http.Redirect(rw, r, "/p1", http.StatusMovedPermanently)
			return
		default:
			// Exactly /pN: a soft-404 probe's random name such as
			// /p3ab… must not be served page 3 (Sscanf stops at the
			// digits), or its verdicts would depend on the dice.
			if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &i); err != nil || i <= 0 || i >= w.pagesA || r.URL.Path != fmt.Sprintf("/p%d", i) {
				http.NotFound(rw, r)
				return
			}
		}
		var b strings.Builder
		for _, j := range []int{(i + 1) % w.pagesA, (i*7 + 3) % w.pagesA, (i*13 + 5) % w.pagesA} {
			fmt.Fprintf(&b, `<a href="/p%d">p%d</a> `, j, j)
		}
		fmt.Fprintf(&b, `<a href="/missing%d">m</a> <a href="/p%d#top">top</a> <a href="/p%d#nowhere">bad fragment</a> `, i%5, (i+2)%w.pagesA, (i+3)%w.pagesA)
		fmt.Fprintf(&b, `<a href="%s/ok%d">b</a> <a href="%s/gone">g</a> <a href="%s/r%d">r</a> `, w.b.URL, i%w.linksB, w.b.URL, w.r.URL, i%3)
		if i == 0 {
			fmt.Fprintf(&b, `<a href="/moved">moved</a> <a href="%s/">d</a>`, w.d.URL)
		}
		html(rw, b.String())
	})))
	t.Cleanup(func() {
		for _, s := range []*httptest.Server{w.a, w.b, w.d, w.r} {
			s.CloseClientConnections()
			s.Close()
		}
	})
	return w
}

func (w *scaleWeb) meters() []*hostMeter { return []*hostMeter{w.ma, w.md, w.mb, w.mr} }

func (w *scaleWeb) reset() {
	for _, m := range w.meters() {
		m.reset()
	}
	w.tmu.Lock()
	w.trap = ""
	w.tmu.Unlock()
}

// checkPoliteness asserts what every host received: never more than
// perHost requests in flight, D's requests a Crawl-delay apart, nothing
// to R inside a Retry-After window it asked for.
func (w *scaleWeb) checkPoliteness(t *testing.T, perHost int) {
	t.Helper()
	for _, m := range w.meters() {
		m.mu.Lock()
		if m.most > perHost {
			t.Errorf("host %s: %d requests in flight at once, limit %d", m.name, m.most, perHost)
		}
		if len(m.starts) == 0 {
			t.Errorf("host %s: no requests", m.name)
		}
		m.mu.Unlock()
	}
	w.md.mu.Lock()
	var starts []time.Time
	for i, p := range w.md.paths {
		if p != "/robots.txt" {
			starts = append(starts, w.md.starts[i])
		}
	}
	w.md.mu.Unlock()
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	if len(starts) < 4 {
		t.Errorf("host D: %d page requests, want at least 4", len(starts))
	}
	for i := 1; i < len(starts); i++ {
		// Starts are reserved a second apart; arrival jitter on a busy
		// machine is allowed 200 ms.
		if gap := starts[i].Sub(starts[i-1]); gap < 800*time.Millisecond {
			t.Errorf("host D (Crawl-delay: 1): requests %d and %d only %v apart", i-1, i, gap)
		}
	}
	w.mr.mu.Lock()
	defer w.mr.mu.Unlock()
	if len(w.mr.pauses) == 0 {
		t.Error("host R: no 429 sent")
	}
	for _, p := range w.mr.pauses {
		for i, s := range w.mr.starts {
			// A request already on its way when the 429 left may arrive
			// just after it: 150 ms.
			if w.mr.paths[i] != "/robots.txt" && s.After(p[0].Add(150*time.Millisecond)) && s.Before(p[1]) {
				t.Errorf("host R: request for %s %v after a 429 with Retry-After: 1", w.mr.paths[i], s.Sub(p[0]))
			}
		}
	}
}

// results are a run's findings and verdicts as comparable rows.
func runResults(t *testing.T, path string) (checks, findings []string) {
	t.Helper()
	db := openDB(t, path)
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatalf("run of %s: %v", path, err)
	}
	id := r.ID
	cs, err := db.Checks(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		checks = append(checks, c.URL+" "+string(c.Verdict))
		if c.Soft404 != nil && c.Verdict == audit.VerdictSoft404 {
			// Why, for a failure's log.
			ev, _ := json.Marshal(c.Soft404)
			t.Logf("%s: soft-404 evidence %s", c.URL, ev)
		}
	}
	fs, err := db.Findings(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		findings = append(findings, f.PageURL+" -> "+f.Target+" "+string(f.Verdict)+" #"+f.Fragment)
	}
	slices.Sort(checks)
	slices.Sort(findings)
	return checks, findings
}

// TestScaleOut_MultiProcess is the scale-out mode end to end: three
// linkrot worker processes and a coordinating linkrot audit --nats on a
// shared database audit a generated web of four hosts; one worker is
// killed (SIGKILL) mid-run. Every host's limits hold (requests in flight,
// Crawl-delay, Retry-After), and the findings and verdicts equal those of
// a single-process audit of the same web.
func TestScaleOut_MultiProcess(t *testing.T) {
	const perHost = 2
	web := newScaleWeb(t, 30, 120*time.Millisecond)
	common := []string{"--per-host", fmt.Sprint(perHost), "--allow-private", "--timeout", "10s", "--no-report", "--fail-on", "none", "--no-archives",
		web.a.URL + "/", web.d.URL + "/"}

	refDB := filepath.Join(t.TempDir(), "ref.db")
	if code, _, stderr := run(t, "", append([]string{"audit", "--db", refDB}, common...)...); code != exitOK {
		t.Fatalf("single-process audit: exit %d\n%s", code, stderr)
	}
	wantChecks, wantFindings := runResults(t, refDB)
	if len(wantChecks) < 40 || len(wantFindings) < 20 {
		t.Fatalf("reference too small: %d checks, %d findings", len(wantChecks), len(wantFindings))
	}
	web.checkPoliteness(t, perHost)
	web.reset()

	ns := startNATS(t)
	t.Run("SQLiteFile", func(t *testing.T) {
		// One machine: the processes share a SQLite file.
		db := filepath.Join(t.TempDir(), "shared.db")
		openDB(t, db).Close() // the database exists before the workers open it
		// The coordinator is killed too, and re-attached with --resume.
		scaleOutRun(t, web, ns, db, common, perHost, wantChecks, wantFindings, func(coord *child, args []string) *child {
			coord.kill(t)
			return startChild(t, "", append([]string{"audit", "--resume"}, args[1:]...)...)
		})
	})
	t.Run("PostgreSQLAndRestarts", func(t *testing.T) {
		// Many machines: PostgreSQL; while a worker is killed, PostgreSQL
		// and the NATS server restart too (NATS on its store directory).
		dsn := pgtest.DSN(t)
		db, err := engines.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		scaleOutRun(t, web, ns, dsn, common, perHost, wantChecks, wantFindings, func(coord *child, _ []string) *child {
			if err := pgtest.Shared(t).Restart(); err != nil {
				t.Fatalf("restart PostgreSQL: %v", err)
			}
			ns.restart(t)
			return coord
		})
	})
}

// scaleOutRun audits web with three worker processes and a coordinating
// linkrot audit --nats on db; the first worker is killed while it holds a
// page (then disrupt runs, when not nil). The verdicts and findings must
// be want*, the hosts' limits hold.
func scaleOutRun(t *testing.T, web *scaleWeb, ns *natsServer, db string, common []string, perHost int, wantChecks, wantFindings []string, disrupt func(coord *child, args []string) *child) {
	web.reset()
	natsURL := ns.ClientURL()
	// The first worker alone until it holds the page /p7 (its request
	// blocks): then the others start, and it is killed mid-unit.
	reached, release := web.setTrap("/p7")
	workerArgs := []string{"worker", "--nats", natsURL, "--db", db, "--workers", "3", "--log-level", "info"}
	workers := []*child{startChild(t, "", workerArgs...)}
	coordArgs := append([]string{"audit", "--nats", natsURL, "--ack-wait", "3s", "--db", db}, common...)
	coord := startChild(t, "", coordArgs...)
	select {
	case <-reached:
	case <-coord.done:
		t.Fatalf("coordinator ended before /p7 was fetched: exit %d\n%s", coord.code, coord.errText())
	case <-time.After(time.Minute):
		t.Fatalf("/p7 never fetched:\n%s", workers[0].errText())
	}
	for range 2 {
		w := startChild(t, "", workerArgs...)
		w.waitLine(t, "worker started")
		workers = append(workers, w)
	}
	if err := workers[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-workers[0].done
	close(release)
	if disrupt != nil {
		select {
		case <-coord.done:
			t.Fatalf("the run ended before the restarts:\n%s", coord.errText())
		default:
		}
		coord = disrupt(coord, coordArgs)
	}
	select {
	case <-coord.done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("coordinator did not finish:\n%s\nworker:\n%s", coord.errText(), workers[1].errText())
	}
	if coord.code != exitOK {
		t.Fatalf("linkrot audit --nats: exit %d\n%s\nstdout:\n%s", coord.code, coord.errText(), coord.stdout.String())
	}
	gotChecks, gotFindings := runResults(t, db)
	if !slices.Equal(gotChecks, wantChecks) {
		t.Errorf("verdicts differ from the single-process run:\n got %q\nwant %q", gotChecks, wantChecks)
	}
	if !slices.Equal(gotFindings, wantFindings) {
		t.Errorf("findings differ from the single-process run:\n got %q\nwant %q", gotFindings, wantFindings)
	}
	web.checkPoliteness(t, perHost)
	// The limit bound (else the check above proves nothing).
	if web.ma.most != perHost {
		t.Errorf("host A: at most %d requests in flight, want the limit %d reached", web.ma.most, perHost)
	}
	if !strings.Contains(workers[1].errText()+workers[2].errText(), "delivered again") {
		t.Errorf("the killed worker's unit was not redelivered:\n%s\n%s", workers[1].errText(), workers[2].errText())
	}
	for _, m := range web.meters() {
		t.Logf("host %s: %d requests, at most %d in flight", m.name, len(m.starts), m.most)
	}
	t.Logf("%d checks, %d findings; killed worker's stderr:\n%s", len(gotChecks), len(gotFindings), workers[0].errText())
	// The workers leave on SIGTERM, handing back what they hold.
	for _, w := range workers[1:] {
		if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.done:
			if w.code != exitOK {
				t.Errorf("worker exit %d after SIGTERM:\n%s", w.code, w.errText())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("worker did not stop on SIGTERM")
		}
	}
}

// TestScaleOut_Errors: an unreachable NATS server is one line and an exit
// code, with nothing written; credentials on the command line are refused.
func TestScaleOut_Errors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "nats://" + l.Addr().String()
	l.Close()
	site := httptest.NewServer(http.NotFoundHandler())
	defer site.Close()
	db := filepath.Join(t.TempDir(), "l.db")
	code, _, stderr := run(t, "", "audit", "--nats", dead, "--db", db, site.URL+"/")
	if code != exitFailure || !strings.Contains(stderr, "connect to NATS at "+dead) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("unreachable NATS: exit %d, stderr %q: want %d and one line", code, stderr, exitFailure)
	}
	if r, err := openDB(t, db).LatestRun(context.Background()); err == nil {
		t.Errorf("run %d written although NATS was unreachable", r.ID)
	}
	code, _, stderr = run(t, "", "worker", "--nats", dead, "--db", db)
	if code != exitFailure || !strings.Contains(stderr, "connect to NATS at "+dead) {
		t.Errorf("worker, unreachable NATS: exit %d, stderr %q", code, stderr)
	}
	for _, args := range [][]string{
		{"audit", "--nats", "nats://user:secret@127.0.0.1:4222", "--db", db, site.URL + "/"},
		{"worker", "--nats", "nats://user:secret@127.0.0.1:4222", "--db", db},
		{"worker", "--db", db},
		{"audit", "--nats", dead, "--max-pages", "5", "--db", db, site.URL + "/"},
	} {
		if code, _, stderr := run(t, "", args...); code != exitUsage {
			t.Errorf("%q: exit %d (%s), want %d", args, code, stderr, exitUsage)
		}
	}
}
