package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/linkrot/linkrot/audit"
)

// fragmentPages are pages whose links repeat #fragments across pages and
// targets, with a link that has a fragment but no target.
func fragmentPages(prefix string) []*audit.Page {
	link := func(href string) audit.Link {
		return audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href, Text: "t"}
	}
	var pages []*audit.Page
	for i := range 4 {
		p := &audit.Page{Extraction: audit.Extraction{URL: fmt.Sprintf("https://example.org/%s%d", prefix, i)}, Status: 200}
		for _, h := range []string{"https://example.org/a#x", "https://example.org/a#y", "https://example.org/a",
			"https://example.org/b#x", "https://example.org/a#x", fmt.Sprintf("https://example.org/a#own%d", i%2)} {
			p.Links = append(p.Links, link(h))
		}
		p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: "#top", RawHref: "#top"}) // no target
		pages = append(pages, p)
	}
	return pages
}

// rowStrings returns the rows of query, each as its columns joined by
// spaces (NULL as "-").
func rowStrings(t *testing.T, db *DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.read.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals, err := scanAny(rows, len(cols))
		if err != nil {
			t.Fatal(err)
		}
		fields := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				fields[i] = "-"
			case []byte:
				fields[i] = string(v)
			default:
				fields[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(fields, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// runFragments returns the rows of run_fragments as "run target#fragment"
// (target by URL), in key order.
func runFragments(t *testing.T, db *DB) []string {
	t.Helper()
	return rowStrings(t, db, `SELECT rf.run_id, t.url || '#' || rf.fragment FROM run_fragments rf
		JOIN targets t ON t.id = rf.target_id ORDER BY rf.run_id, rf.target_id, rf.fragment`)
}

func TestRunFragments_Writer(t *testing.T) { forEachBackend(t, testRunFragments_Writer) }

// testRunFragments_Writer: the writer stores each (run, target, fragment)
// once, across pages and batches, never for a link without a target; a
// batch that fails stores none of its pairs.
func testRunFragments_Writer(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	run1, run2 := mustCreateRun(t, db), mustCreateRun(t, db)
	pages := fragmentPages("p")
	mustSave(t, db, run1, pages[:1]...)
	mustSave(t, db, run1, pages[1:]...)
	mustSave(t, db, run2, pages[:2]...)
	want := []string{
		fmt.Sprintf("%d https://example.org/a#own0", run1), fmt.Sprintf("%d https://example.org/a#own1", run1),
		fmt.Sprintf("%d https://example.org/a#x", run1), fmt.Sprintf("%d https://example.org/a#y", run1),
		fmt.Sprintf("%d https://example.org/b#x", run1),
		fmt.Sprintf("%d https://example.org/a#own0", run2), fmt.Sprintf("%d https://example.org/a#own1", run2),
		fmt.Sprintf("%d https://example.org/a#x", run2), fmt.Sprintf("%d https://example.org/a#y", run2),
		fmt.Sprintf("%d https://example.org/b#x", run2),
	}
	// Key order is target ID order: a was created before b.
	if got := runFragments(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("run_fragments =\n%v\nwant\n%v", got, want)
	}

	// A batch that fails on its second page, after the first page's
	// links and pairs were written in its transaction, leaves no pair
	// behind.
	bad := fragmentPages("q")[:2]
	bad[0].Links = append(bad[0].Links, audit.Link{Element: "a", Attr: "href", Href: "https://example.org/c#new", RawHref: "https://example.org/c#new"})
	bad[1].PWIDs = []audit.PWID{{Raw: "urn:pwid:x", Link: 99}} // no link 99: the page fails
	if err := db.SavePages(ctx, run2, bad); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("SavePages of a page with a pwid of link 99: %v, want an out-of-range error", err)
	}
	if got := runFragments(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("after a failed batch run_fragments =\n%v\nwant\n%v", got, want)
	}
}

// TestRunFragments_Migrate: migration 0019 fills run_fragments from the
// links a version-18 file holds, drops links_fragment, and the findings
// stage's reads give what they give on a file written at 19.
//
// SQLite-only: it builds a schema-18 SQLite file by hand.
func TestRunFragments_Migrate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "v18.db")
	old := openAtVersion(t, path, 18, true)
	r := &audit.Run{Mode: "site", Seeds: []string{"https://example.org/"}, Version: "v18"}
	if err := old.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	mustSave(t, old, r.ID, fragmentPages("p")...)
	if n := count(t, old, `SELECT count(*) FROM sqlite_master WHERE name = 'run_fragments'`); n != 0 {
		t.Fatalf("a schema-18 file has run_fragments")
	}
	old.write.Close()
	old.read.Close()

	db := openClosed(t, path)
	if n := count(t, db, `SELECT count(*) FROM sqlite_master WHERE name = 'links_fragment'`); n != 0 {
		t.Errorf("links_fragment is still there after 0019")
	}
	fresh := openClosed(t, filepath.Join(dir, "v19.db"))
	run := mustCreateRun(t, fresh)
	mustSave(t, fresh, run, fragmentPages("p")...)
	got, want := runFragments(t, db), runFragments(t, fresh)
	if len(want) != 5 || !reflect.DeepEqual(got, want) {
		t.Errorf("run_fragments after 0019 =\n%v\nwritten at 19\n%v", got, want)
	}

	read := func(db *DB, runID int64) []string {
		if missing, err := db.SaveChecksByURL(ctx, []audit.Check{
			{RunID: runID, URL: "https://example.org/a", Verdict: audit.VerdictOK, Status: 200},
			{RunID: runID, URL: "https://example.org/b", Verdict: audit.VerdictGone, Status: 410},
		}); err != nil || len(missing) != 0 {
			t.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
		}
		var out []string
		err := db.FindingLinks(ctx, runID, func(c *audit.Check, fragment string) bool {
			return strings.HasPrefix(fragment, "own") || fragment == "y"
		}, func(l audit.LinkRef, c *audit.Check) error {
			out = append(out, l.PageURL+" "+l.Href+" "+string(c.Verdict))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := read(db, r.ID), read(fresh, run); len(want) != 4*2+4 || !reflect.DeepEqual(got, want) {
		t.Errorf("FindingLinks after 0019 =\n%v\nwritten at 19\n%v", got, want)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestRunFragments_ReusedRunID: a run deleted and another created under
// its ID (SQLite reuses the largest rowid) gets its pairs and targets
// written, though the writer remembered the same keys of the deleted run;
// deleting a run deletes its keys.
func TestRunFragments_ReusedRunID(t *testing.T) {
	db := MustOpen(t)
	run := mustCreateRun(t, db)
	mustSave(t, db, run, fragmentPages("p")...)
	if _, err := db.write.Exec(`DELETE FROM runs WHERE id = $1`, run); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"run_fragments", "run_targets"} {
		if n := count(t, db, `SELECT count(*) FROM `+table); n != 0 {
			t.Fatalf("%s keeps %d rows of a deleted run", table, n)
		}
	}
	if again := mustCreateRun(t, db); again != run {
		t.Skipf("SQLite gave run ID %d, not the deleted %d: nothing to test", again, run)
	}
	mustSave(t, db, run, fragmentPages("p")...)
	if got := runFragments(t, db); len(got) != 5 {
		t.Errorf("run_fragments of the new run = %v, want its 5 pairs", got)
	}
	if got, _ := runTargetRows(t, db); len(got) != 2 {
		t.Errorf("run_targets of the new run = %v, want its 2 targets", got)
	}
}

// TestFragmentsSeen_Bounded: the writer's memory of committed pairs holds
// copies of the fragments, never more than committedSetBytes of them,
// and no fragment longer than fragmentSeenMaxLen; it forgets another
// run's pairs.
func TestFragmentsSeen_Bounded(t *testing.T) {
	var f fragmentsSeen
	page := strings.Repeat("x", 1000) // a page's text, which a fragment may be a slice of
	batch := map[fragKey]struct{}{{1, page[:10]}: {}, {2, page}: {}}
	f.add(7, batch)
	if !f.has(7, fragKey{1, strings.Repeat("x", 10)}) {
		t.Error("a committed pair is not remembered")
	}
	if f.has(7, fragKey{2, page}) {
		t.Errorf("a fragment of %d bytes is remembered", len(page))
	}
	if f.has(8, fragKey{1, page[:10]}) {
		t.Error("a pair of run 7 is taken for run 8's")
	}
	for k := range f.keys {
		if unsafe.StringData(k.fragment) == unsafe.StringData(page) {
			t.Error("the memory holds a slice of the page's string, not a copy")
		}
	}
	for i := range 200_000 {
		f.add(7, map[fragKey]struct{}{{int64(i), fmt.Sprintf("anchor-%d-%s", i, strings.Repeat("y", 200))}: {}})
		if f.bytes > committedSetBytes {
			t.Fatalf("after %d pairs the memory holds %d bytes, more than %d", i+1, f.bytes, committedSetBytes)
		}
	}
	if len(f.keys) == 0 {
		t.Error("the memory is empty after 200,000 pairs: it forgets too much")
	}
	f.add(8, map[fragKey]struct{}{{1, "a"}: {}})
	if len(f.keys) != 1 || !f.has(8, fragKey{1, "a"}) {
		t.Errorf("another run's pairs are kept: %d pairs", len(f.keys))
	}
}
