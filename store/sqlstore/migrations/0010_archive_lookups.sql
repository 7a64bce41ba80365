-- 0010: archives that answer today (issue 13).
--
--   * mementos.status is the lookup's outcome: 'found', 'no-memento',
--     'lookup-failed' (429s, timeouts, unparsable answers: retried next
--     run, never shown as "no memento") or 'not-asked' (a private URL and
--     a public archive). '' for rows written before this migration.
--   * mementos.uri_r is the resource asked about; with wanted and
--     archive it identifies the question across runs, so that a fresh
--     answer (--archive-max-age) is reused instead of asked again.
--   * mementos.reused is 1 when the row copies an earlier run's answer.
--   * drifts.reference_note says whether memento drift used the archive's
--     raw bytes ('raw') or why not.
--   * snapshot_skips are declared snapshots not checked (the
--     --max-snapshots cap), with the reason.

ALTER TABLE mementos ADD COLUMN status TEXT NOT NULL DEFAULT '';
ALTER TABLE mementos ADD COLUMN uri_r TEXT NOT NULL DEFAULT '';
ALTER TABLE mementos ADD COLUMN reused INTEGER NOT NULL DEFAULT 0 CHECK (reused IN (0, 1));

CREATE INDEX mementos_known ON mementos (archive, uri_r, wanted) WHERE status IN ('found', 'no-memento');

ALTER TABLE drifts ADD COLUMN reference_note TEXT NOT NULL DEFAULT '';

CREATE TABLE snapshot_skips (
	id                INTEGER PRIMARY KEY,
	run_id            INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	link_id           INTEGER NOT NULL REFERENCES links (id) ON DELETE CASCADE,
	source            TEXT    NOT NULL,
	declared          TEXT    NOT NULL,
	declared_datetime TEXT,
	reason            TEXT    NOT NULL
) STRICT;

CREATE INDEX snapshot_skips_run_id ON snapshot_skips (run_id);
