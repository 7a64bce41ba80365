package archives

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/urls"
)

// collector gathers what Run hands to its Sink.
type collector struct {
	mu       sync.Mutex
	snaps    []audit.SnapshotCheck
	mementos []audit.Memento
	drifts   []audit.Drift
	failures []audit.DriftFailure
	idents   []audit.IdentifierCheck
	suggs    []audit.Suggestion
	saves    []audit.SaveRequest
}

func (c *collector) sink() stageSink {
	add := func(f func()) { c.mu.Lock(); f(); c.mu.Unlock() }
	return stageSink{
		SnapshotCheck: func(x audit.SnapshotCheck) { add(func() { c.snaps = append(c.snaps, x) }) },
		Memento:       func(x audit.Memento) { add(func() { c.mementos = append(c.mementos, x) }) },
		Drift:         func(x audit.Drift) { add(func() { c.drifts = append(c.drifts, x) }) },
		DriftFailure:  func(x audit.DriftFailure) { add(func() { c.failures = append(c.failures, x) }) },
		Identifier:    func(x audit.IdentifierCheck) { add(func() { c.idents = append(c.idents, x) }) },
		Suggestion:    func(x audit.Suggestion) { add(func() { c.suggs = append(c.suggs, x) }) },
		Save:          func(x audit.SaveRequest) { add(func() { c.saves = append(c.saves, x) }) },
	}
}

// stageClient returns a Client for archives through the guarded transport
// with loopback allowed, fast budgets and short timeouts.
func stageClient(t testing.TB, archives ...memento.Archive) *memento.Client {
	t.Helper()
	rt, done := httpx.NewTransport(httpx.Options{AllowPrivate: true, ConnectTimeout: 2 * time.Second})
	t.Cleanup(done)
	return memento.NewClient(memento.Options{Archives: archives, Transport: rt, Timeout: 5 * time.Second,
		MaxRetryWait: 2 * time.Second, Retries: -1, OtherHostRate: 60000})
}

func page(text string) string {
	return "<!doctype html><html><head><title>t</title></head><body><main><p>" + text + "</p></main></body></html>"
}

// liveCheck is a live check that found HTML at u.
func liveCheck(id int64, u string) *audit.Check {
	return &audit.Check{TargetID: id, URL: u, Verdict: audit.VerdictOK, Status: 200, SHA256: "fingerprint", ContentType: "text/html"}
}

func htmlLink(id int64, href string, r *audit.Robust) stageLink {
	n, err := urls.NormalizeURL(href)
	if err != nil {
		panic(err)
	}
	return stageLink{ID: id, PageURL: "http://site.example/", TargetID: id, TargetURL: n,
		Link: audit.Link{Element: "a", Href: href, Text: fmt.Sprintf("link %d", id), Robust: r}}
}

var siteHosts = map[string]bool{"site.example": true}

const (
	oldText = "The harbour museum opens a new hall about lighthouses, keepers, lamps and the ships they guided along the rocky coast."
	newText = "Tickets for the summer music festival go on sale Friday: three stages, forty bands, food trucks and late trains home."
)

// TestRun_DriftAgainstOriginalURL: a Robust Link whose href is the snapshot
// and whose data-originalurl is the live page (robust-links §4.2): the
// live side of drift is the original URL's current state, fetched by the
// stage, not the snapshot the href names (which would compare the memento
// with itself). An original that is gone leaves a drift failure.
func TestRun_DriftAgainstOriginalURL(t *testing.T) {
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/article" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page(newText))
	}))
	defer live.Close()
	fa := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	orig, gone := live.URL+"/article", live.URL+"/gone"
	fa.Add(archivetest.Memento{Original: orig, Time: at, Body: page(oldText)},
		archivetest.Memento{Original: gone, Time: at, Body: page(oldText)})
	cfg := fa.Config("fx", 60000)
	links := []stageLink{
		htmlLink(1, fa.URLOf(orig, at, ""), &audit.Robust{OriginalURL: orig, VersionDate: audit.NewTime(at)}),
		htmlLink(2, fa.URLOf(gone, at, ""), &audit.Robust{OriginalURL: gone, VersionDate: audit.NewTime(at)}),
	}
	// A link without a target of its own (a pwid href) and an original
	// that is no target of the run: nothing to store a measurement under.
	links = append(links, stageLink{ID: 3, PageURL: "http://site.example/", Link: audit.Link{Element: "a",
		Href: "urn:pwid:archive.org:2024-03-01T12:00:00Z:page:" + orig, Robust: &audit.Robust{OriginalURL: orig, VersionDate: audit.NewTime(at)}}})
	in := stageInput{RunID: 1, Links: links, Checks: map[int64]*audit.Check{
		// The hrefs (the snapshots) are alive HTML.
		1: liveCheck(1, links[0].TargetURL),
		2: liveCheck(2, links[1].TargetURL),
	}}
	var c collector
	if _, err := runStage(context.Background(), Options{Client: stageClient(t, cfg), SiteHosts: siteHosts}, in, c.sink()); err != nil {
		t.Fatal(err)
	}
	if len(c.drifts) != 1 {
		t.Fatalf("drifts = %+v, want 1", c.drifts)
	}
	d := c.drifts[0]
	if d.LinkID != 1 || d.Kind != "memento" || d.LiveURL != orig || d.Band == audit.BandUnchanged || d.Band == audit.BandMinor ||
		!strings.Contains(d.ReferenceURL, "id_/") || !strings.Contains(d.ExcerptLive, "festival") {
		t.Errorf("drift = %+v, want the memento against %s (changed text)", d, orig)
	}
	if len(c.failures) != 1 || c.failures[0].LinkID != 2 || c.failures[0].LiveURL != gone ||
		!strings.Contains(c.failures[0].Reason, "live page answered status 404") {
		t.Errorf("drift failures = %+v, want link 2's original answering 404", c.failures)
	}
}

