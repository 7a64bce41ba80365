package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/linkrot/linkrot/store"
)

// The PostgreSQL backend runs the store's statements, written once for
// both engines, through a database/sql driver that wraps pgx's
// (github.com/jackc/pgx/v5/stdlib) for values only; statements pass
// unchanged:
//
//   - Arguments: a Go bool is passed as 0 or 1 (the schema stores booleans
//     as integers, as SQLite does); a string is bound as store.ValidText
//     (PostgreSQL's text cannot hold NUL or invalid UTF-8; the SQLite
//     connections apply the same rule, see textconn.go).
//   - COPY: the statement copyMarker with one *copyRows argument copies
//     the rows with pgx's CopyFrom on the connection (pgcopy.go).
//   - A connection the server closed while idle is reported as
//     driver.ErrBadConn, so that database/sql retries on another.

// pgValue converts an argument for PostgreSQL: bools to 0/1, strings to
// valid text (see above).
func pgValue(v any) (any, error) {
	if vr, ok := v.(driver.Valuer); ok {
		var err error
		if v, err = vr.Value(); err != nil {
			return nil, err
		}
	}
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case string:
		return store.ValidText(x), nil
	}
	return v, nil
}

// pgConnector makes the wrapped connections of a pool.
type pgConnector struct{ inner driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{conn.(*stdlib.Conn)}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.inner.Driver() }

// pgConn is a pgx connection that rewrites statements and values.
type pgConn struct{ c *stdlib.Conn }

var (
	_ driver.ExecerContext      = (*pgConn)(nil)
	_ driver.QueryerContext     = (*pgConn)(nil)
	_ driver.ConnPrepareContext = (*pgConn)(nil)
	_ driver.ConnBeginTx        = (*pgConn)(nil)
	_ driver.NamedValueChecker  = (*pgConn)(nil)
	_ driver.SessionResetter    = (*pgConn)(nil)
	_ driver.Pinger             = (*pgConn)(nil)
)

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &pgStmt{st.(*stdlib.Stmt), c}, nil
}

func (c *pgConn) Close() error { return c.c.Close() }
func (c *pgConn) Begin() (driver.Tx, error) {
	return c.c.BeginTx(context.Background(), driver.TxOptions{})
}
func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly && sql.IsolationLevel(opts.Isolation) == sql.LevelDefault {
		// A read transaction sees one snapshot, as SQLite's does.
		opts.Isolation = driver.IsolationLevel(sql.LevelRepeatableRead)
	}
	tx, err := c.c.BeginTx(ctx, opts)
	return tx, badConn(err)
}
func (c *pgConn) Ping(ctx context.Context) error         { return c.c.Ping(ctx) }
func (c *pgConn) ResetSession(ctx context.Context) error { return c.c.ResetSession(ctx) }

func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	v, err := pgValue(nv.Value)
	if err != nil {
		return err
	}
	nv.Value = v
	return c.c.CheckNamedValue(nv)
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if query == copyMarker && len(args) == 1 {
		if t, ok := args[0].Value.(*copyRows); ok {
			n, err := c.c.Conn().CopyFrom(ctx, pgx.Identifier{t.table}, t.cols, pgx.CopyFromRows(t.rows))
			return driver.RowsAffected(n), err
		}
	}
	res, err := c.c.ExecContext(ctx, query, args)
	return res, badConn(err)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.c.QueryContext(ctx, query, args)
	if err != nil {
		return nil, badConn(err)
	}
	return rows, nil
}

// badConn turns the error of a connection the server has closed while it
// sat idle in the pool (a restart: the server's "terminating connection"
// was waiting in the socket, the statement never ran) into
// driver.ErrBadConn, on which database/sql retries on a new connection.
// Inside a transaction database/sql does not retry: the transaction
// fails.
func badConn(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03") {
		return driver.ErrBadConn
	}
	return err
}

// pgStmt is a prepared statement whose arguments are converted (pgValue).
type pgStmt struct {
	s *stdlib.Stmt
	c *pgConn
}

func (s *pgStmt) Close() error  { return s.s.Close() }
func (s *pgStmt) NumInput() int { return s.s.NumInput() }
func (s *pgStmt) Exec(args []driver.Value) (driver.Result, error) {
	return nil, fmt.Errorf("postgres: Stmt.Exec without context is not supported")
}
func (s *pgStmt) Query(args []driver.Value) (driver.Rows, error) {
	return nil, fmt.Errorf("postgres: Stmt.Query without context is not supported")
}
func (s *pgStmt) CheckNamedValue(nv *driver.NamedValue) error { return s.c.CheckNamedValue(nv) }
func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.s.ExecContext(ctx, args)
}
func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.s.QueryContext(ctx, args)
}
