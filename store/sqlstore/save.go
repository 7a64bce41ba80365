package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// SavePages stores pages of a run in one write transaction: the pages and
// their redirects, links with their targets, Robust Links snapshots, mset
// data, identifiers, pwids and diagnostics. Either the whole batch lands or,
// on any error (including a cancelled ctx), nothing of it does. An unknown
// run yields an error wrapping audit.ErrNotFound.
//
// A page is recorded once per run, under its final URL: a page whose URL
// the run already holds, from this batch or an earlier one, is skipped with
// everything it carries (the first one wins).
//
// Each link's target is its href normalized by urls.NormalizeURL, created
// on first sight and shared by all runs. A link gets no target when its href
// is empty, does not parse, or is not absolute (has no scheme). Snapshot
// URLs get a target when they are http or https. A page's own URL is a
// target too. Page.Duration is stored in whole milliseconds; Link.Rel is
// stored space-joined, so an empty Rel reads back as nil.
//
// Every pwid's Link must be -1 or the index of a link of the same page.
func (db *DB) SavePages(ctx context.Context, runID int64, pages []*audit.Page) error {
	if len(pages) == 0 {
		return nil
	}
	if err := db.retryTx(ctx, func() error { return db.savePages(ctx, runID, pages) }); err != nil {
		return fmt.Errorf("save pages: %w", err)
	}
	return nil
}

func (db *DB) savePages(ctx context.Context, runID int64, pages []*audit.Page) error {
	tx, end, err := db.beginPagesBatch(ctx)
	if err != nil {
		return err
	}
	defer end()

	s, err := db.writePages(ctx, tx, runID, pages)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.publish()
	return nil
}

// writePages stores pages of a run inside tx (see SavePages), after
// checking that the run exists. Once tx has committed, the caller calls
// the returned saver's publish, which shares the targets it created with
// later batches (see DB.targetIDs).
func (db *DB) writePages(ctx context.Context, tx *sql.Tx, runID int64, pages []*audit.Page) (*saver, error) {
	var one int
	runStmt, err := db.txStmt(ctx, tx, selectRunSQL)
	if err != nil {
		return nil, err
	}
	err = runStmt.QueryRowContext(ctx, runID).Scan(&one)
	runStmt.Close()
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w", runID, audit.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}

	s := &saver{
		db:        db,
		runID:     runID,
		now:       formatInstant(time.Now()),
		compact:   db.compact,
		shared:    db.targetIDs,
		exists:    &db.targetsExist,
		byRaw:     make(map[string]targetOf),
		byRawHTTP: make(map[string]targetOf),
		byNorm:    make(map[string]int64),
	}
	if db.dialect == dialectPostgres {
		s.pg = newPGBatch(db.eng.Postgres)
	}
	defer s.close()
	if err := s.prepare(ctx, tx); err != nil {
		return nil, err
	}
	for i, p := range pages {
		if p == nil {
			return nil, fmt.Errorf("page %d of the batch is nil", i)
		}
		// Secrets never stored: URL passwords in anything the page
		// carries (the crawler's URLs, redirect hops, evidence) become
		// "***" (urls.RedactStrings; the extractor did it already for
		// what it produced), here or, for a prepared page, by
		// PreparePage.
		if prepared(p) == nil {
			urls.RedactStrings(p)
		}
	}
	if s.pg == nil && !s.db.rowByRow {
		if err := s.batchTargets(ctx, pages); err != nil {
			return nil, fmt.Errorf("targets of the batch: %w", err)
		}
	}
	for i, p := range pages {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("stopped before page %d of %d: %w", i+1, len(pages), err)
		}
		if err := s.page(ctx, p); err != nil {
			return nil, fmt.Errorf("page %s: %w", quote(p.URL), err)
		}
	}
	if s.pg != nil {
		if err := s.pg.flush(ctx, tx); err != nil {
			return nil, err
		}
	}
	if err := s.writeFragments(ctx, tx); err != nil {
		return nil, err
	}
	if err := s.writeRunTargets(ctx, tx); err != nil {
		return nil, err
	}
	return s, nil
}

