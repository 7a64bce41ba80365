-- 0003: the archives stage of a run: audits of declared snapshots, nearest
-- mementos per archive, content drift, identifier checks, Robust Link
-- suggestions and Save Page Now requests.
--
-- Conventions are those of 0001 and 0002. In addition:
--   * Every instant is RFC 3339 UTC text with a fixed nine-digit fraction
--     (memento datetimes included), NULL for none.
--   * Signed durations (datetime deltas, distances) are whole milliseconds.
--   * A run holds one set of these rows: the stage deletes the run's rows
--     before it runs again (ClearArchives), so re-checking a run does not
--     duplicate them.

CREATE TABLE snapshot_checks (
	id                   INTEGER PRIMARY KEY,
	run_id               INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	link_id              INTEGER REFERENCES links (id) ON DELETE CASCADE,
	source               TEXT    NOT NULL CHECK (source IN ('versionurl', 'mset', 'pwid')),
	declared             TEXT    NOT NULL,        -- the snapshot (or pwid) as written
	url                  TEXT    NOT NULL,        -- fetched ('' when a pwid did not resolve)
	final_url            TEXT    NOT NULL,
	verdict              TEXT    NOT NULL CHECK (verdict IN (
		'snapshot-ok', 'snapshot-missing', 'snapshot-error', 'not-a-memento')),
	status               INTEGER NOT NULL,        -- 0 without a response
	reason               TEXT    NOT NULL,
	memento_datetime     TEXT,
	declared_datetime    TEXT,
	declared_date_only   INTEGER NOT NULL CHECK (declared_date_only IN (0, 1)),
	datetime_mismatch    INTEGER NOT NULL CHECK (datetime_mismatch IN (0, 1)),
	declared_delta_ms    INTEGER NOT NULL,        -- memento_datetime - declared_datetime
	versiondate_delta_ms INTEGER NOT NULL,        -- memento_datetime - data-versiondate
	original             TEXT    NOT NULL,        -- the memento's Link rel="original"
	original_mismatch    INTEGER NOT NULL CHECK (original_mismatch IN (0, 1)),
	checked_at           TEXT
) STRICT;

CREATE INDEX snapshot_checks_run_id ON snapshot_checks (run_id);
CREATE INDEX snapshot_checks_link_id ON snapshot_checks (link_id);

-- mementos holds, per link and archive, the memento nearest to the wanted
-- datetime (url '' and error set when there is none).
CREATE TABLE mementos (
	id             INTEGER PRIMARY KEY,
	run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	link_id        INTEGER NOT NULL REFERENCES links (id) ON DELETE CASCADE,
	target_id      INTEGER REFERENCES targets (id),
	archive        TEXT    NOT NULL,
	wanted         TEXT    NOT NULL,
	wanted_from    TEXT    NOT NULL CHECK (wanted_from IN ('versiondate', 'mset', 'first-seen')),
	url            TEXT    NOT NULL,
	datetime       TEXT,
	distance_ms    INTEGER NOT NULL,
	representative INTEGER NOT NULL CHECK (representative IN (0, 1)),
	nearest        INTEGER NOT NULL CHECK (nearest IN (0, 1)),  -- closest across archives
	count          INTEGER NOT NULL,                            -- TimeMap mementos (--timemap)
	first          TEXT,
	last           TEXT,
	error          TEXT    NOT NULL,
	checked_at     TEXT,
	UNIQUE (run_id, link_id, archive)
) STRICT;

CREATE INDEX mementos_link_id ON mementos (link_id);

-- drifts holds drift measurements: against a memento (kind 'memento', per
-- link) or against the first fingerprint of the target ('first-seen',
-- link_id NULL). jaccard, dice and cosine are NULL when text_measured is 0.
CREATE TABLE drifts (
	id                INTEGER PRIMARY KEY,
	run_id            INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	link_id           INTEGER REFERENCES links (id) ON DELETE CASCADE,
	target_id         INTEGER NOT NULL REFERENCES targets (id),
	kind              TEXT    NOT NULL CHECK (kind IN ('memento', 'first-seen')),
	reference_url     TEXT    NOT NULL,
	reference_time    TEXT,
	live_url          TEXT    NOT NULL,
	simhash_distance  INTEGER NOT NULL CHECK (simhash_distance BETWEEN 0 AND 64),
	text_measured     INTEGER NOT NULL CHECK (text_measured IN (0, 1)),
	jaccard           REAL,
	dice              REAL,
	cosine            REAL,
	words_reference   INTEGER NOT NULL,
	words_live        INTEGER NOT NULL,
	word_change       REAL    NOT NULL,
	band              TEXT    NOT NULL CHECK (band IN ('unchanged', 'minor', 'major', 'off-topic')),
	excerpt_reference TEXT    NOT NULL,
	excerpt_live      TEXT    NOT NULL,
	measured_at       TEXT,
	CONSTRAINT drifts_text CHECK (text_measured = 1 OR (jaccard IS NULL AND dice IS NULL AND cosine IS NULL))
) STRICT;

CREATE INDEX drifts_run_id ON drifts (run_id);
CREATE INDEX drifts_target_id ON drifts (target_id);

CREATE TABLE identifier_checks (
	id            INTEGER PRIMARY KEY,
	run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	access_url    TEXT    NOT NULL,
	identifier    TEXT    NOT NULL,
	rel           TEXT    NOT NULL,
	own_page      INTEGER NOT NULL CHECK (own_page IN (0, 1)),
	linking_pages TEXT    NOT NULL DEFAULT '[]' -- JSON array of page URLs
		CHECK (json_valid(linking_pages) AND json_type(linking_pages) = 'array'),
	resolves      INTEGER NOT NULL CHECK (resolves IN (0, 1)),
	leads_back    INTEGER NOT NULL CHECK (leads_back IN (0, 1)),
	status        INTEGER NOT NULL,
	how           TEXT    NOT NULL,
	reason        TEXT    NOT NULL,
	checked_at    TEXT
) STRICT;

CREATE INDEX identifier_checks_run_id ON identifier_checks (run_id);

CREATE TABLE suggestions (
	id          INTEGER PRIMARY KEY,
	run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	link_id     INTEGER NOT NULL REFERENCES links (id) ON DELETE CASCADE,
	page_url    TEXT    NOT NULL,
	href        TEXT    NOT NULL,
	text        TEXT    NOT NULL,
	reason      TEXT    NOT NULL CHECK (reason IN ('no-robustness-data', 'broken-with-memento', 'use-identifier')),
	originalurl TEXT    NOT NULL,
	versiondate TEXT,
	versionurl  TEXT    NOT NULL,
	html        TEXT    NOT NULL,
	UNIQUE (run_id, link_id, reason)
) STRICT;

CREATE TABLE save_requests (
	id        INTEGER PRIMARY KEY,
	run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	url       TEXT    NOT NULL,
	archive   TEXT    NOT NULL,
	job_id    TEXT    NOT NULL,
	status    TEXT    NOT NULL CHECK (status IN ('requested', 'success', 'error', 'pending')),
	memento   TEXT    NOT NULL,
	reason    TEXT    NOT NULL,
	requested TEXT
) STRICT;

CREATE INDEX save_requests_run_id ON save_requests (run_id);
