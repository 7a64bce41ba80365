package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/archives/archivetest"
	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/drift"
)

// archPage wraps a paragraph the way every fixture page here is written, so
// that live pages and their mementos have the same main text when their
// paragraphs are the same.
func archPage(p string) string {
	return "<!doctype html><html><head><title>t</title></head><body><nav>menu</nav><main><p>" + p + "</p></main></body></html>"
}

const (
	textStable   = "Lighthouses guide ships along rocky coasts with rotating lamps and foghorns."
	textCouncilA = "The city council approved the new library budget after a long debate about reading rooms, archives and children programs."
	textCouncilB = "The city council cancelled the library project and will sell the building to a hotel developer next spring."
	textGardenA  = "Gardening tips: water tomatoes early in the morning, mulch the beds, prune suckers weekly and harvest when fruit turns deep red."
	textGardenB  = "Gardening tips: water tomatoes early in the morning, mulch the beds, prune suckers often and harvest when fruit turns deep red."
	textBaking   = "Baking bread: knead dough ten minutes, let it rise twice, bake hot."
	textVolcano  = "Volcanoes erupt when magma rises through cracks in the crust, releasing ash, gas and lava flows across the slopes."
	textForSale  = "This domain is for sale. Contact the owner today."
)

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// archiveFixture is the end-to-end world: the audited site, an external
// site, a 302-style fixture archive (fx) and a 200-style one that first
// answers 429 (slow).
type archiveFixture struct {
	site, ext *httptest.Server
	fx, slow  *archivetest.Archive
	extV2     atomic.Bool // the external /page changed (second run)
}

func newArchiveFixture(t *testing.T) *archiveFixture {
	f := &archiveFixture{}
	f.fx = archivetest.New(t, archivetest.Options{})
	f.slow = archivetest.New(t, archivetest.Options{TooManyRequests: 1, RetryAfter: "1"})
	f.ext = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/page":
			if f.extV2.Load() {
				fmt.Fprint(w, archPage(textBaking))
			} else {
				fmt.Fprint(w, archPage(textGardenB))
			}
		case "/paper":
			fmt.Fprintf(w, `<html><head><link rel="cite-as" href="%s/doi/123"></head><body><main><p>A paper.</p></main></body></html>`, f.ext.URL)
		case "/doi/123":
			http.Redirect(w, r, "/paper", http.StatusFound)
		case "/paper2":
			w.Header().Set("Link", fmt.Sprintf(`<%s/id/bad>; rel="identifier"`, f.ext.URL))
			fmt.Fprint(w, archPage("Another paper."))
		case "/domain-sold":
			fmt.Fprint(w, archPage(textForSale))
		case "/unarchived", "/mset-page":
			fmt.Fprint(w, archPage("Nobody archived this page."))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.ext.Close)
	f.site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, f.fill(indexHTML))
		case "/stable":
			fmt.Fprint(w, archPage(textStable))
		case "/changed":
			fmt.Fprint(w, archPage(textCouncilB))
		case "/moved-story", "/nodt", "/never-archived":
			fmt.Fprint(w, archPage("A page of the site."))
		case "/id/home":
			http.Redirect(w, r, "/", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.site.Close)

	s, e := f.site.URL, f.ext.URL
	f.fx.Add(
		archivetest.Memento{Original: s + "/stable", Time: ts("2024-03-01T12:00:00Z"), Body: archPage(textStable)},
		archivetest.Memento{Original: s + "/changed", Time: ts("2023-12-01T00:00:00Z"), Body: archPage("An old version.")},
		archivetest.Memento{Original: s + "/changed", Time: ts("2024-01-20T00:00:00Z"), Body: archPage(textCouncilA)},
		archivetest.Memento{Original: s + "/moved-story", Time: ts("2023-05-05T05:05:05Z"), Body: archPage("x"), LinkOriginal: "http://elsewhere.example/story"},
		archivetest.Memento{Original: s + "/nodt", Time: ts("2022-02-02T02:02:02Z"), Body: archPage("x"), NoDatetime: true},
		archivetest.Memento{Original: s + "/deleted", Time: ts("2022-07-07T07:07:07Z"), Body: archPage("Deleted page, as it was.")},
		archivetest.Memento{Original: e + "/page", Time: time.Now().Add(-48 * time.Hour), Body: archPage(textGardenA)},
		archivetest.Memento{Original: e + "/domain-sold", Time: ts("2023-06-01T10:00:00Z"), Body: archPage(textVolcano)},
		archivetest.Memento{Original: e + "/mset-page", Time: ts("2023-09-10T12:00:00Z"), Body: archPage("Nobody archived this page.")},
	)
	// The other archive holds a closer capture of the deleted page.
	f.slow.Add(archivetest.Memento{Original: s + "/deleted", Time: ts("2023-08-08T08:08:08Z"), Body: archPage("Deleted page, later.")})
	return f
}

