package sqlstore

import (
	"context"
	"database/sql"
)

// Engines are the database engines a DB may be opened on: the SQLite
// engine (package store/sqlite) for a file, the PostgreSQL engine (package
// store/postgres) for a postgres:// URL. The store's SQL is the same text
// on both; an engine brings what only its driver can: the connections
// (with the store's value rules), the classes of its errors, and bulk
// copies. A nil engine cannot be opened.
type Engines struct {
	SQLite   SQLiteEngine
	Postgres PostgresEngine
}

// SQLiteEngine is what the store needs of SQLite's driver.
type SQLiteEngine interface {
	// OpenDB opens a pool on the driver DSN dsn (a file: URI with
	// pragmas) whose connections bind strings as store.ValidText.
	OpenDB(dsn string) (*sql.DB, error)
	// IsBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED: another
	// connection held a lock longer than busy_timeout.
	IsBusy(err error) bool
}

// PostgresEngine is what the store needs of PostgreSQL's driver.
type PostgresEngine interface {
	// Redacted parses the URL dsn and returns it without its password.
	Redacted(dsn string) (string, error)
	// Pool opens a pool on the database of dsn whose connections bind
	// strings as store.ValidText and bools as 0 or 1; with readOnly,
	// every transaction is read-only.
	Pool(dsn string, readOnly bool) (*sql.DB, error)
	// Error words an error met on the database of dsn on one line,
	// without the password.
	Error(dsn string, err error) error
	// Retryable reports whether err is a deadlock or serialization
	// failure: the transaction was rolled back and may run again.
	Retryable(err error) bool
	// Copy copies rows into table's columns cols inside tx, a
	// transaction on one of the engine's pools. It may convert the
	// values of rows in place.
	Copy(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) (int64, error)
}
