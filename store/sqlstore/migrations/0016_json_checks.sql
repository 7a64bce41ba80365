-- 0016: the JSON columns of checks (redirects, headers, soft404_signals)
-- and page_evidence (headers, anchors, signals) without their CHECK
-- constraints calling json_valid and json_type.
--
-- SQLite parses the JSON text of each such column of each row it writes
-- to evaluate them: about a tenth of the CPU of writing a check. The
-- writer builds that text itself (encoding/json, or the equivalent direct
-- encoders of checks.go for printable-ASCII header maps and string lists,
-- which give the same text), so it is valid JSON of the right type by
-- construction; TestJSONColumns_Valid proves it for what the writer can
-- be handed. Every other constraint, index and trigger is kept as it was.
--
-- The constraints have no names, so the two tables are rebuilt (create,
-- copy, drop, rename; nothing references them), with their columns in
-- the same order and their rows unchanged (rowids included), and the
-- index and triggers of checks made again. (PostgreSQL names them and
-- drops them with ALTER TABLE ... DROP CONSTRAINT.)

CREATE TABLE checks_0016 (
	run_id               INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target_id            INTEGER NOT NULL REFERENCES targets (id),
	verdict              TEXT    NOT NULL,
	reason               TEXT    NOT NULL,
	error_class          TEXT    NOT NULL,
	status               INTEGER NOT NULL,        -- 0 without a response
	final_url            TEXT    NOT NULL,
	redirects            TEXT    NOT NULL DEFAULT '[]', -- JSON array of {"from","to","status"}
	replacement          TEXT    NOT NULL,
	attempts             INTEGER NOT NULL,
	dns_ms               INTEGER NOT NULL,
	connect_ms           INTEGER NOT NULL,
	tls_ms               INTEGER NOT NULL,
	first_byte_ms        INTEGER NOT NULL,
	total_ms             INTEGER NOT NULL,
	checked_at           TEXT,                    -- RFC 3339 UTC, 9-digit fraction; NULL when unknown
	headers              TEXT    NOT NULL DEFAULT '{}', -- JSON object, field name -> value
	content_type         TEXT    NOT NULL,
	etag                 TEXT    NOT NULL,
	last_modified        TEXT    NOT NULL,
	reused               INTEGER NOT NULL CHECK (reused IN (0, 1)),
	reused_from          INTEGER REFERENCES runs (id) ON DELETE SET NULL, -- NULL: not reused
	sha256               TEXT    NOT NULL,
	simhash              INTEGER NOT NULL,        -- the uint64 bit pattern as int64
	words                INTEGER NOT NULL,
	truncated            INTEGER NOT NULL CHECK (truncated IN (0, 1)),
	-- Soft-404 evidence: all NULL when there is none. soft404_similarity is
	-- also NULL for a NaN similarity (SQLite stores NaN as NULL).
	soft404_probe_url    TEXT,
	soft404_probe_status INTEGER,
	soft404_probe_final  TEXT,
	soft404_similarity   REAL,
	from_crawl           INTEGER NOT NULL DEFAULT 0 CHECK (from_crawl IN (0, 1)), -- 0007
	soft404_signals      TEXT,                    -- JSON object (0012); NULL without soft-404 evidence
	PRIMARY KEY (run_id, target_id),
	CONSTRAINT checks_soft404 CHECK (
		(soft404_probe_url IS NULL AND soft404_probe_status IS NULL
			AND soft404_probe_final IS NULL AND soft404_similarity IS NULL)
		OR (soft404_probe_url IS NOT NULL AND soft404_probe_status IS NOT NULL
			AND soft404_probe_final IS NOT NULL)),
	CONSTRAINT checks_verdict CHECK (
		verdict = 'ok' OR verdict = 'redirected' OR verdict = 'moved' OR
		verdict = 'not-found' OR verdict = 'gone' OR verdict = 'client-error' OR
		verdict = 'blocked' OR verdict = 'rate-limited' OR verdict = 'server-error' OR
		verdict = 'timeout' OR verdict = 'dns-error' OR
		verdict = 'connection-error' OR verdict = 'tls-error' OR
		verdict = 'too-many-redirects' OR verdict = 'redirect-loop' OR
		verdict = 'soft-404' OR verdict = 'redirect-to-root' OR verdict = 'parked' OR
		verdict = 'skipped' OR verdict = 'fragment-missing' OR verdict = 'refused')
) STRICT;

