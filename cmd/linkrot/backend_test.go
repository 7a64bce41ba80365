package main

import (
	"path/filepath"
	"testing"

	"github.com/linkrot/linkrot/internal/pgtest"
)

// forEachBackend runs fn as the subtest "sqlite" with the path of a new
// database file, then as "postgres" with the URL of a new database on the
// test binary's throwaway PostgreSQL server (internal/pgtest).
func forEachBackend(t *testing.T, fn func(t *testing.T, db string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "linkrot.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, pgtest.DSN(t)) })
}
