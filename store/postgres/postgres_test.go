package postgres

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestRedacted(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://linkrot:s3cret@db.example:5433/audits", "postgres://linkrot@db.example:5433/audits"},
		{"postgresql://u:p@[::1]/d?sslmode=disable", "postgres://u@[::1]:5432/d"},
		{"postgres://u@/d?host=/run/postgresql", "postgres://u@/run/postgresql/d"},
	} {
		got, err := Engine{}.Redacted(tc.dsn)
		if err != nil {
			t.Fatalf("%s: %v", tc.dsn, err)
		}
		if got != tc.want {
			t.Errorf("Redacted(%s) = %s, want %s", tc.dsn, got, tc.want)
		}
	}
	if _, err := (Engine{}).Redacted("postgres://u:s3cret@h:notaport/d"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("bad URL: err = %v, want an error without the password", err)
	}
}

func TestRetryable(t *testing.T) {
	for code, want := range map[string]bool{"40P01": true, "40001": true, "23505": false, "57P01": false} {
		err := fmt.Errorf("tx: %w", &pgconn.PgError{Code: code})
		if got := (Engine{}).Retryable(err); got != want {
			t.Errorf("Retryable(%s) = %v, want %v", code, got, want)
		}
	}
	if (Engine{}).Retryable(errors.New("40P01")) {
		t.Error("a plain error naming the code is not retryable")
	}
}

// TestError: one line, what failed, never the password.
func TestError(t *testing.T) {
	const dsn = "postgres://linkrot:s3cret@db.example:5432/audits"
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&pgconn.PgError{Code: "28P01"}, `authentication failed for user "linkrot"`},
		{&pgconn.PgError{Code: "3D000"}, `database "audits" does not exist`},
		{errors.New("line one\nline two"), "PostgreSQL postgres://linkrot@db.example:5432/audits: line one; line two"},
	} {
		got := Engine{}.Error(dsn, tc.err).Error()
		if !strings.Contains(got, tc.want) || strings.Contains(got, "s3cret") || strings.Contains(got, "\n") {
			t.Errorf("Error(%v) = %q, want one line with %q and no password", tc.err, got, tc.want)
		}
		if !errors.Is(Engine{}.Error(dsn, tc.err), tc.err) {
			t.Errorf("Error(%v) does not wrap it", tc.err)
		}
	}
}

func TestPgValue(t *testing.T) {
	for _, tc := range []struct{ in, want any }{
		{true, int64(1)}, {false, int64(0)}, {"a\x00b\xff", "a\uFFFDb\uFFFD"}, {int64(7), int64(7)}, {[]byte{0, 0xff}, []byte{0, 0xff}},
	} {
		got, err := pgValue(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
			t.Errorf("pgValue(%#v) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}
