// Command studybench times linkrot study on a generated reference list
// and shows that a study killed with SIGKILL resumes without losing or
// repeating work:
//
//	go build -o /tmp/linkrot ./cmd/linkrot
//	go run ./cmd/studybench -linkrot /tmp/linkrot -refs 100000
//
// It generates -refs references (deterministic; every URL cited twice,
// 40 days apart) to a loopback web of three hosts: a site whose pages are
// live (unchanged since their mementos), drifted, 404 or 410, a host
// answering every URL with a "page not found" page (soft 404s) and a
// parked host; and a loopback Memento archive (link-format TimeMaps,
// Wayback replay) holding mementos inside the 7-day window of the first
// citation, outside it, or none. Then:
//
//  1. an uninterrupted linkrot study, as a child process: its wall time
//     and peak RSS (the child's VmHWM, read from /proc every 50 ms);
//  2. the same study on a fresh database, SIGKILLed twice: once while the
//     URLs are being checked and once while the TimeMaps are being asked
//     (each time when half of them are answered: the servers then hold
//     every later request until the kill, so that everything answered is
//     stored first), and run again after each kill until it completes.
//
// It reports whether the outputs of the resumed study (references.csv
// without checked_at, summary.csv) equal the uninterrupted one's, and,
// counted on the servers, how many requests the resumed study repeated
// (a URL checked, a TimeMap asked or a page fetched more often than in
// the uninterrupted study; soft-404 probes, random by design, are left
// out). The exit status is 1 when the outputs differ or work was
// repeated.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/store/engines"
)

func main() {
	var o Options
	flag.StringVar(&o.Linkrot, "linkrot", "", "the linkrot `binary` to time (go build -o /tmp/linkrot ./cmd/linkrot)")
	flag.IntVar(&o.Refs, "refs", 100000, "`number` of references (even: each URL is cited twice)")
	flag.StringVar(&o.Dir, "dir", "", "work `directory` (default: a temporary one, removed)")
	flag.BoolVar(&o.NoKill, "no-kill", false, "only the uninterrupted study")
	flag.StringVar(&childStderr, "child-stderr", "", "append the linkrot processes' stderr to this `file` (with GODEBUG=gctrace=1: the collector's trace)")
	flag.Parse()
	if o.Linkrot == "" {
		fmt.Fprintln(os.Stderr, "studybench: -linkrot is required")
		os.Exit(2)
	}
	res, err := Run(context.Background(), o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "studybench:", err)
		os.Exit(1)
	}
	if !res.OK() {
		os.Exit(1)
	}
}

// Options configure Run.
type Options struct {
	Linkrot string
	Refs    int
	Dir     string
	NoKill  bool
}

// Result is what Run measured.
type Result struct {
	Wall   time.Duration
	PeakMB float64
	// Kills is how many times the second study was killed; SameOutputs
	// whether its outputs equal the first's; Repeated the requests it
	// made beyond the first study's, by path (none when no work was
	// repeated); Lost the paths the first study requested and the second
	// did not.
	Kills       int
	SameOutputs bool
	Repeated    map[string]int
	Lost        []string
	killed      bool
}

// OK reports whether the resumed study lost and repeated nothing.
func (r *Result) OK() bool {
	return !r.killed || (r.SameOutputs && len(r.Repeated) == 0 && len(r.Lost) == 0)
}

