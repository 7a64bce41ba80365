package crawler_test

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
	"github.com/linkrot/linkrot/crawler/crawltest"
	"github.com/linkrot/linkrot/politeness"
)

// journal is a Sink and a Frontier writing into one ordered log, like the
// command's single writer: whatever prefix of it a crash leaves stored is
// what a resumed crawl restores.
type journal struct {
	mu     sync.Mutex
	events []event
	// restore is what Restore returns.
	queued  []audit.FrontierEntry
	visited []string
}

type event struct {
	page   *audit.Page
	queued []audit.FrontierEntry
}

func (j *journal) Add(p *audit.Page) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, event{page: p})
}

func (j *journal) Queue(e []audit.FrontierEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, event{queued: slices.Clone(e)})
}

func (j *journal) Restore(context.Context) ([]audit.FrontierEntry, []string, error) {
	return j.queued, j.visited, nil
}

// stored returns the state a crash after the first n events leaves: the
// queued entries and pages among them, and the visited URLs derived from
// the pages as the store derives them.
func (j *journal) stored(n int) (queued []audit.FrontierEntry, visited []string, pages []*audit.Page) {
	for _, e := range j.events[:n] {
		queued = append(queued, e.queued...)
		if p := e.page; p != nil {
			pages = append(pages, p)
			visited = append(visited, p.RequestURL, p.URL)
			for _, r := range p.Redirects {
				visited = append(visited, r.From)
			}
		}
	}
	return queued, visited, pages
}

func pageURLs(pages []*audit.Page) []string {
	var out []string
	for _, p := range pages {
		out = append(out, p.RequestURL)
	}
	slices.Sort(out)
	return out
}

// TestCrawl_FrontierResume cuts the log of a full crawl at every point,
// resumes from what was stored, and checks that the stored and the resumed
// pages together are exactly the full crawl's pages, none fetched twice.
func TestCrawl_FrontierResume(t *testing.T) {
	site := crawltest.NewBasic(t)
	opts := crawler.Options{PerHost: 2, Transport: http.DefaultTransport}
	full := &journal{}
	opts.Frontier = full
	if _, err := crawler.New(opts, full).Crawl(context.Background(), []string{site.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	_, _, all := full.stored(len(full.events))
	want := pageURLs(all)
	if len(want) != 10 {
		t.Fatalf("full crawl recorded %d pages, want 10", len(want))
	}
	// Every page comes after the queue entry of its URL.
	queuedSoFar := map[string]bool{}
	for _, e := range full.events {
		for _, q := range e.queued {
			queuedSoFar[q.URL] = true
		}
		if e.page != nil && !queuedSoFar[e.page.RequestURL] {
			t.Errorf("page %s recorded before it was queued", e.page.RequestURL)
		}
	}

	for n := 0; n <= len(full.events); n++ {
		queued, visited, before := full.stored(n)
		resumed := &journal{queued: queued, visited: visited}
		o := opts
		o.Frontier = resumed
		if _, err := crawler.New(o, resumed).Crawl(context.Background(), []string{site.URL + "/"}); err != nil {
			t.Fatal(err)
		}
		_, _, after := resumed.stored(len(resumed.events))
		got := pageURLs(append(slices.Clone(before), after...))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("cut after %d events: stored %d + resumed %d pages = %v\nwant %v",
				n, len(before), len(after), got, want)
		}
		// Entries queued again by the resumed crawl are only those the
		// stored part did not have.
		old := map[string]bool{}
		for _, q := range queued {
			old[q.URL] = true
		}
		for _, e := range resumed.events {
			for _, q := range e.queued {
				if old[q.URL] {
					t.Errorf("cut after %d events: %s queued again", n, q.URL)
				}
			}
		}
	}
}

func TestCrawl_HostRules(t *testing.T) {
	var (
		mu  sync.Mutex
		got = map[string]string{}
	)
	srv := crawltest.NewBasic(t)
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	sink := &memSink{}
	opts := crawler.Options{Transport: http.DefaultTransport, MaxPages: 3,
		Hosts: []politeness.HostRule{{Match: "127.0.0.1", PerHost: 1, Headers: map[string]string{"Authorization": "Bearer staging"}}}}
	if _, err := crawler.New(opts, sink).Crawl(context.Background(), []string{srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got["/"] != "Bearer staging" {
		t.Errorf("Authorization sent to / = %q (requests: %v)", got["/"], got)
	}
}

// admitJournal is a journal that is also a crawler.Admitter.
type admitJournal struct {
	journal
	admitted map[string]int // calls of Admitted per URL
	// queuedBefore are URLs Queue was given before Admitted.
	queuedBefore []string
}

func (j *admitJournal) Admitted(u string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.admitted == nil {
		j.admitted = map[string]int{}
	}
	j.admitted[u]++
}

func (j *admitJournal) Queue(e []audit.FrontierEntry) {
	j.mu.Lock()
	for _, q := range e {
		if j.admitted[q.URL] == 0 {
			j.queuedBefore = append(j.queuedBefore, q.URL)
		}
	}
	j.mu.Unlock()
	j.journal.Queue(e)
}

// TestCrawl_AdmittedBeforeQueue checks the Admitter contract: every URL
// the crawl queues was announced once through Admitted, before Queue,
// and only those; a page a crawl records was admitted (the seed too).
func TestCrawl_AdmittedBeforeQueue(t *testing.T) {
	site := crawltest.NewBasic(t)
	j := &admitJournal{}
	opts := crawler.Options{PerHost: 4, Transport: http.DefaultTransport, Frontier: j}
	if _, err := crawler.New(opts, j).Crawl(context.Background(), []string{site.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	if len(j.queuedBefore) > 0 {
		t.Errorf("queued before admitted: %v", j.queuedBefore)
	}
	queued := map[string]bool{}
	for _, e := range j.events {
		for _, q := range e.queued {
			queued[q.URL] = true
		}
	}
	for u, n := range j.admitted {
		if n != 1 {
			t.Errorf("%s admitted %d times", u, n)
		}
		if !queued[u] && u != site.URL+"/" {
			t.Errorf("%s admitted but never queued", u)
		}
	}
	_, _, pages := j.stored(len(j.events))
	if len(pages) != 10 {
		t.Fatalf("recorded %d pages, want 10", len(pages))
	}
	for _, p := range pages {
		if j.admitted[p.RequestURL] != 1 {
			t.Errorf("page %s recorded, admitted %d times", p.RequestURL, j.admitted[p.RequestURL])
		}
	}
}
