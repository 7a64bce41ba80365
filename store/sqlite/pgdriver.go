package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"
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

// pgRewrites caches rebound statements: the store's statements are a
// bounded set of constants (and IN lists of bounded lengths).
var pgRewrites, _ = lru.New[string, string](4096)

// pgRebind rewrites a statement written for SQLite for PostgreSQL (see
// above): placeholders, rowid, instr.
func pgRebind(q string) string {
	if s, ok := pgRewrites.Get(q); ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	maxN := 0
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"': // literal or quoted identifier: '' and "" escape
			j := quotedEnd(q, i)
			b.WriteString(q[i:j])
			i = j
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := commentEnd(q, i)
			b.WriteString(q[i:j])
			i = j
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := commentEnd(q, i)
			b.WriteString(q[i:j])
			i = j
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n := maxN + 1
			if j > i+1 {
				n, _ = strconv.Atoi(q[i+1 : j])
			}
			maxN = max(maxN, n)
			b.WriteString("$" + strconv.Itoa(n))
			i = j
		case isIdentStart(c):
			j := identEnd(q, i)
			word := q[i:j]
			switch strings.ToLower(word) {
			case "rowid":
				word = "ctid"
			case "instr":
				word = "strpos"
			}
			b.WriteString(word)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	s := pgNullsOrder(b.String())
	pgRewrites.Add(q, s)
	return s
}

// pgNullsOrder adds SQLite's NULLS FIRST (ascending) or NULLS LAST
// (descending) to each term of each ORDER BY clause of q that says none.
//
// A term that is a column NOT NULL in its table (known from pgNotNull)
// gets nothing: NULLS FIRST on an ascending term would keep PostgreSQL
// from reading an index in order (EachLink's ORDER BY l.id would sort the
// run's links for every chunk).
func pgNullsOrder(q string) string {
	type clause struct {
		depth    int
		last     string // last keyword or name of the current term, upper case
		hasNulls bool
		words    []string // names of the term (lower case): col or alias, col
		complex  bool     // the term is more than a column reference
	}
	notNull := pgNotNull.Load()
	var aliases map[string]string
	if notNull != nil && strings.Contains(strings.ToUpper(q), "ORDER") {
		aliases = pgAliases(q)
	}
	var (
		b      strings.Builder
		stack  []*clause
		depth  int
		prevUp string
	)
	b.Grow(len(q) + 32)
	end := func() (wrote bool) {
		c := stack[len(stack)-1]
		switch {
		case c.hasNulls:
		case !c.complex && notNull != nil && notNullTerm(*notNull, aliases, c.words):
		case c.last == "DESC":
			b.WriteString(" NULLS LAST")
			wrote = true
		default:
			b.WriteString(" NULLS FIRST")
			wrote = true
		}
		c.last, c.hasNulls, c.words, c.complex = "", false, nil, false
		return wrote
	}
	pop := func() bool { w := end(); stack = stack[:len(stack)-1]; return w }
	top := func() *clause {
		if len(stack) > 0 && stack[len(stack)-1].depth == depth {
			return stack[len(stack)-1]
		}
		return nil
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := quotedEnd(q, i)
			b.WriteString(q[i:j])
			i = j
			continue
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := commentEnd(q, i)
			b.WriteString(q[i:j])
			i = j
			continue
		case isIdentStart(c):
			j := identEnd(q, i)
			word := q[i:j]
			up := strings.ToUpper(word)
			if t := top(); t != nil {
				switch up {
				case "LIMIT", "OFFSET", "FETCH", "UNION", "EXCEPT", "INTERSECT", "FOR", "WINDOW", "ROWS", "RANGE", "GROUPS":
					if pop() {
						b.WriteByte(' ')
					}
				case "NULLS":
					t.hasNulls = true
				case "ASC", "DESC", "FIRST", "LAST":
					t.last = up
				default:
					t.last = up
					t.words = append(t.words, strings.ToLower(word))
				}
			}
			if up == "BY" && prevUp == "ORDER" {
				stack = append(stack, &clause{depth: depth})
			}
			prevUp = up
			b.WriteString(word)
			i = j
			continue
		case c == '(':
			if t := top(); t != nil {
				t.complex = true
			}
			depth++
		case c == ')':
			if top() != nil {
				pop()
			}
			depth--
		case c == ',' || c == ';':
			if t := top(); t != nil {
				if c == ',' {
					end()
				} else {
					pop()
				}
			}
		case c == '.' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			if t := top(); t != nil {
				t.complex = true // a number, an operator, a cast
			}
		}
		b.WriteByte(c)
		i++
	}
	for len(stack) > 0 {
		pop()
	}
	return b.String()
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// The lexing the statement rewriters share. Each takes the index i of
// the token's first byte in q and returns the index just past it.

