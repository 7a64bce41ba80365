package sqlstore

// The link-maintenance wire tables of migration 0013 (linkrot serve and
// linkrot notify): the inbox of accepted notifications, verified
// backlinks, serve's own live checks, inbound UNLINKR claims on
// maintenance records, notifications sent, and dismissed findings.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// SiteRun returns the run that defines "our site" for link maintenance:
// the latest complete run, or when there is none the latest run of any
// status; audit.ErrNotFound when the database holds no run.
func (db *DB) SiteRun(ctx context.Context) (*audit.Run, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx,
		`SELECT `+runColumns+` FROM runs WHERE status = 'complete' ORDER BY started_at DESC, id DESC LIMIT 1`))
	if errors.Is(err, audit.ErrNotFound) {
		return db.LatestRun(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("site run: %w", err)
	}
	return r, nil
}

// SiteHosts returns the hosts (host[:port] as normalized) of the pages a
// run crawled, and of its seeds.
func (db *DB) SiteHosts(ctx context.Context, runID int64) ([]string, error) {
	seen := map[string]bool{}
	var hosts []string
	add := func(h string) {
		if h != "" && !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		var seeds string
		if err := tx.QueryRowContext(ctx, `SELECT seeds FROM runs WHERE id = $1`, runID).Scan(&seeds); err != nil {
			return err
		}
		for _, s := range splitJSONStrings(seeds) {
			if u, err := urls.ParseURL(s); err == nil {
				add(u.Host())
			}
		}
		return each(ctx, tx, `
			SELECT DISTINCT t.host FROM pages p JOIN targets t ON t.id = p.target_id
			WHERE p.run_id = $1`, runID, func(rows *sql.Rows) error {
			var h string
			if err := rows.Scan(&h); err != nil {
				return err
			}
			add(h)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("site hosts of run %d: %w", runID, err)
	}
	return hosts, nil
}

// PageInRun reports whether a run crawled the page at pageURL (its final
// or requested URL, as given or normalized) with a status below 400.
func (db *DB) PageInRun(ctx context.Context, runID int64, pageURL string) (bool, error) {
	var n int
	norm := normalizedOr(pageURL)
	err := db.read.QueryRowContext(ctx, `
		SELECT count(*) FROM pages p LEFT JOIN targets t ON t.id = p.target_id
		WHERE p.run_id = $1 AND p.status < 400 AND (p.url IN ($2, $3) OR p.request_url IN ($4, $5) OR t.url = $6)`,
		runID, pageURL, norm, pageURL, norm, norm).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("page %s in run %d: %w", quote(pageURL), runID, err)
	}
	return n > 0, nil
}

// PageLinksTo reports whether the page pageURL of a run links to
// targetURL (compared normalized, fragment ignored).
func (db *DB) PageLinksTo(ctx context.Context, runID int64, pageURL, targetURL string) (bool, error) {
	var n int
	norm := normalizedOr(pageURL)
	err := db.read.QueryRowContext(ctx, `
		SELECT count(*) FROM pages p
		LEFT JOIN targets pt ON pt.id = p.target_id
		JOIN links l ON l.page_id = p.id
		JOIN targets t ON t.id = l.target_id
		WHERE p.run_id = $1 AND (p.url IN ($2, $3) OR p.request_url IN ($4, $5) OR pt.url = $6) AND t.url = $7`,
		runID, pageURL, norm, pageURL, norm, norm, normalizedOr(targetURL)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("links of %s in run %d: %w", quote(pageURL), runID, err)
	}
	return n > 0, nil
}

// CheckOfURL returns the check of the target url (normalized) in a run,
// or audit.ErrNotFound.
func (db *DB) CheckOfURL(ctx context.Context, runID int64, targetURL string) (*audit.Check, error) {
	return db.oneCheck(ctx, selectCheckSQL+`
		FROM checks c JOIN targets t ON t.id = c.target_id
		WHERE c.run_id = $1 AND t.url = $2`, runID, normalizedOr(targetURL))
}

// CheckBefore returns the latest check of the target url (normalized) made
// in a run before runID (any run when runID is 0) with a 2xx fingerprint,
// or audit.ErrNotFound.
func (db *DB) CheckBefore(ctx context.Context, runID int64, targetURL string) (*audit.Check, error) {
	if runID <= 0 {
		runID = 1 << 62
	}
	return db.oneCheck(ctx, selectCheckSQL+`
		FROM checks c JOIN targets t ON t.id = c.target_id
		WHERE c.run_id < $1 AND t.url = $2 AND c.sha256 <> ''
		ORDER BY c.checked_at DESC NULLS LAST, c.run_id DESC LIMIT 1`, runID, normalizedOr(targetURL))
}

func (db *DB) oneCheck(ctx context.Context, query string, args ...any) (*audit.Check, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("check: %w", err)
		}
		return nil, audit.ErrNotFound
	}
	c, err := scanCheck(rows)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	return c, nil
}

