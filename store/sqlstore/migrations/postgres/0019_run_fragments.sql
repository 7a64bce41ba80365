-- 0019: the #fragments of a run, once per target and fragment (see the
-- SQLite text of this migration). PostgreSQL bounds an index entry to
-- about 2.7 kB and a fragment from the web can be longer: the pair is
-- unique by the fragment's MD5 here, not by the fragment (the SQLite
-- table's key holds the fragment itself; SQLite has no such bound).
CREATE TABLE IF NOT EXISTS run_fragments (
	run_id    BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target_id BIGINT NOT NULL REFERENCES targets (id),
	fragment  TEXT COLLATE "C" NOT NULL CHECK (fragment <> '')
);
CREATE UNIQUE INDEX IF NOT EXISTS run_fragments_pair ON run_fragments (run_id, target_id, md5(fragment));

INSERT INTO run_fragments (run_id, target_id, fragment)
	SELECT DISTINCT run_id, target_id, fragment FROM links
	WHERE fragment <> '' AND target_id IS NOT NULL
	ON CONFLICT DO NOTHING;

DROP INDEX IF EXISTS links_fragment;
