package archives

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
)

// datedLinks returns n links to distinct resources, each declaring a
// versiondate, with a capture of each in every fixture archive given.
func datedLinks(n int, at time.Time, fas ...*archivetest.Archive) []stageLink {
	var links []stageLink
	for i := 1; i <= n; i++ {
		u := fmt.Sprintf("http://ext.example/p%d", i)
		for _, fa := range fas {
			fa.Add(archivetest.Memento{Original: u, Time: at.Add(time.Duration(i) * time.Hour), Body: page(oldText)})
		}
		links = append(links, htmlLink(int64(i), u, &audit.Robust{VersionDate: audit.NewTime(at)}))
	}
	return links
}

// maxInWindow returns the most requests that started within any window
// of length w.
func maxInWindow(reqs []archivetest.Request, w time.Duration) int {
	best := 0
	for i := range reqs {
		n := 0
		for j := i; j < len(reqs) && reqs[j].Time.Sub(reqs[i].Time) < w; j++ {
			n++
		}
		best = max(best, n)
	}
	return best
}

// TestRun_ArchivesInParallelWithinBudget: two archives of different
// budgets are asked at once, each at its own pace, and neither receives
// more than its budget (less the margin) in any window.
func TestRun_ArchivesInParallelWithinBudget(t *testing.T) {
	slow := archivetest.New(t, archivetest.Options{})
	fast := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	const n = 24
	in := stageInput{RunID: 1, Links: datedLinks(n, at, slow, fast)}
	cs, cf := slow.Config("slow", 1200), fast.Config("fast", 2400) // 1080 and 2160 a minute after the 10% margin
	var c collector
	sum, err := runStage(context.Background(), Options{Client: stageClient(t, cs, cf), SiteHosts: siteHosts}, in, c.sink())
	if err != nil {
		t.Fatal(err)
	}
	if sum.LinksWithMemento != n || sum.LookupErrors != 0 {
		t.Fatalf("summary: %d with memento, %d failed", sum.LinksWithMemento, sum.LookupErrors)
	}
	for _, x := range []struct {
		fa   *archivetest.Archive
		cfg  memento.Archive
		name string
	}{{slow, cs, "slow"}, {fast, cf, "fast"}} {
		reqs := x.fa.Requests()
		if len(reqs) != n {
			t.Errorf("%s: %d requests, want %d (one TimeGate request per lookup)", x.name, len(reqs), n)
		}
		// A bucket of one token at rate r lets at most W·r+1 requests
		// start in any window W.
		w := time.Second
		limit := int(x.cfg.PerMinute()*w.Minutes()) + 1
		if got := maxInWindow(reqs, w); got > limit {
			t.Errorf("%s: %d requests within %v, budget allows %d", x.name, got, w, limit)
		}
	}
	// In parallel: the fast archive was done while the slow one was still
	// being asked (in sequence, the fast one would start only after the
	// slow one's last request, or the other way round).
	rs, rf := slow.Requests(), fast.Requests()
	if !(rf[0].Time.Before(rs[len(rs)-1].Time) && rs[0].Time.Before(rf[len(rf)-1].Time)) {
		t.Errorf("archives asked one after the other: slow %v..%v, fast %v..%v",
			rs[0].Time, rs[len(rs)-1].Time, rf[0].Time, rf[len(rf)-1].Time)
	}
	if rf[len(rf)-1].Time.After(rs[len(rs)-1].Time) {
		t.Errorf("the fast archive finished after the slow one: its budget was held up")
	}
}