// TestRun_DriftFailures: a due drift measurement that cannot be made is
// recorded with its reason: a memento without Memento-Datetime, a live
// page that is no longer HTML.
func TestRun_DriftFailures(t *testing.T) {
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, page(oldText))
		case "/b":
			w.Header().Set("Content-Type", "application/pdf")
			fmt.Fprint(w, "%PDF-1.7")
		}
	}))
	defer live.Close()
	fa := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	fa.Add(archivetest.Memento{Original: live.URL + "/a", Time: at, Body: page(oldText), NoDatetime: true},
		archivetest.Memento{Original: live.URL + "/b", Time: at, Body: page(oldText)})
	links := []stageLink{
		htmlLink(1, live.URL+"/a", &audit.Robust{VersionDate: audit.NewTime(at)}),
		htmlLink(2, live.URL+"/b", &audit.Robust{VersionDate: audit.NewTime(at)}),
	}
	in := stageInput{RunID: 1, Links: links, Checks: map[int64]*audit.Check{1: liveCheck(1, links[0].TargetURL), 2: liveCheck(2, links[1].TargetURL)}}
	var c collector
	sum, err := runStage(context.Background(), Options{Client: stageClient(t, fa.Config("fx", 60000)), SiteHosts: siteHosts}, in, c.sink())
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(c.failures, func(a, b audit.DriftFailure) int { return int(a.LinkID - b.LinkID) })
	if len(c.drifts) != 0 || len(c.failures) != 2 || sum.DriftErrors != 2 {
		t.Fatalf("drifts %+v, failures %+v, summary %d errors", c.drifts, c.failures, sum.DriftErrors)
	}
	if f := c.failures[0]; f.TargetID != 1 || !strings.Contains(f.Reason, "without Memento-Datetime") || !strings.Contains(f.ReferenceURL, "id_/") {
		t.Errorf("failure of link 1 = %+v", f)
	}
	if f := c.failures[1]; !strings.Contains(f.Reason, "not HTML (Content-Type application/pdf)") || f.MeasuredAt.IsZero() {
		t.Errorf("failure of link 2 = %+v", f)
	}
}

