package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// dialect is the SQL engine behind a DB. The store's SQL is written once,
// for SQLite; the few places where PostgreSQL needs other text ask the
// dialect, and pgdriver.go adapts the rest (placeholders, values).
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

// Postgres reports whether the database is a PostgreSQL database.
func (db *DB) Postgres() bool { return db.dialect == dialectPostgres }

// idListSQL is a subquery yielding the column value, one row per ID of a
// JSON array of integers bound to its parameter $n (see idList).
func (db *DB) idListSQL(n int) string {
	if db.dialect == dialectPostgres {
		return `(SELECT CAST(j.value AS BIGINT) AS value FROM json_array_elements_text(CAST($` + strconv.Itoa(n) + ` AS json)) AS j(value))`
	}
	return `(SELECT value FROM json_each($` + strconv.Itoa(n) + `))`
}

//go:embed migrations/postgres/*.sql
var pgMigrationFiles embed.FS

// pgMigrations returns the PostgreSQL text of the migrations, by version:
// the same files (names) as the SQLite ones, translated (see
// migrations/postgres/0001_init.sql).
var pgMigrations = sync.OnceValue(func() []migration {
	var ms []migration
	for _, m := range migrations() {
		b, err := pgMigrationFiles.ReadFile(path.Join("migrations/postgres", m.name))
		if err != nil {
			panic(fmt.Sprintf("sqlite: PostgreSQL text of migration %q: %v", m.name, err))
		}
		ms = append(ms, migration{version: m.version, name: m.name, sql: string(b)})
	}
	if entries, _ := fs.ReadDir(pgMigrationFiles, "migrations/postgres"); len(entries) != len(ms) {
		panic(fmt.Sprintf("sqlite: %d PostgreSQL migrations for %d SQLite ones", len(entries), len(ms)))
	}
	return ms
})

// pgLockKey is the key of the transaction-level advisory lock that
// serialises migrations and run-lock changes between processes sharing a
// PostgreSQL database ("linkrot" in ASCII).
const pgLockKey = 0x6c696e6b726f74

// openPostgres opens the PostgreSQL database of the URL dsn: credentials
// come from the URL, the environment (PGPASSWORD, PGPASSFILE, ...) or
// ~/.pgpass, as libpq's. read-write: the migrations it lacks are applied
// first; readOnly: the schema must be current and every transaction is
// read-only.
func openPostgres(ctx context.Context, dsn string, readOnly bool, e Engines) (*DB, error) {
	if e.Postgres == nil {
		return nil, errors.New("no PostgreSQL engine given (package store/postgres)")
	}
	redacted, err := e.Postgres.Redacted(dsn)
	if err != nil {
		return nil, err
	}
	pgErr := func(err error) error { return e.Postgres.Error(dsn, err) }
	db := &DB{path: redacted, dialect: dialectPostgres, eng: e}
	if readOnly {
		pool, err := e.Postgres.Pool(dsn, true)
		if err != nil {
			return nil, err
		}
		n := max(4, runtime.GOMAXPROCS(0))
		pool.SetMaxOpenConns(n)
		pool.SetMaxIdleConns(n)
		v, err := pgSchemaVersion(ctx, pool)
		if err != nil {
			pool.Close()
			return nil, pgErr(err)
		}
		switch latest := latestVersion(); {
		case v > latest:
			pool.Close()
			return nil, newerSchemaError(v)
		case v < latest:
			pool.Close()
			return nil, fmt.Errorf("schema version %d is older than %d: open it once read-write (any linkrot command) to migrate it", v, latest)
		}
		db.write, db.read = pool, pool
		db.compact, db.fragments, db.runTargets = true, true, true
		return db, nil
	}

	if db.write, err = e.Postgres.Pool(dsn, false); err != nil {
		return nil, err
	}
	// One writer connection, as on SQLite: this process's writers queue in
	// Go; other processes' transactions are PostgreSQL's business.
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	v, err := pgSchemaVersion(ctx, db.write)
	if err != nil {
		db.write.Close()
		return nil, pgErr(err)
	}
	if v > latestVersion() { // before anything is written
		db.write.Close()
		return nil, newerSchemaError(v)
	}
	if v == latestVersion() {
		// current: nothing to migrate
	} else if err := pgMigrate(ctx, db.write); err != nil {
		db.write.Close()
		return nil, err
	}
	db.compact, db.fragments, db.runTargets = true, true, true
	if db.read, err = e.Postgres.Pool(dsn, true); err != nil {
		db.write.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0))
	db.read.SetMaxOpenConns(n)
	db.read.SetMaxIdleConns(n)
	return db, nil
}

// pgSchemaVersion reads the schema version of a PostgreSQL database: the
// one row of schema_version, 0 when the table does not exist (a new
// database). It writes nothing.
func pgSchemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var exists bool
	if err := q.QueryRowContext(ctx, `SELECT to_regclass('schema_version') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := q.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// pgMigrate applies the migrations the database lacks, each in its own
// transaction that holds the advisory lock pgLockKey, reads the version
// again and records the new one: two processes migrating a database at
// once apply each migration once, and a failed migration leaves nothing
// behind (PostgreSQL's DDL is transactional).
func pgMigrate(ctx context.Context, db *sql.DB) error {
	for _, m := range pgMigrations() {
		if err := pgApply(ctx, db, m); err != nil {
			return fmt.Errorf("migrate %04d: %w", m.version, err)
		}
	}
	return nil
}

func pgApply(ctx context.Context, db *sql.DB, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pgLockKey)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var have int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&have); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if due, err := m.due(have); !due {
		return err // nil: applied before, or by another process meanwhile
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = $1`, m.version); err != nil {
		return err
	}
	return tx.Commit()
}

// lockTx serialises, on PostgreSQL, the transactions of every process
// that read the run lock and then write it (SQLite's BEGIN IMMEDIATE does
// it there): the transaction takes the advisory lock pgLockKey.
func (db *DB) lockTx(ctx context.Context, tx *sql.Tx) error {
	if db.dialect != dialectPostgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pgLockKey))
	return err
}

// noLimit is the LIMIT of a query meant to have none: the largest count
// both engines accept (SQLite's -1 is an error on PostgreSQL).
const noLimit = math.MaxInt

// retryTx runs fn, a whole write transaction, again when PostgreSQL aborted
// it for a deadlock or a serialization failure with another process's
// transaction (writers of several processes inserting the same targets
// in different orders): up to pgRetries attempts, with a growing pause
// drawn at random, so that two writers that deadlocked do not start
// again in step and meet in the same deadlock.
// SQLite serialises writers (BEGIN IMMEDIATE): fn runs once.
func (db *DB) retryTx(ctx context.Context, fn func() error) error {
	err := fn()
	for attempt := 1; db.dialect == dialectPostgres && attempt < pgRetries && db.eng.Postgres.Retryable(err); attempt++ {
		step := time.Duration(min(attempt, 6)) * 20 * time.Millisecond
		select {
		case <-ctx.Done():
			return err
		case <-time.After(step/2 + rand.N(step)):
		}
		err = fn()
	}
	return err
}

// pgRetries bounds retryTx's attempts.
const pgRetries = 12