// TestRun_429PausesPoolAndCounts: an archive answering 429 with
// Retry-After pauses its whole pool (no request to it within the pause),
// its failed lookups are lookup-failed results counted per archive, never
// "no memento"; the other archive answers meanwhile.
func TestRun_429PausesPoolAndCounts(t *testing.T) {
	bad := archivetest.New(t, archivetest.Options{TooManyRequests: 1000, RetryAfter: "1"})
	good := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	const n = 7 // more lookups than requests in flight at once: later ones wait for the pause
	in := stageInput{RunID: 1, Links: datedLinks(n, at, bad, good)}
	var c collector
	sum, err := runStage(context.Background(), Options{Client: stageClient(t, bad.Config("bad", 60000), good.Config("good", 60000)), SiteHosts: siteHosts}, in, c.sink())
	if err != nil {
		t.Fatal(err)
	}
	if sum.LookupFailed["bad"] != n || sum.LookupFailed["good"] != 0 || sum.LookupErrors != n || sum.LinksWithMemento != n {
		t.Errorf("summary: failed %v (%d), %d with memento", sum.LookupFailed, sum.LookupErrors, sum.LinksWithMemento)
	}
	for _, m := range c.mementos {
		switch m.Archive {
		case "bad":
			if m.Status != audit.LookupFailed || strings.Contains(m.Error, "no memento") || m.Error == "" {
				t.Errorf("bad archive's lookup = %+v, want lookup-failed with the reason", m)
			}
		case "good":
			if m.Status != audit.LookupFound {
				t.Errorf("good archive's lookup = %+v", m)
			}
		}
	}
	reqs := bad.Requests()
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Time.Before(reqs[j].Time) })
	// Requests already on their way when a 429 came back arrive together
	// (a wave, within a grace of 150 ms); after each wave the pool waits
	// the Retry-After before anything else is sent.
	waves := 1
	for i := 1; i < len(reqs); i++ {
		gap := reqs[i].Time.Sub(reqs[i-1].Time)
		switch {
		case gap < 150*time.Millisecond:
		case gap < 900*time.Millisecond:
			t.Errorf("request %d to the rate-limited archive %v after the previous 429 (Retry-After: 1)", i, gap)
		default:
			waves++
		}
	}
	if waves < 2 {
		t.Errorf("all %d requests in one wave: the pause was not waited for", len(reqs))
	}
}

// TestRun_MaxSnapshots: a link declaring more snapshots than the cap has
// those nearest to its versiondate checked; the rest are reported not
// checked, with the reason.
func TestRun_MaxSnapshots(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	u := "http://ext.example/many"
	var snaps []audit.Snapshot
	for i := range 15 {
		// Alternately before and after the versiondate, further and further.
		d := time.Duration(i/2+1) * 24 * time.Hour
		if i%2 == 1 {
			d = -d
		}
		ct := at.Add(d)
		fa.Add(archivetest.Memento{Original: u, Time: ct, Body: page(oldText)})
		snaps = append(snaps, audit.Snapshot{URL: fa.URLOf(u, ct, ""), Datetime: audit.NewTime(ct)})
	}
	in := stageInput{RunID: 1, Links: []stageLink{htmlLink(1, u, &audit.Robust{VersionDate: audit.NewTime(at), Snapshots: snaps})}}
	var c collector
	var skips []audit.SnapshotSkip
	sink := c.sink()
	sink.SnapshotSkip = func(s audit.SnapshotSkip) { c.mu.Lock(); skips = append(skips, s); c.mu.Unlock() }
	sum, err := runStage(context.Background(), Options{Client: stageClient(t, fa.Config("fx", 60000)), SiteHosts: siteHosts, MaxSnapshots: 10}, in, sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.snaps) != 10 || len(skips) != 5 || sum.SnapshotsNotChecked != 5 {
		t.Fatalf("%d checked, %d skipped (summary %d)", len(c.snaps), len(skips), sum.SnapshotsNotChecked)
	}
	for _, s := range c.snaps {
		if d := s.DeclaredDatetime.Sub(at); d > 5*24*time.Hour || d < -5*24*time.Hour {
			t.Errorf("checked a snapshot %v from the versiondate, not among the 10 nearest", d)
		}
	}
	for _, s := range skips {
		if d := s.Datetime.Sub(at); d < 5*24*time.Hour && d > -5*24*time.Hour || !strings.Contains(s.Reason, "--max-snapshots") {
			t.Errorf("skip = %+v", s)
		}
	}
	// The fetches: only the 10 checked snapshots were asked for.
	if got := fa.Count("/web/"); got > 10+1 {
		t.Errorf("%d replay requests, want at most the 10 checked and one lookup", got)
	}
}