INSERT INTO checks_0016 (rowid, run_id, target_id, verdict, reason, error_class, status,
	final_url, redirects, replacement, attempts, dns_ms, connect_ms, tls_ms,
	first_byte_ms, total_ms, checked_at, headers, content_type, etag, last_modified,
	reused, reused_from, sha256, simhash, words, truncated, soft404_probe_url,
	soft404_probe_status, soft404_probe_final, soft404_similarity, from_crawl,
	soft404_signals)
SELECT rowid, run_id, target_id, verdict, reason, error_class, status,
	final_url, redirects, replacement, attempts, dns_ms, connect_ms, tls_ms,
	first_byte_ms, total_ms, checked_at, headers, content_type, etag, last_modified,
	reused, reused_from, sha256, simhash, words, truncated, soft404_probe_url,
	soft404_probe_status, soft404_probe_final, soft404_similarity, from_crawl,
	soft404_signals
FROM checks ORDER BY rowid;

DROP TABLE checks; -- with its index and triggers
ALTER TABLE checks_0016 RENAME TO checks;

-- The cache lookup: the latest check of a target, newest first (0002).
CREATE INDEX checks_target_checked_at ON checks (target_id, checked_at, run_id);

-- 0007 and 0012: a check saved again resets the columns written after it.
CREATE TRIGGER checks_from_crawl_reset AFTER UPDATE OF verdict ON checks
WHEN OLD.from_crawl = 1
BEGIN
	UPDATE checks SET from_crawl = 0 WHERE run_id = NEW.run_id AND target_id = NEW.target_id;
END;

CREATE TRIGGER checks_soft404_signals_reset AFTER UPDATE OF verdict ON checks
WHEN OLD.soft404_signals IS NOT NULL
BEGIN
	UPDATE checks SET soft404_signals = NULL WHERE run_id = NEW.run_id AND target_id = NEW.target_id;
END;

CREATE TABLE page_evidence_0016 (
	page_id        INTEGER PRIMARY KEY REFERENCES pages (id) ON DELETE CASCADE,
	headers        TEXT    NOT NULL DEFAULT '{}', -- JSON object, field name -> value
	etag           TEXT    NOT NULL,
	last_modified  TEXT    NOT NULL,
	challenge      TEXT    NOT NULL,              -- '' when the response is no bot challenge
	body_cap       INTEGER NOT NULL,              -- the checker's body cap the evidence was made under
	html           INTEGER NOT NULL CHECK (html IN (0, 1)),
	-- The rest is 0, '' or empty unless html = 1.
	body_bytes     INTEGER NOT NULL,              -- decoded bytes fingerprinted
	body_truncated INTEGER NOT NULL CHECK (body_truncated IN (0, 1)), -- the body went on past them
	sha256         TEXT    NOT NULL,
	simhash        INTEGER NOT NULL,              -- the uint64 bit pattern as int64
	words          INTEGER NOT NULL,
	anchors        TEXT    NOT NULL DEFAULT '[]', -- JSON array of id and <a name> values
	-- The main text's words joined by single spaces (at most 64 KiB, cut
	-- between words; text_capped: the page had more), stored as raw
	-- DEFLATE (RFC 1951); an empty blob is no text.
	text           BLOB    NOT NULL,
	text_capped    INTEGER NOT NULL CHECK (text_capped IN (0, 1)),
	signals        TEXT                           -- JSON object (0012); NULL when none
) STRICT;

INSERT INTO page_evidence_0016 (page_id, headers, etag, last_modified, challenge,
	body_cap, html, body_bytes, body_truncated, sha256, simhash, words, anchors,
	text, text_capped, signals)
SELECT page_id, headers, etag, last_modified, challenge,
	body_cap, html, body_bytes, body_truncated, sha256, simhash, words, anchors,
	text, text_capped, signals
FROM page_evidence ORDER BY page_id;

DROP TABLE page_evidence;
ALTER TABLE page_evidence_0016 RENAME TO page_evidence;