// quote quotes s for an error message, shortened if long (a URL from the
// web can be megabytes).
func quote(s string) string {
	const max = 200
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

// saver writes one batch inside one transaction with statements prepared
// once for the batch.
type saver struct {
	db    *DB
	runID int64
	now   any // first_seen_at of new targets
	// compact: write links in the compact form of migration 0008
	// (url_form). False only for a DB built by hand on an older schema
	// (the fixture writers of the tests).
	compact bool
	// shared is the DB's cache of target IDs by normalized URL across
	// batches (nil: none). Targets found by SELECT go in at once; targets
	// this transaction inserts wait in created until it has committed
	// (publish), so a rolled-back ID never enters it.
	shared  *lru.Cache[string, int64]
	created []string
	// byRaw and byRawHTTP cache target results of this transaction by raw
	// URL (without and with httpOnly). byNorm caches IDs by normalized URL.
	byRaw, byRawHTTP map[string]targetOf
	byNorm           map[string]int64

	// exists is the DB's guess whether a target not in the caches
	// exists already (see lookupTarget); SQLite only.
	exists *targetGuess

	// insPage, insTarget and insLink end in RETURNING id on PostgreSQL;
	// on SQLite they do not, and the ID is the result's LastInsertId
	// (see insertID).
	insPage, insTarget, selTarget, insLink                                 *sql.Stmt
	insRedirect, insSnapshot, insTemporal, insIdentifier, insPWID, insDiag *rowStmt
	// pg buffers rows for COPY on PostgreSQL (pgcopy.go); nil on SQLite.
	pg *pgBatch
	// tx and insEvidence: see evidence.
	tx          *sql.Tx
	insEvidence *sql.Stmt
	updPosition *sql.Stmt // see positions.go
	// insLinks are the multi-row link INSERTs by row count (negative:
	// of plain links), and linkArgsBuf their arguments, reused (see
	// links).
	insLinks    map[int]*sql.Stmt
	linkArgsBuf []any
	// frags are the batch's distinct (target, #fragment) pairs, for
	// run_fragments (fragments.go).
	frags map[fragKey]struct{}
	// targets are the batch's distinct link targets, for run_targets
	// (runtargets.go).
	targets map[runTarget]struct{}
}

// saverRows are the tables of saver's rowStmts, in the order of
// saver.prepare, and their columns.
var saverRows = []struct {
	table string
	cols  []string
}{
	{"redirects", []string{"page_id", "hop", "from_url", "to_url", "status"}},
	{"snapshots", []string{"link_id", "source", "ord", "url", "datetime", "date_only", "datetime_raw", "rel", "target_id"}},
	{"mset_temporal", []string{"link_id", "ord", "datetime"}},
	{"identifiers", []string{"page_id", "ord", "url", "rel", "source"}},
	{"pwids", []string{"page_id", "ord", "link_id", "raw", "archive_id", "datetime", "content_spec", "item", "source"}},
	{"diagnostics", []string{"run_id", "page_id", "link_id", "ord", "field", "code", "message"}},
}

// rowInsertSQL inserts a row of saverRows[i] (SQLite; PostgreSQL copies
// them, see rowStmt).
func rowInsertSQL(i int) string {
	r := saverRows[i]
	return "INSERT INTO " + r.table + " (" + strings.Join(r.cols, ", ") + ") VALUES (" + params(1, len(r.cols)) + ")"
}

// saverSQL returns the statements of saver.insPage, insTarget, selTarget
// and insLink. On SQLite (pg false) the INSERTs have no RETURNING: the ID
// comes from LastInsertId (insertID), which costs less than a row to read.
func saverSQL(compact, pg bool) [4]string {
	q := [4]string{
		`INSERT INTO pages (run_id, url, request_url, target_id, depth, status,
			content_type, charset, size, truncated, parsed, title, base, fetch_error,
			fetched_at, duration_ms)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
			ON CONFLICT (run_id, url) DO NOTHING RETURNING id`,
		`INSERT INTO targets (url, host, scheme, first_seen_run, first_seen_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (url) DO NOTHING RETURNING id`,
		`SELECT id FROM targets WHERE url = $1`,
		insertLinkSQL(compact),
	}
	if !pg {
		for i := range q {
			q[i] = strings.TrimSuffix(q[i], " RETURNING id")
		}
	}
	return q
}

func (s *saver) prepare(ctx context.Context, tx *sql.Tx) error {
	s.tx = tx
	rows := []**rowStmt{&s.insRedirect, &s.insSnapshot, &s.insTemporal, &s.insIdentifier, &s.insPWID, &s.insDiag}
	for i, dst := range rows {
		rs := &rowStmt{batch: s.pg, table: saverRows[i].table, cols: saverRows[i].cols}
		if s.pg == nil {
			stmt, err := s.db.txStmt(ctx, tx, rowInsertSQL(i))
			if err != nil {
				return err
			}
			rs.stmt = stmt
		}
		*dst = rs
	}
	stmts := []**sql.Stmt{&s.insPage, &s.insTarget, &s.selTarget, &s.insLink}
	for i, query := range saverSQL(s.compact, s.pg != nil) {
		stmt, err := s.db.txStmt(ctx, tx, query)
		if err != nil {
			return err
		}
		*stmts[i] = stmt
	}
	return nil
}

func (s *saver) close() {
	for _, st := range []*sql.Stmt{s.insPage, s.insTarget, s.selTarget, s.insLink, s.insEvidence, s.updPosition} {
		if st != nil {
			st.Close()
		}
	}
	for _, st := range s.insLinks {
		st.Close()
	}
	for _, r := range []*rowStmt{s.insRedirect, s.insSnapshot, s.insTemporal, s.insIdentifier, s.insPWID, s.insDiag} {
		r.close()
	}
}

// targetOf is the target of a raw URL: id is its ID as an int64, or nil
// for "no target"; url is its normalized URL.
type targetOf struct {
	id  any
	url string
}

// publish shares the targets the committed transaction created with later
// batches.
func (s *saver) publish() {
	if s == nil {
		return
	}
	s.db.fragSeen.add(s.runID, s.frags)
	s.db.targetSeen.add(s.runID, s.targets)
	if s.shared == nil {
		return
	}
	for _, norm := range s.created {
		s.shared.Add(norm, s.byNorm[norm])
	}
	s.created = nil
}

// target returns the ID of the target of raw (creating it if needed) as an
// int64, or nil when raw has none: empty, unparseable or not absolute, and
// with httpOnly, not http or https.
func (s *saver) target(ctx context.Context, raw string, httpOnly bool) (any, error) {
	t, err := s.targetURL(ctx, raw, httpOnly)
	return t.id, err
}

// targetURL is target with the target's normalized URL.
func (s *saver) targetURL(ctx context.Context, raw string, httpOnly bool) (targetOf, error) {
	cache := s.byRaw
	if httpOnly {
		cache = s.byRawHTTP
	}
	if t, ok := cache[raw]; ok {
		return t, nil
	}
	t, err := s.lookupTarget(ctx, raw, httpOnly)
	if err != nil {
		return targetOf{}, err
	}
	cache[raw] = t
	return t, nil
}

func (s *saver) lookupTarget(ctx context.Context, raw string, httpOnly bool) (targetOf, error) {
	norm, u, ok := targetURLOf(raw, httpOnly)
	if !ok {
		return targetOf{}, nil
	}
	return s.targetOfKey(ctx, raw, norm, u)
}

// targetOfKey returns the target norm, the key of raw, creating it if
// needed; u is raw parsed (targetURLOf), or nil for a link's href whose
// key the link carried (linkTarget): it is parsed then only to create the
// target.
func (s *saver) targetOfKey(ctx context.Context, raw, norm string, u *url.URL) (targetOf, error) {
	if id, ok := s.byNorm[norm]; ok {
		return targetOf{id, norm}, nil
	}
	if s.shared != nil {
		if id, ok := s.shared.Get(norm); ok {
			s.byNorm[norm] = id
			return targetOf{id, norm}, nil
		}
	}
	if u == nil {
		var err error
		if u, err = hrefURL(raw, norm); err != nil {
			return targetOf{}, err
		}
	}
	id, err := s.findOrInsertTarget(ctx, norm, u.Host, u.Scheme)
	if err != nil {
		return targetOf{}, fmt.Errorf("target %s: %w", quote(norm), err)
	}
	s.byNorm[norm] = id
	return targetOf{id, norm}, nil
}

// targetURLOf returns the normalized URL of the target of raw, parsed,
// or ok false when raw has none: empty, unparseable or not absolute, and
// with httpOnly, not http or https.
func targetURLOf(raw string, httpOnly bool) (norm string, u *url.URL, ok bool) {
	norm, p, ok := urls.TargetKey(raw)
	if !ok {
		return "", nil, false // not a URL: data, not an error
	}
	u = p.NetURL()
	if httpOnly && u.Scheme != "http" && u.Scheme != "https" {
		return "", nil, false
	}
	return norm, u, true
}

// findOrInsertTarget returns the ID of the target norm, inserting it when
// it does not exist.
//
// PostgreSQL looks it up first (an INSERT that finds the URL taken would
// still use up a value of the ID sequence). SQLite, whose IDs are max+1,
// begins with whichever statement s.exists guesses will settle it: the
// INSERT when recent targets were new (a first run), the SELECT when they
// existed (a run again over the same site). The transaction holds the
// write lock, so nobody can insert the URL between the two.
func (s *saver) findOrInsertTarget(ctx context.Context, norm, host, scheme string) (int64, error) {
	guess := s.pg == nil // SQLite keeps the guess up to date
	if !guess || s.exists.likely() {
		var id int64
		err := s.selTarget.QueryRowContext(ctx, norm).Scan(&id)
		if err == nil {
			s.existing(norm, id, guess)
			return id, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, err
		}
	}
	id, ok, err := s.insertID(ctx, s.insTarget, norm, host, scheme, s.runID, s.now)
	if err != nil {
		return 0, err
	}
	if ok {
		if guess {
			s.exists.saw(false)
		}
		s.created = append(s.created, norm)
		return id, nil
	}
	// The URL is taken: SQLite guessed "new" wrongly, or (PostgreSQL)
	// another process committed it meanwhile, its writers not waiting for
	// this transaction as SQLite's do. Use its row.
	if err := s.selTarget.QueryRowContext(ctx, norm).Scan(&id); err != nil {
		return 0, err
	}
	s.existing(norm, id, guess)
	return id, nil
}

// existing notes that the target norm was found with id, committed
// before this transaction (so it may be shared at once), and with guess
// tells the DB's guess that it existed.
func (s *saver) existing(norm string, id int64, guess bool) {
	if guess {
		s.exists.saw(true)
	}
	if s.shared != nil {
		s.shared.Add(norm, id)
	}
}

// insertID runs stmt, an INSERT of one row that may do nothing (ON
// CONFLICT DO NOTHING), and returns the new row's ID, or ok=false when it
// inserted nothing. See saver.insPage.
func (s *saver) insertID(ctx context.Context, stmt *sql.Stmt, args ...any) (id int64, ok bool, err error) {
	if s.pg != nil {
		err := stmt.QueryRowContext(ctx, args...).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false, nil
		}
		return id, err == nil, err
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return 0, false, err
	}
	// SQLite: changes() counts the rows of the statement only (no
	// trigger inserts into these tables), so 0 is "did nothing", and only
	// then is LastInsertId not this statement's.
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return 0, false, err
	}
	id, err = res.LastInsertId()
	return id, err == nil, err
}

