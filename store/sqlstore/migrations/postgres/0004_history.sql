-- PostgreSQL text of migrations/0004_history.sql (the same version; the comments
-- below are the SQLite file's). Translated by the rules of
-- postgres/0001_init.sql: INTEGER PRIMARY KEY id columns are identities,
-- INTEGER is BIGINT, REAL DOUBLE PRECISION, BLOB BYTEA, TEXT compares
-- bytewise (COLLATE "C", as SQLite's BINARY), JSON checks cast to json,
-- STRICT and WITHOUT ROWID are dropped.
-- 0004: history across runs, resumable runs and the run lock.
--
-- Conventions are those of 0001 and 0002. Nothing here alters an earlier
-- table: every table is new, so a database of any earlier version migrates
-- by creation only.

-- target_history is what linkrot knows about each target across runs
-- (audit.TargetHistory): the state of its failure streak and whether it is
-- confirmed broken. It is updated once per run, at the end of the run's
-- checking stage, in one transaction that also records the run in
-- run_stages (stage 'history'), so a resumed run is never counted twice.
-- Rows outlive the runs they summarise: linkrot prune keeps them, so the
-- run columns are plain run IDs, not foreign keys.
CREATE TABLE target_history (
	target_id          BIGINT PRIMARY KEY REFERENCES targets (id),
	first_seen_at      TEXT COLLATE "C",                     -- first link seen (targets.first_seen_at)
	last_checked_at    TEXT COLLATE "C",
	last_run           BIGINT NOT NULL,         -- the last run applied
	last_verdict       TEXT COLLATE "C"    NOT NULL,
	last_ok_at         TEXT COLLATE "C",
	failing_since      TEXT COLLATE "C",                     -- first failure of the current streak
	failing_since_run  BIGINT,
	failed_runs        BIGINT NOT NULL CHECK (failed_runs >= 0),
	hard_failures      BIGINT NOT NULL CHECK (hard_failures >= 0),
	last_counted_at    TEXT COLLATE "C",
	confirmed          BIGINT NOT NULL CHECK (confirmed IN (0, 1)),
	confirmed_at       TEXT COLLATE "C",
	confirmed_run      BIGINT,
	recovered          BIGINT NOT NULL CHECK (recovered IN (0, 1)),
	recovered_at       TEXT COLLATE "C",
	recovered_run      BIGINT
);

CREATE INDEX target_history_confirmed ON target_history (confirmed, confirmed_run);

-- history_events records the runs in which a target was confirmed broken
-- or recovered, so that "newly confirmed since run N" can be answered for
-- any pair of runs. Pruning a run removes its events.
CREATE TABLE history_events (
	run_id    BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target_id BIGINT NOT NULL REFERENCES targets (id),
	event     TEXT COLLATE "C"    NOT NULL CHECK (event IN ('confirmed', 'recovered')),
	at        TEXT COLLATE "C",
	PRIMARY KEY (run_id, target_id, event)
);

CREATE INDEX history_events_target ON history_events (target_id);

-- run_settings keeps the effective configuration of a run started by
-- linkrot audit (JSON, written by the command) and its fingerprint, so an
-- interrupted run can be resumed with exactly its settings.
CREATE TABLE run_settings (
	run_id      BIGINT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	fingerprint TEXT COLLATE "C"    NOT NULL,
	settings    TEXT COLLATE "C"    NOT NULL CHECK (CAST(settings AS json) IS NOT NULL)
);

CREATE INDEX run_settings_fingerprint ON run_settings (fingerprint);

-- run_stages records the stages of a run that finished ('crawl', 'check',
-- 'history', and whatever stages later versions add): a resumed run skips
-- them.
CREATE TABLE run_stages (
	run_id  BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	stage   TEXT COLLATE "C"    NOT NULL,
	done_at TEXT COLLATE "C"    NOT NULL,
	PRIMARY KEY (run_id, stage)
);

-- crawl_frontier holds every URL a run's crawl queued, at its depth,
-- written through the single writer in the same transactions as the pages
-- (a page's newly queued links land no later than the page). The visited
-- URLs are the run's pages and their redirect hops. Together they let an
-- interrupted crawl resume: queued minus visited is what is left to fetch.
CREATE TABLE crawl_frontier (
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	url    TEXT COLLATE "C"    NOT NULL,
	depth  BIGINT NOT NULL,
	PRIMARY KEY (run_id, url)
);

-- run_lock holds at most one row: the linkrot process that writes to the
-- database (audit, crawl, check, prune). Another one waits or refuses. A
-- row whose process is gone (same host: the PID is not running, or runs
-- another program; other hosts: no heartbeat for a while) is stale and
-- taken over.
CREATE TABLE run_lock (
	id           BIGINT PRIMARY KEY CHECK (id = 1),
	token        TEXT COLLATE "C"    NOT NULL,               -- random, identifies the holder
	pid          BIGINT NOT NULL,
	pid_start    TEXT COLLATE "C"    NOT NULL,               -- process start time as the OS tells it, '' if unknown
	host         TEXT COLLATE "C"    NOT NULL,
	command      TEXT COLLATE "C"    NOT NULL,
	run_id       BIGINT,                        -- the run being written, once known
	acquired_at  TEXT COLLATE "C"    NOT NULL,
	heartbeat_at TEXT COLLATE "C"    NOT NULL
);
