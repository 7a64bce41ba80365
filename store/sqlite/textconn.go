package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/linkrot/linkrot/store"
	sqlitedriver "modernc.org/sqlite"
)

// OpenDB opens a pool on the SQLite database of the driver name dsn
// whose connections bind every string argument as store.ValidText: the
// store's text rule, the same on both engines. Statements pass unchanged.
func (Engine) OpenDB(dsn string) (*sql.DB, error) {
	c, err := sqlitedriver.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite connector: %w", err)
	}
	return sql.OpenDB(textConnector{c}), nil
}

// textConnector makes the connections of openSQLite.
type textConnector struct{ inner driver.Connector }

func (c textConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &textConn{conn}, nil
}

func (c textConnector) Driver() driver.Driver { return c.inner.Driver() }

// textConn is a connection that applies store.ValidText to the string
// arguments it binds (CheckNamedValue) and forwards everything else.
type textConn struct{ driver.Conn }

var (
	_ driver.ExecerContext      = (*textConn)(nil)
	_ driver.QueryerContext     = (*textConn)(nil)
	_ driver.ConnPrepareContext = (*textConn)(nil)
	_ driver.ConnBeginTx        = (*textConn)(nil)
	_ driver.NamedValueChecker  = (*textConn)(nil)
	_ driver.SessionResetter    = (*textConn)(nil)
	_ driver.Validator          = (*textConn)(nil)
	_ driver.Pinger             = (*textConn)(nil)
)

func (c *textConn) CheckNamedValue(nv *driver.NamedValue) error {
	// The writer binds hundreds of thousands of values a run: the usual
	// types are taken as they are, without the default converter's
	// reflection, and a valid string is not boxed again.
	switch v := nv.Value.(type) {
	case string:
		if !store.IsValidText(v) {
			nv.Value = store.ValidText(v)
		}
		return nil
	case int:
		nv.Value = int64(v)
		return nil
	case nil, int64, float64, bool, []byte, time.Time:
		return nil
	}
	v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
	if err != nil {
		return err
	}
	if s, ok := v.(string); ok {
		v = store.ValidText(s)
	}
	nv.Value = v
	return nil
}

func (c *textConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

func (c *textConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return nil, fmt.Errorf("sqlite: driver connection without BeginTx")
}

func (c *textConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := c.Conn.(driver.ExecerContext); ok {
		return e.ExecContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *textConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *textConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *textConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *textConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}