// targetGuess guesses whether the next target looked up exists already,
// from the targets looked up last: a score that each existing target
// moves down and each new one up, within ±targetGuessSpan. It starts at
// "new".
type targetGuess struct{ score atomic.Int32 }

const targetGuessSpan = 16

func (g *targetGuess) likely() bool { return g.score.Load() < 0 }

func (g *targetGuess) saw(existed bool) {
	v := g.score.Load()
	if existed {
		v = max(v-1, -targetGuessSpan)
	} else {
		v = min(v+1, targetGuessSpan-1)
	}
	g.score.Store(v)
}

func (s *saver) page(ctx context.Context, p *audit.Page) error {
	pageTarget, err := s.target(ctx, p.URL, false)
	if err != nil {
		return err
	}
	pageID, ok, err := s.insertID(ctx, s.insPage, s.runID, p.URL, p.RequestURL, pageTarget, p.Depth,
		p.Status, p.ContentType, p.Charset, p.Size, boolInt(p.Truncated), boolInt(p.Parsed),
		p.Title, p.Base, p.FetchError, formatInstant(p.FetchedAt), p.Duration.Milliseconds())
	if err != nil {
		return err
	}
	if !ok {
		return nil // the run already has this URL: keep the first
	}
	if err := s.pageFile(ctx, pageID, p.File); err != nil {
		return err
	}

	for i, r := range p.Redirects {
		if _, err := s.insRedirect.ExecContext(ctx, pageID, i, r.From, r.To, r.Status); err != nil {
			return fmt.Errorf("redirect %d: %w", i, err)
		}
	}
	if err := s.evidence(ctx, pageID, p); err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	linkIDs := make([]int64, len(p.Links))
	if s.multiLinks() {
		if err := s.links(ctx, pageID, p.Links, linkIDs); err != nil {
			return err
		}
	} else {
		for i := range p.Links {
			id, err := s.link(ctx, pageID, i, &p.Links[i])
			if err == nil && !s.compact { // compact: written with the row
				err = s.position(ctx, id, &p.Links[i])
			}
			if err != nil {
				return fmt.Errorf("link %d: %w", i, err)
			}
			linkIDs[i] = id
		}
	}
	for i, id := range p.Identifiers {
		if _, err := s.insIdentifier.ExecContext(ctx, pageID, i, id.URL, id.Rel, id.Source); err != nil {
			return fmt.Errorf("identifier %d: %w", i, err)
		}
	}
	for i, w := range p.PWIDs {
		var link any
		switch {
		case w.Link == -1:
		case w.Link >= 0 && w.Link < len(linkIDs):
			link = linkIDs[w.Link]
		default:
			return fmt.Errorf("pwid %d: link index %d out of range [-1, %d)", i, w.Link, len(linkIDs))
		}
		if _, err := s.insPWID.ExecContext(ctx, pageID, i, link, w.Raw, w.ArchiveID,
			formatSpecTime(w.Datetime), w.ContentSpec, w.Item, w.Source); err != nil {
			return fmt.Errorf("pwid %d: %w", i, err)
		}
	}
	for i, d := range p.Diagnostics {
		if _, err := s.insDiag.ExecContext(ctx, s.runID, pageID, nil, i, d.Field, d.Code, d.Message); err != nil {
			return fmt.Errorf("diagnostic %d: %w", i, err)
		}
	}
	return nil
}

