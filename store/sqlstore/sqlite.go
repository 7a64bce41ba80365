package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

var _ audit.Store = (*DB)(nil)

// busyTimeout is how long a connection waits for another connection's lock
// (another process, or another DB on the same file) before SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// DB is a linkrot database. It implements audit.Store and adds the read
// methods later stages need. It is safe for concurrent use.
//
// A DB holds two database/sql pools on the same file:
//
//   - write, limited to one connection, opened with _txlock=immediate. The
//     modernc.org/sqlite driver (checked in v1.61.1: sqlite.go validates
//     _txlock as deferred, immediate or exclusive, and tx.go begins every
//     transaction not marked ReadOnly with "begin immediate") then starts
//     each write transaction with BEGIN IMMEDIATE: the write lock is taken
//     at BEGIN, where busy_timeout applies, instead of at the first write of
//     a deferred transaction, where SQLite returns SQLITE_BUSY at once if
//     another connection committed in between. One connection also
//     serialises this process's writers in Go instead of in SQLite's busy
//     handler.
//   - read, a pool of several connections with query_only set, for
//     lookups that must not wait behind a long write batch. Under WAL, readers
//     see the last committed state and never block the writer.
//
// Pragmas are set in the DSN (_pragma=...), which the driver runs on every
// new connection of a pool: busy_timeout is per connection, and a PRAGMA
// executed through a pool would reach only one of them.
//
// The single writer keeps targetIDs, a bounded LRU cache of target IDs by
// normalized URL, so that a batch of pages finds the targets earlier
// batches used without asking SQLite.
type DB struct {
	path  string
	eng   Engines
	write *sql.DB
	read  *sql.DB
	// compact: the schema has migration 0008 (interned URLs) and rows are
	// written in its form. Open sets it; only tests that build a DB by hand
	// on an older schema leave it false.
	compact bool
	// fragments: the schema has run_fragments (0019) and the writer adds
	// a batch's (target, #fragment) pairs to it. Open sets it; only tests
	// that build a DB by hand on an older schema leave it false.
	fragments bool
	// fragSeen: the pairs committed batches added to run_fragments.
	fragSeen fragmentsSeen
	// runTargets: the schema has run_targets (0020) and the writer adds a
	// batch's targets to it. Open sets it; only tests that build a DB by
	// hand on an older schema leave it false.
	runTargets bool
	// targetSeen: the targets committed batches added to run_targets.
	targetSeen committedSet[runTarget]
	targetIDs  *lru.Cache[string, int64]
	// stmts are the writer's statements prepared once (SQLite; see
	// prepareWriter), by SQL text; read-only once Open has returned.
	stmts map[string]*sql.Stmt
	// targetsExist guesses, for the writer, whether a target it has not
	// cached exists already (saver.findOrInsertTarget).
	targetsExist targetGuess
	// dialect is SQLite's or PostgreSQL's (postgres.go).
	dialect dialect
	// rowByRow makes the writer insert links and targets one row per
	// statement on SQLite too (tests: the rows multi-row INSERTs must
	// equal).
	rowByRow bool
	// anchorsStmt is PageAnchors' statement, prepared on the read pool
	// on first use (pipeline.go).
	anchorsStmt readStmt
}

