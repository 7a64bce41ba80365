// Package postgres is the PostgreSQL engine of the run database: pgx
// (github.com/jackc/pgx/v5) behind a database/sql driver that binds values
// by the store's rules and copies batches of rows with COPY, and
// PostgreSQL's error classes. The SQL, the migrations and the query logic
// are the engine-neutral store (package store/sqlstore), which is given
// this engine:
//
//	db, err := sqlstore.OpenWith(ctx, "postgres://linkrot@db/linkrot", sqlstore.Engines{Postgres: postgres.Engine{}})
//
// Credentials come from the URL, the environment (PGPASSWORD, PGPASSFILE,
// ...) or ~/.pgpass, as libpq's. The package imports only pgx of the
// database drivers, and nothing of the store's core: the core's own tests
// run on it.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Engine is the PostgreSQL engine. Its zero value is ready to use.
type Engine struct{}

// server is a PostgreSQL database named by a URL, ready to open pools on.
type server struct{ cfg *pgx.ConnConfig }

// connectTimeout bounds connecting when the URL sets no connect_timeout.
const connectTimeout = 15 * time.Second

// Redacted parses the PostgreSQL URL dsn and returns it without its
// password, for messages and paths; a URL that does not parse is an
// error (without the password).
func (Engine) Redacted(dsn string) (string, error) {
	s, err := parse(dsn)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}

// Pool opens a database/sql pool of the engine's connections to the
// database of the URL dsn; with readOnly, every transaction of its
// sessions is read-only. It does not connect yet.
func (Engine) Pool(dsn string, readOnly bool) (*sql.DB, error) {
	s, err := parse(dsn)
	if err != nil {
		return nil, err
	}
	return s.pool(readOnly), nil
}

// Error turns a connection or server error met on the database of dsn
// into one line saying what failed, without the password (pgx never
// prints it).
func (Engine) Error(dsn string, err error) error {
	s, perr := parse(dsn)
	if perr != nil {
		return err
	}
	return oneLineError{s.errorLines(err)}
}

// parse parses the PostgreSQL URL dsn, taking what it lacks from the
// environment as libpq does (PGPASSWORD, PGPASSFILE, PGHOST, ...).
func parse(dsn string) (*server, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err // pgconn's parse errors redact the password
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	return &server{cfg: cfg}, nil
}

// String returns the URL without its password.
func (s *server) String() string {
	host := s.cfg.Host
	if !strings.HasPrefix(host, "/") {
		host = net.JoinHostPort(host, fmt.Sprint(s.cfg.Port))
	}
	return fmt.Sprintf("postgres://%s@%s/%s", s.cfg.User, host, s.cfg.Database)
}

func (s *server) pool(readOnly bool) *sql.DB {
	c := s.cfg.Copy()
	if c.RuntimeParams == nil {
		c.RuntimeParams = map[string]string{}
	}
	if readOnly {
		c.RuntimeParams["default_transaction_read_only"] = "on"
	}
	c.RuntimeParams["application_name"] = "linkrot"
	return sql.OpenDB(pgConnector{stdlib.GetConnector(*c)})
}

// oneLineError is an error whose message is on one line: pgx puts each
// address it tried on a line of its own.
type oneLineError struct{ err error }

func (e oneLineError) Error() string {
	return strings.Join(strings.Fields(strings.ReplaceAll(e.err.Error(), "\n", "; ")), " ")
}

func (e oneLineError) Unwrap() error { return e.err }

func (s *server) errorLines(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return fmt.Errorf("PostgreSQL %s: authentication failed for user %q (check PGPASSWORD, PGPASSFILE or the config file): %w", s, s.cfg.User, err)
		case "3D000":
			return fmt.Errorf("PostgreSQL %s: database %q does not exist: %w", s, s.cfg.Database, err)
		}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("PostgreSQL %s unreachable: %w", s, err)
	}
	return fmt.Errorf("PostgreSQL %s: %w", s, err)
}

// Retryable reports whether err is PostgreSQL's deadlock_detected or
// serialization_failure: the transaction was rolled back and may be run
// again.
func (Engine) Retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// copyMarker is the statement text the engine's connections (pgConn) take
// for a COPY of their one *copyRows argument, inside the transaction of
// the connection.
const copyMarker = "-- linkrot: COPY FROM STDIN"

// copyRows are the rows of one table for COPY.
type copyRows struct {
	table string
	cols  []string
	rows  [][]any
}

// Copy copies rows into table's columns cols with COPY, inside tx (a
// transaction on a pool of this engine). Values are bound as statement
// arguments are (see pgValue), converted in place: rows belong to the
// caller's batch and are not read again. It returns the rows copied.
func (Engine) Copy(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) (int64, error) {
	for _, r := range rows {
		if len(r) != len(cols) {
			return 0, fmt.Errorf("copy %s: %d values for %d columns", table, len(r), len(cols))
		}
		for j, a := range r {
			v, err := pgValue(a)
			if err != nil {
				return 0, err
			}
			r[j] = v
		}
	}
	res, err := tx.ExecContext(ctx, copyMarker, &copyRows{table: table, cols: cols, rows: rows})
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
