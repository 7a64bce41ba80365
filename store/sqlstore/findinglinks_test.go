package sqlstore

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

// queryPlan returns SQLite's EXPLAIN QUERY PLAN of query, one line per
// step.
func queryPlan(t *testing.T, db *DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.read.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// assertIndexedPlan checks that SQLite's plan of query (named name) has
// every step of want and neither a scan of a table nor a sort (a
// constant row is not a table).
func assertIndexedPlan(t *testing.T, db *DB, name, query string, args []any, want []string) {
	t.Helper()
	plan := queryPlan(t, db, query, args...)
	joined := strings.Join(plan, "\n")
	for _, w := range want {
		if !slices.Contains(plan, w) {
			t.Errorf("%s: query plan\n%s\nwant the step %q", name, joined, w)
		}
	}
	for _, step := range plan {
		if (strings.HasPrefix(step, "SCAN ") && !strings.HasPrefix(step, "SCAN CONSTANT ROW")) || strings.Contains(step, "TEMP B-TREE") {
			t.Errorf("%s: query plan\n%s\nhas the step %q", name, joined, step)
		}
	}
}

// TestFindingLinks_Plan checks that FindingLinks' statements are searches
// of indexes, without a scan of a table or a sort: the distinct
// (target, fragment) pairs come from run_fragments' key in target order,
// the links of a kept pair from links_target_id, the broken targets' links
// from links_target_id in link order.
//
// SQLite-only: it reads SQLite's EXPLAIN QUERY PLAN.
func TestFindingLinks_Plan(t *testing.T) {
	db := MustOpen(t)
	for _, c := range []struct {
		name, query string
		args        []any
		want        []string
	}{
		{"pairs", findingPairsSQL, []any{1}, []string{"SEARCH run_fragments USING PRIMARY KEY (run_id=?)"}},
		{"kept", fragmentLinkIDsSQL(3), []any{1, 2, "a", "b", "c"},
			[]string{"SEARCH l USING INDEX links_target_id (target_id=?)"}},
		{"checks", findingChecksSQL, []any{1, 1}, []string{
			"SEARCH c USING INDEX sqlite_autoindex_checks_1 (run_id=?)",
			"SEARCH rf USING PRIMARY KEY (run_id=? AND target_id=?)",
		}},
		{"broken", findingBrokenSQL, []any{1}, []string{
			"SEARCH c USING INDEX sqlite_autoindex_checks_1 (run_id=?)",
			"SEARCH l USING INDEX links_target_id (target_id=?)",
		}},
	} {
		assertIndexedPlan(t, db, c.name, c.query, c.args, c.want)
	}
}

// TestFindingLinks_InvalidTextFragment: a fragment stored before
// migration 0018 may hold bytes that are not UTF-8, which no bound string
// can equal (every engine binds strings as store.ValidText). A kept pair
// with such a fragment still gives all its links, beside a kept pair of
// valid text of the same target, in link order.
//
// SQLite-only: PostgreSQL text never held invalid UTF-8 (0018 decoded
// what earlier versions escaped).
func TestFindingLinks_InvalidTextFragment(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	const ok = "https://example.org/ok"
	link := func(href string) audit.Link {
		return audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href}
	}
	mustSave(t, db, runID, &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/p", Links: []audit.Link{
		link(ok + "#bad"), link(ok + "#good"), link(ok + "#fine"), link(ok + "#bad"), link(ok + "#good"),
	}}, Status: 200})
	if missing, err := db.SaveChecksByURL(ctx, []audit.Check{{RunID: runID, URL: ok, Verdict: audit.VerdictOK, Status: 200}}); err != nil || len(missing) != 0 {
		t.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
	}
	// What an older version could store: "b", 0xff, "d"; migration 0019
	// copies it into run_fragments as it is.
	if _, err := db.write.Exec(`UPDATE links SET fragment = CAST(X'62ff64' AS TEXT), href = $1 || '#' || CAST(X'62ff64' AS TEXT)
		WHERE fragment = 'bad'`, ok); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec(`UPDATE run_fragments SET fragment = CAST(X'62ff64' AS TEXT) WHERE fragment = 'bad'`); err != nil {
		t.Fatal(err)
	}
	const bad = "b\xffd"
	var asked, got []string
	err := db.FindingLinks(ctx, runID, func(c *audit.Check, fragment string) bool {
		asked = append(asked, fragment)
		return fragment == bad || fragment == "good"
	}, func(l audit.LinkRef, c *audit.Check) error {
		got = append(got, l.Fragment)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(asked)
	if want := []string{bad, "fine", "good"}; !slices.Equal(asked, want) {
		t.Errorf("keep asked about %q, want %q", asked, want)
	}
	if want := []string{bad, "good", bad, "good"}; !slices.Equal(got, want) {
		t.Errorf("FindingLinks gave the fragments %q, want %q", got, want)
	}
}

// TestFindingLinks_LongFragment: a page may write a fragment of any
// length (a URL may have 64,000 bytes); a link with a long fragment that
// does not compress is stored, and FindingLinks judges and gives it. On
// both engines: a PostgreSQL index entry is limited to a few kilobytes,
// which is why run_fragments is unique there by the fragment's MD5.
func TestFindingLinks_LongFragment(t *testing.T) { forEachBackend(t, testFindingLinks_LongFragment) }

func testFindingLinks_LongFragment(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	const ok = "https://example.org/ok"
	// 20,000 bytes that do not compress: a linear congruential sequence
	// of letters and digits.
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 20000)
	x := uint32(2463534242)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = alphabet[(x>>24)%uint32(len(alphabet))]
	}
	long := string(b)
	link := audit.Link{Element: "a", Attr: "href", Href: ok + "#" + long, RawHref: "#" + long}
	mustSave(t, db, runID, &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/p",
		Links: []audit.Link{link, {Element: "a", Attr: "href", Href: ok + "#short", RawHref: "#short"}, link}}, Status: 200})
	if missing, err := db.SaveChecksByURL(ctx, []audit.Check{{RunID: runID, URL: ok, Verdict: audit.VerdictOK, Status: 200}}); err != nil || len(missing) != 0 {
		t.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
	}
	var got []string
	err := db.FindingLinks(ctx, runID, func(c *audit.Check, fragment string) bool {
		return fragment == long
	}, func(l audit.LinkRef, c *audit.Check) error {
		got = append(got, l.Fragment)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != long || got[1] != long {
		t.Errorf("FindingLinks gave %d links, want the 2 with the long fragment", len(got))
	}
}
