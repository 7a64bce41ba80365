package linkrot_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/archives"
	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
)

// TestAudit_ArchivesStreamed: the archives stage streams. A broken
// target's nearest-memento lookup reaches the fixture archive while
// another target's live check is still under way: the slow target answers
// only once the archive has seen the lookup (or after 15 s, and the test
// fails). The lookup asked ahead is not asked again when the stage
// finishes, and its answer is stored as the stage's memento.
func TestAudit_ArchivesStreamed(t *testing.T) {
	arch := archivetest.New(t, archivetest.Options{})
	var releasedByLookup atomic.Bool
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone":
			http.Error(w, "gone", http.StatusGone)
		case "/slow":
			deadline := time.Now().Add(15 * time.Second)
			for time.Now().Before(deadline) {
				if arch.Count("/web/http") > 0 {
					releasedByLookup.Store(true)
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			fmt.Fprint(w, `<!doctype html><title>Slow</title><p>A slow page that is there.</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer ext.Close()
	arch.Add(archivetest.Memento{Original: ext.URL + "/gone", Time: time.Now().Add(-time.Hour), Body: "<!doctype html><p>It was there.</p>"})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Home</title><a href="%s/slow">slow</a> <a href="%s/gone">gone</a>`, ext.URL, ext.URL)
	}))
	defer site.Close()

	store, run := mustOpen(t, site.URL+"/")
	stage := &archives.Stage{Store: store, Options: archives.Options{
		Client: memento.NewClient(memento.Options{Archives: []memento.Archive{arch.Config("fx", 60000)}, Timeout: 5 * time.Second}),
	}}
	job := openJob(t, store, run, linkrot.Settings{
		PerHost:  4, // /gone is checked beside /slow
		Check:    linkrot.CheckSettings{Workers: 8, NoSoft404: true, AllowPrivate: true},
		Archives: linkrot.ArchiveSettings{Off: true},
	})
	job.Config.Archives = stage // the fixture archive's
	start := time.Now()
	sum, err := job.Audit(context.Background(), store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checks == nil || sum.Checks.Verdicts[audit.VerdictGone] != 1 {
		t.Fatalf("checks: %+v", sum.Checks)
	}
	if !releasedByLookup.Load() {
		t.Errorf("no archive lookup before the last live check completed: the archives stage did not stream (requests %v)", arch.Requests())
	}
	if n := stage.AskedAhead(); n != 1 {
		t.Errorf("%d lookups asked during the checks, want 1", n)
	}
	t.Logf("audit took %s", time.Since(start).Round(time.Millisecond))
	if n := arch.Count("/web/" + ext.URL + "/gone"); n != 1 {
		t.Errorf("%d TimeGate requests, want 1 (asked ahead, taken by the stage): %v", n, arch.Requests())
	}
	ms, err := store.Mementos(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, m := range ms {
		if m.URIR == ext.URL+"/gone" && m.Status == audit.LookupFound && m.Nearest {
			found++
		}
	}
	if found != 1 {
		t.Errorf("stored mementos %+v: want the one nearest memento of /gone", ms)
	}
	stages, err := store.Stages(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stages[audit.StageArchives]; !ok {
		t.Errorf("stage archives not recorded: %v", stages)
	}
	if s := stage.Summary(); s == nil || s.LinksWithMemento != 1 {
		t.Errorf("summary %+v", s)
	}
}
