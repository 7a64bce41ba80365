-- 0019: the #fragments of a run, once per target and fragment (see the
-- SQLite text of this migration).
CREATE TABLE IF NOT EXISTS run_fragments (
	run_id    BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target_id BIGINT NOT NULL REFERENCES targets (id),
	fragment  TEXT COLLATE "C" NOT NULL CHECK (fragment <> ''),
	PRIMARY KEY (run_id, target_id, fragment)
);

INSERT INTO run_fragments (run_id, target_id, fragment)
	SELECT DISTINCT run_id, target_id, fragment FROM links
	WHERE fragment <> '' AND target_id IS NOT NULL
	ON CONFLICT DO NOTHING;

DROP INDEX IF EXISTS links_fragment;
