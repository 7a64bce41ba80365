package maintain_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/engines"
)

// site is the audited site of the fixtures: its pages live on a host no
// test connects to (the receiver only reads the database about them).
const site = "http://site.example"

// ext is a loopback server standing for other sites: /gone answers 404,
// /ok and /new answer 200, /moved redirects permanently to /new, /links
// links to our page /a, /nolink does not, /slow answers after 3 s.
func newExt(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<!doctype html><html><head><title>t</title></head><body><main><p>" + body + "</p></main></body></html>"))
		}
	}
	mux.HandleFunc("/ok", page("A page that is fine and has some words in it for the fingerprint."))
	mux.HandleFunc("/new", page("The new home of the resource, with words of its own to read."))
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/new", http.StatusMovedPermanently) })
	mux.HandleFunc("/links", page(`We cite <a href="`+site+`/a">their page</a> here.`))
	mux.HandleFunc("/links-rel", page(`<base href="`+site+`/"> We cite <a href="a">their page</a>.`))
	mux.HandleFunc("/nolink", page(`Nothing to see, no link at all.`))
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
		page(`<a href="`+site+`/a">late</a>`)(w, r)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// newSiteDB writes a database with two complete runs of the site. Page
// /a links to ext/gone, ext/ok and ext/moved; page / links to /a, /old and
// /changing. In run 2, /old moved to /new-home (a maintenance-worthy
// verdict of our own page), and /changing changed its text.
func newSiteDB(t testing.TB, ext string) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "linkrot.db")
	db, err := engines.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for run := 1; run <= 2; run++ {
		r := &audit.Run{StartedAt: time.Date(2026, 1, run, 0, 0, 0, 0, time.UTC), Mode: "site", Seeds: []string{site + "/"}, Version: "test"}
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		mk := func(u string, links ...string) *audit.Page {
			p := &audit.Page{Extraction: audit.Extraction{URL: u, Base: u, Parsed: true}, RequestURL: u, Status: 200,
				ContentType: "text/html", FetchedAt: r.StartedAt}
			for _, l := range links {
				p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: l, RawHref: l, Text: "x"})
			}
			return p
		}
		pages := []*audit.Page{
			mk(site+"/", site+"/a", site+"/old", site+"/changing"),
			mk(site+"/a", ext+"/gone", ext+"/ok", ext+"/moved", site+"/"),
			mk(site + "/changing"),
		}
		if err := db.SavePages(ctx, r.ID, pages); err != nil {
			t.Fatal(err)
		}
		refs, err := db.Targets(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var checks []audit.Check
		for _, ref := range refs {
			c := audit.Check{RunID: r.ID, TargetID: ref.ID, URL: ref.URL, Verdict: audit.VerdictOK, Status: 200, CheckedAt: r.StartedAt, Attempts: 1}
			switch ref.URL {
			case site + "/old":
				if run == 2 {
					c.Verdict, c.Status, c.Replacement, c.FinalURL = audit.VerdictMoved, 200, site+"/new-home", site+"/new-home"
				}
			case site + "/changing":
				c.SHA256, c.SimHash, c.Words = "aaaa", 0x0f0f0f0f0f0f0f0f, 100
				if run == 2 {
					c.SHA256, c.SimHash, c.Words = "bbbb", 0xf0f0f0f0f0f0f0f0, 30
				}
			}
			checks = append(checks, c)
		}
		if err := db.SaveChecks(ctx, checks); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, r.ID, audit.RunComplete, r.StartedAt.Add(time.Minute), ""); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
