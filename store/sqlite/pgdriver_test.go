package sqlite

import (
	"testing"
	"unicode/utf8"
)

func TestPGRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT a FROM t WHERE x = ? AND y = '?' AND z = ?`, `SELECT a FROM t WHERE x = $1 AND y = '?' AND z = $2`},
		{`SELECT ?2, ?1, ? -- ?`, `SELECT $2, $1, $3 -- ?`},
		{`SELECT c.rowid FROM checks c WHERE instr(a, "?") > 0`, `SELECT c.ctid FROM checks c WHERE strpos(a, "?") > 0`},
		{`SELECT a FROM t ORDER BY a, b DESC LIMIT ?`, `SELECT a FROM t ORDER BY a NULLS FIRST, b DESC  NULLS LAST LIMIT $1`},
		{`SELECT (SELECT x FROM u ORDER BY coalesce(x, y) DESC LIMIT 1) FROM t ORDER BY 1`,
			`SELECT (SELECT x FROM u ORDER BY coalesce(x, y) DESC  NULLS LAST LIMIT 1) FROM t ORDER BY 1 NULLS FIRST`},
		{`SELECT json_agg(x ORDER BY y) FROM t ORDER BY z NULLS LAST`, `SELECT json_agg(x ORDER BY y NULLS FIRST) FROM t ORDER BY z NULLS LAST`},
		{`SELECT 'it''s ?' || ?`, `SELECT 'it''s ?' || $1`},
	} {
		if got := pgRebind(c.in); got != c.want {
			t.Errorf("pgRebind(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestPGEscape(t *testing.T) {
	for _, s := range []string{"", "plain", "a\x00b\x00", "\xff\xfe\xc3\x28 invalid \xed\xa0\x80 UTF-8",
		string(pgEscape), string(pgEscape) + "x41", "é\x00" + string(pgEscape) + "0"} {
		e := pgEscapeString(s)
		if !utf8.ValidString(e) {
			t.Errorf("escape(%q) = %q: not UTF-8", s, e)
		}
		for i := 0; i < len(e); i++ {
			if e[i] == 0 {
				t.Errorf("escape(%q) = %q holds NUL", s, e)
			}
		}
		if got := pgUnescapeString(e); got != s {
			t.Errorf("unescape(escape(%q)) = %q", s, got)
		}
		if a, b := pgEscapeString(s+"#"+s), pgEscapeString(s)+"#"+pgEscapeString(s); a != b {
			t.Errorf("escape does not commute with concatenation: %q vs %q", a, b)
		}
	}
	if s := "plain text"; pgEscapeString(s) != s {
		t.Error("ordinary string changed")
	}
}

// TestPGNullsOrder_NotNull: a term that is a NOT NULL column of its table
// keeps PostgreSQL's order (an index can serve it); a nullable one, an
// expression or an unknown alias gets SQLite's NULL placement.
func TestPGNullsOrder_NotNull(t *testing.T) {
	db := openPostgresTest(t) // loads the schema's NOT NULL columns
	_ = db
	for _, c := range []struct{ in, want string }{
		{`SELECT l.id FROM links l WHERE l.run_id = 1 ORDER BY l.id LIMIT 5`,
			`SELECT l.id FROM links l WHERE l.run_id = 1 ORDER BY l.id LIMIT 5`},
		{`SELECT id FROM wire_inbox ORDER BY id DESC`, `SELECT id FROM wire_inbox ORDER BY id DESC`},
		{`SELECT 1 FROM checks p ORDER BY p.checked_at DESC, p.run_id DESC`,
			`SELECT 1 FROM checks p ORDER BY p.checked_at DESC NULLS LAST, p.run_id DESC`},
		{`SELECT 1 FROM links l JOIN pages p ON p.id = l.page_id ORDER BY l.target_id, p.url`,
			`SELECT 1 FROM links l JOIN pages p ON p.id = l.page_id ORDER BY l.target_id NULLS FIRST, p.url`},
		{`SELECT 1 FROM (SELECT id FROM links) w ORDER BY w.id`, `SELECT 1 FROM (SELECT id FROM links) w ORDER BY w.id NULLS FIRST`},
		{`SELECT 1 FROM links ORDER BY 1`, `SELECT 1 FROM links ORDER BY 1 NULLS FIRST`},
		{`SELECT 1 FROM links l, pages l ORDER BY l.id`, `SELECT 1 FROM links l, pages l ORDER BY l.id NULLS FIRST`},
	} {
		if got := pgNullsOrder(c.in); got != c.want {
			t.Errorf("pgNullsOrder(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
