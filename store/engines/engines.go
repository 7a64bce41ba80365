// Package engines opens the run database a DSN names on the engine it
// needs: a file on SQLite (package store/sqlite), a postgres:// URL on
// PostgreSQL (package store/postgres). It is the one place that knows
// every engine; the store itself (package store/sqlstore) imports none.
package engines

import (
	"context"

	"github.com/linkrot/linkrot/store/postgres"
	"github.com/linkrot/linkrot/store/sqlite"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// All returns every engine linkrot has.
func All() sqlstore.Engines {
	return sqlstore.Engines{SQLite: sqlite.Engine{}, Postgres: postgres.Engine{}}
}

// Open opens the database dsn names for reading and writing, applying
// the migrations it lacks (sqlstore.OpenWith).
func Open(ctx context.Context, dsn string) (*sqlstore.DB, error) {
	return sqlstore.OpenWith(ctx, dsn, All())
}

// OpenReadOnly opens the database dsn names for reading only
// (sqlstore.OpenReadOnlyWith).
func OpenReadOnly(ctx context.Context, dsn string) (*sqlstore.DB, error) {
	return sqlstore.OpenReadOnlyWith(ctx, dsn, All())
}
