// Package demo serves the demo site of linkrot demo and its web archive
// on loopback: a small site whose links rot between two phases, and
// mementos of its pages.
package demo

import (
	"encoding/json"
	"errors"
	"fmt"
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

	"github.com/linkrot/linkrot/archives/archivetest"
)

// Phase is the time the demo site shows.
type Phase int32

// The demo site's phases: as it was (the first run of linkrot demo), as it
// is (the second).
const (
	Then Phase = 1
	Now  Phase = 2
)

// Demo is the running demo site and its Memento archive.
type Demo struct {
	// Archive is the demo's web archive.
	Archive *archivetest.Archive

	site    *http.Server
	siteLn  net.Listener
	cleanup cleanups
	phase   atomic.Int32
	files   fs.FS
}

// SetPhase sets the time the site shows (Now until set).
func (d *Demo) SetPhase(p Phase) { d.phase.Store(int32(p)) }

// cleanups collects what the fixture archive asks to run at the end.
type cleanups []func()

func (c *cleanups) Helper()          {}
func (c *cleanups) Cleanup(f func()) { *c = append(*c, f) }

// SiteURL is the demo site's base URL.
func (d *Demo) SiteURL() string { return "http://" + d.siteLn.Addr().String() }

// Start serves the demo site and archive of files (linkrot's
// testdata/demo: site/ and archive/) on loopback until Close.
func Start(files fs.FS) (*Demo, error) {
	d := &Demo{files: files}
	d.Archive = archivetest.New(&d.cleanup, archivetest.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("demo site: %w", err)
	}
	d.siteLn = ln
	d.site = &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	go d.site.Serve(ln)
	if err := d.loadMementos(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Close stops the site and the archive.
func (d *Demo) Close() {
	if d.site != nil {
		d.site.Close()
	}
	for i := len(d.cleanup) - 1; i >= 0; i-- {
		d.cleanup[i]()
	}
	d.cleanup = nil
}

// loadMementos fills the archive from archive/mementos.json.
func (d *Demo) loadMementos() error {
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
	site := d.SiteURL()
	for _, m := range list {
		body, err := fs.ReadFile(d.files, path.Join("archive", m.File))
		if err != nil {
			return fmt.Errorf("demo archive: %w", err)
		}
		mem := archivetest.Memento{Original: site + m.Path, Time: m.Time, Body: d.fill(string(body)), NoDatetime: m.NoDatetime}
		if m.LinkOriginal != "" {
			mem.LinkOriginal = site + m.LinkOriginal
		}
		d.Archive.Add(mem)
	}
	return nil
}

// fill replaces the placeholders of a demo file.
func (d *Demo) fill(s string) string {
	return strings.NewReplacer("{{SITE}}", d.SiteURL(), "{{ARCHIVE}}", d.Archive.URL).Replace(s)
}

// ServeHTTP is the demo site: the files of site/ plus routes that rot.
func (d *Demo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
func (d *Demo) siteFile(p string) string {
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

func (d *Demo) exists(p string) bool { return d.siteFile(p) != "" }

func (d *Demo) serveFile(w http.ResponseWriter, name string) {
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

// FreshDatabase returns the path of the demo's SQLite database in dir
// (created if needed), with any database of an earlier demo removed: the
// servers get new ports each time, so its runs would be of another site.
func FreshDatabase(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	dbPath := filepath.Join(dir, "linkrot.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("demo: remove old database: %w", err)
		}
	}
	return dbPath, nil
}
