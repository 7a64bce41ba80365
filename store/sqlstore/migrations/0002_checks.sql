-- 0002: the checking stage of a run: one check per target, findings tied
-- to links, and link-maintenance records.
--
-- Conventions are those of 0001. In addition:
--   * Durations are whole milliseconds (like pages.duration_ms).
--   * Small structured values (a redirect chain, a header subset) are JSON
--     text, checked with json_valid; invalid UTF-8 in their strings becomes
--     U+FFFD (Go's encoding/json).
--   * verdict columns accept exactly audit.Verdicts. A new verdict in the
--     domain needs a migration that rebuilds these tables (SQLite cannot
--     alter a CHECK); TestChecks_EveryVerdict fails until it exists.

-- checks holds the result of checking one target in one run. A run checks a
-- target once: saving it again in the same run (a resumed run re-checks)
-- replaces the row. Earlier runs keep their rows, which PreviousChecks reads
-- to reuse a result or send a conditional request.
CREATE TABLE checks (
	run_id               INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target_id            INTEGER NOT NULL REFERENCES targets (id),
	verdict              TEXT    NOT NULL CONSTRAINT checks_verdict CHECK (verdict IN (
		'ok', 'redirected', 'moved', 'not-found', 'gone', 'client-error', 'blocked',
		'rate-limited', 'server-error', 'timeout', 'dns-error', 'connection-error',
		'tls-error', 'too-many-redirects', 'redirect-loop', 'soft-404',
		'redirect-to-root', 'skipped', 'fragment-missing', 'refused')),
	reason               TEXT    NOT NULL,
	error_class          TEXT    NOT NULL,
	status               INTEGER NOT NULL,        -- 0 without a response
	final_url            TEXT    NOT NULL,
	redirects            TEXT    NOT NULL DEFAULT '[]' -- JSON array of {"from","to","status"}
		CHECK (json_valid(redirects) AND json_type(redirects) = 'array'),
	replacement          TEXT    NOT NULL,
	attempts             INTEGER NOT NULL,
	dns_ms               INTEGER NOT NULL,
	connect_ms           INTEGER NOT NULL,
	tls_ms               INTEGER NOT NULL,
	first_byte_ms        INTEGER NOT NULL,
	total_ms             INTEGER NOT NULL,
	checked_at           TEXT,                    -- RFC 3339 UTC, 9-digit fraction; NULL when unknown
	headers              TEXT    NOT NULL DEFAULT '{}' -- JSON object, field name -> value
		CHECK (json_valid(headers) AND json_type(headers) = 'object'),
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
	PRIMARY KEY (run_id, target_id),
	CONSTRAINT checks_soft404 CHECK (
		(soft404_probe_url IS NULL AND soft404_probe_status IS NULL
			AND soft404_probe_final IS NULL AND soft404_similarity IS NULL)
		OR (soft404_probe_url IS NOT NULL AND soft404_probe_status IS NOT NULL
			AND soft404_probe_final IS NOT NULL))
) STRICT;

-- The cache lookup: the latest check of a target, newest first.
CREATE INDEX checks_target_checked_at ON checks (target_id, checked_at, run_id);

-- findings holds problems tied to one link of one page (link_id NULL when
-- the finding has no link row).
CREATE TABLE findings (
	id       INTEGER PRIMARY KEY,
	run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	link_id  INTEGER REFERENCES links (id) ON DELETE CASCADE,
	page_url TEXT    NOT NULL,
	target   TEXT    NOT NULL,
	verdict  TEXT    NOT NULL CONSTRAINT findings_verdict CHECK (verdict IN (
		'ok', 'redirected', 'moved', 'not-found', 'gone', 'client-error', 'blocked',
		'rate-limited', 'server-error', 'timeout', 'dns-error', 'connection-error',
		'tls-error', 'too-many-redirects', 'redirect-loop', 'soft-404',
		'redirect-to-root', 'skipped', 'fragment-missing', 'refused')),
	message  TEXT    NOT NULL,
	fragment TEXT    NOT NULL
) STRICT;

CREATE INDEX findings_run_id ON findings (run_id);
CREATE INDEX findings_link_id ON findings (link_id);

-- maintenance holds link-maintenance (UNLINKR) records: on page source,
-- replace the link to target with replacement. A run records each
-- (source, target) pair once; later duplicates are ignored.
CREATE TABLE maintenance (
	run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	source      TEXT    NOT NULL,
	target      TEXT    NOT NULL,
	replacement TEXT    NOT NULL,
	status      INTEGER NOT NULL,                 -- the permanent redirect status behind it
	UNIQUE (run_id, source, target)
) STRICT;