// OpenWith opens the SQLite database at path on e.SQLite, creating the
// file if it does not exist, and applies the migrations it lacks. A path
// that is a postgres:// or postgresql:// URL opens that PostgreSQL
// database on e.Postgres instead (see openPostgres), creating its tables
// if it has none. It returns an error wrapping
// ErrNewerSchema, and leaves the file untouched, when the database was
// written by a newer version of linkrot.
//
// path names a file; the special name ":memory:" is not supported (the read
// and write pools would see two different databases).
func OpenWith(ctx context.Context, path string, e Engines) (*DB, error) {
	if store.IsPostgresURL(path) {
		db, err := openPostgres(ctx, path, false, e)
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		if db.targetIDs, err = lru.New[string, int64](targetCacheSize); err != nil {
			db.Close()
			return nil, fmt.Errorf("open store: %w", err)
		}
		return db, nil
	}
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("open store: invalid database path %q", path)
	}
	if e.SQLite == nil {
		return nil, errors.New("open store: no SQLite engine given (package store/sqlite)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// Refuse a newer schema before anything writes to the file: the write
	// pool's DSN turns on WAL, and migrations write.
	if err := checkVersion(ctx, abs); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}

	db := &DB{path: abs, eng: e}
	db.write, err = e.SQLite.OpenDB(dsn(abs, "_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	db.write.SetConnMaxIdleTime(0)
	db.write.SetConnMaxLifetime(0)
	if err := db.write.PingContext(ctx); err != nil {
		db.write.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := migrate(ctx, db.write); err != nil {
		db.write.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	db.compact, db.fragments, db.runTargets = true, true, true
	if err := db.prepareWriter(ctx); err != nil {
		db.write.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	if db.targetIDs, err = lru.New[string, int64](targetCacheSize); err != nil {
		db.closeStmts()
		db.write.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}

	db.read, err = e.SQLite.OpenDB(dsn(abs, "_pragma=query_only(1)"))
	if err != nil {
		db.closeStmts()
		db.write.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	db.read.SetMaxOpenConns(n)
	db.read.SetMaxIdleConns(n)
	if err := db.read.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	return db, nil
}

// Close closes both connection pools, after waiting for the queries and
// transactions in progress. Nothing is buffered: SavePages has committed
// when it returns.
func (db *DB) Close() error {
	var errs []error
	db.closeStmts()
	errs = append(errs, db.anchorsStmt.close())
	if db.read != nil {
		errs = append(errs, db.read.Close())
	}
	if db.write != nil {
		errs = append(errs, db.write.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Path returns the absolute path of the database file; for PostgreSQL,
// its URL without password or parameters.
func (db *DB) Path() string { return db.path }

// dsn returns the driver name for the file at the absolute path abs with
// the pragmas every connection needs, plus extra ('&'-separated key=value).
//
// The name is a "file:" URI so that a path holding '?' or '#' survives: the
// driver cuts a plain name at its first '?', while SQLite percent-decodes the
// path of a URI.
func dsn(abs string, extra ...string) string {
	q := []string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()),
		"_pragma=journal_mode(WAL)",
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(NORMAL)",
	}
	q = append(q, extra...)
	return fileURI(abs) + "?" + strings.Join(q, "&")
}

// fileURI returns the SQLite "file:" URI of the absolute path abs, with the
// characters special in a URI path percent-encoded.
func fileURI(abs string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.ToSlash(abs))
}

// IntegrityCheck runs PRAGMA integrity_check and PRAGMA foreign_key_check
// and returns an error wrapping ErrIntegrity, quoting SQLite's first
// messages, when either reports a problem.
//
// On PostgreSQL, which enforces foreign keys and constraints on every
// write and checks its pages itself, it only checks that the database
// answers and has the schema this linkrot knows.
func (db *DB) IntegrityCheck(ctx context.Context) error {
	if db.dialect == dialectPostgres {
		v, err := pgSchemaVersion(ctx, db.read)
		if err != nil {
			return fmt.Errorf("integrity check: %w", err)
		}
		if v != latestVersion() {
			return fmt.Errorf("integrity check: %w: schema version %d, want %d", store.ErrIntegrity, v, latestVersion())
		}
		return nil
	}
	var problems []string
	rows, err := db.read.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return fmt.Errorf("integrity check: %w", err)
		}
		if msg != "ok" {
			problems = append(problems, msg)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}

	rows, err = db.read.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	for rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int64
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			rows.Close()
			return fmt.Errorf("integrity check: %w", err)
		}
		problems = append(problems, fmt.Sprintf("%s row %d: missing %s row (foreign key %d)", table, rowid.Int64, parent, fk))
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}

	if len(problems) > 0 {
		const show = 10
		more := ""
		if len(problems) > show {
			more = fmt.Sprintf(" (and %d more)", len(problems)-show)
			problems = problems[:show]
		}
		return fmt.Errorf("integrity check: %w: %s%s", store.ErrIntegrity, strings.Join(problems, "; "), more)
	}
	return nil
}

var _ store.Store = (*DB)(nil)
