-- 0019: the #fragments of a run, once per target and fragment.
--
-- The findings stage checks each link with a #fragment against its
-- target's anchors. It read those links from the partial index
-- links_fragment (0014): one entry per link, which every link with a
-- fragment cost the writer (a documentation tree links to a few hundred
-- targets under tens of thousands of #anchors, most of them repeated on
-- page after page). run_fragments holds each (run, target, fragment) once:
-- the writer adds a batch's distinct pairs with the batch, the findings
-- stage decides once per pair and reads whole only the links of the pairs
-- that give something (by links_target_id). The index goes. (Written to
-- run again unchanged over its own result.)
CREATE TABLE IF NOT EXISTS run_fragments (
	run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target_id INTEGER NOT NULL REFERENCES targets (id),
	fragment  TEXT    NOT NULL CHECK (fragment <> ''),
	PRIMARY KEY (run_id, target_id, fragment)
) STRICT, WITHOUT ROWID;

INSERT INTO run_fragments (run_id, target_id, fragment)
	SELECT DISTINCT run_id, target_id, fragment FROM links
	WHERE fragment <> '' AND target_id IS NOT NULL
	ON CONFLICT DO NOTHING;

DROP INDEX IF EXISTS links_fragment;
