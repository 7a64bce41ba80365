-- 0005: drift measurements that could not be made.
--
-- Conventions are those of 0001 to 0004. Nothing here alters an earlier
-- table.
--
-- drifts (0003) holds measurements only: every row has a band, which the
-- report, diff and history read. A memento drift measurement that was due
-- (a link with a representative memento and a live page to compare) but
-- could not be made, because the live page or the memento could not be
-- fetched or was no usable reference, is recorded here with the reason,
-- so that it is not silently missing. Like the other archive results, a
-- run's rows are deleted before the archives stage runs again.
--
-- Note on snapshots (0001): since this version the archives stage also
-- writes snapshots rows with source 'pwid', one per pwid of a link that
-- resolved through the pwid registry to a replay URL (url: that URL,
-- datetime: the pwid's archival time, datetime_raw: the same in RFC 3339,
-- ord: the order of the link's pwids), together with the snapshot check of
-- the pwid. The comment of 0001 calling 'pwid' reserved predates them.
CREATE TABLE drift_failures (
	id            INTEGER PRIMARY KEY,
	run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	link_id       INTEGER REFERENCES links (id) ON DELETE CASCADE,
	target_id     INTEGER NOT NULL REFERENCES targets (id),
	kind          TEXT    NOT NULL CHECK (kind IN ('memento', 'first-seen')),
	reference_url TEXT    NOT NULL,   -- the memento asked for (raw mode)
	live_url      TEXT    NOT NULL,
	reason        TEXT    NOT NULL,
	measured_at   TEXT
) STRICT;

CREATE INDEX drift_failures_run_id ON drift_failures (run_id);
CREATE INDEX drift_failures_link_id ON drift_failures (link_id);