// Run runs the benchmark, writing its report to w.
func Run(ctx context.Context, o Options, w io.Writer) (*Result, error) {
	if o.Refs < 2 {
		return nil, errors.New("-refs must be at least 2")
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "studybench")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	wd := newWorld(o.Refs)
	defer wd.close()
	refs := filepath.Join(dir, "refs.csv")
	if err := wd.writeRefs(refs); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "studybench: %d references, %d distinct URLs (%d live, %d drifted, %d 404, %d 410, %d soft-404, %d parked; %d archived)\n",
		o.Refs, len(wd.urls), wd.kinds["live"], wd.kinds["drift"], wd.kinds["dead"], wd.kinds["gone"], wd.kinds["soft"], wd.kinds["parked"], wd.archived)

	res := &Result{}
	out1 := filepath.Join(dir, "out1")
	st, err := runStudy(ctx, o.Linkrot, wd.args(refs, filepath.Join(dir, "one.db"), out1), nil)
	if err != nil {
		return nil, fmt.Errorf("uninterrupted study: %w", err)
	}
	res.Wall, res.PeakMB = st.wall, st.peakMB
	fmt.Fprintf(w, "uninterrupted: %s wall, peak RSS %.0f MB\n", st.wall.Round(10*time.Millisecond), st.peakMB)
	if o.NoKill {
		return res, nil
	}
	first := wd.counts()
	wd.reset()

	// The second study, killed while checking, then while asking
	// TimeMaps, and resumed each time.
	res.killed = true
	db2, out2 := filepath.Join(dir, "two.db"), filepath.Join(dir, "out2")
	args := wd.args(refs, db2, out2)
	onWeb := wd.kinds["live"] + wd.kinds["drift"] + wd.kinds["dead"] + wd.kinds["gone"]
	for _, phase := range []struct {
		name string
		gate *gate
		half int
	}{{"checks", wd.web.gate, onWeb / 2}, {"TimeMaps", wd.tm.gate, len(wd.urls) / 2}} {
		half := phase.half
		phase.gate.arm(int64(half))
		if _, err := runStudy(ctx, o.Linkrot, args, phase.gate); err != nil {
			return nil, fmt.Errorf("study killed during the %s: %w", phase.name, err)
		}
		res.Kills++
		fmt.Fprintf(w, "killed during the %s, after %d answers\n", phase.name, half)
		// The requests the gate holds belong to the dead process: let the
		// server see their connections closed before opening it.
		time.Sleep(500 * time.Millisecond)
		phase.gate.open()
	}
	st2, err := runStudy(ctx, o.Linkrot, args, nil)
	if err != nil {
		return nil, fmt.Errorf("resumed study: %w", err)
	}
	fmt.Fprintf(w, "resumed to the end: %s wall, peak RSS %.0f MB\n", st2.wall.Round(10*time.Millisecond), st2.peakMB)
	second := wd.counts()
	res.Repeated = map[string]int{}
	for k, n := range second {
		if n > first[k] {
			res.Repeated[k] = n - first[k]
		}
	}
	for k := range first {
		if second[k] == 0 {
			res.Lost = append(res.Lost, k)
		}
	}
	a, err := outputs(out1)
	if err != nil {
		return nil, err
	}
	b, err := outputs(out2)
	if err != nil {
		return nil, err
	}
	res.SameOutputs = a == b
	fmt.Fprintf(w, "outputs equal to the uninterrupted study's: %v\n", res.SameOutputs)
	fmt.Fprintf(w, "requests repeated: %d (over %d request paths); requests lost: %d\n", sum(res.Repeated), len(first), len(res.Lost))
	shown := 0
	for k, n := range res.Repeated {
		if shown++; shown <= 10 {
			fmt.Fprintf(w, "  repeated %dx: %s\n", n, k)
		}
	}
	for i, k := range res.Lost {
		if i < 10 {
			fmt.Fprintf(w, "  lost: %s\n", k)
		}
	}
	return res, nil
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// outputs returns references.csv without its checked_at column, and
// summary.csv.
func outputs(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, "references.csv"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	var b strings.Builder
	col := -1
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if col < 0 {
			for i, h := range rec {
				if h == "checked_at" {
					col = i
				}
			}
		} else if col < len(rec) {
			rec[col] = ""
		}
		b.WriteString(strings.Join(rec, "\x1f"))
		b.WriteByte('\n')
	}
	s, err := os.ReadFile(filepath.Join(dir, "summary.csv"))
	if err != nil {
		return "", err
	}
	return b.String() + "\x00" + string(s), nil
}

// childStderr, when set, is a file the children's stderr is appended to.
var childStderr string

// studyRun is one child process's measures.
type studyRun struct {
	wall   time.Duration
	peakMB float64
}

