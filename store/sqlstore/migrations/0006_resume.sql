-- 0006: resumable runs of any command, the report and archives stages, and no
-- secrets in stored settings.
--
-- Conventions are those of 0001 and 0002.

-- run_settings.command is the command that started the run (audit,
-- crawl): a run is resumed by the command that started it. Every earlier
-- row was written by linkrot audit.
ALTER TABLE run_settings ADD COLUMN command TEXT NOT NULL DEFAULT 'audit';

DROP INDEX run_settings_fingerprint;
CREATE INDEX run_settings_command ON run_settings (command, fingerprint);

-- run_stages gains 'archives' (the archives stage finished) and 'report'
-- (the run's report is written, or it writes none): a complete audit run
-- without 'report' was killed while writing its report, and linkrot audit
-- --resume writes it. Runs made before this version finished their
-- archives stage when they applied their history, and have no report left
-- to write when they are complete.
INSERT OR IGNORE INTO run_stages (run_id, stage, done_at)
	SELECT run_id, 'archives', done_at FROM run_stages WHERE stage = 'history';
INSERT OR IGNORE INTO run_stages (run_id, stage, done_at)
	SELECT id, 'report', coalesce(finished_at, started_at) FROM runs WHERE status = 'complete';

-- Header values ([[host]] headers: Authorization, cookies) are secrets and
-- no longer stored: each host's "headers" object becomes "header_names",
-- the sorted names (a resumed run takes the values from the configuration
-- file again). Rows written from now on also hold a hash of the values
-- ("header_hash"); these have none. secure_delete overwrites the old text
-- in the file instead of leaving it in free space.
PRAGMA secure_delete = ON;

UPDATE run_settings
SET settings = json_set(settings, '$.hosts', json((
	SELECT json_group_array(CASE
		WHEN json_type(h.value, '$.headers') = 'object' THEN json_set(json_remove(h.value, '$.headers'),
			'$.header_names', json((SELECT json_group_array(k.key ORDER BY k.key) FROM json_each(h.value, '$.headers') k)))
		ELSE json(h.value) END ORDER BY h.key)
	FROM json_each(run_settings.settings, '$.hosts') h)))
WHERE json_type(settings, '$.hosts') = 'array';

PRAGMA secure_delete = OFF;