// linkArgs appends the arguments of insertLinkSQL for l, the link ord of
// the page pageID, to args, creating its target if needed. With plain (l
// is a plainLink), it appends those of a row of insertPlainLinksSQL
// instead: without page_id, run_id and the Robust Links and mset columns.
func (s *saver) linkArgs(ctx context.Context, args []any, pageID int64, ord int, l *audit.Link, plain bool) ([]any, error) {
	var t targetOf
	if l.Checked() { // a connection hint is recorded without a target
		var err error
		if t, err = s.linkTarget(ctx, l); err != nil {
			return args, err
		}
	}
	target := t.id
	_, fragment, _ := strings.Cut(l.Href, "#")
	s.noteFragment(target, fragment)
	s.noteTarget(target)
	href, rawHref := l.Href, l.RawHref
	var form int
	if s.compact {
		form = linkURLForm(l.Href, l.RawHref, fragment, t)
		if form&formHrefTarget != 0 {
			href = ""
		}
		if form&formRawHref != 0 {
			rawHref = ""
		}
	}

	var (
		hasRobust                                                      int
		original, originalRaw, inferred, vdate, dateOnly, vdRaw, vuRaw any
	)
	if r := l.Robust; r != nil {
		hasRobust = 1
		if r.OriginalURL != "" {
			original = r.OriginalURL
		}
		originalRaw = r.OriginalRaw
		inferred = boolInt(r.OriginalInferred)
		vdate = formatSpecTime(r.VersionDate)
		dateOnly = boolInt(r.VersionDateOnly)
		vdRaw = r.VersionDateRaw
		vuRaw = r.VersionURLRaw
	}
	var (
		hasMset int
		msetRaw any
	)
	if l.Mset != nil {
		hasMset = 1
		msetRaw = l.Mset.Raw
	}

	if plain {
		args = append(args, ord, l.Element, l.Attr, href, rawHref, target, l.Text,
			joinRel(l.Rel), boolInt(l.Resource), fragment)
	} else {
		args = append(args, pageID, s.runID, ord, l.Element, l.Attr, href,
			rawHref, target, l.Text, joinRel(l.Rel), boolInt(l.Resource), fragment,
			hasRobust, original, originalRaw, inferred, vdate, dateOnly, vdRaw, vuRaw,
			hasMset, msetRaw)
	}
	if s.compact {
		line, col, hash := 0, 0, ""
		if l.Line > 0 { // see position
			line, col, hash = l.Line, max(l.Column, 0), l.LineHash
		}
		args = append(args, form, line, col, hash)
	}
	return args, nil
}