// TestRun_RawReplayPerArchive: drift fetches the memento in the raw form
// the archive declares (default id_ path, a template), and when the
// archive has none it measures the replayed page and says so.
func TestRun_RawReplayPerArchive(t *testing.T) {
	live := newLive(t, page(newText))
	fa := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	u := live + "/article"
	fa.Add(archivetest.Memento{Original: u, Time: at, Body: page(oldText)})
	for _, c := range []struct {
		name, raw, wantNote, wantURL string
		banner                       bool
	}{
		{"default", "", "raw", "id_/", false},
		{"template", "template:" + fa.URL + "/web/{timestamp}id_/{url}", "raw", "id_/", false},
		{"none", "none", "not raw: archive none has no raw replay form", "/web/20240301120000/", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := fa.Config(c.name, 60000)
			cfg.Raw = memento.RawReplay(c.raw)
			links := []stageLink{htmlLink(1, u, &audit.Robust{VersionDate: audit.NewTime(at)})}
			in := stageInput{RunID: 1, Links: links, Checks: map[int64]*audit.Check{1: liveCheck(1, links[0].TargetURL)}}
			var col collector
			sum, err := runStage(context.Background(), Options{Client: stageClient(t, cfg), SiteHosts: siteHosts}, in, col.sink())
			if err != nil {
				t.Fatal(err)
			}
			if len(col.drifts) != 1 {
				t.Fatalf("drifts = %+v, failures = %+v", col.drifts, col.failures)
			}
			d := col.drifts[0]
			if !strings.HasPrefix(d.ReferenceNote, c.wantNote) || !strings.Contains(d.ReferenceURL, c.wantURL) {
				t.Errorf("reference %s (%q), want %s (%q)", d.ReferenceURL, d.ReferenceNote, c.wantURL, c.wantNote)
			}
			if (sum.DriftNotRaw == 1) != c.banner {
				t.Errorf("DriftNotRaw = %d", sum.DriftNotRaw)
			}
		})
	}
}

// newLive serves body at /article.
func newLive(t *testing.T, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/article" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRun_KnownLookupsReused: an answer of an earlier run (within
// --archive-max-age) is reused without asking; a failed one is asked
// again.
func TestRun_KnownLookupsReused(t *testing.T) {
	fa := archivetest.New(t, archivetest.Options{})
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	links := datedLinks(2, at, fa)
	known := []audit.Memento{
		{Archive: "fx", URIR: links[0].TargetURL, Wanted: at, Status: audit.LookupFound, URL: "http://cached.example/m", Datetime: at, CheckedAt: at},
		{Archive: "fx", URIR: links[1].TargetURL, Wanted: at, Status: audit.LookupFailed, Error: "rate limited", CheckedAt: at},
	}
	var c collector
	sum, err := runStage(context.Background(), Options{Client: stageClient(t, fa.Config("fx", 60000)), SiteHosts: siteHosts, Known: known},
		stageInput{RunID: 2, Links: links}, c.sink())
	if err != nil {
		t.Fatal(err)
	}
	if sum.LookupsReused != 1 || len(fa.Requests()) != 1 {
		t.Errorf("reused %d, %d requests; want 1 reused and 1 asked", sum.LookupsReused, len(fa.Requests()))
	}
	for _, m := range c.mementos {
		if m.LinkID == 1 && (!m.Reused || m.URL != "http://cached.example/m") || m.LinkID == 2 && (m.Reused || m.Status != audit.LookupFound) {
			t.Errorf("memento = %+v", m)
		}
	}
}