const indexHTML = `<!doctype html><html><head><title>Links</title>
<link rel="identifier" href="{{SITE}}/id/home"></head><body><main>
<p><a href="{{SITE}}/stable" data-originalurl="{{SITE}}/stable" data-versiondate="2024-03-01"
   data-versionurl="{{FX}}/web/20240301120000/{{SITE}}/stable 2024-03-01T12:00:00Z">stable</a></p>
<p><a href="{{SITE}}/changed" data-versiondate="2024-01-15" data-versionurl="{{FX}}/web/20240115000000/{{SITE}}/changed">changed</a></p>
<p><a href="{{SITE}}/moved-story" mset="{{FX}}/web/20230505050505/{{SITE}}/moved-story 2023-05-05 memento">moved</a></p>
<p><a href="{{SITE}}/nodt" data-versiondate="2022-02-02" data-versionurl="{{FX}}/web/20220202020202/{{SITE}}/nodt">nodt</a></p>
<p><a href="{{SITE}}/never-archived" data-versiondate="2021-01-01" data-versionurl="{{FX}}/web/20210101000000/{{SITE}}/never-archived">never</a></p>
<p><a href="urn:pwid:fixture.archive:2024-03-01T12:00:00Z:page:{{SITE}}/stable">pwid ok</a></p>
<p><a href="urn:pwid:fixture.archive:2024-03-02T00:00:00Z:page:{{SITE}}/stable">pwid gone</a></p>
<p><a href="{{SITE}}/deleted">deleted</a></p>
<p><a href="{{EXT}}/page">garden</a> <a href="{{EXT}}/paper">paper</a> <a href="{{EXT}}/paper2">paper2</a></p>
<p><a href="{{EXT}}/domain-sold" data-versiondate="2023-06-01">volcanoes</a></p>
<p><a href="{{EXT}}/unarchived">unarchived</a> <a href="{{EXT}}/mset-page" mset="2023-09-09">mset</a></p>
</main></body></html>`

func (f *archiveFixture) fill(s string) string {
	return strings.NewReplacer("{{SITE}}", f.site.URL, "{{EXT}}", f.ext.URL, "{{FX}}", f.fx.URL).Replace(s)
}

func (f *archiveFixture) args(dbPath string) []string {
	return []string{"audit", f.site.URL + "/", "--db", dbPath, "--allow-private", "--timeout", "5s", "--no-report",
		"--archive", f.fx.Flag("fx", "6000/min"),
		"--archive", "slow=" + f.slow.URL + "/tg200/,timemap=" + f.slow.URL + "/timemap/link/,rate=6000/min",
		"--pwid-archive", "fixture.archive=" + f.fx.URL + "/web/{timestamp}{raw}/{item}",
		"--timemap", "--save-missing", "--save-poll-interval", "10ms", "--fetch-rate", "6000/min", "--fail-on", "none"}
}