// runStudy runs linkrot study as a child process. With g, the child is
// SIGKILLed once g holds requests back and what the database holds of
// the run (its checks and memento rows) has not changed for a second and
// a half: everything answered before is stored.
func runStudy(ctx context.Context, bin string, args []string, g *gate) (studyRun, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr, stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if childStderr != "" {
		for i, a := range cmd.Args {
			if a == "--quiet" {
				cmd.Args[i] = "--verbose" // the stages' events, beside the RSS
			}
		}
		f, err := os.OpenFile(childStderr, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return studyRun{}, err
		}
		defer f.Close()
		cmd.Stderr = io.MultiWriter(&stderr, f)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return studyRun{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The child's peak RSS: the kernel's high-water mark of its memory
	// (VmHWM), read every 50 ms while it runs. Not ru_maxrss: Linux
	// carries the parent's high-water mark into a child started with
	// vfork (as os/exec starts it) when it execs, so ru_maxrss would be
	// this process's peak whenever that is larger.
	var hwm atomic.Int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var log io.Writer = io.Discard
		if childStderr != "" {
			if f, err := os.OpenFile(childStderr, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
				defer f.Close()
				log = f
			}
		}
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
			if err != nil {
				return
			}
			for _, l := range strings.Split(string(b), "\n") {
				f := strings.Fields(l)
				switch {
				case len(f) == 3 && f[0] == "VmHWM:":
					if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > hwm.Load() {
						hwm.Store(kb)
					}
				case len(f) == 3 && f[0] == "VmRSS:":
					fmt.Fprintf(log, "studybench: pid %d at %.2fs VmRSS %s kB\n", cmd.Process.Pid, time.Since(start).Seconds(), f[1])
				}
			}
			<-t.C
		}
	}()
	if g != nil {
		select {
		case <-g.holding:
		case err := <-done:
			return studyRun{}, fmt.Errorf("finished before the kill (%v): %s", err, stderr.String())
		}
		if err := settled(ctx, args[3]); err != nil {
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			return studyRun{}, err
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return studyRun{wall: time.Since(start)}, nil
	}
	err := <-done
	wall := time.Since(start)
	if err != nil {
		return studyRun{}, fmt.Errorf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	<-sampled
	r := studyRun{wall: wall, peakMB: float64(hwm.Load()) / 1024}
	if r.peakMB == 0 { // no /proc: the kernel's accounting, an upper bound
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.peakMB = float64(ru.Maxrss) / 1024 // Linux: KiB
		}
	}
	return r, nil
}

// settled waits until the latest run of the database at path has held
// the same number of checks and memento rows for 1.5 seconds.
func settled(ctx context.Context, path string) error {
	db, err := engines.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	count := func() (int, int) {
		r, err := db.LatestRun(ctx)
		if err != nil {
			return -1, -1
		}
		cs, err1 := db.Checks(ctx, r.ID)
		ms, err2 := db.Mementos(ctx, r.ID)
		if err1 != nil || err2 != nil {
			return -1, -1
		}
		return len(cs), len(ms)
	}
	c, m := count()
	since := time.Now()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		c2, m2 := count()
		if c2 != c || m2 != m {
			c, m, since = c2, m2, time.Now()
			continue
		}
		if time.Since(since) >= 1500*time.Millisecond {
			return nil
		}
	}
	return errors.New("the database did not settle")
}

// gate holds a server's requests back once it has answered a number of
// the study's URLs: armed with n, the n+1st answer waits until the gate
// opens again, and holding is closed when the first one waits.
type gate struct {
	mu      sync.Mutex
	armed   bool
	left    atomic.Int64
	holding chan struct{}
	release chan struct{}
	once    *sync.Once
}

func newGate() *gate {
	g := &gate{holding: make(chan struct{}), release: make(chan struct{})}
	close(g.release)
	g.once = new(sync.Once)
	return g
}

func (g *gate) arm(n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = true
	g.left.Store(n)
	g.holding, g.release, g.once = make(chan struct{}), make(chan struct{}), new(sync.Once)
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed {
		g.armed = false
		close(g.release)
	}
}

// pass returns false when the request must not be answered (its client
// went away while it waited).
func (g *gate) pass(r *http.Request) bool {
	g.mu.Lock()
	armed, holding, release, once := g.armed, g.holding, g.release, g.once
	g.mu.Unlock()
	if !armed || g.left.Add(-1) >= 0 {
		return true
	}
	once.Do(func() { close(holding) })
	select {
	case <-release:
		return r.Context().Err() == nil
	case <-r.Context().Done():
		return false
	}
}

