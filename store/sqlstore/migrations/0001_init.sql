-- 0001: runs, pages and everything extracted from them.
--
-- Conventions:
--   * Instants are RFC 3339 UTC text. Observation times (runs.started_at,
--     pages.fetched_at, ...) have a fixed nine-digit fraction so that text
--     order is time order; datetimes parsed from markup (Robust Links, mset,
--     pwid) are to the second. NULL means "none" (a zero time in Go).
--   * Booleans are INTEGER 0 or 1.
--   * Strings from crawled pages are stored verbatim, whatever bytes they
--     hold; '' means absent where the domain type has no separate null.
--   * ord columns keep the order of slices in the domain types.
-- Tables are STRICT so that a wrongly typed value is an error, not data.

CREATE TABLE runs (
	id          INTEGER PRIMARY KEY,
	started_at  TEXT    NOT NULL,
	finished_at TEXT,                             -- NULL while running
	status      TEXT    NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
	mode        TEXT    NOT NULL,
	seeds       TEXT    NOT NULL DEFAULT '[]',    -- JSON array of strings
	args        TEXT    NOT NULL DEFAULT '[]',    -- JSON array of strings
	version     TEXT    NOT NULL,
	error       TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX runs_started_at ON runs (started_at);

-- targets holds one row per normalized URL (audit.NormalizeURL) across all
-- runs, so that later checks run once per URL.
CREATE TABLE targets (
	id             INTEGER PRIMARY KEY,
	url            TEXT    NOT NULL UNIQUE,
	host           TEXT    NOT NULL,              -- host[:port] as normalized, '' for opaque URLs
	scheme         TEXT    NOT NULL,
	first_seen_run INTEGER REFERENCES runs (id) ON DELETE SET NULL,
	first_seen_at  TEXT    NOT NULL
) STRICT;

CREATE INDEX targets_first_seen_run ON targets (first_seen_run);

-- pages holds each fetched document once per run: a second page with the
-- same final URL in the same run is ignored (the first one wins).
CREATE TABLE pages (
	id           INTEGER PRIMARY KEY,
	run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	url          TEXT    NOT NULL,                -- final URL after redirects
	request_url  TEXT    NOT NULL,
	target_id    INTEGER REFERENCES targets (id), -- the page's own URL as a target
	depth        INTEGER NOT NULL,
	status       INTEGER NOT NULL,                -- 0 when no response
	content_type TEXT    NOT NULL,
	charset      TEXT    NOT NULL,
	size         INTEGER NOT NULL,
	truncated    INTEGER NOT NULL CHECK (truncated IN (0, 1)),
	parsed       INTEGER NOT NULL CHECK (parsed IN (0, 1)),
	title        TEXT    NOT NULL,
	base         TEXT    NOT NULL,
	fetch_error  TEXT    NOT NULL,
	fetched_at   TEXT,
	duration_ms  INTEGER NOT NULL,
	UNIQUE (run_id, url)
) STRICT;

CREATE INDEX pages_target_id ON pages (target_id);

CREATE TABLE redirects (
	page_id  INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
	hop      INTEGER NOT NULL,
	from_url TEXT    NOT NULL,
	to_url   TEXT    NOT NULL,
	status   INTEGER NOT NULL,
	PRIMARY KEY (page_id, hop)
) STRICT;

-- links holds every URL reference of a page. The Robust Links columns are
-- NULL when has_robust is 0, mset_raw is NULL when has_mset is 0.
CREATE TABLE links (
	id                    INTEGER PRIMARY KEY,
	page_id               INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
	run_id                INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	ord                   INTEGER NOT NULL,       -- index in Extraction.Links
	element               TEXT    NOT NULL,
	attr                  TEXT    NOT NULL,
	href                  TEXT    NOT NULL,
	raw_href              TEXT    NOT NULL,
	target_id             INTEGER REFERENCES targets (id), -- NULL: not an absolute URL
	text                  TEXT    NOT NULL,
	rel                   TEXT    NOT NULL,       -- tokens joined by one space
	resource              INTEGER NOT NULL CHECK (resource IN (0, 1)),
	fragment              TEXT    NOT NULL,       -- href after the first '#', '' when none
	has_robust            INTEGER NOT NULL CHECK (has_robust IN (0, 1)),
	originalurl           TEXT,                   -- NULL also when empty (spec: null)
	originalurl_raw       TEXT,
	originalurl_inferred  INTEGER CHECK (originalurl_inferred IN (0, 1)),
	versiondate           TEXT,                   -- RFC 3339 UTC, NULL when none
	versiondate_date_only INTEGER CHECK (versiondate_date_only IN (0, 1)),
	versiondate_raw       TEXT,
	versionurl_raw        TEXT,
	has_mset              INTEGER NOT NULL CHECK (has_mset IN (0, 1)),
	mset_raw              TEXT,
	UNIQUE (page_id, ord)
) STRICT;

CREATE INDEX links_run_id ON links (run_id);
CREATE INDEX links_target_id ON links (target_id);

-- snapshots holds data-versionurl entries (source 'versionurl') and mset
-- copy links (source 'mset', with their link type in rel). 'pwid' is
-- reserved for snapshots derived from pwids; nothing writes it yet.
CREATE TABLE snapshots (
	id           INTEGER PRIMARY KEY,
	link_id      INTEGER NOT NULL REFERENCES links (id) ON DELETE CASCADE,
	source       TEXT    NOT NULL CHECK (source IN ('versionurl', 'mset', 'pwid')),
	ord          INTEGER NOT NULL,
	url          TEXT    NOT NULL,
	datetime     TEXT,
	date_only    INTEGER NOT NULL CHECK (date_only IN (0, 1)),
	datetime_raw TEXT    NOT NULL,
	rel          TEXT,                            -- mset link type, NULL when none
	target_id    INTEGER REFERENCES targets (id), -- only for http(s) URLs
	UNIQUE (link_id, source, ord)
) STRICT;

CREATE INDEX snapshots_target_id ON snapshots (target_id);

CREATE TABLE mset_temporal (
	link_id  INTEGER NOT NULL REFERENCES links (id) ON DELETE CASCADE,
	ord      INTEGER NOT NULL,
	datetime TEXT,
	PRIMARY KEY (link_id, ord)
) STRICT;

CREATE TABLE identifiers (
	page_id INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
	ord     INTEGER NOT NULL,
	url     TEXT    NOT NULL,
	rel     TEXT    NOT NULL,
	source  TEXT    NOT NULL,
	PRIMARY KEY (page_id, ord)
) STRICT;

CREATE TABLE pwids (
	id           INTEGER PRIMARY KEY,
	page_id      INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
	ord          INTEGER NOT NULL,                -- index in Extraction.PWIDs
	link_id      INTEGER REFERENCES links (id) ON DELETE CASCADE, -- NULL: found in text
	raw          TEXT    NOT NULL,
	archive_id   TEXT    NOT NULL,
	datetime     TEXT,
	content_spec TEXT    NOT NULL,
	item         TEXT    NOT NULL,
	source       TEXT    NOT NULL,
	UNIQUE (page_id, ord)
) STRICT;

CREATE INDEX pwids_link_id ON pwids (link_id);

-- diagnostics holds page-level (link_id NULL) and link-level problems.
CREATE TABLE diagnostics (
	id      INTEGER PRIMARY KEY,
	run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	page_id INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
	link_id INTEGER REFERENCES links (id) ON DELETE CASCADE,
	ord     INTEGER NOT NULL,                     -- index in the page's or link's Diagnostics
	field   TEXT    NOT NULL,
	code    TEXT    NOT NULL,
	message TEXT    NOT NULL
) STRICT;

CREATE INDEX diagnostics_run_id ON diagnostics (run_id);
CREATE INDEX diagnostics_page_id ON diagnostics (page_id);
CREATE INDEX diagnostics_link_id ON diagnostics (link_id);
