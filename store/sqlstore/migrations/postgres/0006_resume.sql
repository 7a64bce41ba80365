-- PostgreSQL text of migrations/0006_resume.sql (the same version; the comments
-- below are the SQLite file's). Translated by the rules of
-- postgres/0001_init.sql: INTEGER PRIMARY KEY id columns are identities,
-- INTEGER is BIGINT, REAL DOUBLE PRECISION, BLOB BYTEA, TEXT compares
-- bytewise (COLLATE "C", as SQLite's BINARY), JSON checks cast to json,
-- STRICT and WITHOUT ROWID are dropped.
-- 0006: resumable runs of any command, the report and archives stages, and no
-- secrets in stored settings.
--
-- Conventions are those of 0001 and 0002.

-- run_settings.command is the command that started the run (audit,
-- crawl): a run is resumed by the command that started it. Every earlier
-- row was written by linkrot audit.
ALTER TABLE run_settings ADD COLUMN command TEXT COLLATE "C" NOT NULL DEFAULT 'audit';

DROP INDEX run_settings_fingerprint;
CREATE INDEX run_settings_command ON run_settings (command, fingerprint);

-- run_stages gains 'archives' (the archives stage finished) and 'report'
-- (the run's report is written, or it writes none): a complete audit run
-- without 'report' was killed while writing its report, and linkrot audit
-- --resume writes it. Runs made before this version finished their
-- archives stage when they applied their history, and have no report left
-- to write when they are complete.
INSERT INTO run_stages (run_id, stage, done_at)
	SELECT run_id, 'archives', done_at FROM run_stages WHERE stage = 'history'
	ON CONFLICT DO NOTHING;
INSERT INTO run_stages (run_id, stage, done_at)
	SELECT id, 'report', coalesce(finished_at, started_at) FROM runs WHERE status = 'complete'
	ON CONFLICT DO NOTHING;

-- Header values ([[host]] headers: Authorization, cookies) are secrets and
-- no longer stored: each host's "headers" object becomes "header_names",
-- the sorted names (a resumed run takes the values from the configuration
-- file again). Rows written from now on also hold a hash of the values
-- ("header_hash"); these have none. secure_delete overwrites the old text
-- in the file instead of leaving it in free space.
-- PostgreSQL: no secure_delete (VACUUM FULL rewrites the table); the
-- settings are rewritten through jsonb, which normalises their spacing and
-- key order (the fingerprint is a column of its own).
UPDATE run_settings
SET settings = jsonb_set(CAST(settings AS jsonb), '{hosts}', (
	SELECT coalesce(jsonb_agg(CASE
		WHEN jsonb_typeof(h.value -> 'headers') = 'object' THEN (h.value - 'headers')
			|| jsonb_build_object('header_names',
				(SELECT coalesce(jsonb_agg(k ORDER BY k COLLATE "C" NULLS FIRST), '[]'::jsonb) FROM jsonb_object_keys(h.value -> 'headers') AS k))
		ELSE h.value END ORDER BY h.n NULLS FIRST), '[]'::jsonb)
	FROM jsonb_array_elements(CAST(run_settings.settings AS jsonb) -> 'hosts') WITH ORDINALITY AS h(value, n)))::text
WHERE jsonb_typeof(CAST(settings AS jsonb) -> 'hosts') = 'array';
