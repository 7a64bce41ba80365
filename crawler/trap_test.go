package crawler_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
)

// bigLinks is the number of links on the trap site's /big page.
const bigLinks = 10_000

// newTrapSite serves a site with every trap at once: an infinite calendar
// (/calendar?m=N links m=N+1), a new session id in every link (?sid=…),
// relative links that recurse (more/ → more/more/ …), a path that grows a
// new segment on every page (/deep/…), a URL that grows on every page
// (/long?q=…), and a page with 10,000 links to query variants of one
// path. robots.txt says Crawl-delay: 0. requests counts what was served.
func newTrapSite(tb testing.TB) (*httptest.Server, *atomic.Int64) {
	var requests atomic.Int64
	sid := func() string {
		b := make([]byte, 16)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	page := func(w http.ResponseWriter, links ...string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><title>trap</title>\n")
		for _, l := range links {
			fmt.Fprintf(&b, "<a href=\"%s\">link</a>\n", l)
		}
		w.Write([]byte(b.String()))
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		p := r.URL.Path
		switch {
		case p == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0\n")
		case p == "/":
			page(w, "/calendar?m=0", "/session?sid="+sid(), "/more/", "/deep/", "/long?q=x", "/big")
		case p == "/calendar":
			m, _ := strconv.Atoi(r.URL.Query().Get("m"))
			page(w, fmt.Sprintf("/calendar?m=%d", m+1), fmt.Sprintf("/calendar?m=%d", m-1), "/")
		case p == "/session" || p == "/account":
			page(w, "/session?sid="+sid(), "/account?sid="+sid()+"&tab=1", "/")
		case strings.HasPrefix(p, "/more/"):
			page(w, "more/", "../", "index.html")
		case strings.HasPrefix(p, "/deep/"):
			page(w, fmt.Sprintf("d%d/", strings.Count(p, "/")))
		case p == "/long":
			page(w, "/long?q="+r.URL.Query().Get("q")+strings.Repeat("y", 100))
		case p == "/big":
			links := make([]string, bigLinks)
			for i := range links {
				links[i] = fmt.Sprintf("/item?id=%d", i)
			}
			page(w, links...)
		case p == "/item":
			page(w, "/")
		default:
			http.NotFound(w, r)
		}
	}))
	tb.Cleanup(s.Close)
	return s, &requests
}

// trapSink collects pages and traps.
type trapSink struct {
	memSink
	tmu   sync.Mutex
	traps []audit.CrawlTrap
}

func (s *trapSink) AddTraps(ts []audit.CrawlTrap) {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	s.traps = append(s.traps, ts...)
}

// TestCrawl_TrapsEnd: with the default guards, a crawl of a site made of
// traps ends, each trap is reported on the page where it starts with the
// URLs it cut, and the 10,000 links of one page are all recorded.
func TestCrawl_TrapsEnd(t *testing.T) {
	site, requests := newTrapSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sink := &trapSink{}
	st, err := crawler.New(crawler.Options{Concurrency: 4}, sink).Crawl(ctx, []string{site.URL + "/"})
	if err != nil {
		t.Fatalf("crawl: %v (after %d requests)", err, requests.Load())
	}
	// Bound: 1 home + ~100 calendar + a few session + 20ish more/deep +
	// ~20 long + big + 100 items.
	if st.Pages > 400 {
		t.Errorf("%d pages crawled, want the traps cut (at most 400)", st.Pages)
	}
	byKind := map[audit.TrapKind]audit.CrawlTrap{}
	for _, tr := range st.Traps {
		if prev, ok := byKind[tr.Kind]; ok {
			tr.Cut += prev.Cut
		}
		byKind[tr.Kind] = tr
	}
	for _, k := range audit.TrapKinds {
		if byKind[k].Cut == 0 {
			t.Errorf("no %s trap reported; traps: %+v", k, st.Traps)
		}
	}
	// Each trap is recorded on the page where it starts: the first page
	// of its pattern.
	if tr := byKind[audit.TrapRepeatedSegments]; tr.Pattern != site.URL+"/(more/){3,}" || tr.PageURL != site.URL+"/more/" ||
		tr.Example != site.URL+"/more/more/more/" {
		t.Errorf("repeated segments trap = %+v", tr)
	}
	if tr := byKind[audit.TrapSessionID]; !strings.HasSuffix(tr.Pattern, "/…?sid=…") || tr.Limit != 0 ||
		!strings.HasPrefix(tr.PageURL, site.URL+"/session?sid=") {
		t.Errorf("session trap = %+v", tr)
	}
	// The calendar and the items are both query-variant traps.
	var calendar, items *audit.CrawlTrap
	for i := range st.Traps {
		switch st.Traps[i].Pattern {
		case site.URL + "/calendar?…":
			calendar = &st.Traps[i]
		case site.URL + "/item?…":
			items = &st.Traps[i]
		}
	}
	if calendar == nil || calendar.PageURL != site.URL+"/calendar?m=0" || calendar.Limit != crawler.DefaultMaxQueryVariants {
		t.Errorf("calendar trap = %+v", calendar)
	}
	if items == nil || items.PageURL != site.URL+"/item?id=0" || items.Cut != bigLinks-crawler.DefaultMaxQueryVariants {
		t.Errorf("items trap = %+v, want %d cut, starting on /item?id=0", items, bigLinks-crawler.DefaultMaxQueryVariants)
	}
	var big *audit.Page
	for _, p := range sink.pages {
		if p.URL == site.URL+"/big" {
			big = p
		}
	}
	if big == nil || len(big.Links) != bigLinks {
		n := -1
		if big != nil {
			n = len(big.Links)
		}
		t.Errorf("/big recorded with %d links, want all %d", n, bigLinks)
	}
	// The sink got the same totals.
	got := map[string]int64{}
	for _, tr := range sink.traps {
		got[string(tr.Kind)+" "+tr.Pattern] += tr.Cut
	}
	for _, tr := range st.Traps {
		if got[string(tr.Kind)+" "+tr.Pattern] != tr.Cut {
			t.Errorf("sink has %d for %s %s, stats %d", got[string(tr.Kind)+" "+tr.Pattern], tr.Kind, tr.Pattern, tr.Cut)
		}
	}
}

// TestCrawl_TrapGuardsOff: with every guard off and a page budget, the
// same site keeps the crawl going until the budget: the guards, not luck,
// end the crawl above.
func TestCrawl_TrapGuardsOff(t *testing.T) {
	site, _ := newTrapSite(t)
	o := crawler.Options{Concurrency: 4, MaxPages: 600, MaxSegmentRepeats: -1, MaxPathSegments: -1,
		MaxQueryVariants: -1, MaxURLLength: -1, KeepSessionIDs: true}
	st, err := crawler.New(o, &memSink{}).Crawl(context.Background(), []string{site.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if !st.BudgetHit || len(st.Traps) != 0 {
		t.Errorf("budget hit %v, traps %d; want the budget to stop an unguarded crawl", st.BudgetHit, len(st.Traps))
	}
}

// BenchmarkCrawl_TrapSite crawls the trap site (all traps, Crawl-delay: 0)
// with the default guards: it must end, and quickly.
func BenchmarkCrawl_TrapSite(b *testing.B) {
	site, requests := newTrapSite(b)
	for b.Loop() {
		requests.Store(0)
		st, err := crawler.New(crawler.Options{Concurrency: 4}, &memSink{}).Crawl(context.Background(), []string{site.URL + "/"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(st.Pages), "pages/op")
		b.ReportMetric(float64(requests.Load()), "requests/op")
	}
}