// TestRun_SaveMissingDespiteOtherArchives: a live link no archive holds is
// sent to the save-capable archive once that archive answered "no
// memento", whatever the others answered: an error (an aggregator down)
// or nothing (a public archive is not asked about a private URL). When
// the save-capable archive is the one not asked, nothing is sent.
func TestRun_SaveMissingDespiteOtherArchives(t *testing.T) {
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page(newText))
	}))
	defer live.Close()
	fa := archivetest.New(t, archivetest.Options{})
	closed := httptest.NewServer(http.NotFoundHandler())
	deadURL := closed.URL
	closed.Close()
	dead := memento.Archive{Name: "dead", TimeGate: deadURL + "/timegate/", Rate: 60000}
	public := memento.Archive{Name: "public", TimeGate: "https://archive.example/web/", Rate: 60000}
	publicSave := public
	publicSave.Save = "https://archive.example/save"
	saveable := fa.Config("fx", 60000)

	target := live.URL + "/new-post"
	in := stageInput{RunID: 1, Links: []stageLink{htmlLink(1, target, nil)},
		Checks:    map[int64]*audit.Check{1: liveCheck(1, target)},
		FirstSeen: map[int64]time.Time{1: time.Now().Add(-time.Hour)}}
	run := func(archives ...memento.Archive) *collector {
		var c collector
		// The live server is on loopback: not "another site" unless the
		// site is elsewhere.
		opts := Options{Client: stageClient(t, archives...), SiteHosts: siteHosts, SaveMissing: true,
			Save: memento.SaveOptions{PollInterval: 10 * time.Millisecond}}
		if _, err := runStage(context.Background(), opts, in, c.sink()); err != nil {
			t.Fatal(err)
		}
		return &c
	}

	c := run(dead, public, saveable)
	if len(c.saves) != 1 || c.saves[0].Archive != "fx" || c.saves[0].URL != target || c.saves[0].Status != "success" {
		t.Errorf("saves = %+v, want %s captured by fx", c.saves, target)
	}
	var errs, skipped int
	for _, m := range c.mementos {
		switch {
		case strings.Contains(m.Error, "not asked"):
			skipped++
		case m.Archive == "dead" && m.Error != "":
			errs++
		}
	}
	if errs != 1 || skipped != 1 {
		t.Errorf("mementos = %+v, want one error (dead) and one lookup not asked (public)", c.mementos)
	}

	// The first archive taking captures is the public one, which was not
	// asked about the loopback URL: nothing is sent anywhere.
	c = run(publicSave, saveable)
	if len(c.saves) != 0 {
		t.Errorf("saves = %+v, want none (the capturing archive did not answer)", c.saves)
	}
}

// TestRun_IdentifiersOfNonHTMLTargets: a PDF declaring its DOI in a
// Signposting Link header (rel="cite-as") gets its identifier checked and
// a use-identifier suggestion; its body is not needed.
func TestRun_IdentifiersOfNonHTMLTargets(t *testing.T) {
	var ext *httptest.Server
	ext = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/paper.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Header().Set("Link", fmt.Sprintf(`<%s/doi/10.1234/x>; rel="cite-as", <%s/meta.json>; rel="describedby"; type="application/json"`, ext.URL, ext.URL))
			fmt.Fprint(w, "%PDF-1.7\n"+strings.Repeat("binary ", 1000))
		case "/doi/10.1234/x":
			http.Redirect(w, r, "/paper.pdf", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer ext.Close()
	target := ext.URL + "/paper.pdf"
	chk := &audit.Check{TargetID: 1, URL: target, Verdict: audit.VerdictOK, Status: 200, ContentType: "application/pdf"}
	in := stageInput{RunID: 1, Links: []stageLink{htmlLink(1, target, nil)}, Checks: map[int64]*audit.Check{1: chk}}
	var c collector
	fa := archivetest.New(t, archivetest.Options{})
	sum, err := runStage(context.Background(), Options{Client: stageClient(t, fa.Config("fx", 60000)), SiteHosts: siteHosts}, in, c.sink())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.idents) != 1 || sum.Identifiers != 1 {
		t.Fatalf("identifier checks = %+v", c.idents)
	}
	ic := c.idents[0]
	if ic.Identifier != ext.URL+"/doi/10.1234/x" || ic.Rel != "cite-as" || ic.AccessURL != target || ic.OwnPage ||
		!ic.Resolves || !ic.LeadsBack || ic.How != "redirect" || len(ic.LinkingPages) != 1 {
		t.Errorf("identifier check = %+v", ic)
	}
	var use *audit.Suggestion
	for i := range c.suggs {
		if c.suggs[i].Reason == ReasonUseIdentifier {
			use = &c.suggs[i]
		}
	}
	if use == nil || use.Href != ic.Identifier || use.LinkID != 1 {
		t.Errorf("suggestions = %+v, want use-identifier %s", c.suggs, ic.Identifier)
	}
}

