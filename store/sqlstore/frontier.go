package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// SaveCrawl stores a batch of a crawl in one write transaction: the pages
// (exactly as SavePages) and the URLs the crawl queued (the frontier,
// see Frontier). Either all of it lands or nothing does. Queuing a URL the
// run's frontier already holds is a no-op (the first depth wins). Wrapped
// in a closure it is the save function of the crawl's single writer. An
// unknown run yields an error wrapping audit.ErrNotFound.
func (db *DB) SaveCrawl(ctx context.Context, runID int64, pages []*audit.Page, queued []audit.FrontierEntry) error {
	if len(pages) == 0 && len(queued) == 0 {
		return nil
	}
	return db.retryTx(ctx, func() error { return db.saveCrawl(ctx, runID, pages, queued) })
}

func (db *DB) saveCrawl(ctx context.Context, runID int64, pages []*audit.Page, queued []audit.FrontierEntry) error {
	tx, end, err := db.beginPagesBatch(ctx)
	if err != nil {
		return fmt.Errorf("save crawl: %w", err)
	}
	defer end()
	// writePages checks that the run exists (also for an empty batch).
	saved, err := db.writePages(ctx, tx, runID, pages)
	if err != nil {
		return fmt.Errorf("save crawl: %w", err)
	}
	if err := db.queue(ctx, tx, runID, queued); err != nil {
		return fmt.Errorf("save crawl: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save crawl: commit: %w", err)
	}
	saved.publish()
	return nil
}

// frontierChunk is how many frontier rows one INSERT writes (3 parameters
// each).
const frontierChunk = 64

// frontierSQL is insertFrontierSQL by row count.
var frontierSQL = multiRowSQL{build: insertFrontierSQL}

// insertFrontierSQL inserts n frontier rows; a URL the run has queued
// already, or that an earlier row of the statement queues, is skipped (the
// first depth wins, as with one statement per row).
func insertFrontierSQL(n int, p *paramList) string {
	return `INSERT INTO crawl_frontier (run_id, url, depth) VALUES ` +
		p.rows(3, n) + ` ON CONFLICT (run_id, url) DO NOTHING`
}

// queue adds the URLs the crawl queued to the run's frontier inside tx,
// frontierChunk rows per statement.
func (db *DB) queue(ctx context.Context, tx *sql.Tx, runID int64, queued []audit.FrontierEntry) error {
	args := make([]any, 0, 3*min(len(queued), frontierChunk))
	for len(queued) > 0 {
		n := min(len(queued), frontierChunk)
		args = args[:0]
		for _, q := range queued[:n] {
			// URL passwords never stored (a seed may hold one).
			args = append(args, runID, urls.RedactURLString(q.URL), q.Depth)
		}
		// The full chunk's statement is prepared at Open (writerSQL).
		stmt, err := db.txStmt(ctx, tx, frontierSQL.in(db.paramStyle(), n))
		if err == nil {
			_, err = stmt.ExecContext(ctx, args...)
			stmt.Close()
		}
		if err != nil {
			return fmt.Errorf("queue %d URLs from %s: %w", n, quote(queued[0].URL), err)
		}
		queued = queued[n:]
	}
	return nil
}

// Frontier returns what an interrupted crawl of a run needs to resume:
// the URLs it queued (in the order they were stored, with their depth) and
// the URLs it visited: the request and final URLs of its pages and the
// URLs their redirect chains went through (each hop's from URL: a hop's
// to URL was fetched only if the next hop, or the final URL, says so), as
// stored (callers normalize). Both come
// from one read transaction. An unknown run yields an error wrapping
// audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) Frontier(ctx context.Context, runID int64) (queued []audit.FrontierEntry, visited []string, err error) {
	err = db.readTx(ctx, runID, func(tx *sql.Tx) error {
		// WITHOUT ROWID: the primary key order; the crawler dedupes by its
		// own key anyway.
		if err := each(ctx, tx, `SELECT url, depth FROM crawl_frontier WHERE run_id = $1 ORDER BY depth, url`, runID,
			func(rows *sql.Rows) error {
				var q audit.FrontierEntry
				if err := rows.Scan(&q.URL, &q.Depth); err != nil {
					return err
				}
				queued = append(queued, q)
				return nil
			}); err != nil {
			return err
		}
		return each(ctx, tx, `
			SELECT request_url FROM pages WHERE run_id = $1
			UNION SELECT url FROM pages WHERE run_id = $1
			UNION SELECT d.from_url FROM redirects d JOIN pages p ON p.id = d.page_id WHERE p.run_id = $1`, runID,
			func(rows *sql.Rows) error {
				var u string
				if err := rows.Scan(&u); err != nil {
					return err
				}
				visited = append(visited, u)
				return nil
			})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("frontier of run %d: %w", runID, err)
	}
	return queued, visited, nil
}
