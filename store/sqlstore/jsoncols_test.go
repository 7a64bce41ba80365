package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/pgtest"
)

// Since migration 0016 the JSON columns of checks (redirects, headers,
// soft404_signals) and page_evidence (headers, anchors, signals) carry no
// CHECK constraint: the writer's own encoders keep them valid JSON of
// the right type. The tests of this file prove it.

// jsonColumns are the JSON columns the writer fills, with the JSON type
// each must hold (a NULL is allowed where the column allows it).
var jsonColumns = []struct{ table, column, kind string }{
	{"checks", "redirects", "array"},
	{"checks", "headers", "object"},
	{"checks", "soft404_signals", "object"},
	{"page_evidence", "headers", "object"},
	{"page_evidence", "anchors", "array"},
	{"page_evidence", "signals", "object"},
}

// awkward are strings that JSON must escape or that are not what they
// seem: quotes, backslashes, control characters, HTML, non-ASCII,
// invalid UTF-8, NUL bytes, U+2028.
var awkward = []string{
	"", "plain", `a"quote`, `back\slash`, "tab\tnew\nline\r", "nul\x00byte", "\x01\x1f\x7f",
	"<script>&amp;</script>", "ünïcödé ✓", "\xff\xfe invalid", "bad \xc3( utf8", "line\u2028sep\u2029",
	`{"not":"json"`, "[", "\\u0000", strings.Repeat("long ", 200),
}

// awkwardPick returns an awkward string, or one made of random bytes.
func awkwardPick(r *rand.Rand) string {
	if r.IntN(3) > 0 {
		return awkward[r.IntN(len(awkward))]
	}
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

// TestJSONColumns_Valid: whatever strings the checks and pages carry
// (awkward ones, random bytes, NaN and infinite scores), every JSON
// column the writer fills holds valid JSON of its type, on both backends,
// through every path that writes them: new checks many rows per
// statement, checks replaced one by one, and pages with evidence.
func TestJSONColumns_Valid(t *testing.T) { forEachBackend(t, testJSONColumns_Valid) }

func testJSONColumns_Valid(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	runID := mustCreateRun(t, db)
	r := rand.New(rand.NewPCG(16, 16))
	const n = 60
	var pages []*audit.Page
	var urls []string
	for i := range n {
		u := fmt.Sprintf("https://example.org/p/%d", i)
		urls = append(urls, u)
		h := map[string]string{}
		for range r.IntN(4) {
			h[awkwardPick(r)] = awkwardPick(r)
		}
		var anchors []string
		for range r.IntN(4) {
			anchors = append(anchors, awkwardPick(r))
		}
		e := &audit.PageEvidence{Headers: h, Anchors: anchors, HTML: true, Text: awkwardPick(r)}
		if i%2 == 0 {
			e.Signals = &audit.PageSignals{Title: awkwardPick(r), H1: []string{awkwardPick(r)}, Parking: []string{awkwardPick(r)}}
		}
		pages = append(pages, &audit.Page{Extraction: audit.Extraction{URL: u, Parsed: true}, Status: 200, Evidence: e})
	}
	if err := db.SavePages(ctx, runID, pages); err != nil {
		t.Fatal(err)
	}
	ids, err := db.TargetIDs(ctx, urls)
	if err != nil {
		t.Fatal(err)
	}
	check := func(i int) audit.Check {
		c := audit.Check{RunID: runID, TargetID: ids[urls[i]], URL: urls[i], Verdict: audit.VerdictOK,
			Status: 200, CheckedAt: time.Now(), Headers: map[string]string{}}
		for range r.IntN(4) {
			c.Headers[awkwardPick(r)] = awkwardPick(r)
		}
		for range r.IntN(3) {
			c.Redirects = append(c.Redirects, audit.Redirect{From: awkwardPick(r), To: awkwardPick(r), Status: 301})
		}
		if i%3 != 0 {
			c.Soft404 = &audit.Soft404Evidence{ProbeURL: awkwardPick(r), ProbeFinal: awkwardPick(r), Similarity: math.NaN(),
				Score: []float64{0.5, math.NaN(), math.Inf(1)}[i%3], Parked: math.Inf(-1),
				Signals: []audit.Soft404Signal{{Name: awkwardPick(r), Score: math.NaN(), Match: awkwardPick(r), Where: awkwardPick(r)}}}
		}
		return c
	}
	var checks []audit.Check
	for i := range n {
		checks = append(checks, check(i))
	}
	mustSaveChecks(t, db, checks...) // new: many rows per INSERT on SQLite
	checks = checks[:0]
	for i := range n / 2 {
		checks = append(checks, check(i))
	}
	mustSaveChecks(t, db, checks...) // replaced: one statement each
	assertJSONColumns(t, db, 1)
}

// assertJSONColumns fails t unless every JSON column of db holds valid
// JSON of its type; with rows > 0, each column must have a value.
func assertJSONColumns(t *testing.T, db *DB, rows int) {
	t.Helper()
	for _, c := range jsonColumns {
		var values []string
		rs, err := db.read.Query(`SELECT ` + c.column + ` FROM ` + c.table + ` WHERE ` + c.column + ` IS NOT NULL`)
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var s string
			if err := rs.Scan(&s); err != nil {
				t.Fatal(err)
			}
			values = append(values, s)
		}
		if err := rs.Close(); err != nil {
			t.Fatal(err)
		}
		if len(values) < min(rows, 1) {
			t.Errorf("%s.%s: %d values, want at least %d", c.table, c.column, len(values), min(rows, 1))
		}
		for _, v := range values {
			var x any
			if err := json.Unmarshal([]byte(v), &x); err != nil {
				t.Errorf("%s.%s holds invalid JSON %q: %v", c.table, c.column, v, err)
				continue
			}
			kind := map[reflect.Kind]string{reflect.Map: "object", reflect.Slice: "array"}[reflect.ValueOf(x).Kind()]
			if kind != c.kind {
				t.Errorf("%s.%s holds %q, a JSON %s, want %s", c.table, c.column, v, kind, c.kind)
			}
		}
		// The database's own parser agrees.
		valid := `json_valid(` + c.column + `) AND json_type(` + c.column + `) = '` + c.kind + `'`
		if db.dialect == dialectPostgres {
			valid = `json_typeof(CAST(` + c.column + ` AS json)) = '` + c.kind + `'`
		}
		if bad := count(t, db, `SELECT count(*) FROM `+c.table+` WHERE `+c.column+` IS NOT NULL AND NOT (`+valid+`)`); bad != 0 {
			t.Errorf("%s.%s: %d values the database does not take for a JSON %s", c.table, c.column, bad, c.kind)
		}
	}
}

