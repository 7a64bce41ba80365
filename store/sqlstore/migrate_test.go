package sqlstore

// The tests of this file are SQLite-only: they read and write SQLite files,
// pragmas and user_version directly. PostgreSQL has its own in
// postgres_test.go.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// rawDB opens path with the driver directly, bypassing Open (no
// migrations, no pragmas beyond those in dsnQuery).
func rawDB(tb testing.TB, path, dsnQuery string) *sql.DB {
	tb.Helper()
	name := fileURI(path)
	if dsnQuery != "" {
		name += "?" + dsnQuery
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func userVersion(tb testing.TB, db *sql.DB) int {
	tb.Helper()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestMigrations_Embedded(t *testing.T) {
	ms := migrations()
	if len(ms) == 0 {
		t.Fatal("no embedded migrations")
	}
	for i, m := range ms {
		if m.version != i+1 {
			t.Errorf("migration %q: version %d, want %d", m.name, m.version, i+1)
		}
		if strings.TrimSpace(m.sql) == "" {
			t.Errorf("migration %q is empty", m.name)
		}
	}
	if ms[0].name != "0001_init.sql" {
		t.Errorf("first migration = %q, want 0001_init.sql", ms[0].name)
	}
}

func TestOpen_Migrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "linkrot.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := userVersion(t, db.write), latestVersion(); got != want {
		t.Errorf("user_version = %d, want %d", got, want)
	}
	for _, table := range []string{"runs", "targets", "pages", "redirects", "links", "snapshots",
		"mset_temporal", "identifiers", "pwids", "diagnostics", "checks", "findings", "maintenance",
		"snapshot_checks", "mementos", "drifts", "identifier_checks", "suggestions", "save_requests"} {
		var n int
		if err := db.read.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = $1`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("table %s missing", table)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopening applies nothing and keeps the data.
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if got, want := userVersion(t, db.write), latestVersion(); got != want {
		t.Errorf("after reopen: user_version = %d, want %d", got, want)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestOpen_Pragmas checks that every connection of both pools carries the
// DSN pragmas, not only the first one.
func TestOpen_Pragmas(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "linkrot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	check := func(t *testing.T, conn *sql.Conn, queryOnly int) {
		t.Helper()
		for _, p := range []struct {
			pragma string
			want   string
		}{
			{"busy_timeout", "10000"},
			{"journal_mode", "wal"},
			{"foreign_keys", "1"},
			{"synchronous", "1"}, // NORMAL
			{"query_only", strconv.Itoa(queryOnly)},
		} {
			var got string
			if err := conn.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != p.want {
				t.Errorf("PRAGMA %s = %s, want %s", p.pragma, got, p.want)
			}
		}
	}
	// Hold several read connections at once so that the pool opens new ones.
	var conns []*sql.Conn
	for range 3 {
		c, err := db.read.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		check(t, c, 1)
	}
	for _, c := range conns {
		c.Close()
	}
	c, err := db.write.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check(t, c, 0)
	c.Close()
}

// TestOpen_TxLockImmediate checks that a write transaction takes the write
// lock at BEGIN: while it is open, and before it has written anything,
// another connection cannot start one.
func TestOpen_TxLockImmediate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "linkrot.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	other := rawDB(t, path, "_pragma=busy_timeout(0)")
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	if err == nil {
		conn.ExecContext(ctx, "ROLLBACK")
		t.Fatal("second BEGIN IMMEDIATE succeeded while a write transaction was open: the store's BEGIN is deferred")
	}
	if !strings.Contains(err.Error(), "SQLITE_BUSY") {
		t.Errorf("second BEGIN IMMEDIATE: %v, want SQLITE_BUSY", err)
	}
}

func TestOpen_NewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "linkrot.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	newer := latestVersion() + 41
	raw := rawDB(t, path, "")
	if _, err := raw.Exec("PRAGMA user_version = " + strconv.Itoa(newer)); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	infoBefore, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	db, err = Open(ctx, path)
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded on a newer schema")
	}
	if !errors.Is(err, store.ErrNewerSchema) {
		t.Fatalf("Open: %v, want ErrNewerSchema", err)
	}
	for _, v := range []int{newer, latestVersion()} {
		if !strings.Contains(err.Error(), strconv.Itoa(v)) {
			t.Errorf("error %q does not name version %d", err, v)
		}
	}
	if !strings.HasPrefix(err.Error(), "open store: ") {
		t.Errorf("error %q lacks the operation", err)
	}

	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	infoAfter, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("database file changed")
	}
	if !infoBefore.ModTime().Equal(infoAfter.ModTime()) || infoBefore.Size() != infoAfter.Size() {
		t.Errorf("database file touched: mtime %v -> %v, size %d -> %d",
			infoBefore.ModTime(), infoAfter.ModTime(), infoBefore.Size(), infoAfter.Size())
	}
}

// TestMigrate_Atomic checks that a failing migration leaves neither its
// tables nor a new user_version behind.
func TestMigrate_Atomic(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "linkrot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bad := migration{
		version: latestVersion() + 1,
		name:    "9999_bad.sql",
		sql:     "CREATE TABLE half_done (a INTEGER); INSERT INTO no_such_table VALUES (1);",
	}
	if err := applyMigration(ctx, db.write, bad); err == nil {
		t.Fatal("bad migration applied")
	}
	if got := userVersion(t, db.write); got != latestVersion() {
		t.Errorf("user_version = %d after failed migration, want %d", got, latestVersion())
	}
	var n int
	if err := db.write.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("table of the failed migration survived")
	}
}

func TestOpen_OddPath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "run ?x=1#frag%20 'quote'.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not created under its exact name: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), filepath.Base(path)) {
			t.Errorf("unexpected file %q", e.Name())
		}
	}
}

func TestOpen_Errors(t *testing.T) {
	ctx := context.Background()
	for _, path := range []string{"", ":memory:"} {
		if db, err := Open(ctx, path); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
	// Not a database.
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, bytes.Repeat([]byte("not sqlite\n"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path)
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded on a text file")
	}
	if !strings.HasPrefix(err.Error(), "open store: ") {
		t.Errorf("error %q lacks the operation", err)
	}
}

// TestMigrate_FragmentPairs: migration 0019 rebuilds links_fragment of a
// database written at version 18 with the fragment as its last column,
// still partial, and FindingLinks gives the same links before and after.
//
// SQLite-only: the PostgreSQL text of 0019 changes nothing (see it).
func TestMigrate_FragmentPairs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "linkrot.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	runID := mustCreateRun(t, db)
	const ok = "https://example.org/ok"
	var links []audit.Link
	for i := range 30 {
		href := ok
		if i%3 != 0 {
			href += fmt.Sprintf("#f%d", i%4)
		}
		links = append(links, audit.Link{Element: "a", Attr: "href", Href: href, RawHref: href})
	}
	mustSave(t, db, runID, &audit.Page{Extraction: audit.Extraction{URL: "https://example.org/p", Links: links}, Status: 200})
	if missing, err := db.SaveChecksByURL(ctx, []audit.Check{{RunID: runID, URL: ok, Verdict: audit.VerdictOK, Status: 200}}); err != nil || len(missing) != 0 {
		t.Fatalf("SaveChecksByURL: %v, %d missing", err, len(missing))
	}
	read := func(db *DB) (ids []int64) {
		t.Helper()
		err := db.FindingLinks(ctx, runID, func(c *audit.Check, fragment string) bool { return fragment != "f2" },
			func(l audit.LinkRef, c *audit.Check) error {
				ids = append(ids, l.LinkID)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	want := read(db)
	if len(want) != 15 {
		t.Fatalf("FindingLinks gave %d links, want 15", len(want))
	}
	// Version 18: 0014's index.
	if _, err := db.write.Exec(`DROP INDEX links_fragment`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec(`CREATE INDEX links_fragment ON links (run_id, target_id) WHERE fragment <> ''`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec(`PRAGMA user_version = 18`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := userVersion(t, db.write); got != latestVersion() {
		t.Errorf("user_version = %d, want %d", got, latestVersion())
	}
	var cols []string
	rows, err := db.read.Query(`SELECT name FROM pragma_index_info('links_fragment') ORDER BY seqno`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	var partial int
	if err := db.read.QueryRow(`SELECT partial FROM pragma_index_list('links') WHERE name = 'links_fragment'`).Scan(&partial); err != nil {
		t.Fatal(err)
	}
	if strings.Join(cols, ",") != "run_id,target_id,fragment" || partial != 1 {
		t.Errorf("links_fragment on (%s), partial %d; want (run_id,target_id,fragment), partial", strings.Join(cols, ","), partial)
	}
	if got := read(db); !slices.Equal(got, want) {
		t.Errorf("after the migration FindingLinks gave %v, want %v", got, want)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}
