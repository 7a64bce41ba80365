package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/linkrot/linkrot/audit"
)

// Positions of link occurrences and source files of local pages
// (migration 0009). They are written by SavePages beside the rows they
// belong to and read by the CI outputs and the baseline rule.

// position records where link linkID is in its page's source; nothing is
// written for a link without a position.
func (s *saver) position(ctx context.Context, linkID int64, l *audit.Link) error {
	if l.Line <= 0 || s.pg != nil { // PostgreSQL: in the link's COPY row
		return nil
	}
	if s.updPosition == nil {
		st, err := s.tx.PrepareContext(ctx, `UPDATE links SET line = $1, col = $2, line_hash = $3 WHERE id = $4`)
		if err != nil {
			return err
		}
		s.updPosition = st
	}
	_, err := s.updPosition.ExecContext(ctx, l.Line, max(l.Column, 0), l.LineHash, linkID)
	return err
}

// pageFile records the source file of a local page.
func (s *saver) pageFile(ctx context.Context, pageID int64, file string) error {
	if file == "" {
		return nil
	}
	_, err := s.tx.ExecContext(ctx, `UPDATE pages SET file = $1 WHERE id = $2`, file, pageID)
	return err
}

// PageFiles returns the source file of each local page of a run, by page
// URL (EachLink gives each link's position). An unknown run yields an
// error wrapping audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) PageFiles(ctx context.Context, runID int64) (map[string]string, error) {
	files := map[string]string{}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT url, file FROM pages WHERE run_id = $1 AND file != ''`, runID,
			func(rows *sql.Rows) error {
				var u, f string
				if err := rows.Scan(&u, &f); err != nil {
					return err
				}
				files[u] = f
				return nil
			})
	})
	if err != nil {
		return nil, fmt.Errorf("page files of run %d: %w", runID, err)
	}
	return files, nil
}

// Occurrences returns the distinct occurrences of the links of the
// latest complete (else latest) run in the database (those without a
// target as audit.InvalidURLOccurrence), of the runs before
// run before when it is not 0: the baseline of --baseline-db. It returns
// the run it read. A database without such a run yields an error wrapping
// audit.ErrNotFound.
func (db *DB) Occurrences(ctx context.Context, before int64) (map[audit.Occurrence]bool, int64, error) {
	var runID int64
	if before <= 0 {
		before = math.MaxInt64
	}
	err := db.read.QueryRowContext(ctx, `SELECT id FROM runs WHERE id < $1 ORDER BY status = 'complete' DESC NULLS LAST, id DESC LIMIT 1`, before).Scan(&runID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("baseline database: no runs: %w", audit.ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("baseline database: %w", err)
	}
	out := map[audit.Occurrence]bool{}
	err = db.readTx(ctx, runID, func(tx *sql.Tx) error {
		// A link without a target (its URL does not parse) occurs as
		// audit.InvalidURLOccurrence of its href, stored as written.
		return each(ctx, tx, `
			SELECT DISTINCT t.url, l.line_hash
			FROM links l JOIN targets t ON t.id = l.target_id
			WHERE l.run_id = $1 AND l.line_hash != ''
			UNION
			SELECT DISTINCT '`+audit.InvalidURLOccurrencePrefix+`' || l.href, l.line_hash
			FROM links l
			WHERE l.run_id = $1 AND l.target_id IS NULL AND l.line_hash != ''`, runID, func(rows *sql.Rows) error {
			var o audit.Occurrence
			if err := rows.Scan(&o.Target, &o.LineHash); err != nil {
				return err
			}
			out[o] = true
			return nil
		})
	})
	if err != nil {
		return nil, 0, fmt.Errorf("baseline occurrences of run %d: %w", runID, err)
	}
	return out, runID, nil
}
