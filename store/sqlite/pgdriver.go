package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// The PostgreSQL backend runs the store's SQL, written for SQLite, through
// a database/sql driver that wraps pgx's (github.com/jackc/pgx/v5/stdlib)
// and adapts each statement and value on its way, in this one place:
//
//   - Placeholders: SQLite's ? and ?NNN become $1, $2, ... (a bare ? takes
//     the number after the largest used so far, as in SQLite); a ? in a
//     string literal, a quoted identifier or a comment stays.
//   - rowid (checks has no id column) becomes ctid, the row's physical
//     address, which serves the same purpose inside one statement;
//     instr(a, b) becomes strpos(a, b).
//   - NULL order: every ORDER BY term gets SQLite's placement of NULLs
//     (NULLS FIRST when ascending, NULLS LAST when descending), which is
//     the opposite of PostgreSQL's default.
//   - Arguments: a Go bool is passed as 0 or 1 (the schema stores booleans
//     as integers, as SQLite does).
//   - COPY: the statement copyMarker with one *copyRows argument copies
//     the rows with pgx's CopyFrom on the connection (pgcopy.go).
//   - Strings: PostgreSQL's text cannot hold NUL bytes or invalid UTF-8,
//     both of which the store keeps verbatim (hostile pages). A string
//     argument holding either, or the escape rune pgEscape itself, is
//     stored with those bytes escaped (pgEscape followed by '0' for NUL,
//     'e' for pgEscape itself, 'x' and two hex digits for a byte that is
//     not UTF-8); every string read back is unescaped. Escaping is
//     injective and commutes with concatenation of whole strings, so
//     equality, joins and the || of the link_urls view behave as on
//     SQLite; every other string is stored unchanged.

// pgEscape introduces an escaped byte in a string stored in PostgreSQL: a
// noncharacter (U+10FFFE) that no text is meant to contain.
const pgEscape = '\U0010FFFE'

// pgEscapeString returns s as stored in PostgreSQL.
func pgEscapeString(s string) string {
	if !needsPGEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(pgEscape)
			fmt.Fprintf(&b, "x%02x", s[i])
			n = 1
		case r == 0:
			b.WriteRune(pgEscape)
			b.WriteByte('0')
		case r == pgEscape:
			b.WriteRune(pgEscape)
			b.WriteByte('e')
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsPGEscape(s string) bool {
	return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) || strings.ContainsRune(s, pgEscape)
}

// pgUnescapeString reverses pgEscapeString. A malformed escape (never
// written by pgEscapeString) is kept as it is.
func pgUnescapeString(s string) string {
	i := strings.IndexRune(s, pgEscape)
	if i < 0 {
		return s
	}
	const w = 4 // utf8.RuneLen(pgEscape)
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i+w:]
		switch {
		case strings.HasPrefix(s, "0"):
			b.WriteByte(0)
			s = s[1:]
		case strings.HasPrefix(s, "e"):
			b.WriteRune(pgEscape)
			s = s[1:]
		case len(s) >= 3 && s[0] == 'x':
			if v, err := strconv.ParseUint(s[1:3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				s = s[3:]
				break
			}
			b.WriteRune(pgEscape)
		default:
			b.WriteRune(pgEscape)
		}
		i = strings.IndexRune(s, pgEscape)
	}
	b.WriteString(s)
	return b.String()
}

// pgValue converts an argument for PostgreSQL: bools to 0/1, strings
// escaped (see above).
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
		return pgEscapeString(x), nil
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
	return pgRows{rows}, nil
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

// pgStmt is a prepared statement whose rows are unescaped.
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
	rows, err := s.s.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	return pgRows{rows}, nil
}

// pgRows unescapes the strings it reads.
type pgRows struct{ driver.Rows }

func (r pgRows) Next(dest []driver.Value) error {
	if err := r.Rows.Next(dest); err != nil {
		return err
	}
	for i, v := range dest {
		if s, ok := v.(string); ok {
			dest[i] = pgUnescapeString(s)
		}
	}
	return nil
}