// TestJSONEncoders_SameAsEncodingJSON: the direct encoders of header maps
// and string lists write exactly what encoding/json writes (without HTML
// escaping), for random printable-ASCII input and for anything else.
func TestJSONEncoders_SameAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ascii := func() string {
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x5f))
		}
		return string(b)
	}
	for i := range 2000 {
		pick := ascii
		if i%4 == 0 {
			pick = func() string { return awkwardPick(r) }
		}
		h := map[string]string{}
		var list []string
		for range r.IntN(6) {
			h[pick()] = pick()
			list = append(list, pick())
		}
		got, err := headersJSON(h)
		want, err2 := marshalJSON(h)
		if len(h) == 0 {
			want = "{}"
		}
		if err != nil || err2 != nil || got != want {
			t.Fatalf("headersJSON(%q) = %q, %v; encoding/json %q, %v", h, got, err, want, err2)
		}
		got, err = stringsJSON(list)
		if want, err2 = marshalJSON(list); list == nil {
			want = "[]"
		}
		if err != nil || err2 != nil || got != want {
			t.Fatalf("stringsJSON(%q) = %q, %v; encoding/json %q, %v", list, got, err, want, err2)
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("stringsJSON(%q) = %q: invalid JSON", list, got)
		}
	}
}

// TestMigrate_0016: a database of schema 15 with checks and page
// evidence keeps every row, rowids included, through 0016, which drops
// the JSON constraints of both tables and keeps their other constraints,
// index and triggers.
//
// SQLite-only: it builds a schema-15 SQLite file by hand.
func TestMigrate_0016(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v15.db")
	old := openAtVersion(t, path, 15, true)
	write, read := old.write, old.read
	runID := mustCreateRun(t, old)
	pages := auditBenchPages(0, 20, 20)
	pages[3].Evidence.Signals = &audit.PageSignals{Title: "parked", Parking: []string{"script:x"}}
	pages[4].Evidence.Anchors = []string{"top", `q"uote`}
	if err := old.SaveCrawl(ctx, runID, pages, nil); err != nil {
		t.Fatal(err)
	}
	checks := auditBenchChecks(runID, 0, 20)
	checks[0].Redirects = []audit.Redirect{{From: "http://a/", To: "http://b/", Status: 301}}
	checks[1].Reused, checks[1].ReusedFrom = true, runID
	if missing, err := old.SaveChecksByURL(ctx, checks); err != nil || len(missing) != 0 {
		t.Fatalf("save checks: %d missing, %v", len(missing), err)
	}
	// A check saved again: a row whose rowid is not its insertion order.
	again := checks[2]
	again.TargetID = 0
	if _, err := old.SaveChecksByURL(ctx, []audit.Check{again}); err != nil {
		t.Fatal(err)
	}
	dump := func(db *sql.DB) map[string][]string {
		out := map[string][]string{}
		for _, table := range []string{"checks", "page_evidence"} {
			rows, err := db.Query(`SELECT rowid, * FROM ` + table + ` ORDER BY rowid NULLS FIRST`)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals, err := scanAny(rows, len(cols))
				if err != nil {
					t.Fatal(err)
				}
				line := make([]string, len(cols))
				for i, v := range vals {
					line[i] = fmt.Sprintf("%s=%#v", cols[i], v)
				}
				out[table] = append(out[table], strings.Join(line, " "))
			}
			rows.Close()
		}
		return out
	}
	before := dump(write)
	if len(before["checks"]) != 40 || len(before["page_evidence"]) != 20 {
		t.Fatalf("schema 15: %d checks, %d evidence rows", len(before["checks"]), len(before["page_evidence"]))
	}
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
	if after := dump(db.write); !reflect.DeepEqual(after, before) {
		t.Errorf("rows changed by 0016:\nbefore %v\nafter  %v", before, after)
	}
	var schema string
	if err := db.read.QueryRow(`SELECT group_concat(sql, ';') FROM sqlite_schema WHERE tbl_name IN ('checks', 'page_evidence')`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(schema, "json_") {
		t.Errorf("JSON constraints left after 0016:\n%s", schema)
	}
	for _, name := range []string{"checks_target_checked_at", "checks_from_crawl_reset", "checks_soft404_signals_reset",
		"sqlite_autoindex_checks_1", "checks_verdict", "checks_soft404", "reused IN (0, 1)", "truncated IN (0, 1)",
		"from_crawl IN (0, 1)", "html IN (0, 1)", "body_truncated IN (0, 1)", "text_capped IN (0, 1)", "ON DELETE CASCADE",
		"REFERENCES targets (id)", "ON DELETE SET NULL", "STRICT"} {
		if !strings.Contains(schema, name) {
			var n int
			db.read.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = $1`, name).Scan(&n)
			if n == 0 {
				t.Errorf("%s lost by 0016", name)
			}
		}
	}
	// Other constraints still hold.
	for _, q := range []string{
		`UPDATE checks SET verdict = 'fine' WHERE rowid = 1`,
		`UPDATE checks SET reused = 2 WHERE rowid = 1`,
		`UPDATE checks SET soft404_probe_url = NULL WHERE soft404_probe_url IS NOT NULL`,
		`UPDATE checks SET target_id = 1 << 40 WHERE rowid = 1`,
		`UPDATE page_evidence SET html = 3`,
	} {
		if _, err := db.write.Exec(q); err == nil {
			t.Errorf("%s: accepted after 0016", q)
		}
	}
	// The triggers still reset a replaced check's from_crawl and signals.
	replaced := checks[1] // a page's check, judged from the crawl
	replaced.TargetID, replaced.FromCrawl, replaced.Soft404 = 0, false, nil
	replaced.Verdict = audit.VerdictGone
	if _, err := db.SaveChecksByURL(ctx, []audit.Check{replaced}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM checks c JOIN targets t ON t.id = c.target_id
		WHERE t.url = $1 AND (from_crawl = 1 OR soft404_signals IS NOT NULL)`, replaced.URL); n != 0 {
		t.Errorf("replaced check kept from_crawl or signals: %d rows", n)
	}
	assertJSONColumns(t, db, 1)
}

// TestWriterSQL_NoJSONParse: since 0016, writing a check or a page's
// evidence calls no JSON function of SQLite (each call parses the text).
func TestWriterSQL_NoJSONParse(t *testing.T) {
	db := MustOpen(t)
	if db.dialect != dialectSQLite {
		t.Fatal("SQLite test")
	}
	for _, q := range []string{upsertFullCheckSQL, upsertCheckSQL, insertChecksSQL(2), insEvidenceSQL,
		`UPDATE checks SET soft404_signals = $1 WHERE run_id = $2 AND target_id = $3`} {
		args := make([]any, numParams(q))
		for i := range args {
			args[i] = 1
		}
		rows, err := db.write.Query("EXPLAIN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var (
				addr            int
				op              string
				p1, p2, p3      any
				p4, p5, comment any
			)
			if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
				t.Fatal(err)
			}
			if s, _ := p4.(string); (op == "Function" || op == "PureFunc") && strings.HasPrefix(s, "json") {
				t.Errorf("%.60s... calls %s", q, s)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPostgres_Migrate0016: a PostgreSQL database at schema 15, with the
// JSON constraints 0016 drops and rows in both tables, keeps its rows
// through 0016 and loses those constraints only.
func TestPostgres_Migrate0016(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	runID := mustCreateRun(t, db)
	pages := auditBenchPages(0, 10, 10)
	pages[3].Evidence.Signals = &audit.PageSignals{Title: "parked", Parking: []string{"script:x"}}
	if err := db.SaveCrawl(ctx, runID, pages, nil); err != nil {
		t.Fatal(err)
	}
	if missing, err := db.SaveChecksByURL(ctx, auditBenchChecks(runID, 0, 10)); err != nil || len(missing) != 0 {
		t.Fatalf("save checks: %d missing, %v", len(missing), err)
	}
	// Back to schema 15: the constraints as 0002, 0007 and 0012 made them.
	for _, q := range []string{
		`ALTER TABLE checks ADD CONSTRAINT checks_redirects_check CHECK (json_typeof(CAST(redirects AS json)) = 'array')`,
		`ALTER TABLE checks ADD CONSTRAINT checks_headers_check CHECK (json_typeof(CAST(headers AS json)) = 'object')`,
		`ALTER TABLE checks ADD CONSTRAINT checks_soft404_signals_check CHECK (soft404_signals IS NULL OR (json_typeof(CAST(soft404_signals AS json)) = 'object'))`,
		`ALTER TABLE page_evidence ADD CONSTRAINT page_evidence_headers_check CHECK (json_typeof(CAST(headers AS json)) = 'object')`,
		`ALTER TABLE page_evidence ADD CONSTRAINT page_evidence_anchors_check CHECK (json_typeof(CAST(anchors AS json)) = 'array')`,
		`ALTER TABLE page_evidence ADD CONSTRAINT page_evidence_signals_check CHECK (signals IS NULL OR (json_typeof(CAST(signals AS json)) = 'object'))`,
	} {
		if _, err := db.write.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	setSchemaVersion(t, db, 15)
	dump := func(db *DB) []string {
		var out []string
		for _, q := range []string{`SELECT CAST(c AS text) FROM checks c ORDER BY run_id, target_id`,
			`SELECT CAST(e AS text) FROM page_evidence e ORDER BY page_id`} {
			rows, err := db.read.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				out = append(out, s)
			}
			rows.Close()
		}
		return out
	}
	constraints := func(db *DB) []string {
		var out []string
		rows, err := db.read.Query(`SELECT conname FROM pg_constraint
			WHERE conrelid IN ('checks'::regclass, 'page_evidence'::regclass) ORDER BY conname NULLS FIRST`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	before, beforeCons := dump(db), constraints(db)
	if len(before) != 30 {
		t.Fatalf("%d rows at schema 15, want 30", len(before))
	}
	db.Close()

	db, err = Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if after := dump(db); !reflect.DeepEqual(after, before) {
		t.Errorf("rows changed by 0016:\nbefore %v\nafter  %v", before, after)
	}
	var want []string
	for _, c := range beforeCons {
		if !strings.HasSuffix(c, "_headers_check") && !strings.HasSuffix(c, "_anchors_check") &&
			!strings.HasSuffix(c, "signals_check") && !strings.HasSuffix(c, "_redirects_check") {
			want = append(want, c)
		}
	}
	if got := constraints(db); !reflect.DeepEqual(got, want) || len(want) != len(beforeCons)-6 {
		t.Errorf("constraints after 0016 = %v, want %v (of %v)", got, want, beforeCons)
	}
	assertJSONColumns(t, db, 1)
}