// EnqueueWire stores accepted notifications as queued, in one transaction,
// and sets their IDs and State.
func (db *DB) EnqueueWire(ctx context.Context, reqs []*audit.WireRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("enqueue notifications: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO wire_inbox
		(received_at, framing, method, source, target, repl, linkmod, client, state, attempts, not_before, result)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'queued', 0, $9, '') RETURNING id`)
	if err != nil {
		return fmt.Errorf("enqueue notifications: %w", err)
	}
	defer stmt.Close()
	for _, r := range reqs {
		if err := stmt.QueryRowContext(ctx, formatInstant(r.ReceivedAt), r.Framing, r.Method, r.Source, r.Target,
			r.Repl, boolInt(r.LinkMod), r.Client, formatInstant(r.NotBefore)).Scan(&r.ID); err != nil {
			return fmt.Errorf("enqueue notification %s %s: %w", r.Method, quote(r.Source), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("enqueue notifications: commit: %w", err)
	}
	for _, r := range reqs {
		r.State = audit.WireQueued
	}
	return nil
}

const wireColumns = `id, received_at, framing, method, source, target, repl, linkmod, client, state, attempts, not_before, result, done_at`

func scanWire(rows *sql.Rows) (*audit.WireRequest, error) {
	var (
		r                      audit.WireRequest
		recv, notBefore, doneA sql.NullString
		linkmod                int
	)
	if err := rows.Scan(&r.ID, &recv, &r.Framing, &r.Method, &r.Source, &r.Target, &r.Repl, &linkmod,
		&r.Client, &r.State, &r.Attempts, &notBefore, &r.Result, &doneA); err != nil {
		return nil, err
	}
	r.LinkMod = linkmod == 1
	var err error
	if r.ReceivedAt, err = parseInstant(recv); err != nil {
		return nil, err
	}
	if r.NotBefore, err = parseInstant(notBefore); err != nil {
		return nil, err
	}
	if r.DoneAt, err = parseInstant(doneA); err != nil {
		return nil, err
	}
	return &r, nil
}

func (db *DB) wireQuery(ctx context.Context, query string, args ...any) ([]*audit.WireRequest, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*audit.WireRequest
	for rows.Next() {
		r, err := scanWire(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// QueuedWire returns up to limit queued notifications due at now (not
// deferred past it), oldest first, skipping the IDs in busy.
func (db *DB) QueuedWire(ctx context.Context, now time.Time, limit int, busy map[int64]bool) ([]*audit.WireRequest, error) {
	rs, err := db.wireQuery(ctx, `SELECT `+wireColumns+` FROM wire_inbox
		WHERE state = 'queued' AND (not_before IS NULL OR not_before <= $1)
		ORDER BY id LIMIT $2`, formatInstant(now), limit+len(busy))
	if err != nil {
		return nil, fmt.Errorf("queued notifications: %w", err)
	}
	out := rs[:0]
	for _, r := range rs {
		if !busy[r.ID] && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

// WireRequests returns the inbox, newest first, at most limit rows (all
// when limit <= 0).
func (db *DB) WireRequests(ctx context.Context, limit int) ([]*audit.WireRequest, error) {
	if limit <= 0 {
		limit = noLimit
	}
	rs, err := db.wireQuery(ctx, `SELECT `+wireColumns+` FROM wire_inbox ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	return rs, nil
}

