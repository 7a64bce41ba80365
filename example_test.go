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

// Example audits a small site served by httptest: a link to a missing
// page, one to a page that moved, and one to a page its robots.txt
// disallows, which is neither crawled nor checked.
func Example() {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/":
			fmt.Fprint(w, `<!doctype html><title>Home</title><a href="/about">About</a> <a href="/missing">Old</a> <a href="/old">Moved</a> <a href="/private">Staff</a>`)
		case "/about", "/new":
			fmt.Fprint(w, `<!doctype html><title>About</title><p>About this site.</p><a href="/">Home</a>`)
		case "/old":
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
		case "/private":
			fmt.Println("fetched /private") // never printed
			fmt.Fprint(w, `<!doctype html><title>Staff</title>`)
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

	// The run's settings are plain data, stored with the run: Start
	// creates the run (or resumes one) and builds what it needs once,
	// robots.txt gate and politeness scheduler included.
	set := linkrot.Settings{
		Input:    linkrot.SiteInput(site.URL + "/"),
		PerHost:  4,
		Timeout:  10 * time.Second,
		Check:    linkrot.CheckSettings{Workers: 8, NoSoft404: true},
		Archives: linkrot.ArchiveSettings{Off: true},
	}
	job, err := linkrot.Start(ctx, store, set, linkrot.StartOptions{Command: audit.CommandAudit})
	if err != nil {
		log.Fatal(err)
	}
	defer job.Close()
	sum, err := job.Audit(ctx, store, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", sum.Run.Status)
	fmt.Println("pages:", sum.Stats.Pages)
	fmt.Println("targets:", sum.Checks.Targets, "fetched:", sum.Checks.Fetched, "from the crawl:", sum.Checks.FromCrawl)
	for _, v := range []audit.Verdict{audit.VerdictNotFound, audit.VerdictMoved, audit.VerdictSkipped} {
		fmt.Printf("%s: %d\n", v, sum.Checks.Verdicts[v])
	}
	fmt.Println("findings:", sum.Checks.Findings, "fixes:", sum.Checks.Fixes)
	// The skipped target is /private: robots.txt disallows it, so it is
	// recorded, never fetched.
	// Output:
	// status: complete
	// pages: 5
	// targets: 5 fetched: 1 from the crawl: 4
	// not-found: 1
	// moved: 1
	// skipped: 1
	// findings: 1 fixes: 1
}
