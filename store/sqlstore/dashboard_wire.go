package sqlstore

// Reads of the link-maintenance tables (migration 0013) for the
// dashboard: the claims about a target, the backlinks of a page, and the
// counts of the overview's link-maintenance card. Everything here came
// from a notification sent over the internet; it is returned verbatim
// and escaped where it is shown.

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// TargetClaims returns the UNLINKR and LINKMOD claims about the target
// with URL targetURL (as stored, or normalized), newest first, at most
// limit (all when limit <= 0): UNLINKR claims recorded on maintenance
// records, UNLINKR notifications not (yet) recorded, and LINKMOD
// notifications with their drift check.
func (db *DB) TargetClaims(ctx context.Context, targetURL string, limit int) ([]store.WireClaim, error) {
	norm := normalizedOr(targetURL)
	var out []store.WireClaim
	err := func() error {
		tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		// Claims processed into maintenance records.
		err = eachRow(ctx, tx, `SELECT run_id, source, target, claimant, claimed_at, claimed_replacement,
				target_verdict, replacement_verdict, confirmed, claim_note
			FROM maintenance WHERE claimed_at IS NOT NULL AND target IN ($1, $2)`, []any{targetURL, norm}, func(rows *sql.Rows) error {
			var (
				c         = store.WireClaim{Method: audit.WireUNLINKR, State: store.ClaimChecked}
				at        sql.NullString
				tv, rv    string
				confirmed int
			)
			if err := rows.Scan(&c.RunID, &c.Source, &c.Target, &c.Claimant, &at, &c.Replacement, &tv, &rv, &confirmed, &c.Note); err != nil {
				return err
			}
			c.Verdict, c.ReplacementVerdict, c.Confirmed = audit.Verdict(tv), audit.Verdict(rv), confirmed == 1
			var err error
			c.ReceivedAt, err = parseInstant(at)
			out = append(out, c)
			return err
		})
		if err != nil {
			return err
		}
		// Notifications: UNLINKR not recorded (pending, rejected, failed)
		// and every LINKMOD, with its drift check.
		return eachRow(ctx, tx, `SELECT w.method, w.source, w.target, w.client, w.received_at, w.repl, w.state, w.result,
				coalesce(lc.verdict, ''), coalesce(lc.band, '')
			FROM wire_inbox w
			LEFT JOIN live_checks lc ON lc.id = (SELECT max(id) FROM live_checks WHERE inbox_id = w.id AND reason = 'linkmod')
			WHERE w.target IN ($1, $2) AND (w.method = 'LINKMOD' OR (w.method = 'UNLINKR' AND w.state <> 'done'))`,
			[]any{targetURL, norm}, func(rows *sql.Rows) error {
				var (
					c         store.WireClaim
					at        sql.NullString
					state, lv string
				)
				if err := rows.Scan(&c.Method, &c.Source, &c.Target, &c.Claimant, &at, &c.Replacement, &state, &c.Note, &lv, &c.Band); err != nil {
					return err
				}
				c.Verdict = audit.Verdict(lv)
				switch state {
				case "queued":
					c.State = store.ClaimPending
				case "done":
					c.State = store.ClaimChecked
				default:
					c.State = state
				}
				var err error
				c.ReceivedAt, err = parseInstant(at)
				out = append(out, c)
				return err
			})
	}()
	if err != nil {
		return nil, fmt.Errorf("claims about %s: %w", quote(targetURL), err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ReceivedAt.After(out[j].ReceivedAt) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// PageBacklinks returns the verified backlinks (LINK and Webmention
// sources) of our page pageURL (as stored, or normalized), newest first,
// at most limit (all when limit <= 0).
func (db *DB) PageBacklinks(ctx context.Context, pageURL string, limit int) ([]audit.Backlink, error) {
	if limit <= 0 {
		limit = noLimit
	}
	rows, err := db.read.QueryContext(ctx, `SELECT source, target, via, linkmod, draft, client, verified_at
		FROM backlinks WHERE target IN ($1, $2) ORDER BY verified_at DESC, id DESC LIMIT $3`,
		pageURL, normalizedOr(pageURL), limit)
	if err != nil {
		return nil, fmt.Errorf("backlinks of %s: %w", quote(pageURL), err)
	}
	defer rows.Close()
	var out []audit.Backlink
	for rows.Next() {
		var (
			b              audit.Backlink
			linkmod, draft int
			at             sql.NullString
		)
		if err := rows.Scan(&b.Source, &b.Target, &b.Via, &linkmod, &draft, &b.Client, &at); err != nil {
			return nil, fmt.Errorf("backlinks of %s: %w", quote(pageURL), err)
		}
		b.LinkMod, b.Draft = linkmod == 1, draft == 1
		if b.VerifiedAt, err = parseInstant(at); err != nil {
			return nil, fmt.Errorf("backlinks of %s: %w", quote(pageURL), err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("backlinks of %s: %w", quote(pageURL), err)
	}
	return out, nil
}

// WireSummary returns the counts of the link-maintenance card.
func (db *DB) WireSummary(ctx context.Context) (store.WireCounts, error) {
	var c store.WireCounts
	err := db.read.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM wire_inbox WHERE state = 'queued' AND method IN ('UNLINKR', 'LINKMOD')),
			(SELECT count(*) FROM maintenance WHERE claimed_at IS NOT NULL AND confirmed = 1),
			(SELECT count(*) FROM maintenance WHERE claimed_at IS NOT NULL AND confirmed = 0),
			(SELECT count(*) FROM backlinks)`).Scan(&c.Pending, &c.Confirmed, &c.Unconfirmed, &c.Backlinks)
	if err != nil {
		return c, fmt.Errorf("link maintenance counts: %w", err)
	}
	return c, nil
}

// eachRow runs query with args in tx and calls scan for every row.
func eachRow(ctx context.Context, tx *sql.Tx, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
