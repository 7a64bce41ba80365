package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/pgtest"
	"github.com/linkrot/linkrot/store"
)

// The tests of this file are PostgreSQL's own: what the SQLite-only tests
// of migrate_test.go and dashboard_test.go check for files, and what only
// a server has (credentials, an unreachable host, a restart).

// schemaColumn is one column of a table as both engines describe it.
type schemaColumn struct {
	Name    string
	NotNull bool
}

// sqliteSchema returns the tables (with their columns in order) and the
// views of a SQLite database.
func sqliteSchema(t *testing.T, db *DB) (map[string][]schemaColumn, []string) {
	t.Helper()
	tables := map[string][]schemaColumn{}
	var views []string
	rows, err := db.read.Query(`SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		if typ == "view" {
			views = append(views, name)
		} else {
			names = append(names, name)
		}
	}
	rows.Close()
	for _, name := range names {
		rows, err := db.read.Query(`SELECT name, "notnull", pk FROM pragma_table_info($1) ORDER BY cid NULLS FIRST`, name)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c schemaColumn
			var pk int
			if err := rows.Scan(&c.Name, &c.NotNull, &pk); err != nil {
				t.Fatal(err)
			}
			// A primary key column is NOT NULL on PostgreSQL whatever it
			// says; on SQLite an INTEGER PRIMARY KEY is the rowid, never
			// NULL either.
			c.NotNull = c.NotNull || pk > 0
			tables[name] = append(tables[name], c)
		}
		rows.Close()
	}
	return tables, views
}

// postgresSchema is sqliteSchema for PostgreSQL, without schema_version
// (SQLite keeps the version in PRAGMA user_version).
func postgresSchema(t *testing.T, db *DB) (map[string][]schemaColumn, []string) {
	t.Helper()
	tables := map[string][]schemaColumn{}
	rows, err := db.read.Query(`SELECT c.table_name, c.column_name, c.is_nullable = 'NO'
		FROM information_schema.columns c JOIN information_schema.tables t
			ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> 'schema_version'
		ORDER BY c.table_name NULLS FIRST, c.ordinal_position NULLS FIRST`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table string
		var c schemaColumn
		if err := rows.Scan(&table, &c.Name, &c.NotNull); err != nil {
			t.Fatal(err)
		}
		tables[table] = append(tables[table], c)
	}
	rows.Close()
	var views []string
	rows, err = db.read.Query(`SELECT table_name FROM information_schema.views WHERE table_schema = current_schema() ORDER BY table_name NULLS FIRST`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	rows.Close()
	return tables, views
}

// TestPostgres_SameSchema: after the migrations both backends have the
// same tables, with the same columns in the same order and the same NOT
// NULL constraints, and the same views.
func TestPostgres_SameSchema(t *testing.T) {
	lite := MustOpen(t)
	pg, err := Open(context.Background(), pgtest.DSN(t)) // an empty database, migrated from scratch
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	lt, lv := sqliteSchema(t, lite)
	pt, pv := postgresSchema(t, pg)
	if len(lt) < 30 {
		t.Fatalf("SQLite has %d tables: schema not read", len(lt))
	}
	for name, cols := range lt {
		if !reflect.DeepEqual(pt[name], cols) {
			t.Errorf("table %s:\nSQLite     %v\nPostgreSQL %v", name, cols, pt[name])
		}
	}
	for name := range pt {
		if _, ok := lt[name]; !ok {
			t.Errorf("table %s only on PostgreSQL", name)
		}
	}
	if !reflect.DeepEqual(lv, pv) {
		t.Errorf("views: SQLite %v, PostgreSQL %v", lv, pv)
	}
	if len(pgMigrations()) != latestVersion() {
		t.Errorf("%d PostgreSQL migrations, %d SQLite ones", len(pgMigrations()), latestVersion())
	}
}

func setSchemaVersion(t *testing.T, db *DB, v int) {
	t.Helper()
	if _, err := db.write.Exec(`UPDATE schema_version SET version = $1`, v); err != nil {
		t.Fatal(err)
	}
}

// TestPostgres_NewerSchema: a database migrated by a newer linkrot is
// refused, read-write and read-only, with ErrNewerSchema and nothing
// written.
func TestPostgres_NewerSchema(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	newer := latestVersion() + 1
	setSchemaVersion(t, db, newer)
	if _, err := db.write.Exec(`DROP TABLE dismissals`); err != nil { // as if 0013 had never run
		t.Fatal(err)
	}
	db.Close()
	for name, open := range map[string]func(context.Context, string) (*DB, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		got, err := open(ctx, dsn)
		if err == nil {
			got.Close()
			t.Fatalf("%s of a newer schema succeeded", name)
		}
		if !errors.Is(err, store.ErrNewerSchema) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q, want one line wrapping ErrNewerSchema", name, err)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("schema version %d", newer)) {
			t.Errorf("%s: %q does not name the version", name, err)
		}
	}
	// Nothing written: the version and the missing table are as they were.
	raw := openPostgresTestRaw(t, dsn)
	var v int
	var dismissals sql.NullString
	if err := raw.QueryRow(`SELECT version, CAST(to_regclass('dismissals') AS text) FROM schema_version`).Scan(&v, &dismissals); err != nil {
		t.Fatal(err)
	}
	if v != newer || dismissals.Valid {
		t.Errorf("after refusing: version %d, dismissals %v; want %d and no table", v, dismissals, newer)
	}
}

// openPostgresTestRaw opens a plain pool on dsn, closed when the test ends.
func openPostgresTestRaw(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := openPostgres(context.Background(), dsn, true, testEngines)
	if err == nil {
		t.Cleanup(func() { db.Close() })
		return db.read
	}
	// A schema this linkrot refuses: a pool without the version check.
	pool, err2 := testEngines.Postgres.Pool(dsn, true)
	if err2 != nil {
		t.Fatal(err2)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

// TestPostgres_OpenReadOnlyOlderSchema: the dashboard's read-only open
// does not migrate, it asks for a read-write open first; and its
// sessions refuse writes.
func TestPostgres_OpenReadOnlyOlderSchema(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	w, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ro, err := OpenReadOnly(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.write.Exec(`DELETE FROM runs`); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("write through the read-only DB: %v, want a read-only transaction error", err)
	}
	ro.Close()
	if err := w.IntegrityCheck(ctx); err != nil {
		t.Errorf("IntegrityCheck of a current database: %v", err)
	}
	setSchemaVersion(t, w, latestVersion()-1)
	if err := w.IntegrityCheck(ctx); !errors.Is(err, store.ErrIntegrity) {
		t.Errorf("IntegrityCheck of a database at another version: %v, want ErrIntegrity", err)
	}
	if db, err := OpenReadOnly(ctx, dsn); err == nil {
		db.Close()
		t.Fatal("OpenReadOnly of an older schema succeeded")
	} else if !strings.Contains(err.Error(), "open it once read-write") {
		t.Errorf("error %q does not say what to do", err)
	}
}

// TestPostgres_ConcurrentMigrate: processes opening a new database at
// once apply each migration once (advisory lock) and all succeed.
func TestPostgres_ConcurrentMigrate(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			db, err := Open(ctx, dsn)
			if err != nil {
				errs <- err
				return
			}
			errs <- db.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	raw := openPostgresTestRaw(t, dsn)
	var v, rows int
	if err := raw.QueryRow(`SELECT max(version), count(*) FROM schema_version`).Scan(&v, &rows); err != nil {
		t.Fatal(err)
	}
	if v != latestVersion() || rows != 1 {
		t.Errorf("schema_version: version %d in %d rows, want %d in 1", v, rows, latestVersion())
	}
}

// TestPostgres_Errors: an unreachable server, a wrong password and a
// missing database each give one line naming the problem, never the
// password; credentials from PGPASSWORD and PGPASSFILE work.
func TestPostgres_Errors(t *testing.T) {
	ctx := context.Background()
	s := pgtest.Shared(t)
	name := fmt.Sprintf("pwdb_%d", os.Getpid())
	if err := s.Exec(ctx, "CREATE DATABASE "+name+" OWNER "+pgtest.PasswordUser); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	oneLine := func(t *testing.T, err error, want string) {
		t.Helper()
		if err == nil {
			t.Fatalf("open succeeded, want an error mentioning %q", want)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, want) || !strings.HasPrefix(msg, "open store: ") {
			t.Errorf("error %q: want one line starting with the operation and mentioning %q", msg, want)
		}
		if strings.Contains(msg, pgtest.Password) || strings.Contains(msg, "wrong-pw") {
			t.Errorf("error %q shows the password", msg)
		}
	}
	t.Setenv("PGPASSWORD", "")
	t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none"))

	t.Run("Unreachable", func(t *testing.T) {
		port := closedPort(t)
		_, err := Open(ctx, fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/x?connect_timeout=5", pgtest.PasswordUser, "wrong-pw", port))
		oneLine(t, err, "unreachable")
	})
	t.Run("WrongPassword", func(t *testing.T) {
		_, err := Open(ctx, s.URL(pgtest.PasswordUser, "wrong-pw", name))
		oneLine(t, err, "authentication failed")
	})
	t.Run("NoPassword", func(t *testing.T) {
		_, err := Open(ctx, s.URL(pgtest.PasswordUser, "", name))
		oneLine(t, err, "authentication failed")
	})
	t.Run("MissingDatabase", func(t *testing.T) {
		_, err := Open(ctx, s.URL("postgres", "", "no_such_database"))
		oneLine(t, err, "does not exist")
	})
	t.Run("ReadOnlyWrongPassword", func(t *testing.T) {
		_, err := OpenReadOnly(ctx, s.URL(pgtest.PasswordUser, "wrong-pw", name))
		if err == nil || !strings.Contains(err.Error(), "authentication failed") || strings.Contains(err.Error(), "wrong-pw") {
			t.Errorf("OpenReadOnly: %v", err)
		}
	})
	t.Run("PGPASSWORD", func(t *testing.T) {
		t.Setenv("PGPASSWORD", pgtest.Password)
		db, err := Open(ctx, s.URL(pgtest.PasswordUser, "", name))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if strings.Contains(db.Path(), pgtest.Password) {
			t.Errorf("Path() = %q shows the password", db.Path())
		}
		// The run's arguments never keep a password given in a URL.
		r := &audit.Run{Mode: "site", Version: "t", Args: []string{"audit", "--db", s.URL(pgtest.PasswordUser, pgtest.Password, name)}}
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		var args string
		if err := db.read.QueryRow(`SELECT args FROM runs WHERE id = $1`, r.ID).Scan(&args); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(args, pgtest.Password) || !strings.Contains(args, "127.0.0.1") {
			t.Errorf("stored args %s", args)
		}
	})
	t.Run("PGPASSFILE", func(t *testing.T) {
		pass := filepath.Join(t.TempDir(), "pgpass")
		line := fmt.Sprintf("127.0.0.1:%d:%s:%s:%s\n", s.Port, name, pgtest.PasswordUser, pgtest.Password)
		if err := os.WriteFile(pass, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PGPASSFILE", pass)
		db, err := OpenReadOnly(ctx, s.URL(pgtest.PasswordUser, "", name))
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	})
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	s := pgtest.Shared(t)
	for p := s.Port + 1; p < s.Port+100; p++ {
		if !portOpen(p) {
			return p
		}
	}
	t.Fatal("no closed port")
	return 0
}

// TestPostgres_LockConcurrent: two processes (DBs) taking the run lock of
// one database at once: exactly one gets it (the advisory lock serialises
// the check and the take-over, as BEGIN IMMEDIATE does on SQLite).
func TestPostgres_LockConcurrent(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var dbs [4]*DB
	for i := range dbs {
		db, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[i] = db
	}
	for round := range 5 {
		var wg sync.WaitGroup
		locks := make(chan *Lock, len(dbs))
		refused := make(chan error, len(dbs))
		for _, db := range dbs {
			wg.Go(func() {
				l, err := db.TryLock(ctx, store.LockOptions{Command: "audit", Heartbeat: time.Hour})
				if err != nil {
					refused <- err
					return
				}
				locks <- l
			})
		}
		wg.Wait()
		close(locks)
		close(refused)
		if len(locks) != 1 {
			t.Fatalf("round %d: %d holders", round, len(locks))
		}
		for err := range refused {
			if !errors.Is(err, store.ErrLocked) {
				t.Errorf("round %d: %v, want ErrLocked", round, err)
			}
		}
		if err := (<-locks).Release(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPostgres_Restart: a server restart between two runs keeps the first
// (the pools reconnect), and the second run's history sees it.
func TestPostgres_Restart(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first, _ := nightlyRun(t, db, 1, map[string]audit.Verdict{"https://example.org/a": audit.VerdictNotFound}, true)
	mustApply(t, db, first)
	if err := pgtest.Shared(t).Restart(); err != nil {
		t.Fatal(err)
	}
	second, ids := nightlyRun(t, db, 2, map[string]audit.Verdict{"https://example.org/a": audit.VerdictNotFound}, true)
	mustApply(t, db, second)
	h := mustHistories(t, db, ids["https://example.org/a"])[ids["https://example.org/a"]]
	if h.FailedRuns != 2 || h.FailingSinceRun != first {
		t.Errorf("history after the restart: %+v, want 2 failed runs since run %d", h, first)
	}
}

// portOpen reports whether something listens on the loopback port.
func portOpen(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// TestPostgres_ConcurrentTargets: two processes (DBs) save pages linking
// to the same new targets in opposite orders at once. Their transactions
// wait for each other's uncommitted targets and PostgreSQL aborts one
// for a deadlock; the batch is run again (retryTx) and both land, with
// one row per target.
func TestPostgres_ConcurrentTargets(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var dbs [2]*DB
	for i := range dbs {
		db, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[i] = db
	}
	const rounds, targets = 3, 300
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, len(dbs))
		for d, db := range dbs {
			wg.Go(func() {
				r := &audit.Run{Mode: "site", Version: "t"}
				if err := db.CreateRun(ctx, r); err != nil {
					errs <- err
					return
				}
				p := &audit.Page{Extraction: audit.Extraction{URL: fmt.Sprintf("https://site%d.example/", d), Parsed: true},
					RequestURL: fmt.Sprintf("https://site%d.example/", d), Status: 200}
				for i := range targets {
					n := i
					if d == 1 {
						n = targets - 1 - i
					}
					p.Links = append(p.Links, audit.Link{Element: "a", Attr: "href", Href: fmt.Sprintf("https://shared.example/r%d/%d", round, n)})
				}
				errs <- db.SavePages(ctx, r.ID, []*audit.Page{p})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	if n := count(t, dbs[0], `SELECT count(*) FROM targets WHERE url LIKE 'https://shared.example/%'`); n != rounds*targets {
		t.Errorf("%d shared targets, want %d", n, rounds*targets)
	}
	if n := count(t, dbs[0], `SELECT count(*) FROM links`); n != 2*rounds*targets {
		t.Errorf("%d links, want %d", n, 2*rounds*targets)
	}
}

// TestPostgres_DecodeEscapes: migration 0018 turns the escapes earlier
// versions wrote for NUL bytes and invalid UTF-8 (U+10FFFE then '0',
// 'x' and two hex digits, or 'e') into the text rule: U+FFFD for each,
// U+10FFFE for the escaped escape; text without escapes is untouched, and
// a row whose decoded URL would collide with another's keeps its text.
func TestPostgres_DecodeEscapes(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openClosed(t, dsn)
	const esc = "\U0010FFFE"
	runID := mustCreateRun(t, db)
	rows := []struct{ url, title, want string }{
		{"https://example.org/a", "a" + esc + "0b" + esc + "xffc", "a\uFFFDb\uFFFDc"},
		{"https://example.org/b", esc + "e" + "x41 " + esc + "x0", esc + "x41 " + esc + "x0"},
		{"https://example.org/c", "plain é", "plain é"},
		{"https://example.org/d" + esc + "xff", "", ""},
		{"https://example.org/d" + esc + "xfe", "", ""},
	}
	for _, r := range rows {
		if _, err := db.write.Exec(`INSERT INTO pages (run_id, url, request_url, depth, status, content_type, charset, size, truncated, parsed, title, base, fetch_error, fetched_at, duration_ms)
			VALUES ($1, $2, $2, 0, 200, '', '', 0, 0, 1, $3, '', '', '2024-01-01T00:00:00Z', 0)`, runID, r.url, r.title); err != nil {
			t.Fatal(err)
		}
	}
	// The version before 0018, whatever came after it.
	before := 0
	for _, m := range migrations() {
		if m.name == "0018_valid_text.sql" {
			before = m.version - 1
		}
	}
	if before == 0 {
		t.Fatal("no migration 0018_valid_text.sql")
	}
	setSchemaVersion(t, db, before)
	db.Close()

	db = openClosed(t, dsn) // applies 0018 and those after it
	got := map[string]string{}
	res, err := db.read.QueryContext(ctx, `SELECT url, title FROM pages ORDER BY url`)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var urls []string
	for res.Next() {
		var u, title string
		if err := res.Scan(&u, &title); err != nil {
			t.Fatal(err)
		}
		got[u] = title
		urls = append(urls, u)
	}
	for _, r := range rows[:3] {
		if got[r.url] != r.want {
			t.Errorf("title of %s = %q, want %q", r.url, got[r.url], r.want)
		}
	}
	// The two d URLs decode to the same text under a unique constraint
	// (run_id, url): one is decoded, the other keeps its escape.
	decoded, kept := 0, 0
	for _, u := range urls {
		switch {
		case u == "https://example.org/d\uFFFD":
			decoded++
		case strings.HasPrefix(u, "https://example.org/d"+esc):
			kept++
		}
	}
	if decoded != 1 || kept != 1 {
		t.Errorf("colliding URLs after 0018: %q", urls)
	}
}
