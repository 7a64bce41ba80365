package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// On PostgreSQL, a batch of pages writes its links and the rows that hang
// off pages and links (redirects, snapshots, mset datetimes, identifiers,
// pwids, diagnostics) with COPY at the end of the batch instead of one
// INSERT, one round trip, each: the saver buffers them in a pgBatch. Link
// IDs, which the rows after a link need at once, are taken from the
// links' identity sequence a block at a time. Pages and targets are still
// inserted one by one (ON CONFLICT decides whether they are new). On
// SQLite every row is an INSERT, as before: in-process statements cost no
// round trip.

// copyRows are the rows of one table for COPY.
type copyRows struct {
	table string
	cols  []string
	rows  [][]any
}

// linkIDBlock is how many link IDs a batch takes from the sequence at a
// time.
const linkIDBlock = 1024

// pgBatch buffers the rows of a batch for COPY.
type pgBatch struct {
	eng    PostgresEngine
	tables map[string]*copyRows
	ids    []int64 // link IDs taken from the sequence, not used yet
}

func newPGBatch(eng PostgresEngine) *pgBatch {
	return &pgBatch{eng: eng, tables: map[string]*copyRows{}}
}

// add buffers one row; the engine binds its values as it binds
// statement arguments when it copies them.
func (b *pgBatch) add(table string, cols []string, args []any) error {
	if len(args) != len(cols) {
		return fmt.Errorf("copy %s: %d values for %d columns", table, len(args), len(cols))
	}
	row := slices.Clone(args)
	t := b.tables[table]
	if t == nil {
		t = &copyRows{table: table, cols: cols}
		b.tables[table] = t
	}
	t.rows = append(t.rows, row)
	return nil
}

// linkID returns a new link ID from the links' identity sequence.
func (b *pgBatch) linkID(ctx context.Context, tx *sql.Tx) (int64, error) {
	if len(b.ids) == 0 {
		rows, err := tx.QueryContext(ctx, `SELECT nextval(pg_get_serial_sequence('links', 'id')) FROM generate_series(1, $1)`, linkIDBlock)
		if err != nil {
			return 0, fmt.Errorf("link IDs: %w", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return 0, fmt.Errorf("link IDs: %w", err)
			}
			b.ids = append(b.ids, id)
		}
		if err := rows.Close(); err != nil {
			return 0, fmt.Errorf("link IDs: %w", err)
		}
		slices.Sort(b.ids)
	}
	id := b.ids[0]
	b.ids = b.ids[1:]
	return id, nil
}

// flush copies the buffered rows, links first (the other rows reference
// them).
func (b *pgBatch) flush(ctx context.Context, tx *sql.Tx) error {
	names := make([]string, 0, len(b.tables))
	for name := range b.tables {
		names = append(names, name)
	}
	slices.SortFunc(names, func(x, y string) int {
		switch {
		case x == y:
			return 0
		case x == "links":
			return -1
		case y == "links":
			return 1
		}
		if x < y {
			return -1
		}
		return 1
	})
	for _, name := range names {
		t := b.tables[name]
		if len(t.rows) == 0 {
			continue
		}
		if _, err := b.eng.Copy(ctx, tx, t.table, t.cols, t.rows); err != nil {
			return fmt.Errorf("copy %d rows into %s: %w", len(t.rows), name, err)
		}
		t.rows = t.rows[:0]
	}
	return nil
}

// rowStmt inserts rows of one table: through a prepared INSERT on SQLite,
// into the batch's COPY buffer on PostgreSQL.
type rowStmt struct {
	stmt  *sql.Stmt
	batch *pgBatch
	table string
	cols  []string
}

// ExecContext inserts (or buffers) one row; the result is nil when the
// row is buffered.
func (r *rowStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	if r.batch != nil {
		return nil, r.batch.add(r.table, r.cols, args)
	}
	return r.stmt.ExecContext(ctx, args...)
}

func (r *rowStmt) close() {
	if r != nil && r.stmt != nil {
		r.stmt.Close()
	}
}
