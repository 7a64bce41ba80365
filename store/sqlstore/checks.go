package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// The checking stage of a run stores its results in the same run as the
// crawl: checks hang off (run, target), findings off (run, link).

// checkColumns are the stored columns of a check after run_id and
// target_id, in the order checkArgs binds them.
var checkColumns = []string{
	"verdict", "reason", "error_class", "status", "final_url", "redirects", "replacement",
	"attempts", "dns_ms", "connect_ms", "tls_ms", "first_byte_ms", "total_ms", "checked_at",
	"headers", "content_type", "etag", "last_modified", "reused", "reused_from", "sha256",
	"simhash", "words", "truncated", "soft404_probe_url", "soft404_probe_status",
	"soft404_probe_final", "soft404_similarity",
}

// upsertCheckSQL inserts a check, or replaces every column of the run's
// check of the same target. It takes its target_id from the targets row,
// which must exist and, unless the bound URL is empty, have that URL: when
// either fails, nothing is inserted (0 rows affected).
//
// Parameters: run_id, checkColumns..., target_id, url, url.
var upsertCheckSQL = upsertCheck(false)

// upsertFullCheckSQL is upsertCheckSQL that also inserts from_crawl (0007)
// and soft404_signals (0012), after checkColumns, for the latest schema.
// A row it replaces does not take them (the triggers of 0007 and 0012
// reset them): saveFromCrawl and saveSoft404Signals write them then.
var upsertFullCheckSQL = upsertCheck(true)

func upsertCheck(full bool) string {
	set := make([]string, len(checkColumns))
	for i, c := range checkColumns {
		set[i] = c + " = excluded." + c
	}
	cols, n := strings.Join(checkColumns, ", "), len(checkColumns)
	if full {
		cols, n = cols+", from_crawl, soft404_signals", n+2
	}
	return `INSERT INTO checks (run_id, target_id, ` + cols + `)
		SELECT $1, id, ` + params(2, n) + `
		FROM targets WHERE id = $` + strconv.Itoa(n+2) + ` AND ($` + strconv.Itoa(n+3) + ` = '' OR url = $` + strconv.Itoa(n+4) + `)
		ON CONFLICT (run_id, target_id) DO UPDATE SET ` + strings.Join(set, ", ")
}

// selectCheckSQL reads checks, as scanCheck expects, from "checks c" joined
// with its target "t"; callers add the rest of the FROM clause.
var selectCheckSQL = `SELECT c.run_id, c.target_id, t.url, c.` + strings.Join(checkColumns, ", c.") + `, c.soft404_signals, c.from_crawl`

// params returns the n parameters $from, $from+1, ... separated by
// commas: a list written for both engines (PostgreSQL numbers its
// parameters; SQLite binds $NNN by number too).
func params(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(from+i))
	}
	return b.String()
}

// paramStyle is how a generated statement writes its parameters.
//
// modernc.org/sqlite asks sqlite3_bind_parameter_name for every parameter
// it binds, and SQLite finds the name of a named parameter ($n is named)
// by a linear scan of the statement's list of names: binding P parameters
// named $1 to $P costs about P²/2 steps, which for a multi-row INSERT of a
// thousand parameters was most of the writer's time. Anonymous parameters
// (?) have no name to find. So the statements the writer generates for
// SQLite number their parameters anonymously, in order of appearance, and
// the ones both engines run are built in the style of the engine:
// PostgreSQL needs $n. Each text comes from one builder; nothing rewrites
// SQL.
type paramStyle uint8

const (
	numbered  paramStyle = iota // $1, $2, …: both engines
	anonymous                   // ?, in order of appearance: SQLite only
)

// paramStyle returns the style of the statements db generates.
func (db *DB) paramStyle() paramStyle {
	if db.dialect == dialectPostgres {
		return numbered
	}
	return anonymous
}

// paramList writes the parameters of one generated statement, numbered
// from 1 in order of appearance.
type paramList struct {
	style paramStyle
	n     int
}

// list returns the next n parameters, separated by commas.
func (p *paramList) list(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		p.n++
		if p.style == anonymous {
			b.WriteByte('?')
		} else {
			b.WriteString("$" + strconv.Itoa(p.n))
		}
	}
	return b.String()
}

// rows returns n rows of the next arity parameters each, "(…), (…)": the
// VALUES of a multi-row INSERT.
func (p *paramList) rows(arity, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + p.list(arity) + ")")
	}
	return b.String()
}

