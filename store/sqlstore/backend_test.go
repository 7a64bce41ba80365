package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/linkrot/linkrot/internal/pgtest"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/store/storetest"
)

// The store's contract tests run against both backends: a test wrapped in
// forEachBackend runs once as the subtest "sqlite" and once as
// "postgres", and MustOpen, called inside, opens a fresh database of the
// subtest's backend (a temporary file, or a new database on the test
// binary's throwaway PostgreSQL cluster, see internal/pgtest). Tests not
// wrapped are SQLite-only by nature (file locking, pragmas, fixture
// files of old versions); each says so.

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// backends are the subtest names of forEachBackend.
var backends = []string{"sqlite", "postgres"}

// forEachBackend runs fn as a subtest per backend.
func forEachBackend(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b, fn)
	}
}

// isPostgresTest reports whether tb runs under forEachBackend's postgres
// subtest.
func isPostgresTest(tb testing.TB) bool {
	for _, part := range strings.Split(tb.Name(), "/") {
		if part == "postgres" {
			return true
		}
	}
	return false
}

// openPostgresTest opens a fresh PostgreSQL database for tb.
func openPostgresTest(tb testing.TB) *DB {
	tb.Helper()
	dsn := pgtest.DSNFrom(tb, "linkrot-schema", func(dsn string) error {
		db, err := Open(context.Background(), dsn)
		if err != nil {
			return err
		}
		return db.Close()
	})
	return openClosed(tb, dsn)
}

// openClosed opens the store at dsn (a file path or a postgres:// URL),
// closed when tb ends.
func openClosed(tb testing.TB, dsn string) *DB {
	tb.Helper()
	db, err := Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return db
}

// testDBName returns the name of a fresh database for tb, for tests that
// open it themselves (several DB values on one database): a file in a
// temporary directory, or under forEachBackend's postgres subtest the URL
// of a fresh PostgreSQL database.
func testDBName(tb testing.TB) string {
	tb.Helper()
	if isPostgresTest(tb) {
		return pgtest.DSN(tb)
	}
	return filepath.Join(tb.TempDir(), "linkrot.db")
}

// missingDBName names a database that does not exist: a file, or a
// PostgreSQL database never created.
func missingDBName(tb testing.TB) string {
	tb.Helper()
	if isPostgresTest(tb) {
		return pgtest.Shared(tb).URL("postgres", "", "no_such_database")
	}
	return filepath.Join(tb.TempDir(), "missing.db")
}

// numParams returns the number of parameters of q: its largest $n.
func numParams(q string) int {
	if !strings.Contains(q, "$") {
		return strings.Count(q, "?") // anonymous parameters (paramStyle)
	}
	n := 0
	for _, m := range regexp.MustCompile(`\$([0-9]+)`).FindAllStringSubmatch(q, -1) {
		k, _ := strconv.Atoi(m[1])
		n = max(n, k)
	}
	return n
}

// TestContract runs the store's contract suite (store/storetest) on both
// engines.
func TestContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T) {
		storetest.Run(t, func(tb testing.TB) store.Store { return MustOpen(tb) })
	})
}

// validTextDeep applies the store's text rule (store.ValidText) in place to
// every string reachable from v (pointers, structs, slices, maps with
// string keys or values): what a value saved reads back as.
func validTextDeep(v any) { validTextValue(reflect.ValueOf(v)) }

func validTextValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			validTextValue(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				validTextValue(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			validTextValue(v.Index(i))
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.String {
			for _, k := range v.MapKeys() {
				e := reflect.New(v.Type().Elem()).Elem()
				e.Set(v.MapIndex(k))
				validTextValue(e)
				v.SetMapIndex(k, e)
			}
			return
		}
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			v.SetMapIndex(k, reflect.Value{})
			v.SetMapIndex(reflect.ValueOf(store.ValidText(k.String())).Convert(v.Type().Key()),
				reflect.ValueOf(store.ValidText(e.String())).Convert(v.Type().Elem()))
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(store.ValidText(v.String()))
		}
	}
}