// TestRun_OwnPageIdentifierOnce: an internal page that declares an
// identifier and is also a link target fetched for drift gives one
// identifier check, as the site's own page, not a second one as a target;
// the link to it gets its use-identifier suggestion from that check.
func TestRun_OwnPageIdentifierOnce(t *testing.T) {
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/about":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Link", fmt.Sprintf(`<%s/id/about>; rel="identifier"`, site.URL))
			fmt.Fprint(w, page(oldText))
		case "/id/about":
			http.Redirect(w, r, "/about", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	fa := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	about := site.URL + "/about"
	fa.Add(archivetest.Memento{Original: about, Time: at, Body: page(oldText)})
	host := strings.TrimPrefix(site.URL, "http://")
	l := htmlLink(1, about, &audit.Robust{VersionDate: audit.NewTime(at)})
	l.PageURL = site.URL + "/"
	in := stageInput{RunID: 1, Links: []stageLink{l}, Checks: map[int64]*audit.Check{1: liveCheck(1, about)},
		Pages: []ownPage{{URL: about, Identifiers: []audit.Identifier{{URL: site.URL + "/id/about", Rel: "identifier", Source: "header"}}}}}
	var c collector
	opts := Options{Client: stageClient(t, fa.Config("fx", 60000)), SiteHosts: map[string]bool{host: true}}
	if _, err := runStage(context.Background(), opts, in, c.sink()); err != nil {
		t.Fatal(err)
	}
	if len(c.drifts) != 1 || c.drifts[0].Band != audit.BandUnchanged {
		t.Errorf("drifts = %+v (the page was fetched for drift)", c.drifts)
	}
	if len(c.idents) != 1 || !c.idents[0].OwnPage || !c.idents[0].LeadsBack {
		t.Errorf("identifier checks = %+v, want one own-page check", c.idents)
	}
	// The link to the page still learns of the identifier, from the own
	// page's check.
	if len(c.suggs) != 1 || c.suggs[0].Reason != ReasonUseIdentifier || c.suggs[0].Href != site.URL+"/id/about" || c.suggs[0].LinkID != 1 {
		t.Errorf("suggestions = %+v, want use-identifier %s/id/about", c.suggs, site.URL)
	}
}

// TestRun_NearestIsClosestNotLatest: a TimeGate that ignores
// Accept-Datetime and picks the latest memento. The nearest memento stored
// is still the closest to the wanted date: the first memento of the Link
// header, or, with TimeMaps, the middle one only the TimeMap lists.
func TestRun_NearestIsClosestNotLatest(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{TimeGateLatest: true})
	const orig = "http://example.org/article"
	first := time.Date(2020, 1, 10, 12, 0, 0, 0, time.UTC)
	middle := time.Date(2021, 6, 1, 8, 0, 0, 0, time.UTC)
	last := time.Date(2023, 3, 3, 3, 0, 0, 0, time.UTC)
	fa.Add(archivetest.Memento{Original: orig, Time: first, Body: page("a")},
		archivetest.Memento{Original: orig, Time: middle, Body: page("b")},
		archivetest.Memento{Original: orig, Time: last, Body: page("c")})
	cfg := fa.Config("fx", 60000)
	nearest := func(wanted time.Time, timemaps bool) audit.Memento {
		t.Helper()
		in := stageInput{RunID: 1, Links: []stageLink{htmlLink(1, orig, &audit.Robust{OriginalURL: orig, VersionDate: audit.NewTime(wanted)})}}
		var c collector
		if _, err := runStage(context.Background(), Options{Client: stageClient(t, cfg), TimeMaps: timemaps, SiteHosts: siteHosts}, in, c.sink()); err != nil {
			t.Fatal(err)
		}
		if len(c.mementos) != 1 || !c.mementos[0].Nearest {
			t.Fatalf("mementos = %+v", c.mementos)
		}
		return c.mementos[0]
	}
	if m := nearest(first.Add(48*time.Hour), false); !m.Datetime.Equal(first) || m.URL != fa.URLOf(orig, first, "") ||
		m.Distance != 48*time.Hour || !m.Representative {
		t.Errorf("nearest to %v = %+v, want the first memento (the TimeGate answered the latest)", first.Add(48*time.Hour), m)
	}
	if m := nearest(middle.Add(-24*time.Hour), true); !m.Datetime.Equal(middle) || m.Count != 3 || !m.Last.Equal(last) {
		t.Errorf("nearest to %v with TimeMaps = %+v, want the middle memento", middle.Add(-24*time.Hour), m)
	}
	// The fixture does what it claims: its TimeGate redirected to the
	// latest memento.
	if n, err := stageClient(t, cfg).Negotiate(context.Background(), cfg, orig, first); err != nil || !n.Memento.Datetime.Equal(last) {
		t.Errorf("TimeGate answered %+v, %v; want the latest memento", n, err)
	}
}

