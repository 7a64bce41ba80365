package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestOpenDB_ValidText: strings are bound as valid text (NUL and invalid
// UTF-8 become U+FFFD), bytes are left alone.
func TestOpenDB_ValidText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := Engine{}.OpenDB("file:" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (s TEXT, b BLOB)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES ($1, $2)`, "a\x00b\xffc", []byte("a\x00b\xff")); err != nil {
		t.Fatal(err)
	}
	var s string
	var b []byte
	if err := db.QueryRowContext(ctx, `SELECT s, b FROM t`).Scan(&s, &b); err != nil {
		t.Fatal(err)
	}
	if s != "a\uFFFDb\uFFFDc" {
		t.Errorf("text stored as %q, want NUL and the invalid byte replaced", s)
	}
	if string(b) != "a\x00b\xff" {
		t.Errorf("bytes stored as %q, want them unchanged", b)
	}
}

// TestOpenDB_BoundTypes: each kind of value the store binds is stored as
// the default converter would store it, and a string of a named type is
// made valid text too.
func TestOpenDB_BoundTypes(t *testing.T) {
	type label string
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := Engine{}.OpenDB("file:" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (i INTEGER, j INTEGER, f REAL, b INTEGER, n TEXT, l TEXT, u INTEGER, ok TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		int(-7), int64(1)<<40, 2.5, true, nil, label("x\xffy"), uint16(9), "plain"); err != nil {
		t.Fatal(err)
	}
	var (
		i, j, b, u int64
		f          float64
		n          *string
		l, ok      string
	)
	if err := db.QueryRowContext(ctx, `SELECT i, j, f, b, n, l, u, ok FROM t`).Scan(&i, &j, &f, &b, &n, &l, &u, &ok); err != nil {
		t.Fatal(err)
	}
	if i != -7 || j != 1<<40 || f != 2.5 || b != 1 || n != nil || l != "x\uFFFDy" || u != 9 || ok != "plain" {
		t.Errorf("stored %d %d %v %d %v %q %d %q", i, j, f, b, n, l, u, ok)
	}
}

// TestIsBusy: a write refused because another connection holds the write
// lock is busy; other errors are not.
func TestIsBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	ctx := context.Background()
	a, err := Engine{}.OpenDB("file:" + path + "?_pragma=busy_timeout(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Engine{}.OpenDB("file:" + path + "?_pragma=busy_timeout(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.ExecContext(ctx, `CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	tx, err := a.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = b.ExecContext(wctx, `INSERT INTO t VALUES (2)`)
	if err == nil {
		t.Fatal("second writer not refused while the first holds the lock")
	}
	if !(Engine{}).IsBusy(err) || !IsBusy(fmt.Errorf("wrapped: %w", err)) {
		t.Errorf("IsBusy(%v) = false, want true (also wrapped)", err)
	}
	for _, e := range []error{nil, errors.New("busy"), context.DeadlineExceeded} {
		if IsBusy(e) {
			t.Errorf("IsBusy(%v) = true", e)
		}
	}
}