// quotedEnd is the end of the string literal or quoted identifier at i
// (a doubled quote escapes it; an unclosed one runs to the end of q).
func quotedEnd(q string, i int) int {
	c := q[i]
	j := i + 1
	for j < len(q) {
		if q[j] == c {
			if j+1 < len(q) && q[j+1] == c {
				j += 2
				continue
			}
			break
		}
		j++
	}
	return min(j+1, len(q))
}

// commentEnd is the end of the -- or /* */ comment at i (a line comment
// ends before its newline; an unclosed one runs to the end of q).
func commentEnd(q string, i int) int {
	if strings.HasPrefix(q[i:], "--") {
		if j := strings.IndexByte(q[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(q)
	}
	if j := strings.Index(q[i+2:], "*/"); j >= 0 {
		return i + 2 + j + 2
	}
	return len(q)
}

// identEnd is the end of the identifier or keyword at i.
func identEnd(q string, i int) int {
	j := i + 1
	for j < len(q) && (isIdentStart(q[j]) || q[j] >= '0' && q[j] <= '9' || q[j] == '$') {
		j++
	}
	return j
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
	st, err := c.c.PrepareContext(ctx, pgRebind(query))
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
	res, err := c.c.ExecContext(ctx, pgRebind(query), args)
	return res, badConn(err)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.c.QueryContext(ctx, pgRebind(query), args)
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

// pgNotNull holds, by table, every column of the PostgreSQL schema: true
// when it is NOT NULL (or primary key); openPostgres loads it once. Until then
// every ORDER BY term gets its NULLS placement.
var (
	pgNotNull     atomic.Pointer[map[string]map[string]bool]
	pgNotNullOnce sync.Once
)

// loadPGNotNull reads the NOT NULL columns of the database's tables once
// per process (every database at this linkrot's schema version has the
// same), and forgets the statements rewritten without them.
func loadPGNotNull(ctx context.Context, db *sql.DB) error {
	var err error
	pgNotNullOnce.Do(func() {
		var rows *sql.Rows
		rows, err = db.QueryContext(ctx, `SELECT table_name, column_name, is_nullable = 'NO'
			FROM information_schema.columns WHERE table_schema = current_schema()`)
		if err != nil {
			return
		}
		defer rows.Close()
		m := map[string]map[string]bool{}
		for rows.Next() {
			var table, col string
			var nn bool
			if err = rows.Scan(&table, &col, &nn); err != nil {
				return
			}
			if m[table] == nil {
				m[table] = map[string]bool{}
			}
			m[table][col] = nn
		}
		if err = rows.Err(); err != nil {
			return
		}
		pgNotNull.Store(&m)
		pgRewrites.Purge()
	})
	if err != nil {
		pgNotNullOnce = sync.Once{} // try again at the next open
	}
	return err
}

// pgAliases maps the names a query gives its tables (FROM t a, JOIN t AS
// a, or the table name itself) to the tables; a name given to two tables
// maps to "" (unknown).
func pgAliases(q string) map[string]string {
	var words []string // identifiers and punctuation, literals left out
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			i = quotedEnd(q, i)
			words = append(words, "'")
		case isIdentStart(c):
			j := identEnd(q, i)
			words = append(words, strings.ToLower(q[i:j]))
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			words = append(words, string(c))
			i++
		}
	}
	out := map[string]string{}
	set := func(name, table string) {
		if t, ok := out[name]; ok && t != table {
			table = ""
		}
		out[name] = table
	}
	keyword := map[string]bool{"where": true, "join": true, "left": true, "inner": true, "cross": true, "on": true,
		"using": true, "order": true, "group": true, "limit": true, "natural": true, "full": true, "right": true,
		"window": true, "union": true, "except": true, "intersect": true, "having": true, "offset": true, "for": true}
	for i := 0; i+1 < len(words); i++ {
		if words[i] != "from" && words[i] != "join" {
			continue
		}
		for j := i + 1; j < len(words); { // table [AS] alias [, table [AS] alias ...]
			table := words[j]
			if !isIdentStart(table[0]) || keyword[table] {
				break
			}
			set(table, table)
			j++
			if j < len(words) && words[j] == "as" {
				j++
			}
			if j < len(words) && isIdentStart(words[j][0]) && !keyword[words[j]] {
				set(words[j], table)
				j++
			}
			if j >= len(words) || words[j] != "," {
				break
			}
			j++
		}
	}
	return out
}

// notNullTerm reports whether an ORDER BY term of names words (col, or
// alias and col) is a column NOT NULL in its table: for an unqualified
// column, in every table of the query that has it.
func notNullTerm(notNull map[string]map[string]bool, aliases map[string]string, words []string) bool {
	switch len(words) {
	case 2:
		table := aliases[words[0]]
		return table != "" && notNull[table][words[1]]
	case 1:
		found := false
		for _, table := range aliases {
			if table == "" {
				return false
			}
			cols, known := notNull[table]
			if !known {
				return false // a CTE or a view: unknown columns
			}
			nn, has := cols[words[0]]
			if has && !nn {
				return false
			}
			found = found || has
		}
		return found
	}
	return false
}
