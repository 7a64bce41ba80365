// Package sqlite is the SQLite engine of the run database: the
// modernc.org/sqlite driver (pure Go, no cgo) behind the connection rules
// the store keeps on every engine, and SQLite's error classes. The SQL,
// the migrations and the query logic are the engine-neutral store
// (package store/sqlstore), which is given this engine:
//
//	db, err := sqlstore.OpenWith(ctx, "linkrot.db", sqlstore.Engines{SQLite: sqlite.Engine{}})
//
// The package imports only modernc.org/sqlite of the database drivers, and
// nothing of the store's core: the core's own tests run on it.
package sqlite

import (
	"errors"

	sqlitedriver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Engine is the SQLite engine. Its zero value is ready to use.
type Engine struct{}

// IsBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED
// (any extended code): another connection held a lock longer than
// busy_timeout. The operation can be retried.
func (Engine) IsBusy(err error) bool { return IsBusy(err) }

// IsBusy is Engine.IsBusy, for callers holding no engine.
func IsBusy(err error) bool {
	var se *sqlitedriver.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}
