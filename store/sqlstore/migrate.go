package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/linkrot/linkrot/store"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// A migration is one embedded SQL file. Its version is the number its name
// starts with: 0001_init.sql is version 1.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. Versions
// must run 1, 2, 3, ... without gaps; anything else is a build mistake and
// panics.
var migrations = sync.OnceValue(func() []migration {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		panic(fmt.Sprintf("sqlite: read embedded migrations: %v", err))
	}
	var ms []migration
	for _, e := range entries { // ReadDir sorts by name
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || len(num) != 4 {
			panic(fmt.Sprintf("sqlite: migration %q: name must be NNNN_description.sql", e.Name()))
		}
		if v != len(ms)+1 {
			panic(fmt.Sprintf("sqlite: migration %q: want version %d", e.Name(), len(ms)+1))
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			panic(fmt.Sprintf("sqlite: read migration %q: %v", e.Name(), err))
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	return ms
})

// latestVersion is the schema version the embedded migrations lead to.
func latestVersion() int { return len(migrations()) }

func newerSchemaError(have int) error {
	return fmt.Errorf("%w: the database has schema version %d, this linkrot knows versions up to %d",
		store.ErrNewerSchema, have, latestVersion())
}

// checkVersion refuses a database whose schema is newer than ours before
// anything writes to it. It reads PRAGMA user_version on a connection
// without the write pool's pragmas, so that neither the journal mode nor
// anything else of the file changes. A missing file is version 0.
func checkVersion(ctx context.Context, abs string) error {
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	probeDSN := fileURI(abs) + fmt.Sprintf("?_pragma=busy_timeout(%d)", busyTimeout.Milliseconds())
	probe, err := sql.Open("sqlite", probeDSN)
	if err != nil {
		return err
	}
	probe.SetMaxOpenConns(1)
	defer probe.Close()
	var v int
	if err := probe.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > latestVersion() {
		return newerSchemaError(v)
	}
	return nil
}

// migrate applies, in order, the migrations newer than the database's
// user_version, each in its own BEGIN IMMEDIATE transaction that also sets
// user_version. The version is read again inside each transaction, so two
// processes opening a new file at once apply each migration once.
func migrate(ctx context.Context, db *sql.DB) error {
	var have int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	if have > latestVersion() {
		return newerSchemaError(have)
	}
	for _, m := range migrations() {
		if m.version <= have {
			continue
		}
		if err := applyMigration(ctx, db, m); err != nil {
			return fmt.Errorf("migrate %04d: %w", m.version, err)
		}
	}
	return nil
}

// due reports whether m is the next migration of a database at schema
// version have, read inside the transaction that would apply it: false
// with no error when m was applied meanwhile, an error when the database
// is newer than this linkrot or a version is missing. Both backends'
// migrations follow this one rule.
func (m migration) due(have int) (bool, error) {
	switch {
	case have > latestVersion():
		return false, newerSchemaError(have)
	case have >= m.version:
		return false, nil
	case have != m.version-1:
		return false, fmt.Errorf("database has schema version %d, want %d", have, m.version-1)
	}
	return true, nil
}

func applyMigration(ctx context.Context, db *sql.DB, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return err
	}
	if due, err := m.due(have); !due {
		return err // nil: applied by another connection meanwhile
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	// PRAGMA takes no parameters; m.version is an int from our own file names.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
		return err
	}
	return tx.Commit()
}