// joinRel is strings.Join(rel, " "), without allocating for the usual
// zero or one token.
func joinRel(rel []string) string {
	switch len(rel) {
	case 0:
		return ""
	case 1:
		return rel[0]
	}
	return strings.Join(rel, " ")
}

// link writes l, the link ord of the page pageID, one row per statement
// (PostgreSQL, and SQLite on an older schema; see links), and what hangs
// off it, and returns its ID.
func (s *saver) link(ctx context.Context, pageID int64, ord int, l *audit.Link) (int64, error) {
	args, err := s.linkArgs(ctx, nil, pageID, ord, l, false)
	if err != nil {
		return 0, err
	}
	var linkID int64
	if s.pg != nil {
		// COPY at the end of the batch, with the link's position.
		if linkID, err = s.pg.linkID(ctx, s.tx); err != nil {
			return 0, err
		}
		args = append([]any{linkID}, args...)
		if !s.compact { // compact: the position is in args already
			line, col, lineHash := 0, 0, ""
			if l.Line > 0 {
				line, col, lineHash = l.Line, max(l.Column, 0), l.LineHash
			}
			args = append(args, line, col, lineHash)
		}
		if err := s.pg.add("links", pgLinkColumns(s.compact), args); err != nil {
			return 0, err
		}
	} else {
		var ok bool
		if linkID, ok, err = s.insertID(ctx, s.insLink, args...); err != nil {
			return 0, err
		}
		if !ok {
			return 0, errors.New("link not inserted")
		}
	}
	return linkID, s.linkChildren(ctx, pageID, linkID, l)
}

