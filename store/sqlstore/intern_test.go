package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// internPage holds hrefs for every case of the interned form: through the
// target (with and without a fragment), and verbatim because the
// normalized URL differs (case, default port, an empty fragment, white
// space, dot segments) or there is no target.
func internPage(u string) *audit.Page {
	p := &audit.Page{Extraction: audit.Extraction{URL: u}, RequestURL: u, Status: 200, ContentType: "text/html"}
	for _, h := range []struct{ href, raw string }{
		{"https://example.com/a", "https://example.com/a"},         // both through the target
		{"https://example.com/a#sec", "a#sec"},                     // href through the target
		{"https://EXAMPLE.com:443/a", "https://EXAMPLE.com:443/a"}, // normalized differs
		{"https://example.com/a#", "a#"},                           // empty fragment: '#' kept
		{" https://example.com/a ", " https://example.com/a "},     // white space
		{"https://example.com/x/../a", "x/../a"},
		{"https://example.com/a#x#y", "#x#y"}, // fragment with '#'
		{"mailto:someone@example.org", "mailto:someone@example.org"},
		{"not a url %zz", "not a url %zz"}, // no target
		{"", ""},
		{"https://example.com/" + hostileNUL, hostileNUL},
	} {
		p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: h.href, RawHref: h.raw, Text: h.raw})
	}
	return p
}

func TestIntern_RoundTrip(t *testing.T) { forEachBackend(t, testIntern_RoundTrip) }