// server is a loopback server counting its answers by method and path,
// behind a gate.
type server struct {
	*httptest.Server
	gate   *gate
	mu     sync.Mutex
	counts map[string]int
	// study reports whether a path is one of the study's (a cited URL or
	// a TimeMap): only those count toward the gate.
	study func(path string) bool
}

func newServer(h http.HandlerFunc, study func(string) bool) *server {
	s := &server{gate: newGate(), counts: map[string]int{}, study: study}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.study(r.URL.Path) && !s.gate.pass(r) {
			return
		}
		h(w, r)
		s.mu.Lock()
		s.counts[r.Method+" "+r.URL.Path]++
		s.mu.Unlock()
	}))
	return s
}

// world is the generated web and archive.
type world struct {
	web, soft, parked, tm *server
	arch                  *archivetest.Archive
	refs                  [][4]string // id, url, cited_at, group
	urls                  map[string]string
	kinds                 map[string]int
	archived              int
	// archFrom is where the archive's requests of the current study
	// start.
	archFrom int
	cleanups []func()
}

// tb is what archivetest.New needs of a test.
type tb struct{ w *world }

func (tb) Helper()            {}
func (t tb) Cleanup(f func()) { t.w.cleanups = append(t.w.cleanups, f) }

func page(title, text string) string {
	return `<!DOCTYPE html><html><head><title>` + title + `</title></head><body><main><h1>` + title + `</h1><p>` + text + `</p></main></body></html>`
}

func text(n int, words string) string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "%s %d, item %d. ", words, n, i)
	}
	return b.String()
}

func newWorld(n int) *world {
	wd := &world{urls: map[string]string{}, kinds: map[string]int{}}
	live := func(n int) string {
		return page("Station "+strconv.Itoa(n), text(n, "The survey of the water level at station"))
	}
	drifted := func(n int) string {
		return page("Offers "+strconv.Itoa(n), text(n, "Casino bonus and cheap lottery tickets for region"))
	}
	// A cited path is /kind/N; soft-404 probes are random words.
	isStudy := func(p string) bool {
		parts := strings.Split(p, "/")
		if len(parts) != 3 {
			return false
		}
		_, err := strconv.Atoi(parts[2])
		return err == nil
	}
	wd.web = newServer(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(r.URL.Path, "/")
		if len(parts) != 3 {
			http.NotFound(w, r)
			return
		}
		k, err := strconv.Atoi(parts[2])
		switch {
		case err != nil:
			http.NotFound(w, r)
		case parts[1] == "gone":
			http.Error(w, "gone", http.StatusGone)
		case parts[1] == "page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, live(k))
		case parts[1] == "drift":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, drifted(k))
		default:
			http.NotFound(w, r)
		}
	}, func(p string) bool {
		return isStudy(p) && (strings.HasPrefix(p, "/page/") || strings.HasPrefix(p, "/drift/") || strings.HasPrefix(p, "/dead/") || strings.HasPrefix(p, "/gone/"))
	})
	wd.soft = newServer(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page("Page not found", "Sorry, the page you are looking for could not be found. It may have been moved or deleted."))
	}, func(string) bool { return false })
	// The parked host answers with a parking lander of check's fixtures
	// when the bench runs from the module's root, else a lander of its
	// own.
	lander, err := os.ReadFile(filepath.Join("check", "testdata", "parked", "sedo.html"))
	if err != nil {
		lander = []byte(`<!DOCTYPE html><html><head><title>example-domain.com is for sale</title></head><body><h1>This domain is for sale!</h1><p>Buy this domain. The domain owner is offering it for sale. Make an offer. Related searches: cheap flights, insurance quotes, credit cards.</p><script src="https://img.sedoparking.com/js/park.js"></script></body></html>`)
	}
	wd.parked = newServer(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(lander)
	}, func(string) bool { return false })
	wd.arch = archivetest.New(tb{wd}, archivetest.Options{})
	au, _ := url.Parse(wd.arch.URL)
	proxy := httputil.NewSingleHostReverseProxy(au)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // the killed study's held requests
	wd.tm = newServer(proxy.ServeHTTP, func(p string) bool { return strings.HasPrefix(p, "/timemap/link/") })
	base := time.Date(2012, 1, 2, 0, 0, 0, 0, time.UTC)
	groups := []string{"PLOS ONE", "Harvard Law Review", "Nature", "Supreme Court"}
	for i := 0; i < n; i++ {
		u := i / 2
		kinds := []string{"live", "live", "live", "live", "drift", "dead", "gone", "soft", "parked", "live"}
		kind := kinds[u%len(kinds)]
		var raw string
		switch kind {
		case "live":
			raw = fmt.Sprintf("%s/page/%d", wd.web.URL, u)
		case "drift":
			raw = fmt.Sprintf("%s/drift/%d", wd.web.URL, u)
		case "dead":
			raw = fmt.Sprintf("%s/dead/%d", wd.web.URL, u)
		case "gone":
			raw = fmt.Sprintf("%s/gone/%d", wd.web.URL, u)
		case "soft":
			raw = fmt.Sprintf("%s/articles/%d", wd.soft.URL, u)
		case "parked":
			raw = fmt.Sprintf("%s/project/%d", wd.parked.URL, u)
		}
		day := base.AddDate(0, 0, (u*37)%4000)
		if i%2 == 1 {
			day = day.AddDate(0, 0, 40)
		}
		wd.refs = append(wd.refs, [4]string{fmt.Sprintf("10.5555/bench.%d", i), raw, day.Format("2006-01-02"), groups[u%len(groups)]})
		if i%2 == 1 {
			continue
		}
		wd.urls[raw] = kind
		wd.kinds[kind]++
		var at []time.Time
		switch u % 7 {
		case 0, 1, 2, 3:
			at = []time.Time{day.AddDate(0, 0, -2), day.AddDate(-1, 0, 0)}
		case 4:
			at = []time.Time{day.AddDate(0, 0, -30)}
		case 5:
			at = []time.Time{day.Add(6 * time.Hour)}
		}
		if len(at) > 0 {
			wd.archived++
		}
		body := live(u)
		for _, t := range at {
			wd.arch.Add(archivetest.Memento{Original: raw, Time: t, Body: body})
		}
	}
	return wd
}