// linkChildren writes what hangs off the link linkID: its Robust Links
// snapshots, mset data and diagnostics.
func (s *saver) linkChildren(ctx context.Context, pageID, linkID int64, l *audit.Link) error {
	if l.Robust != nil {
		for i, sn := range l.Robust.Snapshots {
			if err := s.snapshot(ctx, linkID, "versionurl", i, sn.URL, sn.Datetime, sn.DateOnly, sn.DatetimeRaw, nil); err != nil {
				return fmt.Errorf("snapshot %d: %w", i, err)
			}
		}
	}
	if m := l.Mset; m != nil {
		for i, t := range m.Temporal {
			if _, err := s.insTemporal.ExecContext(ctx, linkID, i, formatSpecTime(t)); err != nil {
				return fmt.Errorf("mset temporal %d: %w", i, err)
			}
		}
		for i, c := range m.Copies {
			var rel any
			if c.Rel != nil {
				rel = *c.Rel
			}
			if err := s.snapshot(ctx, linkID, "mset", i, c.URL, c.Datetime, c.DateOnly, c.DatetimeRaw, rel); err != nil {
				return fmt.Errorf("mset copy %d: %w", i, err)
			}
		}
	}
	for i, d := range l.Diagnostics {
		if _, err := s.insDiag.ExecContext(ctx, s.runID, pageID, linkID, i, d.Field, d.Code, d.Message); err != nil {
			return fmt.Errorf("diagnostic %d: %w", i, err)
		}
	}
	return nil
}

// snapshotTargets looks up (creating them if needed) the targets of the
// snapshot URLs of l, in the order linkChildren writes them.
func (s *saver) snapshotTargets(ctx context.Context, l *audit.Link) error {
	if l.Robust != nil {
		for i, sn := range l.Robust.Snapshots {
			if _, err := s.target(ctx, sn.URL, true); err != nil {
				return fmt.Errorf("snapshot %d: %w", i, err)
			}
		}
	}
	if l.Mset != nil {
		for i, c := range l.Mset.Copies {
			if _, err := s.target(ctx, c.URL, true); err != nil {
				return fmt.Errorf("mset copy %d: %w", i, err)
			}
		}
	}
	return nil
}

func (s *saver) snapshot(ctx context.Context, linkID int64, source string, ord int, u string,
	dt audit.Time, dateOnly bool, raw string, rel any) error {
	target, err := s.target(ctx, u, true)
	if err != nil {
		return err
	}
	_, err = s.insSnapshot.ExecContext(ctx, linkID, source, ord, u, formatSpecTime(dt),
		boolInt(dateOnly), raw, rel, target)
	return err
}