func testIntern_RoundTrip(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	want := []*audit.Page{internPage(url0)}
	mustSave(t, db, runID, want...)
	validTextDeep(want) // as the store keeps text
	diffPages(t, mustPages(t, db, runID), want)

	refs, err := db.LinkRefs(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range refs {
		if r.Href != want[0].Links[i].Href {
			t.Errorf("LinkRefs[%d].Href = %q, want %q", i, r.Href, want[0].Links[i].Href)
		}
	}
	// The view gives the same strings.
	rows, err := db.read.QueryContext(ctx, `SELECT u.href, u.raw_href FROM links l JOIN link_urls u ON u.link_id = l.id ORDER BY l.ord`)
	if err != nil {
		t.Fatal(err)
	}
	var i int
	for rows.Next() {
		var href, raw string
		if err := rows.Scan(&href, &raw); err != nil {
			t.Fatal(err)
		}
		if l := want[0].Links[i]; href != l.Href || raw != l.RawHref {
			t.Errorf("link_urls row %d = %q, %q; want %q, %q", i, href, raw, l.Href, l.RawHref)
		}
		i++
	}
	rows.Close()
	// Stored compactly: the first two hrefs through the target, the first
	// raw href through the href; the rest verbatim.
	forms := map[int]int{0: 3, 1: 1, 2: 2, 3: 0, 4: 2, 7: 3, 8: 2, 9: 2}
	for ord, form := range forms {
		if got := count(t, db, `SELECT url_form FROM links WHERE ord = $1`, ord); got != form {
			t.Errorf("link %d: url_form %d, want %d", ord, got, form)
		}
	}
	if got := count(t, db, `SELECT count(*) FROM links WHERE (url_form & 1) <> 0 AND href <> ''`); got != 0 {
		t.Errorf("%d interned hrefs still stored", got)
	}

	// Findings: page and target through the link when they are its own.
	fs := []audit.Finding{
		{RunID: runID, PageURL: url0, LinkID: refs[1].LinkID, Target: "https://example.com/a",
			Verdict: audit.VerdictFragmentMissing, Message: "m", Fragment: "sec"},
		{RunID: runID, PageURL: url0 + "other", LinkID: refs[1].LinkID, Target: "https://example.com/other",
			Verdict: audit.VerdictNotFound, Message: "m"},
		{RunID: runID, PageURL: url0, Target: "https://example.com/a", Verdict: audit.VerdictGone, Message: "no link"},
	}
	if err := db.SaveFindings(ctx, fs); err != nil {
		t.Fatal(err)
	}
	got, err := db.Findings(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if wantF := []audit.Finding{fs[0], fs[2], fs[1]}; !reflect.DeepEqual(got, wantF) {
		t.Errorf("Findings =\n%+v\nwant\n%+v", got, wantF)
	}
	if got := count(t, db, `SELECT count(*) FROM findings WHERE url_form = 3 AND page_url = '' AND target = ''`); got != 1 {
		t.Errorf("interned findings = %d, want 1", got)
	}
}

// TestIntern_Migrate: links and findings written verbatim by schema 7 are
// rewritten by migration 0008 into the interned form, and read back the
// same.
//
// SQLite-only: it builds a schema-7 SQLite file by hand.
func TestIntern_Migrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v7.db")
	old := openAtVersion(t, path, 7, false) // schema 7 rows
	write, read := old.write, old.read
	r := &audit.Run{Mode: "site", Seeds: []string{url0}, Version: "v7"}
	if err := old.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	want := []*audit.Page{internPage(url0), fullPage(url0 + "full")}
	mustSave(t, old, r.ID, want...)
	// Findings through the legacy statement (no link refs reading: the
	// schema-7 LinkRefs query would not know url_form).
	var linkID int64
	if err := write.QueryRowContext(ctx, `SELECT id FROM links WHERE ord = 1 AND run_id = $1`, r.ID).Scan(&linkID); err != nil {
		t.Fatal(err)
	}
	fs := []audit.Finding{
		{RunID: r.ID, PageURL: url0, LinkID: linkID, Target: "https://example.com/a", Verdict: audit.VerdictFragmentMissing, Message: "m", Fragment: "sec"},
		{RunID: r.ID, PageURL: url0, LinkID: linkID, Target: "https://example.com/b", Verdict: audit.VerdictGone, Message: "another target"},
	}
	if err := old.SaveFindings(ctx, fs); err != nil {
		t.Fatal(err)
	}
	emptyHrefs := count(t, old, `SELECT count(*) FROM links WHERE href = ''`)
	write.Close()
	read.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	diffPages(t, mustPages(t, db, r.ID), want)
	got, err := db.Findings(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, fs) {
		t.Errorf("Findings after 0008 =\n%+v\nwant\n%+v", got, fs)
	}
	if n := count(t, db, `SELECT count(*) FROM links WHERE url_form & 1`); n < 3 {
		t.Errorf("%d links interned by the migration, want at least 3", n)
	}
	if n := count(t, db, `SELECT count(*) FROM links WHERE href = '' AND url_form & 1 = 0`); n != emptyHrefs {
		t.Errorf("%d empty hrefs not interned after 0008, want the %d written empty", n, emptyHrefs)
	}
	if n := count(t, db, `SELECT count(*) FROM findings WHERE url_form = 3`); n != 1 {
		t.Errorf("%d findings interned by the migration, want 1", n)
	}
	if n := count(t, db, `SELECT count(*) FROM findings WHERE url_form = 1 AND target = 'https://example.com/b'`); n != 1 {
		t.Errorf("finding with another target: page interned, target kept: %d rows", n)
	}
}

// TestIntern_CacheRollback: a batch that fails after creating targets
// leaves no ID of them in the writer's cache; the next batch creates them
// again and its links point to rows that exist.
func TestIntern_CacheRollback(t *testing.T) { forEachBackend(t, testIntern_CacheRollback) }

func testIntern_CacheRollback(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	fresh := &audit.Page{RequestURL: "https://example.org/p", Extraction: audit.Extraction{URL: "https://example.org/p",
		Links: []audit.Link{{Element: "a", Attr: "href", Href: "https://new.example/x", RawHref: "https://new.example/x"}}}}
	if err := db.SavePages(ctx, runID, []*audit.Page{fresh, nil}); err == nil {
		t.Fatal("a batch with a nil page saved")
	}
	if n := count(t, db, `SELECT count(*) FROM targets WHERE url = 'https://new.example/x'`); n != 0 {
		t.Fatalf("rolled-back target stored: %d", n)
	}
	if _, ok := db.targetIDs.Get("https://new.example/x"); ok {
		t.Fatal("rolled-back target ID in the cache")
	}
	mustSave(t, db, runID, fresh)
	// A later batch finds the target in the cache (published on commit).
	if _, ok := db.targetIDs.Get("https://new.example/x"); !ok {
		t.Error("committed target not in the cache")
	}
	other := &audit.Page{RequestURL: "https://example.org/q", Extraction: audit.Extraction{URL: "https://example.org/q", Links: fresh.Links}}
	mustSave(t, db, runID, other)
	if n := count(t, db, `SELECT count(DISTINCT target_id) FROM links WHERE target_id IS NOT NULL
		AND target_id IN (SELECT id FROM targets WHERE url = 'https://new.example/x')`); n != 1 {
		t.Errorf("links to the target use %d target rows, want 1", n)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

func TestIntern_TargetGuess(t *testing.T) { forEachBackend(t, testIntern_TargetGuess) }

// testIntern_TargetGuess saves links to targets that exist but are not
// cached (as for another process's writer), then to new ones, so that the
// writer's guess (saver.findOrInsertTarget) is wrong at each turn: every
// link must still get the one target of its URL.
func testIntern_TargetGuess(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	run1, run2 := mustCreateRun(t, db), mustCreateRun(t, db)
	page := func(u string, lo, hi int) *audit.Page {
		p := &audit.Page{RequestURL: u, Extraction: audit.Extraction{URL: u}}
		for i := lo; i < hi; i++ {
			href := fmt.Sprintf("https://t%d.example/x", i)
			p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href})
		}
		return p
	}
	const n = 3 * targetGuessSpan
	mustSave(t, db, run1, page("https://example.org/1", 0, n))
	db.targetIDs.Purge()
	mustSave(t, db, run2, page("https://example.org/2", 0, 2*n), page("https://example.org/3", n/2, n+n/2))
	db.targetIDs.Purge()
	mustSave(t, db, run2, page("https://example.org/4", n, 3*n))

	if got, want := count(t, db, `SELECT count(*) FROM targets`), 3*n+4; got != want {
		t.Errorf("targets rows = %d, want %d", got, want)
	}
	find := "instr" // the engines name their substring search differently
	if isPostgresTest(t) {
		find = "strpos"
	}
	if got := count(t, db, `SELECT count(*) FROM links l JOIN targets t ON t.id = l.target_id
		WHERE t.url <> 'https://t' || substr(t.url, 10, `+find+`(substr(t.url, 10), '.') - 1) || '.example/x'`); got != 0 {
		t.Errorf("%d links point to another URL's target", got)
	}
	if got, want := count(t, db, `SELECT count(*) FROM links WHERE target_id IS NOT NULL`), n+2*n+n+2*n; got != want {
		t.Errorf("links with a target = %d, want %d", got, want)
	}
	if got := count(t, db, `SELECT count(*) FROM targets WHERE first_seen_run = $1`, run1); got != n+1 {
		t.Errorf("targets first seen in run 1 = %d, want %d", got, n+1)
	}
	for _, run := range []int64{run1, run2} {
		refs, err := db.Targets(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int64{}
		for _, r := range refs {
			if id, ok := seen[r.URL]; ok && id != r.ID {
				t.Errorf("run %d: %s has targets %d and %d", run, r.URL, id, r.ID)
			}
			seen[r.URL] = r.ID
		}
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

func TestIntern_ManyLinks(t *testing.T) { forEachBackend(t, testIntern_ManyLinks) }

// testIntern_ManyLinks: a page of many links, some with rows of their own
// (snapshots, diagnostics), reads back as saved, its links numbered in
// document order, each row under its own link.
func testIntern_ManyLinks(t *testing.T) {
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	const u = "https://example.org/many"
	p := &audit.Page{RequestURL: u, Status: 200, Extraction: audit.Extraction{URL: u, Parsed: true}}
	for i := range 53 {
		href := fmt.Sprintf("https://t%d.example/x#f%d", i%20, i)
		l := audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href, Text: fmt.Sprint("link ", i),
			Line: i + 1, Column: 3, LineHash: "h"}
		switch {
		case i%7 == 3:
			snap := fmt.Sprintf("https://web.archive.org/web/2020/https://t%d.example/x", i)
			l.Robust = &audit.Robust{VersionURLRaw: snap, Snapshots: []audit.Snapshot{{URL: snap}}}
		case i%11 == 5:
			l.Diagnostics = []audit.Diagnostic{{Field: "href", Code: "bad", Message: fmt.Sprint("link ", i)}}
		}
		p.Links = append(p.Links, l)
	}
	mustSave(t, db, runID, p)
	got := mustPages(t, db, runID)
	if len(got) != 1 || len(got[0].Links) != len(p.Links) {
		t.Fatalf("pages read back: %+v", got)
	}
	for i, l := range got[0].Links {
		want := p.Links[i]
		want.Line, want.Column, want.LineHash = 0, 0, "" // Pages leaves positions out
		if !reflect.DeepEqual(l, want) {
			t.Errorf("link %d read back as %+v, want %+v", i, l, want)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM links WHERE line <> ord + 1 OR col <> 3 OR line_hash <> 'h'`); n != 0 {
		t.Errorf("%d links with the wrong position", n)
	}
	if n := count(t, db, `SELECT count(*) FROM links a JOIN links b ON b.page_id = a.page_id AND b.ord = a.ord + 1
		WHERE b.id <> a.id + 1`); n != 0 {
		t.Errorf("%d links not numbered in document order", n)
	}
	if n := count(t, db, `SELECT count(*) FROM snapshots s JOIN links l ON l.id = s.link_id
		WHERE l.ord % 7 <> 3 OR s.url <> 'https://web.archive.org/web/2020/https://t' || l.ord || '.example/x'`); n != 0 {
		t.Errorf("%d snapshots under the wrong link", n)
	}
	if n := count(t, db, `SELECT count(*) FROM diagnostics d JOIN links l ON l.id = d.link_id
		WHERE l.ord % 11 <> 5 OR d.message <> 'link ' || l.ord`); n != 0 {
		t.Errorf("%d diagnostics under the wrong link", n)
	}
}
