package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

// selectRunSQL checks that a run exists.
const selectRunSQL = `SELECT 1 FROM runs WHERE id = $1`

// writerSQL returns the statements the writer runs in every batch of
// pages and checks (SQLite, latest schema), which Open prepares once on
// the write pool's connection (DB.stmts).
func writerSQL() []string {
	q := []string{selectRunSQL, insEvidenceSQL, upsertFullCheckSQL, insertFindingSQL(true), frontierSQL.in(anonymous, frontierChunk)}
	for i := range saverRows {
		q = append(q, rowInsertSQL(i))
	}
	s := saverSQL(true, false)
	q = append(q, s[:]...)
	for _, n := range linkChunks {
		q = append(q, insertLinksSQL(n), insertPlainLinksSQL(n))
	}
	for _, n := range checkChunks {
		q = append(q, insertChecksSQL(n))
	}
	for _, n := range targetChunks {
		q = append(q, insertTargetsSQL(n))
	}
	for _, n := range fragmentChunks {
		q = append(q, fragmentsSQL.in(anonymous, n))
	}
	for _, n := range runTargetChunks {
		q = append(q, runTargetsSQL.in(anonymous, n))
	}
	return q
}

// prepareWriter prepares writerSQL on the write pool (DB.stmts). SQLite
// only: the pool's one connection then keeps them for every transaction.
func (db *DB) prepareWriter(ctx context.Context) error {
	db.stmts = make(map[string]*sql.Stmt)
	for _, q := range writerSQL() {
		st, err := db.write.PrepareContext(ctx, q)
		if err != nil {
			db.closeStmts()
			return fmt.Errorf("prepare writer statements: %w", err)
		}
		db.stmts[q] = st
	}
	return nil
}

// closeStmts closes the statements of prepareWriter.
func (db *DB) closeStmts() {
	for _, st := range db.stmts {
		st.Close()
	}
	db.stmts = nil
}

// txStmt returns query as a statement of tx: the one prepareWriter
// prepared, when it did (a statement of the connection tx holds, which
// closing the returned one leaves prepared), otherwise prepared anew.
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st := db.stmts[query]; st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}