// TestRun_LinkFirstSeen: a broken link without a date of its own is looked
// up at the date linkrot first saw the link (this page linking to this
// target), not the earlier date another page first linked to the target.
func TestRun_LinkFirstSeen(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	cfg := fa.Config("fx", 60000)
	const target = "http://example.org/gone"
	targetSeen := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	linkSeen := time.Date(2024, 5, 5, 0, 0, 0, 0, time.UTC)
	in := stageInput{RunID: 1, Links: []stageLink{htmlLink(1, target, nil), htmlLink(2, target, nil)},
		Checks:        map[int64]*audit.Check{1: {TargetID: 1, URL: target, Verdict: audit.VerdictNotFound, Status: 404}},
		FirstSeen:     map[int64]time.Time{1: targetSeen},
		LinkFirstSeen: map[int64]time.Time{1: linkSeen}}
	in.Links[1].TargetID = 1
	var c collector
	if _, err := runStage(context.Background(), Options{Client: stageClient(t, cfg), SiteHosts: siteHosts}, in, c.sink()); err != nil {
		t.Fatal(err)
	}
	wanted := map[int64]time.Time{}
	for _, m := range c.mementos {
		wanted[m.LinkID] = m.Wanted
	}
	if !wanted[1].Equal(linkSeen) || !wanted[2].Equal(targetSeen) {
		t.Errorf("wanted dates = %v, want link 1 at %v (its own first sight), link 2 at %v (the target's)", wanted, linkSeen, targetSeen)
	}
}

// TestRun_PrivateArchiveOnly: with the transport of a run on a public site
// and a loopback archive configured, the archive is reached, while a
// declared snapshot on another loopback host is refused by the SSRF guard.
func TestRun_PrivateArchiveOnly(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	other := archivetest.New(t, archivetest.Options{})
	const orig = "http://example.org/article"
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	fa.Add(archivetest.Memento{Original: orig, Time: at, Body: page("a")})
	other.Add(archivetest.Memento{Original: orig, Time: at, Body: page("a")})
	cfg := fa.Config("fx", 60000)
	rt, done := httpx.NewTransportAllowing(httpx.Options{ConnectTimeout: 2 * time.Second}, []string{cfg.TimeGate, cfg.TimeMap, cfg.Save})
	defer done()
	client := memento.NewClient(memento.Options{Archives: []memento.Archive{cfg}, Transport: rt, Timeout: 5 * time.Second, Retries: -1, OtherHostRate: 60000})
	r := &audit.Robust{OriginalURL: orig, VersionDate: audit.NewTime(at), Snapshots: []audit.Snapshot{
		{URL: fa.URLOf(orig, at, ""), Datetime: audit.NewTime(at)},
		{URL: other.URLOf(orig, at, ""), Datetime: audit.NewTime(at)},
	}}
	in := stageInput{RunID: 1, Links: []stageLink{htmlLink(1, orig, r)}}
	var c collector
	if _, err := runStage(context.Background(), Options{Client: client, SiteHosts: siteHosts}, in, c.sink()); err != nil {
		t.Fatal(err)
	}
	verdict := map[string]audit.SnapshotCheck{}
	for _, sc := range c.snaps {
		verdict[sc.URL] = sc
	}
	if sc := verdict[fa.URLOf(orig, at, "")]; sc.Verdict != audit.SnapshotOK {
		t.Errorf("snapshot on the configured archive = %+v", sc)
	}
	if sc := verdict[other.URLOf(orig, at, "")]; sc.Verdict != audit.SnapshotError || !strings.Contains(sc.Reason, "refused") {
		t.Errorf("snapshot on another loopback host = %+v, want refused", sc)
	}
	if n := len(other.Requests()); n != 0 {
		t.Errorf("the other loopback host got %d requests", n)
	}
	if len(c.mementos) != 1 || c.mementos[0].URL == "" {
		t.Errorf("mementos = %+v, want the configured archive's", c.mementos)
	}
}

// TestRun_Offline: first-seen drift needs no network and no client.
func TestRun_Offline(t *testing.T) {
	in := stageInput{RunID: 2,
		Checks:    map[int64]*audit.Check{1: {RunID: 2, TargetID: 1, URL: "http://e.org/", SHA256: "b", SimHash: 0xFFFF, Words: 100, Verdict: audit.VerdictOK}},
		Reference: map[int64]*audit.Check{1: {RunID: 1, TargetID: 1, URL: "http://e.org/", SHA256: "a", SimHash: 0, Words: 100}},
		Links:     []stageLink{htmlLink(1, "http://e.org/", &audit.Robust{VersionDate: audit.NewTime(time.Now())})}}
	var c collector
	sum, err := runStage(context.Background(), Options{Offline: true}, in, c.sink())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.drifts) != 1 || c.drifts[0].Kind != "first-seen" || c.drifts[0].SimHashDistance != 16 || c.drifts[0].Band != audit.BandMajor ||
		sum.FirstSeenBands[audit.BandMajor] != 1 || len(c.mementos) != 0 {
		t.Errorf("offline run: drifts %+v, mementos %+v", c.drifts, c.mementos)
	}
}
