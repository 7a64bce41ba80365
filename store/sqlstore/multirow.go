package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
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
func linkRowsNext(n int) int { return rowsNext(linkChunks, n) }

// multiRowSQL caches the text of the multi-row INSERTs by row count and
// parameter style, so that a batch does not build it again to find its
// prepared statement.
type multiRowSQL struct {
	once  sync.Once
	texts [2][]string // by paramStyle, then row count
	build func(n int, p *paramList) string
}

// in returns the statement of n rows (at most 64) in style.
func (m *multiRowSQL) in(style paramStyle, n int) string {
	m.once.Do(func() {
		for st := range m.texts {
			m.texts[st] = make([]string, 65)
			for i := 1; i <= 64; i++ {
				m.texts[st][i] = m.build(i, &paramList{style: paramStyle(st)})
			}
		}
	})
	return m.texts[style][n]
}

var (
	linksSQL      = multiRowSQL{build: buildInsertLinksSQL}
	plainLinksSQL = multiRowSQL{build: buildInsertPlainLinksSQL}
	checksSQL     = multiRowSQL{build: buildInsertChecksSQL}
	targetsSQL    = multiRowSQL{build: buildInsertTargetsSQL}
)

// insertLinksSQL inserts n links (SQLite only, latest schema), with the
// parameters of insertLinkSQL(true) for each row, anonymous.
func insertLinksSQL(n int) string { return linksSQL.in(anonymous, n) }

func buildInsertLinksSQL(n int, p *paramList) string {
	return `INSERT INTO links (` + linkColumns + `, url_form, line, col, line_hash) VALUES ` + p.rows(linkArity, n)
}

// linkArity is the number of parameters of insertLinkSQL(true).
const linkArity = 26

// insertPlainLinksSQL inserts n plain links (SQLite only, latest schema):
// links without Robust Links or mset data, the usual ones. The columns
// those would fill are constants of the statement (has_robust and
// has_mset 0, the rest NULL, as linkArgs binds them for such a link): 16
// values per link instead of 26. (The driver copies every value it binds,
// and the columns of a link row are most of what a crawl binds.)
// Parameters, for each row: page_id, run_id, then those of linkArgs
// without page_id, run_id and the Robust Links and mset columns.
func insertPlainLinksSQL(n int) string { return plainLinksSQL.in(anonymous, n) }

func buildInsertPlainLinksSQL(n int, p *paramList) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + p.list(12) + ", 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, " + p.list(4) + ")")
	}
	return `INSERT INTO links (` + linkColumns + `, url_form, line, col, line_hash) VALUES ` + b.String()
}

// plainLink reports whether l is a plain link (insertPlainLinksSQL).
func plainLink(l *audit.Link) bool { return l.Robust == nil && l.Mset == nil }

// multiLinks reports whether the saver writes links by links (SQLite on
// the latest schema) rather than one by one (link).
func (s *saver) multiLinks() bool { return s.pg == nil && s.compact && !s.db.rowByRow }

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
		plain := true
		for i := lo; i < lo+n && plain; i++ {
			plain = plainLink(&links[i])
		}
		args := s.linkArgsBuf[:0]
		for i := lo; i < lo+n; i++ {
			if plain {
				args = append(args, pageID, s.runID)
			}
			var err error
			if args, err = s.linkArgs(ctx, args, pageID, i, &links[i], plain); err == nil {
				err = s.snapshotTargets(ctx, &links[i])
			}
			if err != nil {
				return fmt.Errorf("link %d: %w", i, err)
			}
		}
		s.linkArgsBuf = args
		last, err := s.insertLinks(ctx, n, plain, args)
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

