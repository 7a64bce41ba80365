package sqlstore

import (
	"context"

	"github.com/linkrot/linkrot/store/postgres"
	"github.com/linkrot/linkrot/store/sqlite"
)

// testEngines are the engines the store's own tests open databases on:
// the real ones (neither engine package imports this one).
var testEngines = Engines{SQLite: sqlite.Engine{}, Postgres: postgres.Engine{}}

// Open opens path on testEngines: the tests' short form of OpenWith.
func Open(ctx context.Context, path string) (*DB, error) {
	return OpenWith(ctx, path, testEngines)
}

// OpenReadOnly opens path read-only on testEngines.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	return OpenReadOnlyWith(ctx, path, testEngines)
}

// IsBusy is the SQLite engine's IsBusy.
func IsBusy(err error) bool { return sqlite.IsBusy(err) }
