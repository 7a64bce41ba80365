package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/store/engines"
)

// Hostile strings a notification carries: a sender address, a claimed
// replacement and a backlink source are all the sender's to choose.
const (
	hostileClient = `<script>window.__xss=5</script>`
	hostileRepl   = `javascript:window.__xss=6`
	hostileNote   = `<img src=x onerror="window.__xss=7">`
	friendURL     = "https://friend.example/post"
)

// addMaintenance writes, through the store's write API as linkrot serve
// does, to the fixture: a confirmed UNLINKR claim about movedURL, a
// pending UNLINKR with hostile text, a LINKMOD with its drift check, a
// dashboard re-check, a Webmention backlink of the site's home page, and
// the dismissal of two findings (about → gone, home → evil).
func (f *fixture) addMaintenance(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	db, err := engines.Open(ctx, f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 11, 4, 12, 0, 0, 0, time.UTC)
	run := f.runs[len(f.runs)-1]
	reqs := []*audit.WireRequest{
		{ReceivedAt: at, Framing: audit.FramingDraft, Method: audit.WireUNLINKR, Source: site, Target: movedURL, Repl: replURL, Client: "198.51.100.7"},
		{ReceivedAt: at.Add(time.Minute), Framing: audit.FramingHTTP, Method: audit.WireUNLINKR, Source: site, Target: movedURL, Repl: hostileRepl, Client: hostileClient},
		{ReceivedAt: at.Add(2 * time.Minute), Framing: audit.FramingHTTP, Method: audit.WireLINKMOD, Source: site, Target: movedURL, Client: "198.51.100.8"},
		{ReceivedAt: at.Add(3 * time.Minute), Framing: audit.FramingDashboard, Method: audit.WireRecheck, Source: "", Target: movedURL, Client: "dashboard"},
		{ReceivedAt: at.Add(4 * time.Minute), Framing: audit.FramingWebmention, Method: audit.WireWebmention, Source: friendURL, Target: site, LinkMod: true, Client: "203.0.113.9"},
	}
	if err := db.EnqueueWire(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	done := at.Add(10 * time.Minute)
	finish := func(r *audit.WireRequest, result string, eff store.WireEffect) {
		t.Helper()
		if err := db.FinishWire(ctx, r.ID, audit.WireDone, result, eff, done); err != nil {
			t.Fatal(err)
		}
	}
	finish(reqs[0], "claim confirmed", store.WireEffect{
		LiveChecks: []audit.LiveCheck{
			{Reason: audit.LiveUnlinkrTarget, URL: movedURL, Verdict: audit.VerdictMoved, Status: 301, FinalURL: replURL, CheckedAt: done},
			{Reason: audit.LiveUnlinkrReplacement, URL: replURL, Verdict: audit.VerdictOK, Status: 200, CheckedAt: done},
		},
		Claim: &audit.Claim{RunID: run, Source: site, Target: movedURL, Claimant: "198.51.100.7", ClaimedAt: at, Replacement: replURL,
			TargetVerdict: audit.VerdictMoved, TargetStatus: 301, ReplacementVerdict: audit.VerdictOK, Confirmed: true,
			Note: "target moved; replacement answers " + hostileNote},
	})
	// reqs[1] stays queued: a pending claim.
	finish(reqs[2], "checked: ok (200), drift major", store.WireEffect{LiveChecks: []audit.LiveCheck{
		{Reason: audit.LiveLinkmod, URL: movedURL, Verdict: audit.VerdictOK, Status: 200, Band: audit.BandMajor, PrevSHA256: "ab", CheckedAt: done.Add(time.Minute)},
	}})
	finish(reqs[3], "checked: timeout", store.WireEffect{LiveChecks: []audit.LiveCheck{
		{Reason: audit.LiveRecheck, URL: movedURL, Verdict: audit.VerdictTimeout, Detail: "re-check timed out", CheckedAt: done.Add(2 * time.Minute)},
	}})
	finish(reqs[4], "backlink stored", store.WireEffect{UpsertBacklink: &audit.Backlink{Source: friendURL, Target: site, Via: "webmention",
		LinkMod: true, Client: "203.0.113.9", VerifiedAt: done}})
	for _, d := range []audit.Dismissal{{PageURL: aboutURL, Target: gonePath, DismissedAt: done}, {PageURL: site, Target: evilURL, DismissedAt: done}} {
		if err := db.SaveDismissal(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
}

// section returns the body of the table with the given id.
func section(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no table %s", id)
	}
	return body[i : i+strings.Index(body[i:], "</table>")]
}

func TestDashboard_MaintenanceTarget(t *testing.T) {
	f := newFixture(t)
	f.addMaintenance(t)
	h := New(f.openRO(t), Options{})
	u := "/target/" + strconv.FormatInt(f.targets[movedURL], 10)
	code, body, _ := get(t, h, u)
	if code != 200 {
		t.Fatalf("GET %s = %d", u, code)
	}
	wellFormed(t, u, body)
	claims := section(t, body, "t-claims")
	if n := rowCount(body, "t-claims"); n != 3 {
		t.Errorf("claims: %d rows, want 3 (confirmed UNLINKR, pending UNLINKR, LINKMOD):\n%s", n, claims)
	}
	for _, want := range []string{"UNLINKR", "LINKMOD", "198.51.100.7", `href="` + replURL + `"`, ">confirmed<", ">pending<",
		"recorded on run #" + strconv.FormatInt(f.runs[2], 10), "drift: <span", ">major<"} {
		if !strings.Contains(claims, want) {
			t.Errorf("claims table lacks %q:\n%s", want, claims)
		}
	}
	// The claim's verdicts: the target moved, the replacement answers.
	if !strings.Contains(claims, `>moved<`) || !strings.Contains(claims, `replacement: <span class="badge good">ok</span>`) {
		t.Errorf("claims table lacks the check's verdicts:\n%s", claims)
	}
	live := section(t, body, "t-live")
	if n := rowCount(body, "t-live"); n != 3 {
		t.Errorf("live checks: %d rows, want 3:\n%s", n, live)
	}
	for _, want := range []string{"LINKMOD drift check", "dashboard re-check", "UNLINKR: the target", "re-check timed out", ">timeout<"} {
		if !strings.Contains(live, want) {
			t.Errorf("live checks lack %q:\n%s", want, live)
		}
	}
	// A target nobody wrote about says so.
	u = "/target/" + strconv.FormatInt(f.targets[fineURL], 10)
	if _, body, _ := get(t, h, u); rowCount(body, "t-claims") != 0 || rowCount(body, "t-live") != 0 {
		t.Errorf("%s lists claims or live checks", u)
	}
}

func TestDashboard_MaintenanceHostileTextStaysText(t *testing.T) {
	f := newFixture(t)
	f.addMaintenance(t)
	h := New(f.openRO(t), Options{})
	_, body, _ := get(t, h, "/target/"+strconv.FormatInt(f.targets[movedURL], 10))
	for _, bad := range []string{hostileClient, hostileNote, `href="` + hostileRepl, `href="javascript:`, `onerror="window`} {
		if strings.Contains(body, bad) {
			t.Errorf("target page carries %q unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;window.__xss=5&lt;/script&gt;", "&lt;img src=x onerror=&#34;window.__xss=7&#34;&gt;",
		`<span class="url nolink">javascript:window.__xss=6</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("target page lacks the escaped text %q", want)
		}
	}
}

func TestDashboard_MaintenanceBacklinks(t *testing.T) {
	f := newFixture(t)
	f.addMaintenance(t)
	h := New(f.openRO(t), Options{})
	u := "/page?url=" + url.QueryEscape(site)
	code, body, _ := get(t, h, u)
	if code != 200 {
		t.Fatalf("GET %s = %d", u, code)
	}
	wellFormed(t, u, body)
	bl := section(t, body, "t-backlinks")
	if n := rowCount(body, "t-backlinks"); n != 1 {
		t.Errorf("backlinks: %d rows, want 1:\n%s", n, bl)
	}
	for _, want := range []string{`href="` + friendURL + `"`, "Webmention", "asked", "2026-11-04 12:10 UTC"} {
		if !strings.Contains(bl, want) {
			t.Errorf("backlinks lack %q:\n%s", want, bl)
		}
	}
	if _, body, _ := get(t, h, "/page?url="+url.QueryEscape(aboutURL)); rowCount(body, "t-backlinks") != 0 {
		t.Errorf("the about page lists the home page's backlink")
	}
}

func TestDashboard_MaintenanceOverview(t *testing.T) {
	f := newFixture(t)
	h := New(f.openRO(t), Options{})
	_, before, _ := get(t, h, "/")
	f.addMaintenance(t)
	_, body, _ := get(t, h, "/")
	wellFormed(t, "/", body)
	card := func(body string) string {
		i := strings.Index(body, `id="maintenance"`)
		if i < 0 {
			t.Fatal("no link-maintenance card")
		}
		return body[i : i+strings.Index(body[i:], "</div></div></div>")+18]
	}
	if c := card(before); strings.Count(c, `<div class="num">0</div>`) != 4 {
		t.Errorf("empty database: card %s", c)
	}
	c := card(body)
	for _, want := range []string{
		`<div class="num">1</div><div class="lbl">claims (UNLINKR, LINKMOD) waiting`,
		`<div class="num">1</div><div class="lbl">UNLINKR claims confirmed`,
		`<div class="num">0</div><div class="lbl">UNLINKR claims the checks did not`,
		`<div class="num">1</div><div class="lbl">verified backlinks`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("card lacks %q:\n%s", want, c)
		}
	}
}

func TestDashboard_DismissedFindings(t *testing.T) {
	f := newFixture(t)
	f.addMaintenance(t)
	h := New(f.openRO(t), Options{ActionsEnabled: true, CSRFToken: "tok"})
	evil := `href="/target/` + strconv.FormatInt(f.targets[evilURL], 10) + `"`
	gone := `href="/target/` + strconv.FormatInt(f.targets[gonePath], 10) + `"`

	// /broken: the evil target (its one finding dismissed) is hidden; the
	// gone target stays, linked from the home page only.
	_, body, _ := get(t, h, "/broken")
	wellFormed(t, "/broken", body)
	tbl := section(t, body, "t-broken")
	if strings.Contains(tbl, evil) || !strings.Contains(tbl, gone) {
		t.Errorf("/broken: the dismissed target is shown or the other hidden:\n%s", tbl)
	}
	if strings.Contains(tbl, "gone again") || strings.Contains(tbl, ">dismissed<") {
		t.Errorf("/broken: a dismissed link is listed by default:\n%s", tbl)
	}
	if !strings.Contains(body, `href="/broken?dismissed=1">show dismissed (1)</a>`) {
		t.Errorf("/broken: no show-dismissed toggle")
	}
	_, body, _ = get(t, h, "/broken?dismissed=1")
	wellFormed(t, "/broken?dismissed=1", body)
	tbl = section(t, body, "t-broken")
	if !strings.Contains(tbl, evil) || !strings.Contains(tbl, `<span class="badge dismissed">dismissed</span>`) {
		t.Errorf("/broken?dismissed=1: the dismissed target is not shown marked:\n%s", tbl)
	}
	if !strings.Contains(body, `href="/broken">hide dismissed (1)</a>`) || !strings.Contains(body, `<input type="hidden" name="dismissed" value="1">`) {
		t.Errorf("/broken?dismissed=1: no hide toggle, or the filters drop the parameter")
	}

	// /links?verdict=broken: the two dismissed findings are hidden.
	_, body, _ = get(t, h, "/links?verdict=broken")
	wellFormed(t, "/links", body)
	n := rowCount(body, "t-links")
	tbl = section(t, body, "t-links")
	if strings.Contains(tbl, "gone again") || strings.Contains(tbl, evil) || !strings.Contains(tbl, "a page that goes away") {
		t.Errorf("/links: dismissed findings shown, or others hidden:\n%s", tbl)
	}
	if !strings.Contains(body, "show dismissed (2)</a>") {
		t.Errorf("/links: no show-dismissed (2) toggle")
	}
	_, body, _ = get(t, h, "/links?verdict=broken&dismissed=1")
	wellFormed(t, "/links?dismissed=1", body)
	if m := rowCount(body, "t-links"); m != n+2 {
		t.Errorf("/links?dismissed=1: %d rows, want %d", m, n+2)
	}
	tbl = section(t, body, "t-links")
	if !strings.Contains(tbl, "gone again") || strings.Count(tbl, `<span class="badge dismissed">dismissed</span>`) != 2 {
		t.Errorf("/links?dismissed=1: dismissed findings not shown marked:\n%s", tbl)
	}
	// A dismissed finding offers no second dismiss form.
	if c := strings.Count(tbl, "/actions/dismiss"); c != strings.Count(section(t, get3(t, h, "/links?verdict=broken"), "t-links"), "/actions/dismiss") {
		t.Errorf("/links?dismissed=1: %d dismiss forms, the dismissed findings offer one", c)
	}
}

func get3(t *testing.T, h interface {
	ServeHTTP(w http.ResponseWriter, r *http.Request)
}, u string) string {
	t.Helper()
	_, body, _ := get(t, h, u)
	return body
}
