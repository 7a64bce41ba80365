package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/archives/archivetest"
)

// runDemo serves the built-in demo site and archive (testdata/demo) on
// loopback, audits the site twice through the same code as linkrot audit
// (the site as it was, then as it is, so the report has a history), and
// writes the report.
func runDemo(ctx context.Context, e *env, args []string) error {
	flags := newFlagSet(e, "demo", "[--out DIR]")
	out := flags.String("out", "linkrot-demo", "`directory` for the demo's database (linkrot.db) and report (index.html)")
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("demo takes no arguments")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// A fresh database: the servers get new ports each time, so earlier
	// runs would be of another site.
	dbPath := filepath.Join(*out, "linkrot.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("demo: remove old database: %w", err)
		}
	}
	d, err := startDemo()
	if err != nil {
		return err
	}
	defer d.close()
	fmt.Fprintf(e.stdout, "Demo site:    %s\nDemo archive: %s (both on loopback, stopped when the demo ends)\n", d.siteURL()+"/", d.archive.URL+"/")

	base := []string{d.siteURL() + "/", "--db", dbPath, "--fail-on", "none", "--timeout", "5s", "--retries", "0", "--quiet"}
	if auditHasFlag(ctx, "archive") {
		base = append(base, "--archive", d.archive.Flag("demo", "6000/min"))
		if auditHasFlag(ctx, "fetch-rate") {
			// Everything is on loopback: no need for the politeness
			// budget of real sites.
			base = append(base, "--fetch-rate", "6000/min")
		}
	} else {
		fmt.Fprintln(e.stdout, "This build of linkrot has no archive stage: the demo archive is served but not consulted.")
	}
	fmt.Fprintln(e.stdout, "\n== Run 1: the site as it was")
	d.phase.Store(1)
	if err := runAudit(ctx, e, append(append([]string{}, base...), "--no-report")); err != nil {
		return fmt.Errorf("demo run 1: %w", err)
	}
	fmt.Fprintln(e.stdout, "\n== Run 2: the site today")
	d.phase.Store(2)
	if err := runAudit(ctx, e, append(append([]string{}, base...), "--report", *out)); err != nil {
		return fmt.Errorf("demo run 2: %w", err)
	}
	abs, err := filepath.Abs(filepath.Join(*out, "index.html"))
	if err != nil {
		abs = filepath.Join(*out, "index.html")
	}
	fmt.Fprintf(e.stdout, "\nOpen the report in a browser: file://%s\n", filepath.ToSlash(abs))
	fmt.Fprintf(e.stdout, "Rebuild it, or get JSON, CSV, JUnit, Markdown or SARIF: linkrot report --db %s [--format json]\n", dbPath)
	return nil
}

// auditHasFlag reports whether linkrot audit accepts --name (a string
// flag): it parses "--name=x -h" without running anything.
func auditHasFlag(ctx context.Context, name string) bool {
	probe := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	return errors.Is(runAudit(ctx, probe, []string{"--" + name + "=x", "-h"}), flag.ErrHelp)
}

// demo is the running demo site and archive.
type demo struct {
	site    *http.Server
	siteLn  net.Listener
	archive *archivetest.Archive
	cleanup cleanups
	phase   atomic.Int32
	files   fs.FS
}

// cleanups collects what the fixture archive asks to run at the end.
type cleanups []func()

func (c *cleanups) Helper()          {}
func (c *cleanups) Cleanup(f func()) { *c = append(*c, f) }

// siteURL is the demo site's base URL.
func (d *demo) siteURL() string { return "http://" + d.siteLn.Addr().String() }

