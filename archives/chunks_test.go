package archives

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// memStore is a Store holding one run (RunID 1) in memory: the fixture
// stageInput, and what the stage saves.
type memStore struct {
	in stageInput

	mu     sync.Mutex
	c      collector
	skips  []audit.SnapshotSkip
	chunks int
	most   int // the most links of one chunk
}

func (m *memStore) LinkDates(context.Context, int64, string) ([]time.Time, error) { return nil, nil }
func (m *memStore) EarlierFingerprints(context.Context, int64) (map[int64]*audit.Check, error) {
	return nil, nil
}
func (m *memStore) EachCheck(_ context.Context, _ int64, fn func(*audit.Check) error) error {
	for _, c := range m.in.Checks {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}
func (m *memStore) KnownLookups(context.Context, int64, time.Time) ([]audit.Memento, error) {
	return nil, nil
}
func (m *memStore) SaveRequests(context.Context, int64) ([]audit.SaveRequest, error) { return nil, nil }
func (m *memStore) ClearArchives(context.Context, int64) error                       { return nil }
func (m *memStore) ClearFirstSeenDrift(context.Context, int64) error                 { return nil }

func saveAll[T any](m *memStore, dst *[]T, xs []T) error {
	m.mu.Lock()
	*dst = append(*dst, xs...)
	m.mu.Unlock()
	return nil
}

func (m *memStore) SaveSnapshotChecks(_ context.Context, xs []audit.SnapshotCheck) error {
	return saveAll(m, &m.c.snaps, xs)
}
func (m *memStore) SaveMementos(_ context.Context, xs []audit.Memento) error {
	return saveAll(m, &m.c.mementos, xs)
}
func (m *memStore) SaveDrifts(_ context.Context, xs []audit.Drift) error {
	return saveAll(m, &m.c.drifts, xs)
}
func (m *memStore) SaveDriftFailures(_ context.Context, xs []audit.DriftFailure) error {
	return saveAll(m, &m.c.failures, xs)
}
func (m *memStore) SaveIdentifierChecks(_ context.Context, xs []audit.IdentifierCheck) error {
	return saveAll(m, &m.c.idents, xs)
}
func (m *memStore) SaveSuggestions(_ context.Context, xs []audit.Suggestion) error {
	return saveAll(m, &m.c.suggs, xs)
}
func (m *memStore) SaveSaveRequests(_ context.Context, xs []audit.SaveRequest) error {
	return saveAll(m, &m.c.saves, xs)
}
func (m *memStore) SaveSnapshotSkips(_ context.Context, xs []audit.SnapshotSkip) error {
	return saveAll(m, &m.skips, xs)
}

// inChunk reports whether a link to target id is in the chunk [from, to].
func inChunk(id, from, to int64) bool {
	if to == 0 {
		return id == 0
	}
	return id >= from && id <= to
}

func (m *memStore) TargetsAfter(_ context.Context, _ int64, after int64, limit int) ([]audit.TargetRef, error) {
	byID := map[int64]*audit.TargetRef{}
	var ids []int64
	for _, l := range m.in.Links {
		if l.TargetID <= after {
			continue
		}
		if byID[l.TargetID] == nil {
			byID[l.TargetID] = &audit.TargetRef{ID: l.TargetID, URL: l.TargetURL}
			ids = append(ids, l.TargetID)
		}
		byID[l.TargetID].LinkCount++
	}
	slices.Sort(ids)
	var out []audit.TargetRef
	for _, id := range ids[:min(limit, len(ids))] {
		out = append(out, *byID[id])
	}
	return out, nil
}

func (m *memStore) EachTargetLink(_ context.Context, _ int64, from, to int64, fn func(int64, string, string, int64, *audit.Link, []audit.PWID) error) error {
	n := 0
	for _, l := range m.in.Links {
		if !inChunk(l.TargetID, from, to) {
			continue
		}
		n++
		link := l.Link
		if err := fn(l.ID, l.PageURL, l.TargetURL, l.TargetID, &link, slices.Clone(l.PWIDs)); err != nil {
			return err
		}
	}
	m.mu.Lock()
	m.chunks++
	m.most = max(m.most, n)
	m.mu.Unlock()
	return nil
}

func (m *memStore) ChecksOf(_ context.Context, _ int64, from, to int64) ([]audit.Check, error) {
	var out []audit.Check
	for id, c := range m.in.Checks {
		if inChunk(id, from, to) {
			out = append(out, *c)
		}
	}
	return out, nil
}

func rangeOf[V any](all map[int64]V, from, to int64) map[int64]V {
	out := map[int64]V{}
	for id, v := range all {
		if inChunk(id, from, to) {
			out[id] = v
		}
	}
	return out
}

func (m *memStore) TargetsFirstSeenOf(_ context.Context, _ int64, from, to int64) (map[int64]time.Time, error) {
	return rangeOf(m.in.FirstSeen, from, to), nil
}

func (m *memStore) LinksFirstSeenOf(_ context.Context, _ int64, from, to int64) (map[int64]time.Time, error) {
	out := map[int64]time.Time{}
	for _, l := range m.in.Links {
		if at, ok := m.in.LinkFirstSeen[l.ID]; ok && l.TargetID != 0 && inChunk(l.TargetID, from, to) {
			out[l.ID] = at
		}
	}
	return out, nil
}

func (m *memStore) FirstFingerprintsOf(_ context.Context, _ int64, from, to int64) (map[int64]*audit.Check, error) {
	return rangeOf(m.in.Reference, from, to), nil
}

func (m *memStore) EachOriginalLink(_ context.Context, _ int64, fn func(int64, string, *audit.Link) error) error {
	for _, l := range m.in.Links {
		if l.Link.Robust != nil && l.Link.Robust.OriginalURL != "" {
			link := l.Link
			if err := fn(l.ID, l.TargetURL, &link); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *memStore) RunTargetIDs(_ context.Context, _ int64, urls []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, l := range m.in.Links {
		if l.TargetID != 0 && slices.Contains(urls, l.TargetURL) {
			out[l.TargetURL] = l.TargetID
		}
	}
	return out, nil
}

func (m *memStore) SharedCheckURLs(context.Context, int64) ([]string, error) {
	n := map[string]int{}
	for _, c := range m.in.Checks {
		n[checkURL(c)]++
	}
	var out []string
	for u, k := range n {
		if k > 1 {
			out = append(out, u)
		}
	}
	return out, nil
}

func (m *memStore) PageIdentifiers(context.Context, int64) ([]*audit.Page, error) {
	var out []*audit.Page
	for _, p := range m.in.Pages {
		out = append(out, &audit.Page{Extraction: audit.Extraction{URL: p.URL, Identifiers: p.Identifiers}})
	}
	return out, nil
}

// sorted returns what c holds as sorted text, times of the network
// (Save Page Now's) and job IDs dropped.
func (c *collector) sorted() map[string][]string {
	out := map[string][]string{}
	add := func(kind string, x any) { out[kind] = append(out[kind], fmt.Sprintf("%+v", x)) }
	for _, x := range c.snaps {
		add("snapshot", x)
	}
	for _, x := range c.mementos {
		add("memento", x)
	}
	for _, x := range c.drifts {
		add("drift", x)
	}
	for _, x := range c.failures {
		add("failure", x)
	}
	for _, x := range c.idents {
		add("identifier", x)
	}
	for _, x := range c.suggs {
		add("suggestion", x)
	}
	for _, x := range c.saves {
		x.Requested, x.JobID, x.Memento = time.Time{}, "", ""
		add("save", x)
	}
	for _, xs := range out {
		slices.Sort(xs)
	}
	return out
}

// TestStage_ChunksEquivalent: Finish over chunks of one target, of three,
// and of the whole run stores what Run over the whole run gives, with the
// same Summary; in every case each archive is asked each question once
// (a data-originalurl question is asked from three chunks and by a link
// without a target, and is also a question of its own target's links),
// each declared snapshot (shared by links to two targets), live page and
// memento compared for drift fetched once, each missing resource saved once, and the own pages'
// identifiers checked once whichever chunk links to them.
func TestStage_ChunksEquivalent(t *testing.T) {
	d1 := time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC)
	d2 := time.Date(2023, 9, 1, 0, 0, 0, 0, time.UTC)
	atV := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	atS := time.Date(2022, 1, 1, 12, 0, 0, 0, time.UTC)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

	var hitsMu sync.Mutex
	hits := map[string]int{} // live requests by URL
	count := func(r *http.Request) {
		hitsMu.Lock()
		hits[r.Host+r.URL.Path]++
		hitsMu.Unlock()
	}
	var site, ext *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count(r)
		switch r.URL.Path {
		case "/about", "/contact":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Link", fmt.Sprintf(`<%s/id%s>; rel="identifier"`, site.URL, r.URL.Path))
			fmt.Fprint(w, page(oldText))
		case "/id/about":
			http.Redirect(w, r, "/about", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	ext = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count(r)
		switch r.URL.Path {
		case "/alive1", "/alive2", "/alive3":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, page(newText))
		case "/paper.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Header().Set("Link", fmt.Sprintf(`<%s/doi/x>; rel="cite-as"`, ext.URL))
			fmt.Fprint(w, "%PDF-1.7")
		case "/doi/x":
			http.Redirect(w, r, "/paper.pdf", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer ext.Close()
	gone1, gone2, alive1, alive2, alive3 := ext.URL+"/gone1", ext.URL+"/gone2", ext.URL+"/alive1", ext.URL+"/alive2", ext.URL+"/alive3"
	paper, oldPage := ext.URL+"/paper.pdf", "http://old.example/page"

	fa := archivetest.New(t, archivetest.Options{})
	fa.Add(archivetest.Memento{Original: gone1, Time: d1.Add(24 * time.Hour), Body: page(oldText)},
		archivetest.Memento{Original: alive1, Time: d1, Body: page(oldText)},
		archivetest.Memento{Original: alive1, Time: atV, Body: page(oldText)},
		archivetest.Memento{Original: oldPage, Time: atS, Body: page(oldText)},
		archivetest.Memento{Original: alive3, Time: atV, Body: page(oldText)})
	fb := archivetest.New(t, archivetest.Options{}) // holds nothing
	// Each archive's TimeGate is behind a counter of the questions asked
	// (URI-R and Accept-Datetime).
	var qMu sync.Mutex
	questions := map[string]map[string]int{}
	gate := func(name string, a *archivetest.Archive) memento.Archive {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			qMu.Lock()
			questions[name][r.RequestURI+" at "+r.Header.Get("Accept-Datetime")]++
			qMu.Unlock()
			a.Server.Config.Handler.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		c := a.Config(name, 60000)
		c.TimeGate = srv.URL + "/web/"
		c.TimeMap = ""
		return c
	}
	archA, archB := gate("a", fa), gate("b", fb)
	archB.Save = ""
	// Save Page Now goes to an archive of its own, new for each run of
	// the stage: a capture must not change what the next run finds.
	var saverMu sync.Mutex
	var saver *archivetest.Archive
	saveSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		saverMu.Lock()
		s := saver
		saverMu.Unlock()
		s.Server.Config.Handler.ServeHTTP(w, r)
	}))
	defer saveSrv.Close()
	archA.Save = saveSrv.URL + "/save"

	norm := func(u string) string {
		n, err := urls.NormalizeURL(u)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	siteHost := strings.TrimPrefix(site.URL, "http://")
	p1, p2, p3 := site.URL+"/p1", site.URL+"/p2", site.URL+"/p3"
	var links []stageLink
	link := func(id, target int64, pageURL, href string, r *audit.Robust) *stageLink {
		l := stageLink{ID: id, PageURL: pageURL, TargetID: target,
			Link: audit.Link{Element: "a", Href: href, Text: fmt.Sprintf("link %d", id), Robust: r}}
		if target != 0 {
			l.TargetURL = norm(href)
		}
		links = append(links, l)
		return &links[len(links)-1]
	}
	original := func() *audit.Robust { return &audit.Robust{OriginalURL: alive1, VersionDate: audit.NewTime(atV)} }
	snapshot := func() *audit.Robust {
		return &audit.Robust{Snapshots: []audit.Snapshot{{URL: fa.URLOf(oldPage, atS, ""), Datetime: audit.NewTime(atS)}}}
	}
	link(1, 1, p1, gone1, nil)
	link(2, 1, p2, gone1, nil)
	link(3, 2, p1, gone2, nil)
	link(4, 3, p1, alive1, nil)
	link(5, 3, p2, alive1, &audit.Robust{VersionDate: audit.NewTime(atV)})
	link(6, 4, p1, alive2, nil)
	link(7, 4, p3, alive2, nil)
	link(8, 5, p2, fa.URLOf(alive1, atV, ""), original())
	link(9, 6, p3, fa.URLOf(alive1, atV, "id_"), original())
	link(10, 0, p3, "urn:example:no-target", original())
	link(11, 7, p1, site.URL+"/about", nil)
	link(12, 7, p2, site.URL+"/about", nil)
	link(13, 8, p3, site.URL+"/contact", nil)
	link(14, 9, p1, paper, nil)
	link(15, 10, p1, site.URL+"/x1", snapshot())
	link(16, 11, p2, site.URL+"/x2", snapshot())
	// A snapshot href whose original is alive2, dated when T4's links
	// were first seen: the question of T4's links, and a Save Page Now
	// candidate of another chunk.
	link(18, 13, p2, fa.URLOf(alive2, d1, ""), &audit.Robust{OriginalURL: alive2, VersionDate: audit.NewTime(d1)})
	// A target whose check ended at alive3: its live page is T12's.
	link(19, 14, p3, ext.URL+"/redir", nil)
	pw := link(17, 12, p1, alive3, nil)
	pw.PWIDs = []audit.PWID{{Raw: "urn:pwid:fa.example:2024-03-01T12:00:00Z:page:" + alive3, ArchiveID: "fa.example",
		Datetime: audit.NewTime(atV), ContentSpec: "page", Item: alive3, Source: "href", Link: 0}}

	checks := map[int64]*audit.Check{}
	for _, l := range links {
		if l.TargetID != 0 {
			checks[l.TargetID] = liveCheck(l.TargetID, l.TargetURL)
		}
	}
	for _, id := range []int64{1, 2} {
		checks[id] = &audit.Check{TargetID: id, URL: checks[id].URL, Verdict: audit.VerdictNotFound, Status: 404}
	}
	checks[9] = &audit.Check{TargetID: 9, URL: norm(paper), Verdict: audit.VerdictOK, Status: 200, ContentType: "application/pdf"}
	checks[3].SimHash, checks[3].Words = 0x0f0f, 20
	checks[14].Verdict, checks[14].FinalURL = audit.VerdictRedirected, checks[12].URL
	// A target the run checked that no link points to (a seed), with an
	// ID after every linked target's: its first-seen drift comes from
	// the chunk after the last linked target, whatever the chunk size.
	checks[20] = liveCheck(20, norm(site.URL+"/seed"))
	checks[20].SimHash, checks[20].Words = 0x00ff, 20
	firstSeen := map[int64]time.Time{}
	for id := range checks {
		firstSeen[id] = d1
	}
	in := stageInput{RunID: 1, Links: links, Checks: checks, FirstSeen: firstSeen,
		LinkFirstSeen: map[int64]time.Time{1: d1, 2: d2, 3: d1, 4: d1, 6: d1, 7: d1, 14: d1},
		Reference: map[int64]*audit.Check{3: {RunID: 7, TargetID: 3, URL: checks[3].URL, SHA256: "earlier", SimHash: 0xf0f0, Words: 20,
			CheckedAt: d1},
			20: {RunID: 7, TargetID: 20, URL: checks[20].URL, SHA256: "earlier", SimHash: 0xff00, Words: 20, CheckedAt: d1}},
		Pages: []ownPage{
			{URL: norm(site.URL + "/about"), Identifiers: []audit.Identifier{{URL: site.URL + "/id/about", Rel: "identifier", Source: "header"}}},
			{URL: norm(site.URL + "/contact"), Identifiers: []audit.Identifier{{URL: site.URL + "/id/contact", Rel: "identifier", Source: "header"}}},
		}}
	opts := func() Options {
		return Options{Client: stageClient(t, archA, archB), SiteHosts: map[string]bool{siteHost: true},
			SaveMissing: true, Save: memento.SaveOptions{PollInterval: 10 * time.Millisecond},
			Registry: memento.Registry{"fa.example": fa.URL + "/web/{timestamp}/{item}"},
			Now:      func() time.Time { return now }}
	}

	type result struct {
		name     string
		sum      *Summary
		got      map[string][]string
		asked    map[string]map[string]int
		hits     map[string]int
		saves    int
		snapshot int
		raw      int // memento drift fetches (id_)
	}
	snapPath := "/web/" + memento.Timestamp14(atS) + "/" + oldPage
	rawFetches := func() int {
		n := 0
		for _, r := range fa.Requests() {
			if strings.Contains(r.Path, "id_/") {
				n++
			}
		}
		return n
	}
	measure := func(name string, do func() (*Summary, *collector)) result {
		qMu.Lock()
		questions = map[string]map[string]int{"a": {}, "b": {}}
		qMu.Unlock()
		hitsMu.Lock()
		hits = map[string]int{}
		hitsMu.Unlock()
		saverMu.Lock()
		saver = archivetest.New(t, archivetest.Options{})
		s := saver
		saverMu.Unlock()
		snap0, raw0 := fa.Count(snapPath), rawFetches()
		sum, c := do()
		qMu.Lock()
		defer qMu.Unlock()
		hitsMu.Lock()
		defer hitsMu.Unlock()
		return result{name: name, sum: sum, got: c.sorted(), asked: questions, hits: hits,
			saves: s.Count("/save") - s.Count("/save/"), snapshot: fa.Count(snapPath) - snap0, raw: rawFetches() - raw0}
	}
	var results []result
	results = append(results, measure("Run", func() (*Summary, *collector) {
		var c collector
		sum, err := runStage(context.Background(), opts(), in, c.sink())
		if err != nil {
			t.Fatal(err)
		}
		return sum, &c
	}))
	for _, size := range []int{1, 3, math.MaxInt32} {
		var store *memStore
		results = append(results, measure(fmt.Sprintf("chunks of %d", size), func() (*Summary, *collector) {
			store = &memStore{in: in}
			st := &Stage{Store: store, Options: opts(), ChunkTargets: size}
			if err := st.Begin(context.Background(), &audit.Run{ID: 1}); err != nil {
				t.Fatal(err)
			}
			if err := st.Finish(context.Background()); err != nil {
				t.Fatal(err)
			}
			st.Close()
			return st.Summary(), &store.c
		}))
		wantChunks := 2 // the links without a target, the targets
		if size < 14 {
			wantChunks = 1 + (14+size-1)/size
			if 14%size == 0 {
				wantChunks++ // the last is full: one more for the unlinked target 20
			}
		}
		if store.chunks != wantChunks || size == 1 && store.most != 2 {
			t.Errorf("chunks of %d: %d chunks, at most %d links; want %d chunks", size, store.chunks, store.most, wantChunks)
		}
	}

	// What the fixture must give, so that the comparison means something.
	ref := results[0]
	for kind, n := range map[string]int{"snapshot": 3, "memento": 2 * 13, "drift": 7, "identifier": 3, "save": 3} {
		if len(ref.got[kind]) != n {
			t.Errorf("Run: %d %s results, want %d:\n%s", len(ref.got[kind]), kind, n, strings.Join(ref.got[kind], "\n"))
		}
	}
	var reasons []string
	for _, s := range ref.got["suggestion"] {
		for _, r := range []string{ReasonBrokenMemento, ReasonNoRobustData, ReasonUseIdentifier} {
			if strings.Contains(s, "Reason:"+r+" ") && !slices.Contains(reasons, r) {
				reasons = append(reasons, r)
			}
		}
	}
	if len(reasons) != 3 {
		t.Errorf("Run: suggestions of reasons %v, want all three:\n%s", reasons, strings.Join(ref.got["suggestion"], "\n"))
	}
	if ref.sum.FirstSeenBands == nil || len(ref.sum.FirstSeenBands) == 0 || ref.sum.IdentifiersBroken != 1 {
		t.Errorf("Run: summary %+v, want a first-seen drift and a broken identifier", ref.sum)
	}
	// 8 distinct questions (gone1 twice, gone2, alive1 twice, alive2,
	// paper, redir).
	for _, r := range results {
		for name, qs := range r.asked {
			if len(qs) != 8 {
				t.Errorf("%s: archive %s asked %d questions, want 8: %v", r.name, name, len(qs), qs)
			}
			for q, n := range qs {
				if n != 1 {
					t.Errorf("%s: archive %s asked %q %d times", r.name, name, q, n)
				}
			}
		}
		if r.saves != 3 || r.snapshot != 1 {
			t.Errorf("%s: %d save requests (want 3), snapshot fetched %d times (want 1)", r.name, r.saves, r.snapshot)
		}
		for u, n := range r.hits {
			if n != 1 && !strings.HasSuffix(u, "/paper.pdf") { // the identifier redirects to it
				t.Errorf("%s: %s fetched %d times", r.name, u, n)
			}
		}
	}
	for _, r := range results[1:] {
		if !reflect.DeepEqual(r.sum, ref.sum) {
			t.Errorf("%s: summary\n%+v\nwant (Run)\n%+v", r.name, r.sum, ref.sum)
		}
		if r.raw != ref.raw || ref.raw != 3 {
			t.Errorf("%s: %d memento fetches for drift, want (Run) %d, 3", r.name, r.raw, ref.raw)
		}
		if !reflect.DeepEqual(r.asked, ref.asked) || !reflect.DeepEqual(r.hits, ref.hits) {
			t.Errorf("%s: asked %v, fetched %v\nwant (Run) %v, %v", r.name, r.asked, r.hits, ref.asked, ref.hits)
		}
		for kind, want := range ref.got {
			if got := r.got[kind]; !slices.Equal(got, want) {
				t.Errorf("%s: %s results\n%s\nwant (Run)\n%s", r.name, kind, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}
