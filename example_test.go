package linkrot_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/engines"
)

// Example audits a small site served by httptest: two pages, a link to a
// missing page and one to a page that moved.
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>Home</title><a href="/about">About</a> <a href="/missing">Old</a> <a href="/old">Moved</a>`)
		case "/about", "/new":
			fmt.Fprint(w, `<!doctype html><title>About</title><p>About this site.</p><a href="/">Home</a>`)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	})
	site := httptest.NewServer(mux)
	defer site.Close()

	dir, err := os.MkdirTemp("", "linkrot-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := engines.Open(ctx, filepath.Join(dir, "linkrot.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	// The run's settings: plain data, stored with the run so that it can
	// be resumed with the same ones.
	set := linkrot.Settings{
		Input:   linkrot.Input{Mode: "site", Seeds: []string{site.URL + "/"}},
		PerHost: 4,
		Timeout: 10 * time.Second,
		Check:   linkrot.CheckSettings{Workers: 8, NoSoft404: true},
	}
	run := &audit.Run{StartedAt: time.Now().UTC(), Mode: set.Input.Mode, Seeds: set.Input.Seeds}
	if err := store.CreateRun(ctx, run); err != nil {
		log.Fatal(err)
	}
	fp, stored := set.Stored()
	if err := store.SaveRunSettings(ctx, run.ID, audit.CommandAudit, fp, stored); err != nil {
		log.Fatal(err)
	}
	crawl, err := set.CrawlOptions(nil)
	if err != nil {
		log.Fatal(err)
	}
	check, err := set.CheckOptions(nil)
	if err != nil {
		log.Fatal(err)
	}
	cfg := linkrot.Config{Run: run, Input: set.Input, Crawl: crawl, Check: check}
	sum, err := linkrot.Audit(ctx, cfg, store, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", sum.Run.Status)
	fmt.Println("pages:", sum.Stats.Pages)
	fmt.Println("targets:", sum.Checks.Targets, "fetched:", sum.Checks.Fetched, "from the crawl:", sum.Checks.FromCrawl)
	fmt.Println("not found:", sum.Checks.Verdicts[audit.VerdictNotFound], "moved:", sum.Checks.Verdicts[audit.VerdictMoved])
	fmt.Println("findings:", sum.Checks.Findings, "fixes:", sum.Checks.Fixes)
	// Output:
	// status: complete
	// pages: 4
	// targets: 4 fetched: 0 from the crawl: 4
	// not found: 1 moved: 1
	// findings: 1 fixes: 1
}