func startDemo() (*demo, error) {
	files, err := fs.Sub(linkrot.DemoFiles, "testdata/demo")
	if err != nil {
		return nil, fmt.Errorf("demo files: %w", err)
	}
	d := &demo{files: files}
	d.archive = archivetest.New(&d.cleanup, archivetest.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.close()
		return nil, fmt.Errorf("demo site: %w", err)
	}
	d.siteLn = ln
	d.site = &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	go d.site.Serve(ln)
	if err := d.loadMementos(); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *demo) close() {
	if d.site != nil {
		d.site.Close()
	}
	for i := len(d.cleanup) - 1; i >= 0; i-- {
		d.cleanup[i]()
	}
	d.cleanup = nil
}

// loadMementos fills the archive from archive/mementos.json.
func (d *demo) loadMementos() error {
	b, err := fs.ReadFile(d.files, "archive/mementos.json")
	if err != nil {
		return fmt.Errorf("demo archive: %w", err)
	}
	var list []struct {
		Path         string    `json:"path"`
		Time         time.Time `json:"time"`
		File         string    `json:"file"`
		NoDatetime   bool      `json:"no_datetime"`
		LinkOriginal string    `json:"link_original"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("demo archive: mementos.json: %w", err)
	}
	site := d.siteURL()
	for _, m := range list {
		body, err := fs.ReadFile(d.files, path.Join("archive", m.File))
		if err != nil {
			return fmt.Errorf("demo archive: %w", err)
		}
		mem := archivetest.Memento{Original: site + m.Path, Time: m.Time, Body: d.fill(string(body)), NoDatetime: m.NoDatetime}
		if m.LinkOriginal != "" {
			mem.LinkOriginal = site + m.LinkOriginal
		}
		d.archive.Add(mem)
	}
	return nil
}

// fill replaces the placeholders of a demo file.
func (d *demo) fill(s string) string {
	return strings.NewReplacer("{{SITE}}", d.siteURL(), "{{ARCHIVE}}", d.archive.URL).Replace(s)
}

// ServeHTTP is the demo site: the files of site/ plus routes that rot.
func (d *demo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	old := d.phase.Load() == 1
	switch p := r.URL.Path; {
	case p == "/old-report":
		http.Redirect(w, r, "/reports/2024.html", http.StatusMovedPermanently)
	case p == "/gone-page" && !old:
		http.Error(w, "This page was removed.", http.StatusGone)
	case p == "/gone-page", p == "/missing-page" && old:
		d.serveFile(w, "archive"+p+".html")
	case p == "/deep/archive/item":
		http.Redirect(w, r, "/", http.StatusFound)
	case p == "/temp":
		http.Redirect(w, r, "/articles/robust-links.html", http.StatusFound)
	case p == "/id/about":
		http.Redirect(w, r, "/about.html", http.StatusMovedPermanently)
	case p == "/doi/10.5555/links-dataset":
		http.Redirect(w, r, "/sources/dataset.html", http.StatusFound)
	case p == "/sources/changed-essay.html" && old:
		d.serveFile(w, "archive/changed-essay.html")
	case strings.HasPrefix(p, "/blog/") && !d.exists(p):
		// A soft 404: the blog answers 200 for anything it does not have.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Blog</title></head><body><main><h1>Oops!</h1><p>We could not find %s on the blog. It may have been moved during the 2023 reorganisation. Try the search box or return to the blog index.</p></main></body></html>`,
			strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(p))
	default:
		name := d.siteFile(p)
		if name == "" {
			http.NotFound(w, r)
			return
		}
		d.serveFile(w, name)
	}
}

// siteFile maps a URL path to a file of site/, or "" when there is none.
func (d *demo) siteFile(p string) string {
	clean := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") {
		clean = path.Join(clean, "index.html")
	}
	name := "site" + clean
	if st, err := fs.Stat(d.files, name); err != nil || st.IsDir() {
		return ""
	}
	return name
}

func (d *demo) exists(p string) bool { return d.siteFile(p) != "" }

func (d *demo) serveFile(w http.ResponseWriter, name string) {
	b, err := fs.ReadFile(d.files, name)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if strings.HasSuffix(name, ".html") {
		ct = "text/html; charset=utf-8"
		b = []byte(d.fill(string(b)))
	}
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Write(b)
}