// verdictSet returns the verdicts satisfying pred as an SQL list of string
// literals, so that the SQL follows the domain's Transient and Broken. The
// verdicts are the domain's constants (lower-case words), so the list
// takes no parameters and cannot shift the numbering of the statement's
// others; the second result, always empty, is kept so that callers append
// it to their arguments unchanged.
// notReusable reports verdicts an earlier run's check cannot stand for:
// transient ones, and those that depend on that run's settings.
func notReusable(v audit.Verdict) bool {
	return v.Transient() || v == audit.VerdictSkipped || v == audit.VerdictRefused
}

func verdictSet(pred func(audit.Verdict) bool) (string, []any) {
	var list []string
	for _, v := range audit.Verdicts {
		if pred(v) {
			list = append(list, "'"+strings.ReplaceAll(string(v), "'", "''")+"'")
		}
	}
	if len(list) == 0 {
		// No verdict is '' (CHECK constraint): IN is never true, NOT IN
		// always (NULL would make NOT IN never true).
		return "''", nil
	}
	return strings.Join(list, ", "), nil
}

func millis(d time.Duration) int64 { return d.Milliseconds() }

// marshalJSON encodes v compactly, without escaping <, > and &, so that
// the stored text reads as what was observed.
func marshalJSON(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// checkArgs returns the arguments of upsertCheckSQL for c, or with full
// those of upsertFullCheckSQL.
func checkArgs(c *audit.Check, full bool) ([]any, error) {
	args := make([]any, 0, 4+len(checkColumns)+2)
	args, err := checkValues(append(args, c.RunID), c)
	if err != nil {
		return nil, err
	}
	if full {
		signals, err := soft404SignalsJSON(c)
		if err != nil {
			return nil, err
		}
		args = append(args, boolInt(c.FromCrawl), signals)
	}
	return append(args, c.TargetID, c.URL, c.URL), nil
}

// checkValues appends the values of checkColumns for c to args.
func checkValues(args []any, c *audit.Check) ([]any, error) {
	redirectsJSON := "[]"
	if len(c.Redirects) > 0 {
		var err error
		if redirectsJSON, err = marshalJSON(c.Redirects); err != nil {
			return args, fmt.Errorf("redirects: %w", err)
		}
	}
	headersJSON, err := headersJSON(c.Headers) // keys sorted
	if err != nil {
		return args, fmt.Errorf("headers: %w", err)
	}
	var reusedFrom any
	if c.ReusedFrom != 0 {
		reusedFrom = c.ReusedFrom
	}
	var probeURL, probeStatus, probeFinal, similarity any
	if e := c.Soft404; e != nil {
		probeURL, probeStatus, probeFinal = e.ProbeURL, e.ProbeStatus, e.ProbeFinal
		if !math.IsNaN(e.Similarity) {
			similarity = e.Similarity
		}
	}
	t := c.Timings
	return append(args,
		string(c.Verdict), c.Reason, c.ErrorClass, c.Status, c.FinalURL, redirectsJSON,
		c.Replacement, c.Attempts, millis(t.DNS), millis(t.Connect), millis(t.TLS),
		millis(t.FirstByte), millis(t.Total), formatInstant(c.CheckedAt), headersJSON,
		c.ContentType, c.ETag, c.LastModified, boolInt(c.Reused), reusedFrom, c.SHA256,
		int64(c.SimHash), // the bit pattern; the driver refuses uint64 >= 1<<63
		c.Words, boolInt(c.Truncated), probeURL, probeStatus, probeFinal, similarity), nil
}

// headersJSON is marshalJSON of a header map (nil as {}), written
// directly when every key and value is printable ASCII, which
// encoding/json writes as is but for '"' and '\\' (escaped with a
// backslash): the same text without reflection for the usual headers.
func headersJSON(h map[string]string) (string, error) {
	if len(h) == 0 {
		return "{}", nil
	}
	n := 2
	var stack [16]string // the keys of the usual few headers, not allocated
	keys := stack[:0]
	for k, v := range h {
		if !printableASCII(k) || !printableASCII(v) {
			return marshalJSON(h)
		}
		n += len(k) + len(v) + 6
		keys = append(keys, k)
	}
	// encoding/json sorts map keys bytewise too; a few keys sort fastest
	// by insertion.
	if len(keys) <= len(stack) {
		for i := 1; i < len(keys); i++ {
			for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
				keys[j], keys[j-1] = keys[j-1], keys[j]
			}
		}
	} else {
		slices.Sort(keys)
	}
	var b strings.Builder // its String does not copy
	b.Grow(n)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, k)
		b.WriteByte(':')
		writeJSONString(&b, h[k])
	}
	b.WriteByte('}')
	return b.String(), nil
}

