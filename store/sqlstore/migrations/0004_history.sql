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
	target_id          INTEGER PRIMARY KEY REFERENCES targets (id),
	first_seen_at      TEXT,                     -- first link seen (targets.first_seen_at)
	last_checked_at    TEXT,
	last_run           INTEGER NOT NULL,         -- the last run applied
	last_verdict       TEXT    NOT NULL,
	last_ok_at         TEXT,
	failing_since      TEXT,                     -- first failure of the current streak
	failing_since_run  INTEGER,
	failed_runs        INTEGER NOT NULL CHECK (failed_runs >= 0),
	hard_failures      INTEGER NOT NULL CHECK (hard_failures >= 0),
	last_counted_at    TEXT,
	confirmed          INTEGER NOT NULL CHECK (confirmed IN (0, 1)),
	confirmed_at       TEXT,
	confirmed_run      INTEGER,
	recovered          INTEGER NOT NULL CHECK (recovered IN (0, 1)),
	recovered_at       TEXT,
	recovered_run      INTEGER
) STRICT;

CREATE INDEX target_history_confirmed ON target_history (confirmed, confirmed_run);

-- history_events records the runs in which a target was confirmed broken
-- or recovered, so that "newly confirmed since run N" can be answered for
-- any pair of runs. Pruning a run removes its events.
CREATE TABLE history_events (
	run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target_id INTEGER NOT NULL REFERENCES targets (id),
	event     TEXT    NOT NULL CHECK (event IN ('confirmed', 'recovered')),
	at        TEXT,
	PRIMARY KEY (run_id, target_id, event)
) STRICT;

CREATE INDEX history_events_target ON history_events (target_id);

-- run_settings keeps the effective configuration of a run started by
-- linkrot audit (JSON, written by the command) and its fingerprint, so an
-- interrupted run can be resumed with exactly its settings.
CREATE TABLE run_settings (
	run_id      INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	fingerprint TEXT    NOT NULL,
	settings    TEXT    NOT NULL CHECK (json_valid(settings))
) STRICT;

CREATE INDEX run_settings_fingerprint ON run_settings (fingerprint);

-- run_stages records the stages of a run that finished ('crawl', 'check',
-- 'history', and whatever stages later versions add): a resumed run skips
-- them.
CREATE TABLE run_stages (
	run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	stage   TEXT    NOT NULL,
	done_at TEXT    NOT NULL,
	PRIMARY KEY (run_id, stage)
) STRICT;

-- crawl_frontier holds every URL a run's crawl queued, at its depth,
-- written through the single writer in the same transactions as the pages
-- (a page's newly queued links land no later than the page). The visited
-- URLs are the run's pages and their redirect hops. Together they let an
-- interrupted crawl resume: queued minus visited is what is left to fetch.
CREATE TABLE crawl_frontier (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	url    TEXT    NOT NULL,
	depth  INTEGER NOT NULL,
	PRIMARY KEY (run_id, url)
) STRICT, WITHOUT ROWID;

-- run_lock holds at most one row: the linkrot process that writes to the
-- database (audit, crawl, check, prune). Another one waits or refuses. A
-- row whose process is gone (same host: the PID is not running, or runs
-- another program; other hosts: no heartbeat for a while) is stale and
-- taken over.
CREATE TABLE run_lock (
	id           INTEGER PRIMARY KEY CHECK (id = 1),
	token        TEXT    NOT NULL,               -- random, identifies the holder
	pid          INTEGER NOT NULL,
	pid_start    TEXT    NOT NULL,               -- process start time as the OS tells it, '' if unknown
	host         TEXT    NOT NULL,
	command      TEXT    NOT NULL,
	run_id       INTEGER,                        -- the run being written, once known
	acquired_at  TEXT    NOT NULL,
	heartbeat_at TEXT    NOT NULL
) STRICT;
