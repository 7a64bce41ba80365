// Command linkrotbench times linkrot audit beside a minimal net/http link
// checker built into it and, optionally, muffet, on the same web, in the
// same run, in rotating order:
//
//	go build -o /tmp/linkrot ./cmd/linkrot
//	go run ./cmd/linkrotbench -linkrot /tmp/linkrot -pages 5000 -rounds 3
//	go run ./cmd/linkrotbench -linkrot /tmp/linkrot -dir /usr/share/doc/python-django-doc/html -workers 64
//	go run ./cmd/linkrotbench -linkrot /tmp/linkrot -pages 20000 -links 52 -rounds 1 -report
//	go run ./cmd/linkrotbench -linkrot /tmp/linkrot -dir /usr/share/doc/python3.11/html -workers 16 -per-host 16 -muffet /tmp/muffet
//
// The generated web (default) is one site of -pages pages on loopback
// (answering at once) that links to -hosts external hosts answering after
// -latency: page i links to two children and one more page of the site,
// to one external target of its own, to one shared by 25 pages and to one
// linked from every page. 5,000 pages make 10,201 unique URLs (plus the
// redirect hops of the 4% of targets that moved); 85% of external
// targets answer 200, 7% 404, 3% 410 and 4% redirect once. With -links
// N > 6 each page carries N links: the extra ones link, four in five, to
// other pages of the site and, one in five, to 5,000 shared targets of
// each external host (20,000 pages of 52 links: about a million links);
// -report then also times `linkrot report` of each run's database as HTML
// and as JSON. With -dir a
// directory (a documentation tree) is served as the site instead, without
// latency, and only its own URLs are checked.
//
// The checkers run as child processes, so that their wall time and peak
// RSS (the kernel's accounting of each child) compare fairly: the plain
// checker is this program run as "linkrotbench plain". Every checker gets
// the same limits: -workers requests in all, -per-host per host (by
// default as many as -workers; more than -workers is refused). Requests
// are counted on the servers; the minimum is every URL once, every
// redirect hop included (the plain checker's unique requests). Each round
// also compares the broken URLs they found.
//
// With -muffet PATH, each round also times muffet (github.com/raviqqe/muffet,
// fasthttp, nothing stored) with --max-connections -workers,
// --max-connections-per-host -per-host, the plain checker's timeout and
// --format json; with -dir also --exclude of the external URLs, as
// linkrot gets --skip. The order rotates: each checker goes first in turn.
// Muffet's JSON lists each page with its failed links; a failed link's URL
// counts broken with its fragment dropped, once, as the other checkers
// report targets. Links muffet reports for a missing id (it checks
// fragments; the others do not) and links it could not parse are counted
// apart. Each round prints the URLs found broken by all three or by only
// some, the wall ratios linkrot/plain and linkrot/muffet and each
// checker's requests over the minimum; the last line their medians. Muffet
// is never vendored into this repository nor run in CI; build it from a
// fetched snapshot, its dependencies through the Go module proxy:
//
//	git clone https://github.com/raviqqe/muffet /tmp/muffet-src   # or check out a fetched snapshot there
//	cd /tmp/muffet-src && go build -o /tmp/muffet .               # its modules from the Go module proxy
//
// With -floor, after the rounds, the bench prints a lower bound on what
// linkrot's run must cost, on the web just timed. It crawls the site once
// more, in its own process and untimed, with the plain checker's crawl
// (same hosts, same link kinds, same -workers and -per-host), keeping the
// body of every site page served as text/html. Then it measures its parts
// in process, each 3 times, keeping the smallest CPU (user and system
// from getrusage, garbage collection included): "extraction", the plain
// checker's tokenizer pass over every page it extracted (twice for a page
// it reached under two URLs, such as a directory's index.html and "/", as
// it did in its run); and "store", the pages and one row per link
// occurrence the tokenizer found, written to a fresh SQLite file through
// modernc.org/sqlite with linkrot's pragmas, in the minimal interned
// schema (targets, pages, links referencing targets by id; ids assigned
// in a Go map), 200 pages a transaction, multi-row INSERTs of up to 100
// rows prepared once per row count, counted back after. The floor is the
// design of issue 26, one tokenizer pass per page: the plain checker's
// median CPU (its own tokenizer pass included, as linkrot's pass replaces
// it) plus store. With -floor-tree it is the design before, one HTML5
// tree per page: "tree", html.Parse of every distinct page, is measured
// too and the floor is the plain checker's CPU less its extraction, plus
// tree and store. Divided by runtime.NumCPU the floor is the least wall
// time linkrot could take, printed as a ratio to the plain checker's
// median wall (1.00× when the floor is below that wall, as on a
// latency-bound web) and, with -muffet, to muffet's. It is a lower bound,
// not an estimate: it leaves out everything else linkrot does (resolving
// URLs its own way, evidence, checks rows, soft-404 probes, fingerprints,
// history, findings), and assumes the work spreads over every processor.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/engines"
	"golang.org/x/net/html"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "plain" {
		if err := plain(os.Args[2:]); err != nil {
			log.Fatal(err)
		}
		return
	}
	pages := flag.Int("pages", 5000, "pages of the generated site")
	hosts := flag.Int("hosts", 8, "external hosts of the generated web")
	latency := flag.Duration("latency", 50*time.Millisecond, "latency of external answers")
	dir := flag.String("dir", "", "serve this directory as the site instead of the generated web")
	bin := flag.String("linkrot", "linkrot", "the linkrot binary to time")
	muffet := flag.String("muffet", "", "also time this muffet binary in the same rounds (see the package doc for how to build one)")
	workers := flag.Int("workers", 512, "checks in parallel in all, for every checker")
	perHost := flag.Int("per-host", 0, "requests in parallel per host, for every checker (0: as -workers; at most -workers)")
	rounds := flag.Int("rounds", 3, "rounds (each runs every checker, rotating which goes first)")
	links := flag.Int("links", 6, "links on each generated page (6: the web described above; more: the extra ones link, four in five, to other pages of the site and, one in five, to 5,000 shared targets of each external host)")
	report := flag.Bool("report", false, "after each linkrot run, time `linkrot report` of its database as HTML and as JSON (wall, CPU, peak RSS)")
	floor := flag.Bool("floor", false, "after the rounds, crawl the site once more in this process and print a lower bound on linkrot's CPU and wall time (see the package doc)")
	floorTree := flag.Bool("floor-tree", false, "the floor as before issue 26 (implies -floor): the plain checker's tokenizer pass replaced by one html.Parse tree per page")
	serveOnly := flag.Bool("serve", false, "only serve the web and print the seed URL, until interrupted (to time the checkers with another tool)")
	flag.Parse()

	if *links < 6 {
		log.Fatalf("-links %d: at least 6", *links)
	}
	if (*floor || *floorTree) && *rounds < 1 {
		log.Fatalf("-floor needs at least one round (the plain checker's median)")
	}
	limit, err := perHostLimit(*workers, *perHost)
	if err != nil {
		log.Fatal(err)
	}
	*perHost = limit
	w := &web{pages: *pages, links: *links, latency: *latency, hits: map[string]int{}}
	site, err := w.serve(*dir == "", func() http.Handler {
		if *dir != "" {
			return http.FileServer(http.Dir(*dir))
		}
		return http.HandlerFunc(w.site)
	}())
	if err != nil {
		log.Fatal(err)
	}
	seed := site + "/"
	if *dir == "" {
		for range *hosts {
			u, err := w.serve(true, http.HandlerFunc(w.external))
			if err != nil {
				log.Fatal(err)
			}
			w.ext = append(w.ext, u)
		}
		seed = site + "/p/0"
	} else {
		seed = site + "/index.html"
	}
	w.siteURL = site
	if *serveOnly {
		fmt.Println(seed)
		select {}
	}
	tmp, err := os.MkdirTemp("", "linkrotbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	b := &bench{w: w, out: os.Stdout, stderr: os.Stderr, tmp: tmp, seed: seed, skipExternal: *dir != "",
		workers: *workers, perHost: *perHost, self: self, linkrot: *bin, muffet: *muffet, report: *report}

	fmt.Printf("web: %s, seed %s, workers %d, per-host %d\n", describe(*dir, *pages, *hosts, *links, *latency), seed, *workers, *perHost)
	sum, err := b.rounds(*rounds, b.checkers())
	if err != nil {
		log.Fatal(err)
	}
	if *floor || *floorTree {
		seedURL, err := url.Parse(seed)
		if err != nil {
			log.Fatal(err)
		}
		f, err := measureFloor(sitePages(seedURL, *workers, *perHost), tmp, *floorTree)
		if err != nil {
			log.Fatal(err)
		}
		seconds := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
		f.print(os.Stdout, floorBeside{
			plainCPU:   seconds(median(sum.plainCPU)),
			plainWall:  seconds(median(sum.plainWall)),
			muffetWall: seconds(median(sum.muffetWall)),
			cores:      runtime.NumCPU(),
		})
	}
}