// stringsJSON is marshalJSON of a list of strings (nil as []), written
// directly, as headersJSON, when they are all printable ASCII.
func stringsJSON(list []string) (string, error) {
	n := 2
	for _, s := range list {
		if !printableASCII(s) {
			return marshalJSON(list)
		}
		n += len(s) + 3
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, s)
	}
	b.WriteByte(']')
	return b.String(), nil
}

// printableASCII reports whether s is printable ASCII (0x20 to 0x7e).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// writeJSONString writes s, printable ASCII, as a JSON string the way
// encoding/json writes it with HTML escaping off: as is, between quotes,
// but for '"' and '\\', escaped with a backslash.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for {
		i := strings.IndexAny(s, "\"\\")
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteByte('\\')
		b.WriteByte(s[i])
		s = s[i+1:]
	}
	b.WriteString(s)
	b.WriteByte('"')
}

// saveSoft404Signals writes the soft-404 classifier's score and signals of
// a check just saved (checks.soft404_signals, 0012) with a statement of its
// own, only for a check with soft-404 evidence, so that a check without it
// can be written to a database of an earlier schema (the fixtures). A
// check saved again replaces the row, and a trigger of 0012 resets the
// column of the row it replaces.
func saveSoft404Signals(ctx context.Context, tx execer, c *audit.Check) error {
	if c.Soft404 == nil {
		return nil
	}
	sj, err := soft404SignalsJSON(c)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE checks SET soft404_signals = $1 WHERE run_id = $2 AND target_id = $3`, sj, c.RunID, c.TargetID)
	return err
}

// soft404SignalsJSON returns checks.soft404_signals of c: JSON text, or
// nil (NULL) for a check without soft-404 evidence.
func soft404SignalsJSON(c *audit.Check) (any, error) {
	e := c.Soft404
	if e == nil {
		return nil, nil
	}
	sj, err := marshalJSON(storedSignals{Score: finiteOr0(e.Score), Parked: finiteOr0(e.Parked), Signals: finiteSignals(e.Signals)})
	if err != nil {
		return nil, fmt.Errorf("soft-404 signals: %w", err)
	}
	return sj, nil
}

// storedSignals is checks.soft404_signals (0012).
type storedSignals struct {
	Score   float64               `json:"score"`
	Parked  float64               `json:"parked"`
	Signals []audit.Soft404Signal `json:"signals"`
}

// finiteOr0 is x, or 0 for NaN and infinities (JSON has no such numbers).
func finiteOr0(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// finiteSignals returns the signals with finite scores, never nil.
func finiteSignals(sigs []audit.Soft404Signal) []audit.Soft404Signal {
	out := make([]audit.Soft404Signal, len(sigs))
	for i, s := range sigs {
		s.Score = finiteOr0(s.Score)
		out[i] = s
	}
	return out
}

// scanCheck reads a row of selectCheckSQL.
func scanCheck(rows *sql.Rows) (*audit.Check, error) {
	var (
		c                                   audit.Check
		verdict, redirects, headers         string
		dns, connect, tls, firstByte, total int64
		checkedAt                           sql.NullString
		reusedFrom                          sql.NullInt64
		simhash                             int64
		probeURL, probeFinal, signals       sql.NullString
		probeStatus                         sql.NullInt64
		similarity                          sql.NullFloat64
	)
	if err := rows.Scan(&c.RunID, &c.TargetID, &c.URL, &verdict, &c.Reason, &c.ErrorClass,
		&c.Status, &c.FinalURL, &redirects, &c.Replacement, &c.Attempts, &dns, &connect, &tls,
		&firstByte, &total, &checkedAt, &headers, &c.ContentType, &c.ETag, &c.LastModified,
		&c.Reused, &reusedFrom, &c.SHA256, &simhash, &c.Words, &c.Truncated,
		&probeURL, &probeStatus, &probeFinal, &similarity, &signals, &c.FromCrawl); err != nil {
		return nil, err
	}
	c.Verdict = audit.Verdict(verdict)
	c.Timings = audit.Timings{
		DNS:       time.Duration(dns) * time.Millisecond,
		Connect:   time.Duration(connect) * time.Millisecond,
		TLS:       time.Duration(tls) * time.Millisecond,
		FirstByte: time.Duration(firstByte) * time.Millisecond,
		Total:     time.Duration(total) * time.Millisecond,
	}
	var err error
	if c.CheckedAt, err = parseInstant(checkedAt); err != nil {
		return nil, fmt.Errorf("check of target %d in run %d: checked_at: %w", c.TargetID, c.RunID, err)
	}
	if err := json.Unmarshal([]byte(redirects), &c.Redirects); err != nil {
		return nil, fmt.Errorf("check of target %d in run %d: redirects: %w", c.TargetID, c.RunID, err)
	}
	if len(c.Redirects) == 0 {
		c.Redirects = nil
	}
	if err := json.Unmarshal([]byte(headers), &c.Headers); err != nil {
		return nil, fmt.Errorf("check of target %d in run %d: headers: %w", c.TargetID, c.RunID, err)
	}
	if len(c.Headers) == 0 {
		c.Headers = nil
	}
	c.ReusedFrom = reusedFrom.Int64
	c.SimHash = uint64(simhash)
	if probeURL.Valid {
		c.Soft404 = &audit.Soft404Evidence{
			ProbeURL:    probeURL.String,
			ProbeStatus: int(probeStatus.Int64),
			ProbeFinal:  probeFinal.String,
			Similarity:  math.NaN(),
		}
		if similarity.Valid {
			c.Soft404.Similarity = similarity.Float64
		}
		if signals.Valid {
			var st storedSignals
			if err := json.Unmarshal([]byte(signals.String), &st); err != nil {
				return nil, fmt.Errorf("check of target %d in run %d: soft404_signals: %w", c.TargetID, c.RunID, err)
			}
			c.Soft404.Score, c.Soft404.Parked, c.Soft404.Signals = st.Score, st.Parked, st.Signals
			if len(c.Soft404.Signals) == 0 {
				c.Soft404.Signals = nil
			}
		}
	}
	return &c, nil
}

// requireRuns checks, inside tx, that every run of ids exists, and returns
// an error wrapping audit.ErrNotFound for the first that does not.
func requireRuns(ctx context.Context, tx *sql.Tx, ids []int64) error {
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = $1`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %d: %w", id, audit.ErrNotFound)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeBatch runs the n items of a batch through save in one write
// transaction (BEGIN IMMEDIATE, see DB) with the statement query prepared
// once, after checking that the runs of the batch exist. It stops, and
// rolls everything back, at the first error or when ctx is done.
func (db *DB) writeBatch(ctx context.Context, runIDs []int64, query string, n int,
	save func(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, i int) error) error {
	return db.retryTx(ctx, func() error { return db.writeBatchOnce(ctx, runIDs, query, n, save) })
}

func (db *DB) writeBatchOnce(ctx context.Context, runIDs []int64, query string, n int,
	save func(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, i int) error) error {
	tx, end, err := db.beginBatch(ctx)
	if err != nil {
		return err
	}
	defer end()
	if err := requireRuns(ctx, tx, runIDs); err != nil {
		return err
	}
	stmt, err := db.txStmt(ctx, tx, query)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i := range n {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped before item %d of %d: %w", i+1, n, err)
		}
		if err := save(ctx, tx, stmt, i); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// SaveChecks stores a batch of checks in one write transaction, with one
// prepared statement: either all land or, on any error (including a
// cancelled ctx), none does. Wrapped in a closure it is the save function of
// an audit.Batcher[audit.Check]. It is safe for concurrent use; writes are
// serialised.
//
// Each check belongs to its RunID and TargetID. An unknown run or target
// yields an error wrapping audit.ErrNotFound; a non-empty URL that is not
// the target's URL is an error too (an empty one is not checked). URL and
// Anchors are not stored: reads take URL from the target.
//
// A run holds one check per target: saving a target the run has already
// checked (a resumed run re-checks it) replaces the earlier check entirely.
//
// Timings are stored in whole milliseconds. Redirects and Headers are
// stored as JSON, in which invalid UTF-8 becomes U+FFFD; empty ones read
// back as nil. SimHash round-trips exactly (stored as the int64 of the same
// bits). A NaN Soft404.Similarity reads back as NaN.
func (db *DB) SaveChecks(ctx context.Context, checks []audit.Check) error {
	if len(checks) == 0 {
		return nil
	}
	runIDs := make([]int64, len(checks))
	for i := range checks {
		runIDs[i] = checks[i].RunID
	}
	// On the latest schema a new check is written whole by one
	// statement (upsertFullCheckSQL); one that may replace a check of its
	// run has its from_crawl and soft404_signals written again after it.
	// SQLite, whose transaction holds the write lock, knows which are new
	// from the batch itself and the checks its runs already have.
	// PostgreSQL, whose writers do not wait for each other's
	// transactions, writes every check's again.
	full := db.compact
	query := upsertCheckSQL
	if full {
		query = upsertFullCheckSQL
	}
	var (
		prepared *stmtCache
		taken    map[checkKey]bool // SQLite: checks of the runs and targets saved, or in the batch so far
		// SQLite: new checks go many rows per INSERT (newChecks).
		fresh *newChecks
	)
	defer func() { prepared.close() }()
	err := db.writeBatch(ctx, runIDs, query, len(checks), func(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, i int) error {
		if prepared == nil || prepared.tx != tx {
			prepared.close()
			prepared = &stmtCache{tx: tx}
			taken, fresh = nil, nil
			if full && db.dialect == dialectSQLite {
				var err error
				if taken, err = savedChecks(ctx, tx, checks); err != nil {
					return fmt.Errorf("checks saved before: %w", err)
				}
				if fresh, err = db.newChecks(ctx, tx, checks, taken); err != nil {
					return fmt.Errorf("targets of the checks: %w", err)
				}
			}
		}
		c := &checks[i]
		isNew := false
		if taken != nil {
			k := checkKey{c.RunID, c.TargetID}
			isNew = !taken[k]
			taken[k] = true
		}
		var err error
		if isNew && fresh != nil {
			err = fresh.add(ctx, c)
		} else {
			// In batch order: the new checks before this one first.
			if err = fresh.flush(ctx); err != nil {
				return err
			}
			err = saveCheck(ctx, prepared, stmt, c, full, isNew)
		}
		if err == nil && i == len(checks)-1 {
			return fresh.flush(ctx)
		}
		if err != nil {
			return fmt.Errorf("check %d of the batch (run %d, target %d %s): %w", i, c.RunID, c.TargetID, quote(c.URL), err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save checks: %w", err)
	}
	return nil
}

// execer runs a statement: a *sql.Tx, or a stmtCache.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// stmtCache runs statements on tx, each prepared on first use and kept
// until close: a batch runs the same few statements for every row.
type stmtCache struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

// ExecContext runs query on the cache's transaction.
func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, ok := c.m[query]
	if !ok {
		var err error
		if st, err = c.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		if c.m == nil {
			c.m = map[string]*sql.Stmt{}
		}
		c.m[query] = st
	}
	return st.ExecContext(ctx, args...)
}

// close closes the prepared statements (a nil cache has none).
func (c *stmtCache) close() {
	if c == nil {
		return
	}
	for _, st := range c.m {
		st.Close()
	}
}

// checkKey is a check's key: its run and target.
type checkKey struct{ run, target int64 }

// savedChecks returns the keys of the checks, among those of checks, that
// the database holds already (inside tx).
func savedChecks(ctx context.Context, tx *sql.Tx, checks []audit.Check) (map[checkKey]bool, error) {
	byRun := map[int64][]int64{}
	for i := range checks {
		c := &checks[i]
		byRun[c.RunID] = append(byRun[c.RunID], c.TargetID)
	}
	taken := make(map[checkKey]bool, len(checks))
	for run, ids := range byRun {
		err := eachRow(ctx, tx, `SELECT target_id FROM checks
			WHERE run_id = $1 AND target_id IN (SELECT value FROM json_each($2))`, []any{run, idList(ids)},
			func(rows *sql.Rows) error {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return err
				}
				taken[checkKey{run, id}] = true
				return nil
			})
		if err != nil {
			return nil, err
		}
	}
	return taken, nil
}

// saveCheck writes c with stmt, upsertCheckSQL or with full
// upsertFullCheckSQL. fresh says that c's run has no check of its target
// yet, so that the full statement has written everything.
func saveCheck(ctx context.Context, tx *stmtCache, stmt *sql.Stmt, c *audit.Check, full, fresh bool) error {
	urls.RedactStrings(c) // URL passwords never stored
	args, err := checkArgs(c, full)
	if err != nil {
		return err
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 1 {
		if full && fresh {
			return nil
		}
		if err := saveFromCrawl(ctx, tx, c); err != nil {
			return err
		}
		return saveSoft404Signals(ctx, tx, c)
	}
	// Nothing inserted: say why.
	var u string
	err = tx.tx.QueryRowContext(ctx, `SELECT url FROM targets WHERE id = $1`, c.TargetID).Scan(&u)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("target %d: %w", c.TargetID, audit.ErrNotFound)
	case err != nil:
		return err
	default:
		return fmt.Errorf("URL is not the target's URL %s", quote(u))
	}
}

// SaveFindings stores a batch of findings in one write transaction: all or
// none. Each finding belongs to its RunID; a non-zero LinkID must be a link
// of that run. An unknown run or link yields an error wrapping
// audit.ErrNotFound. Findings are not deduplicated: saving one twice
// records it twice. It is safe for concurrent use.
func (db *DB) SaveFindings(ctx context.Context, findings []audit.Finding) error {
	if len(findings) == 0 {
		return nil
	}
	runIDs := make([]int64, len(findings))
	for i := range findings {
		runIDs[i] = findings[i].RunID
	}
	err := db.writeBatch(ctx, runIDs, insertFindingSQL(db.compact), len(findings), func(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, i int) error {
		return insertFinding(ctx, stmt, i, &findings[i])
	})
	if err != nil {
		return fmt.Errorf("save findings: %w", err)
	}
	return nil
}

func insertFinding(ctx context.Context, stmt *sql.Stmt, i int, f *audit.Finding) error {
	urls.RedactStrings(f) // URL passwords never stored
	var linkID any
	if f.LinkID != 0 {
		linkID = f.LinkID
	}
	res, err := stmt.ExecContext(ctx, f.RunID, linkID, f.PageURL, f.Target, string(f.Verdict), f.Message, f.Fragment)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			err = fmt.Errorf("link %d of run %d: %w", f.LinkID, f.RunID, audit.ErrNotFound)
		}
	}
	if err != nil {
		return fmt.Errorf("finding %d of the batch (page %s, target %s): %w", i, quote(f.PageURL), quote(f.Target), err)
	}
	return nil
}

// ReplaceFindings replaces all findings of a run with findings, in one write
// transaction: the checking stage derives a run's findings from its checks
// as a whole, so re-checking a run (resume, linkrot check again) must not
// duplicate them. Every finding must belong to runID.
func (db *DB) ReplaceFindings(ctx context.Context, runID int64, findings []audit.Finding) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("replace findings: %w", err)
	}
	defer tx.Rollback()
	if err := requireRuns(ctx, tx, []int64{runID}); err != nil {
		return fmt.Errorf("replace findings: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM findings WHERE run_id = $1`, runID); err != nil {
		return fmt.Errorf("replace findings: delete: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, insertFindingSQL(db.compact))
	if err != nil {
		return fmt.Errorf("replace findings: %w", err)
	}
	defer stmt.Close()
	for i := range findings {
		if findings[i].RunID != runID {
			return fmt.Errorf("replace findings: finding %d belongs to run %d, not %d", i, findings[i].RunID, runID)
		}
		if err := insertFinding(ctx, stmt, i, &findings[i]); err != nil {
			return fmt.Errorf("replace findings: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("replace findings: commit: %w", err)
	}
	return nil
}

// SaveMaintenance stores a batch of link-maintenance records in one write
// transaction: all or none. Each belongs to its RunID (unknown: an error
// wrapping audit.ErrNotFound). A run keeps one record per (Source, Target):
// a later one with the same pair, in this batch or an earlier one, is
// ignored, the first wins. It is safe for concurrent use.
func (db *DB) SaveMaintenance(ctx context.Context, records []audit.Maintenance) error {
	if len(records) == 0 {
		return nil
	}
	runIDs := make([]int64, len(records))
	for i := range records {
		runIDs[i] = records[i].RunID
	}
	const query = `INSERT INTO maintenance (run_id, source, target, replacement, status)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (run_id, source, target) DO NOTHING`
	err := db.writeBatch(ctx, runIDs, query, len(records), func(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, i int) error {
		m := &records[i]
		urls.RedactStrings(m) // URL passwords never stored
		if _, err := stmt.ExecContext(ctx, m.RunID, m.Source, m.Target, m.Replacement, m.Status); err != nil {
			return fmt.Errorf("maintenance record %d of the batch (source %s, target %s): %w", i, quote(m.Source), quote(m.Target), err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save maintenance: %w", err)
	}
	return nil
}

// Checks returns every check of a run, ordered by target URL, with URL set
// from the target and all stored fields (see SaveChecks; Anchors is nil).
// Times are in UTC. An unknown run yields an error wrapping
// audit.ErrNotFound; a run without checks yields none. It is safe for
// concurrent use.
func (db *DB) Checks(ctx context.Context, runID int64) ([]audit.Check, error) {
	var checks []audit.Check
	err := db.EachCheck(ctx, runID, func(c *audit.Check) error {
		checks = append(checks, *c)
		return nil
	})
	return checks, err
}

// EachCheck calls fn with every check of a run, as Checks returns them,
// one at a time (fn may keep c): the caller holds what it keeps only. An
// error of fn stops the scan and is returned wrapped.
func (db *DB) EachCheck(ctx context.Context, runID int64, fn func(c *audit.Check) error) error {
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, selectCheckSQL+`
			FROM checks c JOIN targets t ON t.id = c.target_id
			WHERE c.run_id = $1
			ORDER BY t.url`, runID, func(rows *sql.Rows) error {
			c, err := scanCheck(rows)
			if err != nil {
				return err
			}
			return fn(c)
		})
	})
	if err != nil {
		return fmt.Errorf("checks of run %d: %w", runID, err)
	}
	return nil
}

// CheckedTargetIDs returns the IDs of the targets a run has already
// checked, for resuming it: each maps to true. A run without checks yields
// an empty map; an unknown run an error wrapping audit.ErrNotFound. It is
// safe for concurrent use.
func (db *DB) CheckedTargetIDs(ctx context.Context, runID int64) (map[int64]bool, error) {
	ids := make(map[int64]bool)
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `SELECT target_id FROM checks WHERE run_id = $1`, runID, func(rows *sql.Rows) error {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids[id] = true
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("checked targets of run %d: %w", runID, err)
	}
	return ids, nil
}

// PreviousChecks returns, for each of targetIDs, its most recent check
// (latest CheckedAt, then highest run ID) from a run before runID (lower
// ID) whose verdict says something about the target: not transient
// (audit.Verdict.Transient), and not skipped or refused, which depend on the
// earlier run's settings (--skip, --allow-private) rather than on the
// target. Checks of
// runID itself and of later runs are ignored. A target without such a check
// is absent from the map; duplicate or unknown IDs are harmless. The run
// runID must exist (otherwise an error wraps audit.ErrNotFound).
//
// The check is returned whatever its age: maxAge and now do not filter. The
// caller reuses it when maxAge > 0 and CheckedAt >= now-maxAge, and
// otherwise sends its ETag and LastModified in a conditional request.
//
// All IDs are looked up in one query (the ID list is bound as one JSON
// array), each through the index on (target_id, checked_at, run_id), so
// that 100,000 targets cost one read transaction. It is safe for concurrent
// use.
func (db *DB) PreviousChecks(ctx context.Context, runID int64, targetIDs []int64, maxAge time.Duration, now time.Time) (map[int64]*audit.Check, error) {
	found := make(map[int64]*audit.Check)
	query, args := db.previousChecksQuery(runID, targetIDs)
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		if len(targetIDs) == 0 {
			return nil
		}
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanCheck(rows)
			if err != nil {
				return err
			}
			found[c.TargetID] = c
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("previous checks for run %d: %w", runID, err)
	}
	return found, nil
}

// previousChecksQuery returns the query of PreviousChecks and its
// arguments: the IDs as one JSON array, so that any number of them takes one
// parameter, then for each distinct ID a seek in checks_target_checked_at
// from the newest check down to the first that qualifies.
func (db *DB) previousChecksQuery(runID int64, targetIDs []int64) (string, []any) {
	transient, transientArgs := verdictSet(notReusable)
	query := selectCheckSQL + `
		FROM (SELECT DISTINCT value AS id FROM ` + db.idListSQL(1) + ` AS ids) w
		JOIN checks c ON c.target_id = w.id AND c.run_id = (
			SELECT p.run_id FROM checks p
			WHERE p.target_id = w.id AND p.run_id < $2 AND p.verdict NOT IN (` + transient + `)
			ORDER BY p.checked_at DESC NULLS LAST, p.run_id DESC
			LIMIT 1)
		JOIN targets t ON t.id = c.target_id`
	return query, append([]any{idList(targetIDs), runID}, transientArgs...)
}

// LinkRefs returns every link of a run in page order, then document order.
// An unknown run yields an error wrapping audit.ErrNotFound; a run without
// links yields none. It is safe for concurrent use.
func (db *DB) LinkRefs(ctx context.Context, runID int64) ([]audit.LinkRef, error) {
	var refs []audit.LinkRef
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT l.id, l.page_id, p.url, l.target_id, `+hrefSQL+`, l.fragment, l.element, l.attr, l.text, l.resource
			FROM links l JOIN pages p ON p.id = l.page_id`+linkTargetJoin+`
			WHERE l.run_id = $1
			ORDER BY l.page_id, l.ord`, runID, func(rows *sql.Rows) error {
			var (
				r      audit.LinkRef
				target sql.NullInt64
			)
			if err := rows.Scan(&r.LinkID, &r.PageID, &r.PageURL, &target, &r.Href, &r.Fragment,
				&r.Element, &r.Attr, &r.Text, &r.Resource); err != nil {
				return err
			}
			r.TargetID = target.Int64
			refs = append(refs, r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("links of run %d: %w", runID, err)
	}
	return refs, nil
}

// Findings returns the findings of a run ordered by page URL, then target,
// then the order they were saved. LinkID is 0 for a finding saved without a
// link, or whose link is gone. An unknown run yields an error wrapping
// audit.ErrNotFound; a run without findings yields none. It is safe for
// concurrent use.
func (db *DB) Findings(ctx context.Context, runID int64) ([]audit.Finding, error) {
	var findings []audit.Finding
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT f.run_id, f.link_id, `+findingPageSQL+` AS page_url, `+findingTargetSQL+` AS target,
				f.verdict, f.message, f.fragment
			FROM findings f`+findingJoin+`WHERE f.run_id = $1
			ORDER BY page_url, target, f.id`, runID, func(rows *sql.Rows) error {
			var (
				f       audit.Finding
				linkID  sql.NullInt64
				verdict string
			)
			if err := rows.Scan(&f.RunID, &linkID, &f.PageURL, &f.Target, &verdict, &f.Message, &f.Fragment); err != nil {
				return err
			}
			f.LinkID = linkID.Int64
			f.Verdict = audit.Verdict(verdict)
			findings = append(findings, f)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("findings of run %d: %w", runID, err)
	}
	return findings, nil
}

// Maintenance returns the link-maintenance records of a run ordered by
// source, then target: those of its own checks and the UNLINKR claims
// serve's checks confirmed (Claims lists every claim). An unknown run yields an error wrapping
// audit.ErrNotFound; a run without records yields none. It is safe for
// concurrent use.
func (db *DB) Maintenance(ctx context.Context, runID int64) ([]audit.Maintenance, error) {
	var records []audit.Maintenance
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT run_id, source, target, replacement, status, CASE origin WHEN 'check' THEN '' ELSE origin END, claimant, claim_note
			FROM maintenance WHERE run_id = $1 AND confirmed = 1
			ORDER BY source, target`, runID, func(rows *sql.Rows) error {
			var m audit.Maintenance
			if err := rows.Scan(&m.RunID, &m.Source, &m.Target, &m.Replacement, &m.Status, &m.Origin, &m.Claimant, &m.ClaimNote); err != nil {
				return err
			}
			records = append(records, m)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("maintenance of run %d: %w", runID, err)
	}
	return records, nil
}

// VerdictCounts returns how many targets of a run got each verdict (a run
// checks each target once). Verdicts no target got are absent. A run
// without checks yields an empty map; an unknown run an error wrapping
// audit.ErrNotFound. It is safe for concurrent use.
func (db *DB) VerdictCounts(ctx context.Context, runID int64) (map[audit.Verdict]int, error) {
	counts := make(map[audit.Verdict]int)
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		return each(ctx, tx, `
			SELECT verdict, count(*) FROM checks WHERE run_id = $1 GROUP BY verdict`, runID,
			func(rows *sql.Rows) error {
				var (
					v string
					n int
				)
				if err := rows.Scan(&v, &n); err != nil {
					return err
				}
				counts[audit.Verdict(v)] = n
				return nil
			})
	})
	if err != nil {
		return nil, fmt.Errorf("verdict counts of run %d: %w", runID, err)
	}
	return counts, nil
}

// TopBroken returns the targets of a run whose check has a broken verdict
// (audit.Verdict.Broken), most widely linked first: by the number of
// distinct pages of the run linking to them, descending, then by URL. A
// checked target no link of the run points to has 0 pages and 0 links.
// limit <= 0 returns all of them. An unknown run yields an error wrapping
// audit.ErrNotFound; a run without broken targets yields none. It is safe
// for concurrent use.
func (db *DB) TopBroken(ctx context.Context, runID int64, limit int) ([]audit.BrokenTarget, error) {
	if limit <= 0 {
		limit = noLimit
	}
	broken, brokenArgs := verdictSet(audit.Verdict.Broken)
	query := `
		SELECT t.url, c.verdict, c.status, count(DISTINCT l.page_id), count(l.id)
		FROM checks c
		JOIN targets t ON t.id = c.target_id
		LEFT JOIN links l ON l.target_id = c.target_id AND l.run_id = c.run_id
		WHERE c.run_id = $1 AND c.verdict IN (` + broken + `)
		GROUP BY c.target_id, t.url, c.verdict, c.status
		ORDER BY 4 DESC NULLS LAST, t.url
		LIMIT $2`
	args := append([]any{runID}, brokenArgs...)
	args = append(args, limit)

	var top []audit.BrokenTarget
	err := db.readTx(ctx, runID, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				b audit.BrokenTarget
				v string
			)
			if err := rows.Scan(&b.URL, &v, &b.Status, &b.Pages, &b.Links); err != nil {
				return err
			}
			b.Verdict = audit.Verdict(v)
			top = append(top, b)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("top broken targets of run %d: %w", runID, err)
	}
	return top, nil
}
