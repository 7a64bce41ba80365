package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/linkrot/linkrot/audit"
)

// The links of a page are written to SQLite by multi-row INSERTs: one
// statement for several rows costs SQLite one statement's setup and end
// (the VDBE program's start, the statement journal, VdbeHalt) and
// database/sql one round of locking and result handling, instead of one
// per row. A page of 5 links takes one statement, not 5.

// linkChunks are the row counts of the multi-row link INSERTs that Open
// prepares, largest first: a page's links go in chunks of the largest
// that fits what is left, so that a page of up to 8 links takes one
// statement and one of 1,000 takes 17. 64 rows bind 64×26 parameters, far
// below SQLite's limit (32,766).
var linkChunks = []int{64, 32, 16, 8, 7, 6, 5, 4, 3, 2, 1}

// linkRowsNext returns the number of links of the next statement when n
// are left (n > 0).
func linkRowsNext(n int) int {
	for _, c := range linkChunks {
		if c <= n {
			return c
		}
	}
	return 1
}

// insertLinksSQL inserts n links (SQLite, latest schema): for n = 1 the
// statement of saver.insLink, otherwise the same with n rows of values.
func insertLinksSQL(n int) string {
	one := saverSQL(true, false)[3]
	if n <= 1 {
		return one
	}
	_, row, ok := strings.Cut(one, " VALUES ")
	if !ok {
		panic("sqlite: link INSERT without VALUES")
	}
	return one + strings.Repeat(", "+row, n-1)
}

// multiLinks reports whether the saver writes links by links (SQLite on
// the latest schema) rather than one by one (link).
func (s *saver) multiLinks() bool { return s.pg == nil && s.compact && !s.db.linksByRow }

// links writes the links of the page pageID, and what hangs off each, in
// chunks of linkChunks rows, and sets ids[i] to the ID of links[i].
//
// The rows of one INSERT get consecutive IDs: links.id is the rowid
// (INTEGER PRIMARY KEY, no AUTOINCREMENT), which SQLite assigns as the
// largest one plus one to each row in turn, and this transaction holds
// the write lock. The statement's last insert rowid is its last row's.
// (Only a table whose largest rowid is 2^63-1 gets random ones.)
//
// Targets are created in the order link would create them (a link's
// target, then its snapshots' targets, then the next link's), and every
// table's rows are written in the same order, so the rows and IDs are
// those one statement per link would give.
func (s *saver) links(ctx context.Context, pageID int64, links []audit.Link, ids []int64) error {
	for lo := 0; lo < len(links); {
		n := linkRowsNext(len(links) - lo)
		args := s.linkArgsBuf[:0]
		for i := lo; i < lo+n; i++ {
			var err error
			if args, err = s.linkArgs(ctx, args, pageID, i, &links[i]); err == nil {
				err = s.snapshotTargets(ctx, &links[i])
			}
			if err != nil {
				return fmt.Errorf("link %d: %w", i, err)
			}
		}
		s.linkArgsBuf = args
		last, err := s.insertLinks(ctx, n, args)
		clear(args) // keep no strings of the page beyond it
		if err != nil {
			return fmt.Errorf("links %d to %d: %w", lo, lo+n-1, err)
		}
		for i := range n {
			ids[lo+i] = last - int64(n-1-i)
		}
		for i := lo; i < lo+n; i++ {
			if err := s.linkChildren(ctx, pageID, ids[i], &links[i]); err != nil {
				return fmt.Errorf("link %d: %w", i, err)
			}
		}
		lo += n
	}
	return nil
}

// insertLinks runs the INSERT of n links with args and returns the ID of
// the last.
func (s *saver) insertLinks(ctx context.Context, n int, args []any) (int64, error) {
	stmt := s.insLinks[n]
	if stmt == nil {
		var err error
		if stmt, err = s.db.txStmt(ctx, s.tx, insertLinksSQL(n)); err != nil {
			return 0, err
		}
		if s.insLinks == nil {
			s.insLinks = make(map[int]*sql.Stmt)
		}
		s.insLinks[n] = stmt
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	k, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if k != int64(n) {
		return 0, fmt.Errorf("%d links inserted, want %d", k, n)
	}
	return res.LastInsertId()
}