// perHostLimit is the per-host limit every checker gets: -per-host, or
// -workers when it is 0. A per-host limit above -workers is refused, as
// no checker could use it and each would read it differently.
func perHostLimit(workers, perHost int) (int, error) {
	switch {
	case workers < 1:
		return 0, fmt.Errorf("-workers %d: at least 1", workers)
	case perHost == 0:
		return workers, nil
	case perHost < 0:
		return 0, fmt.Errorf("-per-host %d: at least 1 (or 0: as -workers)", perHost)
	case perHost > workers:
		return 0, fmt.Errorf("-per-host %d is above -workers %d: at most -workers", perHost, workers)
	}
	return perHost, nil
}

func describe(dir string, pages, hosts, links int, latency time.Duration) string {
	if dir != "" {
		return "directory " + dir
	}
	if links > 6 {
		all := 0 // as site writes them
		for i := range pages {
			for _, c := range []int{2*i + 1, 2*i + 2} {
				if c < pages {
					all++
				}
			}
			all += 4 + links - 6
		}
		return fmt.Sprintf("generated, %d pages of up to %d links (%d links in all), %d external hosts at %s", pages, links, all, hosts, latency)
	}
	return fmt.Sprintf("generated, %d pages, %d unique URLs, %d external hosts at %s", pages, 2*pages+pages/25+1, hosts, latency)
}