// WireCounts counts the inbox by state.
func (db *DB) WireCounts(ctx context.Context) (map[string]int, error) {
	counts := map[string]int{}
	rows, err := db.read.QueryContext(ctx, `SELECT state, count(*) FROM wire_inbox GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("notification counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, fmt.Errorf("notification counts: %w", err)
		}
		counts[s] = n
	}
	return counts, rows.Err()
}

// DeferWire leaves a queued notification queued until notBefore, counting
// an attempt when attempted is set.
func (db *DB) DeferWire(ctx context.Context, id int64, notBefore time.Time, attempted bool, note string) error {
	_, err := db.write.ExecContext(ctx, `UPDATE wire_inbox SET not_before = $1, attempts = attempts + $2, result = $3
		WHERE id = $4 AND state = 'queued'`, formatInstant(notBefore), boolInt(attempted), note, id)
	if err != nil {
		return fmt.Errorf("defer notification %d: %w", id, err)
	}
	return nil
}

// FinishWire concludes a queued notification: its state (done, rejected,
// failed), one line of result, and its effect, all in one write
// transaction. A notification no longer queued (finished by another
// process) is left alone and its effect dropped.
func (db *DB) FinishWire(ctx context.Context, id int64, state, result string, eff store.WireEffect, now time.Time) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("finish notification %d: %w", id, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE wire_inbox SET state = $1, result = $2, done_at = $3, attempts = attempts + 1
		WHERE id = $4 AND state = 'queued'`, state, result, formatInstant(now), id)
	if err != nil {
		return fmt.Errorf("finish notification %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	if b := eff.UpsertBacklink; b != nil {
		_, err := tx.ExecContext(ctx, `INSERT INTO backlinks (source, target, via, linkmod, draft, client, verified_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (source, target) DO UPDATE SET via = excluded.via, linkmod = excluded.linkmod,
				draft = CASE WHEN backlinks.draft > excluded.draft THEN backlinks.draft ELSE excluded.draft END, client = excluded.client, verified_at = excluded.verified_at`,
			b.Source, b.Target, b.Via, boolInt(b.LinkMod), boolInt(b.Draft), b.Client, formatInstant(b.VerifiedAt))
		if err != nil {
			return fmt.Errorf("finish notification %d: backlink: %w", id, err)
		}
	}
	for _, d := range eff.DeleteBacklinks {
		if _, err := tx.ExecContext(ctx, `DELETE FROM backlinks WHERE source = $1 AND target = $2`, d[0], d[1]); err != nil {
			return fmt.Errorf("finish notification %d: remove backlink: %w", id, err)
		}
	}
	for _, c := range eff.LiveChecks {
		_, err := tx.ExecContext(ctx, `INSERT INTO live_checks (inbox_id, reason, url, verdict, status, final_url, detail,
			sha256, simhash, words, prev_sha256, band, checked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			id, c.Reason, c.URL, string(c.Verdict), c.Status, c.FinalURL, c.Detail, c.SHA256, int64(c.SimHash), c.Words,
			c.PrevSHA256, c.Band, formatInstant(c.CheckedAt))
		if err != nil {
			return fmt.Errorf("finish notification %d: live check: %w", id, err)
		}
	}
	if c := eff.Claim; c != nil {
		// A record of the run's own checks keeps its replacement and stays
		// confirmed; the claim adds its columns to it.
		_, err := tx.ExecContext(ctx, `INSERT INTO maintenance (run_id, source, target, replacement, status,
				origin, confirmed, claimant, claimed_at, claimed_replacement, target_verdict, replacement_verdict, claim_note)
			VALUES ($1, $2, $3, $4, $5, 'unlinkr', $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (run_id, source, target) DO UPDATE SET
				claimant = excluded.claimant, claimed_at = excluded.claimed_at,
				claimed_replacement = excluded.claimed_replacement, target_verdict = excluded.target_verdict,
				replacement_verdict = excluded.replacement_verdict, claim_note = excluded.claim_note,
				confirmed = CASE WHEN maintenance.origin = 'check' THEN 1 ELSE excluded.confirmed END,
				replacement = CASE WHEN maintenance.origin = 'check' THEN maintenance.replacement ELSE excluded.replacement END,
				status = CASE WHEN maintenance.origin = 'check' THEN maintenance.status ELSE excluded.status END`,
			c.RunID, c.Source, c.Target, c.Replacement, c.TargetStatus, boolInt(c.Confirmed), c.Claimant,
			formatInstant(c.ClaimedAt), c.Replacement, string(c.TargetVerdict), string(c.ReplacementVerdict), c.Note)
		if err != nil {
			return fmt.Errorf("finish notification %d: claim: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("finish notification %d: commit: %w", id, err)
	}
	return nil
}

// Backlinks returns the verified backlinks, by target then source.
func (db *DB) Backlinks(ctx context.Context) ([]audit.Backlink, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT source, target, via, linkmod, draft, client, verified_at
		FROM backlinks ORDER BY target, source`)
	if err != nil {
		return nil, fmt.Errorf("backlinks: %w", err)
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
			return nil, fmt.Errorf("backlinks: %w", err)
		}
		b.LinkMod, b.Draft = linkmod == 1, draft == 1
		if b.VerifiedAt, err = parseInstant(at); err != nil {
			return nil, fmt.Errorf("backlinks: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// HasBacklink reports whether (source, target) is a stored backlink.
func (db *DB) HasBacklink(ctx context.Context, source, target string) (bool, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM backlinks WHERE source = $1 AND target = $2`,
		source, target).Scan(&n); err != nil {
		return false, fmt.Errorf("backlink: %w", err)
	}
	return n > 0, nil
}

// HasPendingLink reports whether a LINK or Webmention from source to
// target is queued (so an UNLINK of it is known).
func (db *DB) HasPendingLink(ctx context.Context, source, target string) (bool, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM wire_inbox
		WHERE state = 'queued' AND method IN ('LINK', 'WEBMENTION') AND source = $1 AND target = $2`,
		source, target).Scan(&n); err != nil {
		return false, fmt.Errorf("pending link: %w", err)
	}
	return n > 0, nil
}

// LiveChecks returns serve's live checks of url (all URLs when url is ""),
// newest first, at most limit (all when limit <= 0).
func (db *DB) LiveChecks(ctx context.Context, targetURL string, limit int) ([]audit.LiveCheck, error) {
	if limit <= 0 {
		limit = noLimit
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, coalesce(inbox_id, 0), reason, url, verdict, status, final_url, detail,
		sha256, simhash, words, prev_sha256, band, checked_at FROM live_checks
		WHERE $1 = '' OR url = $2 ORDER BY id DESC LIMIT $3`, targetURL, targetURL, limit)
	if err != nil {
		return nil, fmt.Errorf("live checks: %w", err)
	}
	defer rows.Close()
	var out []audit.LiveCheck
	for rows.Next() {
		var (
			c       audit.LiveCheck
			v       string
			simhash int64
			at      sql.NullString
		)
		if err := rows.Scan(&c.ID, &c.InboxID, &c.Reason, &c.URL, &v, &c.Status, &c.FinalURL, &c.Detail,
			&c.SHA256, &simhash, &c.Words, &c.PrevSHA256, &c.Band, &at); err != nil {
			return nil, fmt.Errorf("live checks: %w", err)
		}
		c.Verdict, c.SimHash = audit.Verdict(v), uint64(simhash)
		if c.CheckedAt, err = parseInstant(at); err != nil {
			return nil, fmt.Errorf("live checks: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Claims returns the inbound UNLINKR claims recorded on the maintenance
// records of a run, confirmed or not, by source then target.
func (db *DB) Claims(ctx context.Context, runID int64) ([]audit.Claim, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT run_id, source, target, claimant, claimed_at, claimed_replacement,
		target_verdict, status, replacement_verdict, confirmed, claim_note
		FROM maintenance WHERE run_id = $1 AND claimed_at IS NOT NULL ORDER BY source, target`, runID)
	if err != nil {
		return nil, fmt.Errorf("claims of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []audit.Claim
	for rows.Next() {
		var (
			c         audit.Claim
			at        sql.NullString
			tv, rv    string
			confirmed int
		)
		if err := rows.Scan(&c.RunID, &c.Source, &c.Target, &c.Claimant, &at, &c.Replacement, &tv, &c.TargetStatus,
			&rv, &confirmed, &c.Note); err != nil {
			return nil, fmt.Errorf("claims of run %d: %w", runID, err)
		}
		c.TargetVerdict, c.ReplacementVerdict, c.Confirmed = audit.Verdict(tv), audit.Verdict(rv), confirmed == 1
		if c.ClaimedAt, err = parseInstant(at); err != nil {
			return nil, fmt.Errorf("claims of run %d: %w", runID, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Notification returns the notification with n's key (method, source,
// target, repl, change key), or audit.ErrNotFound.
func (db *DB) Notification(ctx context.Context, n *audit.Notification) (*audit.Notification, error) {
	ns, err := db.notifications(ctx, `WHERE method = $1 AND source = $2 AND target = $3 AND repl = $4 AND change_key = $5`,
		n.Method, n.Source, n.Target, n.Repl, n.ChangeKey)
	if err != nil {
		return nil, err
	}
	if len(ns) == 0 {
		return nil, audit.ErrNotFound
	}
	return &ns[0], nil
}

// Notifications returns every notification sent, oldest first.
func (db *DB) Notifications(ctx context.Context) ([]audit.Notification, error) {
	return db.notifications(ctx, "")
}

func (db *DB) notifications(ctx context.Context, where string, args ...any) ([]audit.Notification, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, method, source, target, repl, change_key, coalesce(run_id, 0),
		framing, attempts, status, answer, sent_at, done FROM notifications `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	defer rows.Close()
	var out []audit.Notification
	for rows.Next() {
		var (
			n    audit.Notification
			at   sql.NullString
			done int
		)
		if err := rows.Scan(&n.ID, &n.Method, &n.Source, &n.Target, &n.Repl, &n.ChangeKey, &n.RunID, &n.Framing,
			&n.Attempts, &n.Status, &n.Answer, &at, &done); err != nil {
			return nil, fmt.Errorf("notifications: %w", err)
		}
		n.Done = done == 1
		if n.SentAt, err = parseInstant(at); err != nil {
			return nil, fmt.Errorf("notifications: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// SaveNotification records a notification sent (or attempted), keyed by
// method, source, target, repl and change key: a later attempt of the same
// notification updates the row and counts one more attempt.
func (db *DB) SaveNotification(ctx context.Context, n *audit.Notification) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO notifications (method, source, target, repl, change_key, run_id,
			framing, attempts, status, answer, sent_at, done)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10, $11)
		ON CONFLICT (method, source, target, repl, change_key) DO UPDATE SET run_id = excluded.run_id,
			framing = excluded.framing, attempts = notifications.attempts + 1, status = excluded.status,
			answer = excluded.answer, sent_at = excluded.sent_at, done = excluded.done`,
		n.Method, n.Source, n.Target, n.Repl, n.ChangeKey, nullID(n.RunID), n.Framing, n.Status, n.Answer,
		formatInstant(n.SentAt), boolInt(n.Done))
	if err != nil {
		return fmt.Errorf("save notification %s %s: %w", n.Method, quote(n.Source), err)
	}
	return nil
}

// SaveDismissal records a dismissed finding (page, target); dismissing it
// again updates the note and time.
func (db *DB) SaveDismissal(ctx context.Context, d audit.Dismissal) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO dismissals (page_url, target, note, dismissed_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (page_url, target) DO UPDATE SET note = excluded.note, dismissed_at = excluded.dismissed_at`,
		d.PageURL, d.Target, d.Note, formatInstant(d.DismissedAt))
	if err != nil {
		return fmt.Errorf("save dismissal: %w", err)
	}
	return nil
}

// Dismissals returns the dismissed findings, by page then target.
func (db *DB) Dismissals(ctx context.Context) ([]audit.Dismissal, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT page_url, target, note, dismissed_at FROM dismissals ORDER BY page_url, target`)
	if err != nil {
		return nil, fmt.Errorf("dismissals: %w", err)
	}
	defer rows.Close()
	var out []audit.Dismissal
	for rows.Next() {
		var (
			d  audit.Dismissal
			at sql.NullString
		)
		if err := rows.Scan(&d.PageURL, &d.Target, &d.Note, &at); err != nil {
			return nil, fmt.Errorf("dismissals: %w", err)
		}
		if d.DismissedAt, err = parseInstant(at); err != nil {
			return nil, fmt.Errorf("dismissals: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// normalizedOr returns raw normalized by urls.NormalizeURL, or raw when it
// cannot be.
func normalizedOr(raw string) string {
	if n, err := urls.NormalizeURL(raw); err == nil {
		return n
	}
	return raw
}

// splitJSONStrings reads a JSON array of strings leniently ("" on error).
func splitJSONStrings(s string) []string {
	var out []string
	s = strings.TrimSpace(s)
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil
	}
	return out
}

// FindingByID returns the page URL and target of a finding (whichever
// form its URLs are stored in), or audit.ErrNotFound.
func (db *DB) FindingByID(ctx context.Context, id int64) (*audit.Finding, error) {
	var f audit.Finding
	var v string
	err := db.read.QueryRowContext(ctx, `
		SELECT f.run_id, coalesce(f.link_id, 0),
			CASE WHEN (f.url_form & 1) <> 0 THEN p.url ELSE f.page_url END,
			CASE WHEN (f.url_form & 2) <> 0 THEN t.url ELSE f.target END, f.verdict
		FROM findings f
		LEFT JOIN links l ON l.id = f.link_id
		LEFT JOIN pages p ON p.id = l.page_id
		LEFT JOIN targets t ON t.id = l.target_id
		WHERE f.id = $1`, id).Scan(&f.RunID, &f.LinkID, &f.PageURL, &f.Target, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, audit.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("finding %d: %w", id, err)
	}
	f.Verdict = audit.Verdict(v)
	return &f, nil
}

// TargetURL returns the URL of the target with the given ID, or
// audit.ErrNotFound.
func (db *DB) TargetURL(ctx context.Context, id int64) (string, error) {
	var u string
	err := db.read.QueryRowContext(ctx, `SELECT url FROM targets WHERE id = $1`, id).Scan(&u)
	if errors.Is(err, sql.ErrNoRows) {
		return "", audit.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("target %d: %w", id, err)
	}
	return u, nil
}