func (wd *world) close() {
	for _, s := range []*server{wd.web, wd.soft, wd.parked, wd.tm} {
		s.gate.open()
		s.Close()
	}
	for i := len(wd.cleanups) - 1; i >= 0; i-- {
		wd.cleanups[i]()
	}
}

func (wd *world) writeRefs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	cw := csv.NewWriter(bw)
	cw.Write([]string{"id", "url", "cited_at", "group"})
	for _, r := range wd.refs {
		cw.Write(r[:])
	}
	cw.Flush()
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (wd *world) args(refs, db, out string) []string {
	fx := fmt.Sprintf("fx=%s/web/,timemap=%s/timemap/link/,rate=1000000", wd.arch.URL, wd.tm.URL)
	return []string{"study", refs, "--db", db, "--out", out, "--allow-private", "--archive", fx,
		"--fetch-rate", "1000000/min", "--timeout", "10s", "--retries", "0", "--per-host", "16", "--archive-workers", "8", "--quiet"}
}

// counts are the answers of every server by path: the study's URLs and
// TimeMaps, the live pages refetched for drift, the mementos fetched.
// Soft-404 probes (random paths) are left out.
func (wd *world) counts() map[string]int {
	out := map[string]int{}
	for name, s := range map[string]*server{"web": wd.web, "soft": wd.soft, "parked": wd.parked, "timemap": wd.tm} {
		s.mu.Lock()
		for k, n := range s.counts {
			if name != "timemap" && !wd.cited(s, k) {
				continue
			}
			out[name+" "+k] = n
		}
		s.mu.Unlock()
	}
	for _, r := range wd.arch.Requests()[wd.archFrom:] {
		if strings.HasPrefix(r.Path, "/web/") {
			out["archive "+r.Method+" "+r.Path]++
		}
	}
	return out
}

// cited reports whether "METHOD /path" of s is a cited URL.
func (wd *world) cited(s *server, k string) bool {
	_, p, _ := strings.Cut(k, " ")
	_, ok := wd.urls[s.URL+p]
	return ok
}

func (wd *world) reset() {
	wd.archFrom = len(wd.arch.Requests())
	for _, s := range []*server{wd.web, wd.soft, wd.parked, wd.tm} {
		s.mu.Lock()
		s.counts = map[string]int{}
		s.mu.Unlock()
	}
}