// treeSize is the size of a file, or of the files below a directory.
func treeSize(path string) int64 {
	var n int64
	filepath.Walk(path, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// web is the served web and its request counts.
type web struct {
	pages   int
	links   int // links on each page
	latency time.Duration
	siteURL string
	ext     []string

	mu    sync.Mutex
	hits  map[string]int
	total atomic.Int64
}

func (w *web) serve(count bool, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.total.Add(1)
		w.mu.Lock()
		w.hits[base+r.URL.RequestURI()]++
		w.mu.Unlock()
		h.ServeHTTP(rw, r)
	})}
	go srv.Serve(ln)
	return base, nil
}

// site serves page /p/i of the generated site.
func (w *web) site(rw http.ResponseWriter, r *http.Request) {
	var i int
	if _, err := fmt.Sscanf(r.URL.Path, "/p/%d", &i); err != nil || i < 0 || i >= w.pages || r.URL.Path != fmt.Sprintf("/p/%d", i) {
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	b := bufio.NewWriter(rw)
	fmt.Fprintf(b, "<!doctype html><html><head><title>Page %d</title></head><body><main><h1 id=\"top-%d\">Page %d</h1><p>", i, i, i)
	for k := range 40 {
		fmt.Fprintf(b, "word%d text%d ", (i*31+k)%997, k)
	}
	b.WriteString("</p><ul>")
	for _, c := range []int{2*i + 1, 2*i + 2, (i*7919 + 13) % w.pages} {
		if c < w.pages {
			fmt.Fprintf(b, `<li><a href="/p/%d">page %d</a></li>`, c, c)
		}
	}
	h := len(w.ext)
	fmt.Fprintf(b, `<li><a href="%s/t/%d">target %d</a></li>`, w.ext[i%h], i, i)
	fmt.Fprintf(b, `<li><a href="%s/s/%d">shared %d</a></li>`, w.ext[(i/25)%h], i/25, i/25)
	fmt.Fprintf(b, `<li><a href="%s/everywhere">everywhere</a></li>`, w.ext[0])
	for k := range w.links - 6 {
		if k%5 == 4 {
			fmt.Fprintf(b, `<li><a href="%s/s/%d">shared</a></li>`, w.ext[k%h], (i*(k+1)+k)%5000)
		} else {
			fmt.Fprintf(b, `<li><a href="/p/%d">page</a></li>`, (i*(k+3)+k*7919)%w.pages)
		}
	}
	b.WriteString("</ul></main></body></html>")
	b.Flush()
}

// external serves the external hosts, after the latency.
func (w *web) external(rw http.ResponseWriter, r *http.Request) {
	time.Sleep(w.latency)
	p := r.URL.Path
	var i int
	switch {
	case p == "/robots.txt":
		http.NotFound(rw, r)
		return
	case p == "/everywhere":
	case strings.HasSuffix(p, "/new"):
	case strings.HasPrefix(p, "/t/") || strings.HasPrefix(p, "/s/"):
		if _, err := fmt.Sscanf(p[3:], "%d", &i); err != nil || p[3:] != fmt.Sprint(i) {
			http.NotFound(rw, r)
			return
		}
		switch m := i % 100; {
		case m >= 96:
			http.Redirect(rw, r, p+"/new", http.StatusMovedPermanently)
			return
		case m >= 93:
			rw.WriteHeader(http.StatusGone)
			return
		case m >= 86:
			http.NotFound(rw, r)
			return
		}
	default:
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(rw, "<!doctype html><title>%s</title><main><p>External page %s with enough words to fingerprint: %s</p></main>", p, p, strings.Repeat("lorem ipsum dolor ", 20))
}

// result is one child's run.
type result struct {
	wall, cpu time.Duration
	rssKB     int64
	requests  int64
	unique    int
	broken    []string
	dbBytes   int64
	repeated  []string // URLs requested more than once
	muffet    muffetReport
}

func (r result) print(w io.Writer, round int, name string) {
	fmt.Fprintf(w, "%-6d %-8s %9.2f %9.2f %8.0fMB %9d %10d %8d\n", round, name, r.wall.Seconds(), r.cpu.Seconds(), float64(r.rssKB)/1024, r.requests, r.unique, len(r.broken))
	for i, u := range r.repeated {
		if i == 3 {
			fmt.Fprintf(w, "         ... %d URLs requested more than once\n", len(r.repeated))
			break
		}
		fmt.Fprintf(w, "         requested again: %s\n", u)
	}
}

// measure runs a child and returns its wall time, CPU time, peak RSS and
// the requests the web got meanwhile. The child's standard output goes to
// stdout (discarded if nil), its standard error to stderr. An exit status
// other than 0 or one of okExit is an error.
func (w *web) measure(bin string, args []string, stdout, stderr io.Writer, okExit ...int) (result, error) {
	w.mu.Lock()
	clear(w.hits)
	w.mu.Unlock()
	w.total.Store(0)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := cmd.Run()
	res := result{wall: time.Since(start)}
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && slices.Contains(okExit, exit.ExitCode())) {
		return res, fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.rssKB = ru.Maxrss
		res.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	res.requests = w.total.Load()
	w.mu.Lock()
	for u, n := range w.hits {
		if !strings.HasSuffix(u, "/robots.txt") {
			res.unique++
		}
		if n > 1 {
			res.repeated = append(res.repeated, fmt.Sprintf("%s (%d times)", u, n))
		}
	}
	w.mu.Unlock()
	sort.Strings(res.repeated)
	return res, nil
}

// brokenIn lists the targets linkrot found broken by their answer (soft
// 404s, which the plain checker cannot tell, are left out).
func brokenIn(db string) ([]string, error) {
	ctx := context.Background()
	store, err := engines.Open(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("open linkrot's database: %w", err)
	}
	defer store.Close()
	run, err := store.LatestRun(ctx)
	if err != nil {
		return nil, fmt.Errorf("linkrot's run: %w", err)
	}
	checks, err := store.Checks(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("linkrot's checks: %w", err)
	}
	var out []string
	for _, c := range checks {
		if c.Verdict.Broken() && c.Verdict != audit.VerdictSoft404 && c.Verdict != audit.VerdictRedirectToRoot {
			out = append(out, c.URL)
		}
	}
	sort.Strings(out)
	return out, nil
}

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out, nil
}

func diff(a, b []string) (onlyA, onlyB []string) {
	for _, u := range a {
		if _, ok := slices.BinarySearch(b, u); !ok {
			onlyA = append(onlyA, u)
		}
	}
	for _, u := range b {
		if _, ok := slices.BinarySearch(a, u); !ok {
			onlyB = append(onlyB, u)
		}
	}
	return onlyA, onlyB
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// plain is the minimal checker: it crawls the seed's host (HTML pages,
// parsed with x/net/html's tokenizer) and checks every unique URL once
// with a GET, following redirects, with at most -workers requests in all
// and -per-host per host. It writes the broken URLs (status 400 and up,
// or no answer) to -out.
func plain(args []string) error {
	fs := flag.NewFlagSet("plain", flag.ExitOnError)
	workers := fs.Int("workers", 512, "requests in parallel in all")
	perHost := fs.Int("per-host", 512, "requests in parallel per host")
	out := fs.String("out", "broken.txt", "file of broken URLs")
	fs.Parse(args)
	seed, err := url.Parse(fs.Arg(0))
	if err != nil {
		return err
	}
	broken := crawl(newClient(*perHost), seed, *workers, nil)
	return os.WriteFile(*out, []byte(strings.Join(broken, "\n")+"\n"), 0o644)
}

// plainTimeout is the plain checker's timeout of a request (muffet gets
// the same).
const plainTimeout = 30 * time.Second

// newClient returns the plain checker's HTTP client, with at most perHost
// connections per host.
func newClient(perHost int) *http.Client {
	return &http.Client{Timeout: plainTimeout, Transport: &http.Transport{
		MaxConnsPerHost: perHost, MaxIdleConnsPerHost: perHost, IdleConnTimeout: 90 * time.Second,
	}}
}

// crawl is the plain checker's run: it crawls the seed's host and checks
// every unique URL once with a GET, following redirects, with at most
// workers requests in all, and returns the broken URLs (in the order
// found). If page is not nil, crawl reads each HTML page of the site
// fully into memory and calls page with its URL (after redirects) and
// body before extracting its links from the bytes; page is called from
// many goroutines at once. With a nil page, each page is extracted as it
// streams in.
func crawl(client *http.Client, seed *url.URL, workers int, page func(u *url.URL, body []byte)) []string {
	var (
		mu     sync.Mutex
		seen   = map[string]bool{}
		broken []string
		wg     sync.WaitGroup
		sem    = make(chan struct{}, workers)
	)
	var visit func(u *url.URL)
	add := func(u *url.URL) {
		u.Fragment, u.RawFragment = "", ""
		if u.Scheme != "http" && u.Scheme != "https" {
			return
		}
		if u.Host != seed.Host && strings.ContainsAny(u.Hostname(), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			return // not loopback: the web has no other hosts
		}
		k := u.String()
		mu.Lock()
		if seen[k] {
			mu.Unlock()
			return
		}
		seen[k] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			visit(u)
		}()
	}
	visit = func(u *url.URL) {
		sem <- struct{}{}
		resp, err := client.Get(u.String())
		if err != nil {
			<-sem
			mu.Lock()
			broken = append(broken, u.String())
			mu.Unlock()
			return
		}
		var links []*url.URL
		if resp.StatusCode >= 400 {
			mu.Lock()
			broken = append(broken, u.String())
			mu.Unlock()
		} else if resp.Request.URL.Host == seed.Host && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			if page == nil {
				links = extract(resp.Body, resp.Request.URL)
			} else {
				// A read error keeps what was read, as the streaming
				// tokenizer stops there too.
				body, _ := io.ReadAll(resp.Body)
				page(resp.Request.URL, body)
				links = extract(bytes.NewReader(body), resp.Request.URL)
			}
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		<-sem
		for _, l := range links {
			add(l)
		}
	}
	add(seed)
	wg.Wait()
	return broken
}

// extract returns the URLs of a page's links and resources.
func extract(r io.Reader, base *url.URL) []*url.URL {
	var out []*url.URL
	z := html.NewTokenizer(r)
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			var want string
			switch string(name) {
			case "a", "link", "area":
				want = "href"
			case "img", "script", "iframe", "source", "embed":
				want = "src"
			default:
				continue
			}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if string(k) == want {
					if u, err := base.Parse(strings.TrimSpace(string(v))); err == nil {
						out = append(out, u)
					}
				}
			}
		}
	}
}