func TestAuditCommand_Archives(t *testing.T) {
	f := newArchiveFixture(t)
	dbPath := filepath.Join(t.TempDir(), "archives.db")
	code, stdout, stderr := run(t, "", f.args(dbPath)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"Snapshots: 5 ok, 1 missing, 0 error, 1 not-a-memento (2 datetime mismatches, 1 of another original).",
		"Drift against mementos: 2 unchanged, 1 minor, 1 major, 1 off-topic; 1 could not be measured.", "Save requests: 4 success."} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	db := openDB(t, dbPath)
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := db.LinkRefs(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	linkOf := map[string]int64{} // by anchor text
	textOf := map[int64]string{}
	for _, l := range refs {
		if l.PageURL == f.site.URL+"/" && l.Element == "a" {
			linkOf[l.Text] = l.LinkID
			textOf[l.LinkID] = l.Text
		}
	}
	s, e := f.site.URL, f.ext.URL

	// 1. Snapshot audit.
	snaps, err := db.SnapshotChecks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	byLink := map[string]audit.SnapshotCheck{}
	for _, sc := range snaps {
		byLink[textOf[sc.LinkID]] = sc
	}
	if len(snaps) != 7 {
		t.Errorf("%d snapshot checks, want 7: %+v", len(snaps), snaps)
	}
	type wantSnap struct {
		source   string
		verdict  audit.SnapshotVerdict
		mismatch bool
		other    bool
		final    string
	}
	for text, w := range map[string]wantSnap{
		"stable":    {"versionurl", audit.SnapshotOK, false, false, f.fx.URLOf(s+"/stable", ts("2024-03-01T12:00:00Z"), "")},
		"changed":   {"versionurl", audit.SnapshotOK, true, false, f.fx.URLOf(s+"/changed", ts("2024-01-20T00:00:00Z"), "")},
		"moved":     {"mset", audit.SnapshotOK, false, true, ""},
		"nodt":      {"versionurl", audit.NotAMemento, false, false, ""},
		"never":     {"versionurl", audit.SnapshotMissing, false, false, ""},
		"pwid ok":   {"pwid", audit.SnapshotOK, false, false, ""},
		"pwid gone": {"pwid", audit.SnapshotOK, true, false, f.fx.URLOf(s+"/stable", ts("2024-03-01T12:00:00Z"), "")},
	} {
		sc, ok := byLink[text]
		if !ok {
			t.Errorf("%s: no snapshot check", text)
			continue
		}
		if sc.Source != w.source || sc.Verdict != w.verdict || sc.DatetimeMismatch != w.mismatch || sc.OriginalMismatch != w.other ||
			w.final != "" && sc.FinalURL != w.final {
			t.Errorf("%s: snapshot check = %+v", text, sc)
		}
	}
	if sc := byLink["changed"]; !sc.DeclaredDatetime.Equal(ts("2024-01-15T00:00:00Z")) || sc.DeclaredDelta != 5*24*time.Hour ||
		sc.VersionDateDelta != 4*24*time.Hour+12*time.Hour || !strings.Contains(sc.Reason, "timestamp in the snapshot URL") {
		t.Errorf("changed: datetimes = %+v", sc)
	}
	if sc := byLink["stable"]; sc.DeclaredDateOnly || sc.DeclaredDelta != 0 || sc.VersionDateDelta != 0 || sc.Original != s+"/stable" {
		t.Errorf("stable: %+v", sc)
	}
	if sc := byLink["pwid gone"]; !strings.Contains(sc.Reason, "pwid archival time") || sc.URL != f.fx.URL+"/web/20240302000000/"+s+"/stable" {
		t.Errorf("pwid gone: %+v", sc)
	}

	// 2. Nearest mementos, per archive, the closest across archives marked.
	mems, err := db.Mementos(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	type mkey struct{ text, archive string }
	mem := map[mkey]audit.Memento{}
	nearestOf := map[string]audit.Memento{}
	for _, m := range mems {
		mem[mkey{textOf[m.LinkID], m.Archive}] = m
		if m.Nearest {
			if _, dup := nearestOf[textOf[m.LinkID]]; dup {
				t.Errorf("%s: two nearest records", textOf[m.LinkID])
			}
			nearestOf[textOf[m.LinkID]] = m
		}
	}
	if m := mem[mkey{"stable", "fx"}]; m.URL != f.fx.URLOf(s+"/stable", ts("2024-03-01T12:00:00Z"), "") || m.Distance != 0 ||
		!m.Representative || !m.Nearest || m.WantedFrom != "versiondate" || m.Count != 1 || !m.First.Equal(ts("2024-03-01T12:00:00Z")) {
		t.Errorf("stable @fx = %+v", m)
	}
	if m := mem[mkey{"stable", "slow"}]; m.URL != "" || m.Error != "no memento" || m.Nearest {
		t.Errorf("stable @slow = %+v", m)
	}
	if m := nearestOf["changed"]; m.Archive != "fx" || !m.Datetime.Equal(ts("2024-01-20T00:00:00Z")) || m.Distance != 4*24*time.Hour+12*time.Hour || !m.Representative {
		t.Errorf("changed nearest = %+v", m)
	}
	// The deleted page: first seen now, the closer capture is the other
	// archive's (200-style TimeGate, after its 429); years away: not
	// representative.
	if m := nearestOf["deleted"]; m.Archive != "slow" || m.WantedFrom != "first-seen" || m.Representative ||
		m.URL != f.slow.URLOf(s+"/deleted", ts("2023-08-08T08:08:08Z"), "") {
		t.Errorf("deleted nearest = %+v", m)
	}
	if m := mem[mkey{"deleted", "fx"}]; !m.Datetime.Equal(ts("2022-07-07T07:07:07Z")) || m.Nearest {
		t.Errorf("deleted @fx = %+v", m)
	}
	if m := nearestOf["mset"]; m.WantedFrom != "mset" || !m.Wanted.Equal(ts("2023-09-09T12:00:00Z")) || m.Distance != 24*time.Hour {
		t.Errorf("mset nearest = %+v", m)
	}
	if m := nearestOf["volcanoes"]; m.WantedFrom != "versiondate" || m.Distance != 2*time.Hour {
		t.Errorf("volcanoes nearest = %+v", m)
	}
	if _, ok := mem[mkey{"moved", "fx"}]; ok {
		t.Error("a live link with only an mset copy was looked up")
	}
	// nodt: the TimeGate's Link header dates the capture, so the lookup
	// finds it (the missing Memento-Datetime shows in the snapshot audit
	// and in drift). never: no archive holds it; nor the live links nobody
	// archived, looked up at the date linkrot first saw them.
	if m := nearestOf["nodt"]; m.Archive != "fx" || m.URL != f.fx.URLOf(s+"/nodt", ts("2022-02-02T02:02:02Z"), "") ||
		m.WantedFrom != "versiondate" || m.Distance != 9*time.Hour+57*time.Minute+58*time.Second || !m.Representative {
		t.Errorf("nodt nearest = %+v", m)
	}
	for _, text := range []string{"never", "unarchived", "paper", "paper2"} {
		for _, arch := range []string{"fx", "slow"} {
			m, ok := mem[mkey{text, arch}]
			wantFrom := "first-seen"
			if text == "never" {
				wantFrom = "versiondate"
			}
			if !ok || m.URL != "" || m.Error != "no memento" || m.Nearest || m.WantedFrom != wantFrom || m.Count != 0 {
				t.Errorf("%s @%s = %+v (found %v), want no memento", text, arch, m, ok)
			}
		}
		if _, ok := nearestOf[text]; ok {
			t.Errorf("%s: a nearest memento is marked", text)
		}
	}
	// 11 links looked up (stable, changed, nodt, never, deleted, garden,
	// paper, paper2, volcanoes, unarchived, mset), one record per archive.
	if len(mems) != 22 || len(nearestOf) != 7 {
		t.Errorf("%d memento records (%d nearest), want 22 (7)", len(mems), len(nearestOf))
	}

	// 3. Drift.
	drifts, err := db.Drifts(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	band := map[string]audit.Drift{}
	for _, d := range drifts {
		if d.Kind == "memento" {
			band[textOf[d.LinkID]] = d
		}
	}
	// nodt has a nearest memento, but its raw answer has no
	// Memento-Datetime: no reference, no drift.
	for text, want := range map[string]string{"stable": audit.BandUnchanged, "changed": audit.BandMajor, "garden": audit.BandMinor,
		"volcanoes": audit.BandOffTopic, "mset": audit.BandUnchanged} {
		d, ok := band[text]
		if !ok || d.Band != want || !d.TextMeasured {
			t.Errorf("%s: drift %+v, want band %s", text, d, want)
		}
	}
	if d := band["stable"]; !strings.Contains(d.ReferenceURL, "id_/") || d.SimHashDistance != 0 || d.Cosine != 1 {
		t.Errorf("stable drift = %+v (the raw id_ memento must be compared)", d)
	}
	if d := band["garden"]; d.WordsReference != 21 || d.WordsLive != 21 || d.ExcerptReference == "" {
		t.Errorf("garden drift = %+v", d)
	}
	if len(band) != 5 {
		t.Errorf("%d memento drifts, want 5: %+v", len(band), band)
	}
	// nodt's drift was due but its memento is no reference: recorded.
	fails, err := db.DriftFailures(ctx, r.ID)
	if err != nil || len(fails) != 1 || textOf[fails[0].LinkID] != "nodt" || !strings.Contains(fails[0].Reason, "without Memento-Datetime") ||
		fails[0].LiveURL != s+"/nodt" {
		t.Errorf("drift failures = %+v, %v", fails, err)
	}
	// The pwids that resolved are snapshots of their links too.
	pw, err := db.PWIDSnapshots(ctx, r.ID)
	if err != nil || len(pw) != 2 {
		t.Fatalf("pwid snapshots = %+v, %v", pw, err)
	}
	for _, p := range pw {
		want := map[string]string{"pwid ok": f.fx.URL + "/web/20240301120000/" + s + "/stable",
			"pwid gone": f.fx.URL + "/web/20240302000000/" + s + "/stable"}[textOf[p.LinkID]]
		if p.URL != want || p.Ord != 0 || p.TargetID == 0 {
			t.Errorf("pwid snapshot of %q = %+v, want %s", textOf[p.LinkID], p, want)
		}
	}

	// 4. Identifiers.
	ids, err := db.IdentifierChecks(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	idOf := map[string]audit.IdentifierCheck{}
	for _, ic := range ids {
		idOf[ic.Identifier] = ic
	}
	if ic := idOf[s+"/id/home"]; !ic.OwnPage || !ic.Resolves || !ic.LeadsBack || ic.How != "redirect" || ic.AccessURL != s+"/" {
		t.Errorf("own identifier = %+v", ic)
	}
	if ic := idOf[e+"/doi/123"]; ic.OwnPage || !ic.Resolves || !ic.LeadsBack || ic.How != "redirect" || ic.Rel != "cite-as" ||
		ic.AccessURL != e+"/paper" || len(ic.LinkingPages) != 1 || ic.LinkingPages[0] != s+"/" {
		t.Errorf("paper identifier = %+v", ic)
	}
	if ic := idOf[e+"/id/bad"]; ic.Resolves || ic.LeadsBack || ic.Status != 404 || ic.Rel != "identifier" || ic.Reason == "" {
		t.Errorf("paper2 identifier = %+v", ic)
	}

	// 5. Suggestions.
	sgs, err := db.Suggestions(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	type skey struct{ text, reason string }
	sg := map[skey]audit.Suggestion{}
	for _, x := range sgs {
		sg[skey{textOf[x.LinkID], x.Reason}] = x
	}
	deadURL := f.slow.URLOf(s+"/deleted", ts("2023-08-08T08:08:08Z"), "")
	if x := sg[skey{"deleted", "broken-with-memento"}]; x.Href != deadURL || x.OriginalURL != s+"/deleted" || x.VersionURL != deadURL ||
		x.HTML != fmt.Sprintf(`<a href="%s" data-originalurl="%s/deleted" data-versiondate="%s" data-versionurl="%s 2023-08-08T08:08:08Z">deleted</a>`,
			deadURL, s, time.Now().UTC().Format("2006-01-02"), deadURL) {
		t.Errorf("deleted suggestion = %+v", x)
	}
	gardenMemento := nearestOf["garden"]
	if x := sg[skey{"garden", "no-robustness-data"}]; x.Href != e+"/page" || x.VersionURL != gardenMemento.URL || x.VersionURL == "" ||
		!strings.HasPrefix(x.HTML, `<a href="`+e+`/page" data-originalurl="`+e+`/page" data-versiondate="`) ||
		!strings.Contains(x.HTML, ` data-versionurl="`+gardenMemento.URL+" "+gardenMemento.Datetime.Format("2006-01-02T15:04:05Z")+`">garden</a>`) {
		t.Errorf("garden suggestion = %+v", x)
	}
	if x := sg[skey{"paper", "use-identifier"}]; x.Href != e+"/doi/123" || x.HTML != `<a href="`+e+`/doi/123">paper</a>` {
		t.Errorf("paper identifier suggestion = %+v", x)
	}
	if x := sg[skey{"unarchived", "no-robustness-data"}]; x.VersionURL != "" || strings.Contains(x.HTML, "data-versionurl") {
		t.Errorf("unarchived suggestion = %+v", x)
	}
	for _, text := range []string{"stable", "changed", "volcanoes", "moved"} {
		for _, reason := range []string{"no-robustness-data", "broken-with-memento"} {
			if _, ok := sg[skey{text, reason}]; ok {
				t.Errorf("%s: unexpected %s suggestion", text, reason)
			}
		}
	}
	// deleted; garden, paper, paper2, unarchived (no robustness data);
	// paper (its identifier). mset carries robustness data.
	if len(sgs) != 6 {
		t.Errorf("%d suggestions: %+v", len(sgs), sgs)
	}

	// 6. Save requests: live targets no archive holds (the site's own
	// never-archived page too).
	saves, err := db.SaveRequests(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	saved := map[string]audit.SaveRequest{}
	for _, x := range saves {
		saved[x.URL] = x
	}
	for _, u := range []string{e + "/unarchived", e + "/paper", e + "/paper2", s + "/never-archived"} {
		if x := saved[u]; x.Status != "success" || x.Archive != "fx" || x.JobID == "" || !strings.HasPrefix(x.Memento, f.fx.URL+"/web/") {
			t.Errorf("save of %s = %+v", u, x)
		}
	}
	if len(saves) != 4 {
		t.Errorf("%d save requests: %+v", len(saves), saves)
	}
	// The 429 archive was asked to slow down once, and honoured.
	if reqs := f.slow.Requests(); len(reqs) == 0 || reqs[0].Status != 429 {
		t.Errorf("slow archive requests = %+v", reqs)
	}

	// linkrot suggest.
	code, out, _ := run(t, "", "suggest", "--db", dbPath, "--format", "json")
	var js []audit.Suggestion
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || len(js) != len(sgs) {
		t.Errorf("suggest --format json: exit %d, %q", code, out)
	}
	code, out, _ = run(t, "", "suggest", "--db", dbPath, "--format", "csv", "--reason", "broken-with-memento")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != 2 || rows[0][0] != "page_url" || rows[1][3] != deadURL {
		t.Errorf("suggest --format csv: exit %d, %v, %q", code, err, out)
	}
	code, out, _ = run(t, "", "suggest", "--db", dbPath)
	if code != 0 || !strings.Contains(out, sg[skey{"deleted", "broken-with-memento"}].HTML) || !strings.Contains(out, "<!-- on "+s+"/ -->") {
		t.Errorf("suggest --format html: exit %d:\n%s", code, out)
	}
	if code, _, _ := run(t, "", "suggest", "--db", dbPath, "--format", "xml"); code != exitUsage {
		t.Errorf("suggest --format xml: exit %d", code)
	}

	// A second run: the external page changed since linkrot first saw it.
	f.extV2.Store(true)
	code, stdout, stderr = run(t, "", f.args(dbPath)...)
	if code != exitOK {
		t.Fatalf("second run: exit %d; stderr:\n%s", code, stderr)
	}
	r2, err := db.LatestRun(ctx)
	if err != nil || r2.ID == r.ID {
		t.Fatalf("second run = %+v, %v", r2, err)
	}
	drifts, err = db.Drifts(ctx, r2.ID)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]audit.Drift{}
	for _, d := range drifts {
		if d.Kind == "first-seen" {
			first[d.LiveURL] = d
		}
	}
	// The garden page became a bread recipe: SimHash distance 36, past the
	// major threshold (12), short of the off-topic one (38); fingerprints
	// carry no word sets, so the set measures cannot call it off-topic.
	if d := first[e+"/page"]; d.Band != audit.BandMajor || d.SimHashDistance != 36 || d.TextMeasured || d.WordsReference != 21 || d.WordsLive != 12 || d.LinkID != 0 {
		t.Errorf("first-seen drift of the changed page = %+v", d)
	}
	// Every target fingerprinted in both runs, once each: the site's five
	// live pages linked from the index, its identifier /id/home (which
	// redirects to the index page) and the other site's six pages.
	var others []string
	for u, d := range first {
		if u != e+"/page" && d.Band != audit.BandUnchanged {
			others = append(others, u)
		}
	}
	if len(first) != 12 || len(others) != 0 {
		t.Errorf("%d first-seen drifts (changed besides the garden page: %v), want 12", len(first), others)
	}
	if d := first[s+"/stable"]; d.Band != audit.BandUnchanged {
		t.Errorf("first-seen drift of the stable page = %+v", d)
	}
	if !strings.Contains(stdout, "Since first seen: ") {
		t.Errorf("second summary:\n%s", stdout)
	}
}

// closedPort returns the URL of a loopback port that refuses connections
// (listened on, then closed), without any DNS query.
func closedPort(t *testing.T) string {
	t.Helper()
	closed := httptest.NewServer(http.NotFoundHandler())
	u := closed.URL
	closed.Close()
	return u
}

// TestAuditCommand_ArchivesUnreachable: the default archives are real
// services; archives that cannot be reached (here two loopback ports that
// refuse connections) degrade to recorded errors quickly.
func TestAuditCommand_ArchivesUnreachable(t *testing.T) {
	f := newArchiveFixture(t)
	dead, dead2 := closedPort(t), closedPort(t)
	dbPath := filepath.Join(t.TempDir(), "dead.db")
	start := time.Now()
	code, stdout, stderr := run(t, "", "audit", f.site.URL+"/", "--db", dbPath, "--timeout", "2s", "--no-report", "--fail-on", "none",
		"--archive", "dead="+dead+"/web/,rate=6000/min", "--archive", "dead2="+dead2+"/web/,rate=6000/min",
		"--fetch-rate", "6000/min")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("audit against unreachable archives took %v", d)
	}
	if !strings.Contains(stdout, "lookups failed") {
		t.Errorf("summary:\n%s", stdout)
	}
	db := openDB(t, dbPath)
	r, _ := db.LatestRun(context.Background())
	mems, err := db.Mementos(context.Background(), r.ID)
	if err != nil || len(mems) == 0 {
		t.Fatalf("mementos = %v, %v", mems, err)
	}
	for _, m := range mems {
		if m.Error == "" || m.URL != "" {
			t.Errorf("memento record against a dead archive = %+v", m)
		}
	}
	if r.Status != audit.RunComplete {
		t.Errorf("run status %s", r.Status)
	}
}

func TestArchiveFlags_Usage(t *testing.T) {
	site := httptest.NewServer(http.NotFoundHandler())
	defer site.Close()
	dbPath := filepath.Join(t.TempDir(), "u.db")
	for _, args := range [][]string{
		{"--archive", "bad"},
		{"--archive", "x=ftp://a/"},
		{"--archive", "x=http://a/", "--archive", "x=http://b/"},
		{"--pwid-archive", "nope"},
		{"--fetch-rate", "fast"},
		{"--drift-offtopic-cosine", "1.5"},
		{"--drift-offtopic-jaccard", "-0.1"},
		{"--drift-offtopic-simhash", "65"},
		{"--drift-major-simhash", "-1"},
		{"--drift-major-wordcount", "1.01"},
		{"--drift-offtopic-wordcount", "NaN"},
		{"--no-archives", "--drift-offtopic-sorensen", "2"},
	} {
		a := append([]string{"audit", site.URL + "/", "--db", dbPath, "--no-report"}, args...)
		if code, _, _ := run(t, "", a...); code != exitUsage {
			t.Errorf("%v: exit %d, want usage error", args, code)
		}
	}
	if d := memento.Defaults(); len(d) != 2 || d[0].Name != "ia" || d[1].Name != "arquivo" {
		t.Errorf("defaults = %+v", d)
	}
}

// TestArchiveFlags_Thresholds: a drift threshold set to 0 is 0 (not the
// default), the others keep their defaults, and the values in range are
// accepted.
func TestArchiveFlags_Thresholds(t *testing.T) {
	var f archiveFlags
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	f.register(fs, &linkrot.Settings{})
	if err := fs.Parse([]string{"--drift-major-simhash", "0", "--drift-offtopic-cosine", "0", "--drift-major-wordcount", "1"}); err != nil {
		t.Fatal(err)
	}
	th, err := f.thresholds()
	if err != nil {
		t.Fatal(err)
	}
	want := drift.DefaultThresholds()
	want.MajorSimHash, want.OffTopicCosine, want.MajorWordChange = 0, 0, 1
	if th != want {
		t.Errorf("thresholds = %+v\nwant %+v", th, want)
	}
	// One SimHash bit of difference is major now; cosine 0 is not
	// off-topic at an off-topic cosine threshold of 0.
	m := drift.Measures{TextMeasured: true, SimHash: 1, Jaccard: 0.9, Dice: 0.9, Cosine: 0.9, WordsReference: 10, WordsLive: 10}
	if b := th.Band(m); b != audit.BandMajor {
		t.Errorf("band = %s, want major at --drift-major-simhash 0", b)
	}
	if _, _, _, err := f.config(); err != nil {
		t.Errorf("config: %v", err)
	}
}

// TestAuditCommand_NoArchivesFirstSeenDrift: --no-archives asks no
// archive, yet measures first-seen drift, which needs no network.
func TestAuditCommand_NoArchivesFirstSeenDrift(t *testing.T) {
	f := newArchiveFixture(t)
	dbPath := filepath.Join(t.TempDir(), "offline.db")
	args := []string{"audit", f.site.URL + "/", "--db", dbPath, "--allow-private", "--timeout", "5s", "--no-report", "--fail-on", "none", "--no-archives"}
	code, stdout, stderr := run(t, "", args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Drift since first seen: 0 unchanged, 0 minor, 0 major, 0 off-topic (archives not asked: --no-archives).") ||
		strings.Contains(stdout, "Snapshots:") {
		t.Errorf("first run summary:\n%s", stdout)
	}
	f.extV2.Store(true)
	code, stdout, stderr = run(t, "", args...)
	if code != exitOK {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Drift since first seen: 11 unchanged, 0 minor, 1 major, 0 off-topic") ||
		!strings.Contains(stdout, "1 newly drifted") {
		t.Errorf("second run summary:\n%s", stdout)
	}
	if n := len(f.fx.Requests()) + len(f.slow.Requests()); n != 0 {
		t.Errorf("%d archive requests under --no-archives", n)
	}
	db := openDB(t, dbPath)
	ctx := context.Background()
	r, err := db.LatestRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	drifts, err := db.Drifts(ctx, r.ID)
	if err != nil || len(drifts) != 12 {
		t.Fatalf("drifts = %+v, %v", drifts, err)
	}
	for _, d := range drifts {
		if d.Kind != "first-seen" || d.LiveURL == f.ext.URL+"/page" && d.Band != audit.BandMajor {
			t.Errorf("drift = %+v", d)
		}
	}
	if mems, err := db.Mementos(ctx, r.ID); err != nil || len(mems) != 0 {
		t.Errorf("mementos = %+v, %v", mems, err)
	}
	// linkrot check --no-archives on the same run measures it again,
	// without duplicates.
	code, _, stderr = run(t, "", "check", "--db", dbPath, "--run", fmt.Sprint(r.ID), "--allow-private", "--timeout", "5s", "--fail-on", "none", "--no-archives")
	if code != exitOK {
		t.Fatalf("check again: exit %d: %s", code, stderr)
	}
	if drifts, err := db.Drifts(ctx, r.ID); err != nil || len(drifts) != 12 {
		t.Errorf("after check again: %d drifts, %v", len(drifts), err)
	}
}
