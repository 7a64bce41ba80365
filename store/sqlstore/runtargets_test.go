package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// runTargetRows returns run_targets as "run target-URL" in key order, and
// the same pairs as the links give them (SELECT DISTINCT over links).
func runTargetRows(t *testing.T, db *DB) (stored, fromLinks []string) {
	t.Helper()
	return rowStrings(t, db, `SELECT rt.run_id, t.url FROM run_targets rt JOIN targets t ON t.id = rt.target_id ORDER BY rt.run_id, rt.target_id`),
		rowStrings(t, db, `SELECT run_id, url FROM (SELECT DISTINCT l.run_id, t.url, l.target_id FROM links l JOIN targets t ON t.id = l.target_id) d ORDER BY run_id, target_id`)
}

func TestRunTargets_Writer(t *testing.T) { forEachBackend(t, testRunTargets_Writer) }

// testRunTargets_Writer: the writer stores each (run, target) of the
// run's links once, across pages and batches, never for a link without
// a target and never a target only a snapshot names; a batch that fails
// stores none of its targets; the readers built on run_targets answer as
// the links do.
func testRunTargets_Writer(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	run1, run2 := mustCreateRun(t, db), mustCreateRun(t, db)
	pages := fragmentPages("p")
	// A link with Robust Links data whose version URL is a target of
	// the store but not a link target of the run.
	pages[0].Links = append(pages[0].Links, audit.Link{Element: "a", Attr: "href", Href: "https://example.org/r", RawHref: "https://example.org/r",
		Robust: &audit.Robust{VersionURLRaw: "https://web.archive.org/web/2020/https://example.org/r",
			Snapshots: []audit.Snapshot{{URL: "https://web.archive.org/web/2020/https://example.org/r"}}}})
	mustSave(t, db, run1, pages[:1]...)
	mustSave(t, db, run1, pages[1:]...)
	mustSave(t, db, run2, pages[2:]...)
	stored, fromLinks := runTargetRows(t, db)
	want := []string{
		fmt.Sprintf("%d https://example.org/a", run1), fmt.Sprintf("%d https://example.org/b", run1),
		fmt.Sprintf("%d https://example.org/r", run1),
		fmt.Sprintf("%d https://example.org/a", run2), fmt.Sprintf("%d https://example.org/b", run2),
	}
	if !reflect.DeepEqual(stored, want) {
		t.Errorf("run_targets =\n%v\nwant\n%v", stored, want)
	}
	if len(fromLinks) != len(want) {
		t.Errorf("the links give the pairs %v, want %d", fromLinks, len(want))
	}

	// A batch that fails on its second page, after the first page's
	// links and targets were written in its transaction, leaves no
	// target behind.
	bad := fragmentPages("q")[:2]
	bad[0].Links = append(bad[0].Links, audit.Link{Element: "a", Attr: "href", Href: "https://example.org/c", RawHref: "https://example.org/c"})
	bad[1].PWIDs = []audit.PWID{{Raw: "urn:pwid:x", Link: 99}} // no link 99: the page fails
	if err := db.SavePages(ctx, run2, bad); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("SavePages of a page with a pwid of link 99: %v, want an out-of-range error", err)
	}
	if got, _ := runTargetRows(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("after a failed batch run_targets =\n%v\nwant\n%v", got, want)
	}
	// The same batch without its bad page adds c to run 2 only.
	bad[1].PWIDs = nil
	mustSave(t, db, run2, bad...)
	want = append(want, fmt.Sprintf("%d https://example.org/c", run2))
	if got, _ := runTargetRows(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("run_targets =\n%v\nwant\n%v", got, want)
	}

	// The readers on run_targets.
	stats, err := db.RunStats(ctx, run1)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Targets != 3 || stats.Links != 4*7+1 || stats.RobustLinks != 1 || stats.MsetLinks != 0 {
		t.Errorf("RunStats of run 1: %d targets, %d links, %d robust, %d mset; want 3, 29, 1, 0",
			stats.Targets, stats.Links, stats.RobustLinks, stats.MsetLinks)
	}
	var urls []string
	if err := db.TargetURLs(ctx, run2, func(u string) error { urls = append(urls, u); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(urls)
	if want := []string{"https://example.org/a", "https://example.org/b", "https://example.org/c"}; !reflect.DeepEqual(urls, want) {
		t.Errorf("TargetURLs of run 2 = %v, want %v", urls, want)
	}
	refs, err := db.TargetsAfter(ctx, run1, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 || refs[0].URL != "https://example.org/a" || refs[0].LinkCount != 4*5 ||
		refs[1].URL != "https://example.org/b" || refs[1].LinkCount != 4 {
		t.Errorf("TargetsAfter(run 1, 0, 2) = %+v, want a (20 links) and b (4)", refs)
	}
	if more, err := db.TargetsAfter(ctx, run1, refs[1].ID, 10); err != nil || len(more) != 1 || more[0].URL != "https://example.org/r" {
		t.Errorf("TargetsAfter(run 1, b, 10) = %+v, %v; want r only", more, err)
	}
	ids, err := db.RunTargetIDs(ctx, run2, []string{"https://example.org/c", "https://example.org/r"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ids["https://example.org/r"]; ok || len(ids) != 1 {
		t.Errorf("RunTargetIDs(run 2, c, r) = %v, want c only (r is run 1's)", ids)
	}
	var unchecked []string
	if err := db.UncheckedTargets(ctx, run2, func(r audit.TargetRef) error { unchecked = append(unchecked, r.URL); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://example.org/a", "https://example.org/b", "https://example.org/c"}; !reflect.DeepEqual(unchecked, want) {
		t.Errorf("UncheckedTargets of run 2 = %v, want %v", unchecked, want)
	}
}

// TestRunTargets_Migrate: migration 0020 fills run_targets from the links
// a version-19 file holds, as a file written at 20 has it, and the
// readers built on it answer alike.
//
// SQLite-only: it builds a schema-19 SQLite file by hand.
func TestRunTargets_Migrate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "v19.db")
	old := openAtVersion(t, path, 19, true)
	var runs []int64
	for i := range 2 {
		r := &audit.Run{Mode: "site", Seeds: []string{"https://example.org/"}, Version: "v19"}
		if err := old.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		mustSave(t, old, r.ID, fragmentPages(fmt.Sprint("p", i))[i:]...)
		runs = append(runs, r.ID)
	}
	if n := count(t, old, `SELECT count(*) FROM sqlite_master WHERE name = 'run_targets'`); n != 0 {
		t.Fatalf("a schema-19 file has run_targets")
	}
	old.write.Close()
	old.read.Close()

	db := openClosed(t, path)
	fresh := openClosed(t, filepath.Join(dir, "v20.db"))
	for i := range 2 {
		mustSave(t, fresh, mustCreateRun(t, fresh), fragmentPages(fmt.Sprint("p", i))[i:]...)
	}
	got, _ := runTargetRows(t, db)
	want, _ := runTargetRows(t, fresh)
	if len(want) != 4 || !reflect.DeepEqual(got, want) {
		t.Errorf("run_targets after 0020 =\n%v\nwritten at 20\n%v", got, want)
	}
	for _, run := range runs {
		a, err := db.RunStats(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fresh.RunStats(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if *a != *b || a.Targets != 2 {
			t.Errorf("RunStats of run %d after 0020 = %+v, written at 20 %+v", run, *a, *b)
		}
	}
	for _, idx := range []string{"links_robust", "links_mset", "run_targets_target"} {
		if n := count(t, db, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = $1`, idx); n != 1 {
			t.Errorf("index %s missing after 0020", idx)
		}
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestRunTargets_Plan: the readers of a run's targets and its counts use
// run_targets' indexes and the partial link indexes: SQLite reads none of
// the run's links for them.
func TestRunTargets_Plan(t *testing.T) {
	db := MustOpen(t)
	for _, c := range []struct {
		name, query string
		args        []any
		want        []string
	}{
		{"stats", runStatsSQL, []any{1}, []string{
			"SEARCH run_targets USING PRIMARY KEY (run_id=?)",
			"SEARCH links USING COVERING INDEX links_run_id (run_id=?)",
			"SEARCH links USING COVERING INDEX links_robust (run_id=?)",
			"SEARCH links USING COVERING INDEX links_mset (run_id=?)",
		}},
		{"targets after", targetsAfterSQL, []any{1, 0, 10}, []string{
			"SEARCH rt USING PRIMARY KEY (run_id=? AND target_id>?)",
		}},
		{"last run of a target", `SELECT max(run_id) FROM run_targets WHERE target_id = $1`, []any{1}, []string{
			"SEARCH run_targets USING COVERING INDEX run_targets_target (target_id=?)",
		}},
	} {
		assertIndexedPlan(t, db, c.name, c.query, c.args, c.want)
	}
}

// TestCommittedSet_Targets: the writer's memory of committed targets is
// bounded and forgets another run's.
func TestCommittedSet_Targets(t *testing.T) {
	var c committedSet[runTarget]
	c.add(7, map[runTarget]struct{}{1: {}, 2: {}})
	if !c.has(7, 1) || c.has(8, 1) || c.has(7, 3) {
		t.Error("has: wrong answer for run 7's targets")
	}
	batch := map[runTarget]struct{}{1: {}, 2: {}, 5: {}}
	if got := c.missing(7, batch); !reflect.DeepEqual(got, []runTarget{5}) {
		t.Errorf("missing(7, 1 2 5) = %v, want [5]", got)
	}
	got := c.missing(8, batch)
	slices.Sort(got)
	if !reflect.DeepEqual(got, []runTarget{1, 2, 5}) {
		t.Errorf("missing(8, 1 2 5) = %v, want all three: run 7's targets are not run 8's", got)
	}
	for i := range 1_000_000 {
		c.add(7, map[runTarget]struct{}{runTarget(i): {}})
		if c.bytes > committedSetBytes {
			t.Fatalf("after %d targets the memory holds %d bytes, more than %d", i+1, c.bytes, committedSetBytes)
		}
	}
	if len(c.keys) == 0 {
		t.Error("the memory is empty after 1,000,000 targets: it forgets too much")
	}
	c.forget(7)
	if c.has(7, 999_999) {
		t.Error("forget(7) kept run 7's targets")
	}
}
