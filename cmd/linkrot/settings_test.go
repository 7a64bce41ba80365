package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
)

// TestAudit_ResumeStoredSettings: linkrot audit --resume without a URL
// reads the interrupted run's settings back typed (linkrot.Settings, as
// another front end would have stored them: no flags involved): resumed
// as they are, the run crawls what they say. A flag given on the command
// line wins over the stored value, the other stored settings stay: those
// are other settings, so a new run starts with them (as with a URL). The
// site is a chain / → /a → /b → /c; the stored settings crawl one link
// deep and exclude /c.
func TestAudit_ResumeStoredSettings(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next := map[string]string{"/": "/a", "/a": "/b", "/b": "/c", "/c": "/"}[r.URL.Path]
		if next == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>%s</title><p>Page %s.</p><a href="%s">next</a>`, r.URL.Path, r.URL.Path, next)
	}))
	defer site.Close()

	for _, tc := range []struct {
		name   string
		extra  []string
		resume bool     // the stored run is resumed (else a new one starts)
		want   []string // pages crawled
	}{
		{"Stored", nil, true, []string{"/", "/a"}},
		{"FlagWins", []string{"--max-depth", "5"}, false, []string{"/", "/a", "/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "linkrot.db")
			db := openDB(t, dbPath)
			ctx := context.Background()
			set := linkrot.Settings{
				Input:   linkrot.SiteInput(site.URL + "/"),
				PerHost: 2, Timeout: 5 * time.Second, MaxRedirects: 5,
				Crawl:    linkrot.CrawlSettings{MaxDepth: 1, Exclude: []string{"/c$"}, MaxBody: 1 << 20},
				Check:    linkrot.CheckSettings{Workers: 4, MaxBody: 1 << 20, NoSoft404: true},
				Archives: linkrot.ArchiveSettings{Off: true, Workers: 1, Shingle: 1, MaxDistance: time.Hour, FetchRate: "60/min"},
			}
			r0 := &audit.Run{StartedAt: time.Now().UTC(), Mode: "site", Seeds: set.Input.Seeds}
			if err := db.CreateRun(ctx, r0); err != nil {
				t.Fatal(err)
			}
			fp, b := set.Stored()
			if err := db.SaveRunSettings(ctx, r0.ID, audit.CommandAudit, fp, b); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, r0.ID, audit.RunInterrupted, time.Now().UTC(), ""); err != nil {
				t.Fatal(err)
			}
			db.Close()
			args := append([]string{"audit", "--resume", "--db", dbPath, "--no-report", "--fail-on", "none"}, tc.extra...)
			code, stdout, stderr := run(t, "", args...)
			if code != exitOK || strings.Contains(stdout, fmt.Sprintf("Resuming run %d", r0.ID)) != tc.resume {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			db = openDB(t, dbPath)
			latest, err := db.LatestRun(ctx)
			if err != nil || (latest.ID == r0.ID) != tc.resume {
				t.Fatalf("latest run %+v, %v (stored run %d)", latest, err, r0.ID)
			}
			pages, err := db.Pages(ctx, latest.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pages {
				got = append(got, strings.TrimPrefix(p.URL, site.URL))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("pages %q, want %q", got, tc.want)
			}
			r, err := db.Run(ctx, latest.ID)
			if err != nil || r.Status != audit.RunComplete {
				t.Errorf("run %+v, %v", r, err)
			}
		})
	}
}

// TestAudit_ResumeOldSettings: an interrupted run whose settings an older
// linkrot stored (flags by name) is not resumed from them: exit 2, and
// the message says to start a new run.
func TestAudit_ResumeOldSettings(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "linkrot.db")
	db := openDB(t, dbPath)
	ctx := context.Background()
	r := &audit.Run{StartedAt: time.Now().UTC(), Mode: "site", Seeds: []string{"http://127.0.0.1:9/"}}
	if err := db.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	old := `{"mode":"site","seeds":["http://127.0.0.1:9/"],"flags":{"max-depth":["1"]}}`
	if err := db.SaveRunSettings(ctx, r.ID, audit.CommandAudit, "fp", []byte(old)); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, r.ID, audit.RunInterrupted, time.Now().UTC(), ""); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, _, stderr := run(t, "", "audit", "--resume", "--db", dbPath, "--no-report")
	if code != exitUsage || !strings.Contains(stderr, "older linkrot") {
		t.Errorf("exit %d, %s; want %d and the older settings named", code, stderr, exitUsage)
	}
}
