package sqlstore

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	kflate "github.com/klauspost/compress/flate"

	"github.com/linkrot/linkrot/audit"
)

// A page's evidence (audit.PageEvidence) is stored in page_evidence, one
// row per page that has one, written with the page by SavePages and read
// back by Pages, and for the checking stage by PageResponses (without the
// bulky parts) and PageContent (those, one page at a time).

const insEvidenceSQL = `INSERT INTO page_evidence (page_id, headers, etag, last_modified,
	challenge, html, body_cap, body_bytes, body_truncated, sha256, simhash, words,
	anchors, text, text_capped, signals)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`

// saveFromCrawl marks a check just saved as judged from the crawl
// (checks.from_crawl, see 0007). A check that is not leaves the column
// alone: it is 0 for a new row, and reset by a trigger when a row is
// replaced, so that writing a check needs the column only when it is set.
func saveFromCrawl(ctx context.Context, tx execer, c *audit.Check) error {
	if !c.FromCrawl {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE checks SET from_crawl = 1 WHERE run_id = $1 AND target_id = $2`, c.RunID, c.TargetID)
	return err
}

// maxStoredText bounds the main text a stored row may inflate to: a page's
// text is at most 64 KiB (check.KnownTextMax); anything longer is not
// what linkrot wrote.
const maxStoredText = 1 << 20

// evidence stores the evidence of the page p, stored as pageID (nothing
// when it has none).
// Its statement is prepared on first use, so that pages without evidence
// can still be written to a database of an earlier schema (the fixtures).
func (s *saver) evidence(ctx context.Context, pageID int64, p *audit.Page) error {
	e := p.Evidence
	if e == nil {
		return nil
	}
	if s.insEvidence == nil {
		stmt, err := s.db.txStmt(ctx, s.tx, insEvidenceSQL)
		if err != nil {
			return err
		}
		s.insEvidence = stmt
	}
	headersJSON, err := headersJSON(e.Headers)
	if err != nil {
		return fmt.Errorf("headers: %w", err)
	}
	anchorsJSON, err := stringsJSON(e.Anchors)
	if err != nil {
		return fmt.Errorf("anchors: %w", err)
	}
	text, err := packedText(p)
	if err != nil {
		return fmt.Errorf("text: %w", err)
	}
	var signals any
	if e.Signals != nil {
		if signals, err = marshalJSON(e.Signals); err != nil {
			return fmt.Errorf("signals: %w", err)
		}
	}
	_, err = s.insEvidence.ExecContext(ctx, pageID, headersJSON, e.ETag, e.LastModified,
		e.Challenge, boolInt(e.HTML), e.BodyCap, e.BodyBytes, boolInt(e.BodyTruncated), e.SHA256,
		int64(e.SimHash), // the bit pattern; the driver refuses uint64 >= 1<<63
		e.Words, anchorsJSON, text, boolInt(e.TextCapped), signals)
	return err
}

// deflaters are reused compressors: a flate.Writer holds about a megabyte
// of state, too much to allocate for every page.
//
// They are klauspost/compress's: the same raw DEFLATE (RFC 1951) that
// compress/flate reads back (inflateText), written about 1.7 times as
// fast at the fastest level and a little smaller, by a library kept for
// exactly this (it is in the module graph already, through NATS); the
// writer is the run's one serial goroutine, so its time is the crawl's.
var deflaters = sync.Pool{New: func() any {
	w, err := kflate.NewWriter(io.Discard, kflate.BestSpeed)
	if err != nil {
		panic(err) // only for an invalid level
	}
	return w
}}

// deflateText compresses a page's main text (raw DEFLATE, fastest level:
// words compress about threefold, and the crawl's writer must keep up).
func deflateText(text string) ([]byte, error) {
	if text == "" {
		return []byte{}, nil
	}
	var b bytes.Buffer
	w := deflaters.Get().(*kflate.Writer)
	defer deflaters.Put(w)
	w.Reset(&b)
	if _, err := io.WriteString(w, text); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// inflateText is the inverse of deflateText.
func inflateText(blob []byte) (string, error) {
	if len(blob) == 0 {
		return "", nil
	}
	r := flate.NewReader(bytes.NewReader(blob))
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxStoredText+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxStoredText {
		return "", fmt.Errorf("text inflates past %d bytes", maxStoredText)
	}
	return string(b), nil
}

// scanEvidence reads the columns of evidenceColumns; with content false,
// anchors and text are not in the row.
func scanEvidence(scan func(...any) error, content bool, extra ...any) (*audit.PageEvidence, error) {
	var (
		e               audit.PageEvidence
		headers         string
		simhash         int64
		anchors         string
		text            []byte
		truncated, html bool
		signals         sql.NullString
	)
	dest := append(extra, &headers, &e.ETag, &e.LastModified, &e.Challenge, &html, &e.BodyCap,
		&e.BodyBytes, &truncated, &e.SHA256, &simhash, &e.Words, &e.TextCapped, &signals)
	if content {
		dest = append(dest, &anchors, &text)
	}
	if err := scan(dest...); err != nil {
		return nil, err
	}
	e.HTML, e.BodyTruncated, e.SimHash = html, truncated, uint64(simhash)
	if err := json.Unmarshal([]byte(headers), &e.Headers); err != nil {
		return nil, fmt.Errorf("headers: %w", err)
	}
	if len(e.Headers) == 0 {
		e.Headers = nil
	}
	if signals.Valid {
		e.Signals = &audit.PageSignals{}
		if err := json.Unmarshal([]byte(signals.String), e.Signals); err != nil {
			return nil, fmt.Errorf("signals: %w", err)
		}
	}
	if content {
		if err := json.Unmarshal([]byte(anchors), &e.Anchors); err != nil {
			return nil, fmt.Errorf("anchors: %w", err)
		}
		if len(e.Anchors) == 0 {
			e.Anchors = nil
		}
		var err error
		if e.Text, err = inflateText(text); err != nil {
			return nil, fmt.Errorf("text: %w", err)
		}
	}
	return &e, nil
}

// evidenceColumns are the columns scanEvidence reads, anchors and text last.
const evidenceColumns = `e.headers, e.etag, e.last_modified, e.challenge, e.html, e.body_cap,
	e.body_bytes, e.body_truncated, e.sha256, e.simhash, e.words, e.text_capped, e.signals`

// readEvidence sets the Evidence of the pages of a run (for readPages).
func readEvidence(ctx context.Context, tx *sql.Tx, runID int64, page func(int64) (*audit.Page, error)) error {
	return each(ctx, tx, `
		SELECT e.page_id, `+evidenceColumns+`, e.anchors, e.text
		FROM page_evidence e JOIN pages p ON p.id = e.page_id
		WHERE p.run_id = $1 ORDER BY e.page_id`, runID, func(rows *sql.Rows) error {
		var pageID int64
		e, err := scanEvidence(rows.Scan, true, &pageID)
		if err != nil {
			return fmt.Errorf("evidence of page %d: %w", pageID, err)
		}
		p, err := page(pageID)
		if err != nil {
			return err
		}
		p.Evidence = e
		return nil
	})
}

// PageResponses returns what the checking stage needs of the pages of a
// run, in the order they were saved: each page's request and final URL,
// status, content type, truncation, fetch error, fetch time and duration,
// redirects and Evidence, but not its links, and Evidence without its
// Anchors and Text (PageContent reads them for one page). An unknown run
// yields an error wrapping audit.ErrNotFound.
func (db *DB) PageResponses(ctx context.Context, runID int64) ([]*audit.Page, error) {
	var pages []*audit.Page
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		byID := map[int64]*audit.Page{}
		err := each(ctx, tx, `
			SELECT id, url, request_url, depth, status, content_type, size, truncated,
				fetch_error, fetched_at, duration_ms
			FROM pages WHERE run_id = $1 ORDER BY id`, runID, func(rows *sql.Rows) error {
			var (
				id         int64
				p          audit.Page
				fetchedAt  sql.NullString
				durationMS int64
			)
			if err := rows.Scan(&id, &p.URL, &p.RequestURL, &p.Depth, &p.Status, &p.ContentType,
				&p.Size, &p.Truncated, &p.FetchError, &fetchedAt, &durationMS); err != nil {
				return err
			}
			var err error
			if p.FetchedAt, err = parseInstant(fetchedAt); err != nil {
				return fmt.Errorf("page %d: fetched_at: %w", id, err)
			}
			p.Duration = time.Duration(durationMS) * time.Millisecond
			byID[id] = &p
			pages = append(pages, &p)
			return nil
		})
		if err != nil {
			return err
		}
		err = each(ctx, tx, `
			SELECT d.page_id, d.from_url, d.to_url, d.status
			FROM redirects d JOIN pages p ON p.id = d.page_id
			WHERE p.run_id = $1 ORDER BY d.page_id, d.hop`, runID, func(rows *sql.Rows) error {
			var (
				pageID int64
				r      audit.Redirect
			)
			if err := rows.Scan(&pageID, &r.From, &r.To, &r.Status); err != nil {
				return err
			}
			if p := byID[pageID]; p != nil {
				p.Redirects = append(p.Redirects, r)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return each(ctx, tx, `
			SELECT e.page_id, `+evidenceColumns+`
			FROM page_evidence e JOIN pages p ON p.id = e.page_id
			WHERE p.run_id = $1 ORDER BY e.page_id`, runID, func(rows *sql.Rows) error {
			var pageID int64
			e, err := scanEvidence(rows.Scan, false, &pageID)
			if err != nil {
				return fmt.Errorf("evidence of page %d: %w", pageID, err)
			}
			if p := byID[pageID]; p != nil {
				p.Evidence = e
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("page responses of run %d: %w", runID, err)
	}
	return pages, nil
}

// PageContent returns the anchors and main text stored with the evidence
// of a run's page, found by its (final) URL. A page without evidence
// yields an error wrapping audit.ErrNotFound. It is safe for concurrent
// use.
func (db *DB) PageContent(ctx context.Context, runID int64, pageURL string) (anchors []string, text string, err error) {
	var e *audit.PageEvidence
	e, err = scanEvidence(db.read.QueryRowContext(ctx, `
		SELECT `+evidenceColumns+`, e.anchors, e.text
		FROM page_evidence e JOIN pages p ON p.id = e.page_id
		WHERE p.run_id = $1 AND p.url = $2`, runID, pageURL).Scan, true)
	if errors.Is(err, sql.ErrNoRows) {
		err = audit.ErrNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("page content of %s in run %d: %w", quote(pageURL), runID, err)
	}
	return e.Anchors, e.Text, nil
}