// insertLinks runs the INSERT of n links (with plain, of n plain links)
// with args and returns the ID of the last.
func (s *saver) insertLinks(ctx context.Context, n int, plain bool, args []any) (int64, error) {
	key, query := n, insertLinksSQL
	if plain {
		key, query = -n, insertPlainLinksSQL
	}
	stmt := s.insLinks[key]
	if stmt == nil {
		var err error
		if stmt, err = s.db.txStmt(ctx, s.tx, query(n)); err != nil {
			return 0, err
		}
		if s.insLinks == nil {
			s.insLinks = make(map[int]*sql.Stmt)
		}
		s.insLinks[key] = stmt
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

// checkChunks are the row counts of the multi-row check INSERTs that
// Open prepares (32 columns each), largest first.
var checkChunks = []int{32, 16, 8, 4, 2, 1}

// insertChecksSQL inserts n new checks (SQLite, latest schema): every
// column of upsertFullCheckSQL, with the target ID bound rather than
// looked up (newChecks checks the targets), and no ON CONFLICT: the
// checks are new, and a conflict is a bug to report.
func insertChecksSQL(n int) string { return checksSQL.in(anonymous, n) }

func buildInsertChecksSQL(n int, p *paramList) string {
	cols := len(checkColumns) + 4 // run_id, target_id, ..., from_crawl, soft404_signals
	return `INSERT INTO checks (run_id, target_id, ` + strings.Join(checkColumns, ", ") +
		`, from_crawl, soft404_signals) VALUES ` + p.rows(cols, n)
}

// rowsNext returns the number of rows of the next statement when n are
// left (n > 0), given the prepared row counts, largest first.
func rowsNext(chunks []int, n int) int {
	for _, c := range chunks {
		if c <= n {
			return c
		}
	}
	return 1
}

// newChecks writes the checks of a batch (SaveChecks) that their run
// does not have yet, many rows per INSERT, on SQLite. Checks wait in it
// until a chunk is full or flush is called, which SaveChecks does before
// a check it writes on its own (one that replaces a check) and at the
// end, so that the rows land in batch order.
type newChecks struct {
	db *DB
	tx *sql.Tx
	// targets holds the URLs of the batch's targets by ID: what the
	// upsert's SELECT from targets checked, asked once for the batch.
	targets map[int64]string
	pending []*audit.Check
	args    []any
}

// newChecks returns a newChecks for checks in tx, with the targets of
// those whose run and target are not in saved (the checks stored before:
// they go through saveCheck, whose upsert checks its target).
func (db *DB) newChecks(ctx context.Context, tx *sql.Tx, checks []audit.Check, saved map[checkKey]bool) (*newChecks, error) {
	ids := make([]int64, 0, len(checks))
	for i := range checks {
		if !saved[checkKey{checks[i].RunID, checks[i].TargetID}] { // those go through saveCheck
			ids = append(ids, checks[i].TargetID)
		}
	}
	n := &newChecks{db: db, tx: tx, targets: make(map[int64]string, len(checks))}
	err := eachRow(ctx, tx, `SELECT id, url FROM targets WHERE id IN (SELECT value FROM json_each($1))`,
		[]any{idList(ids)}, func(rows *sql.Rows) error {
			var (
				id int64
				u  string
			)
			if err := rows.Scan(&id, &u); err != nil {
				return err
			}
			n.targets[id] = u
			return nil
		})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// add queues c, a check its run does not have yet, after checking its
// target as upsertFullCheckSQL does, and writes the queue once it fills
// the largest chunk.
func (n *newChecks) add(ctx context.Context, c *audit.Check) error {
	urls.RedactStrings(c) // URL passwords never stored
	u, ok := n.targets[c.TargetID]
	switch {
	case !ok:
		return fmt.Errorf("target %d: %w", c.TargetID, audit.ErrNotFound)
	case c.URL != "" && c.URL != u:
		return fmt.Errorf("URL is not the target's URL %s", quote(u))
	}
	n.pending = append(n.pending, c)
	if len(n.pending) == checkChunks[0] {
		return n.flush(ctx)
	}
	return nil
}

// flush writes the queued checks (nothing for a nil newChecks).
func (n *newChecks) flush(ctx context.Context) error {
	if n == nil {
		return nil
	}
	// A local view, so that n.pending keeps its array for the next checks.
	p := n.pending
	for len(p) > 0 {
		k := rowsNext(checkChunks, len(p))
		args := n.args[:0]
		for _, c := range p[:k] {
			var err error
			args = append(args, c.RunID, c.TargetID)
			if args, err = checkValues(args, c); err != nil {
				return fmt.Errorf("check of target %d: %w", c.TargetID, err)
			}
			signals, err := soft404SignalsJSON(c)
			if err != nil {
				return fmt.Errorf("check of target %d: %w", c.TargetID, err)
			}
			args = append(args, boolInt(c.FromCrawl), signals)
		}
		n.args = args
		stmt, err := n.db.txStmt(ctx, n.tx, insertChecksSQL(k))
		if err == nil {
			_, err = stmt.ExecContext(ctx, args...)
			stmt.Close()
		}
		clear(args)
		if err != nil {
			return fmt.Errorf("%d checks from target %d: %w", k, p[0].TargetID, err)
		}
		p = p[k:]
	}
	clear(n.pending)
	n.pending = n.pending[:0]
	return nil
}

// beginBatch begins a write transaction (BEGIN IMMEDIATE, see DB) for a
// batch that writes many rows per statement, and returns it with end,
// which the caller defers: end rolls the transaction back unless it has
// committed and gives the connection back.
//
// A statement that writes several rows keeps a statement journal, the
// pages it changes as they were, so that a failing row undoes the rows
// before it. SQLite keeps that journal in memory up to 64 KiB and then in
// a temporary file for the rest of the transaction, one write system call
// per page. On SQLite the batch runs with temp_store=MEMORY, which keeps
// it in memory (it is emptied after each statement), and the setting is
// restored after it: VACUUM and large sorts on the write connection keep
// their temporary files.
func (db *DB) beginBatch(ctx context.Context) (*sql.Tx, func(), error) {
	return db.beginBatchWith(ctx, false)
}

// beginPagesBatch is beginBatch for a batch of pages (writePages), which
// on SQLite also runs without foreign-key enforcement (PRAGMA
// foreign_keys, restored after it like temp_store).
//
// Such a batch only inserts, and every row it inserts refers to rows it
// wrote itself or found in the same transaction: a page to its run
// (checked first, selectRunSQL), a link to its page (just inserted), its
// run and its target (inserted or looked up by URL in the transaction, or
// remembered from a committed one: targets are never deleted), a
// snapshot, pwid, identifier or diagnostic to its page or link, the
// crawl's frontier and the run-keyed tables to the run and a target of
// its links. SQLite would look every one of them up again, three B-tree
// searches a link, on the one writer the crawl waits for (measured in
// docs/performance.md). The batch deletes nothing, so no cascade is missed;
// every other transaction, and every delete, runs with enforcement on,
// and IntegrityCheck's foreign_key_check checks the whole file.
// PostgreSQL keeps its foreign keys (its writer is not the benchmark's
// critical path, and several workers may write one run).
func (db *DB) beginPagesBatch(ctx context.Context) (*sql.Tx, func(), error) {
	return db.beginBatchWith(ctx, true)
}

func (db *DB) beginBatchWith(ctx context.Context, noForeignKeys bool) (*sql.Tx, func(), error) {
	if db.dialect == dialectPostgres {
		tx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		return tx, func() { tx.Rollback() }, nil
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	set, reset := `PRAGMA temp_store = MEMORY`, `PRAGMA temp_store = DEFAULT`
	if noForeignKeys {
		set, reset = set+`; PRAGMA foreign_keys = OFF`, reset+`; PRAGMA foreign_keys = ON`
	}
	restore := func() {
		// Even when ctx is done; a connection left with temp_store=MEMORY
		// or without foreign keys is dropped from the pool.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), reset); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		restore()
		return nil, nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		restore()
		return nil, nil, err
	}
	return tx, func() {
		tx.Rollback() // ErrTxDone after a commit
		restore()
	}, nil
}
