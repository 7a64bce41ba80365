-- 0020: the targets of a run, once each, and the run's Robust Links and
-- mset links by partial index.
--
-- The summary, the history, the archives stage and a resumed run ask of a
-- run which targets its links point to. They read all of the run's links
-- for it (SELECT DISTINCT target_id FROM links WHERE run_id = ?): a
-- documentation tree's 176,000 link rows for its 5,000 targets, and the
-- run list once per run. run_targets holds each (run, target) once: the
-- writer adds a batch's distinct targets with the batch, in its
-- transaction. Its second index answers "which runs link to this target"
-- (the dashboard's target page). links_robust and links_mset hold only
-- the links carrying those attributes, so that counting them does not read
-- every link of the run either. (Written to run again unchanged over its
-- own result.)
CREATE TABLE IF NOT EXISTS run_targets (
	run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target_id INTEGER NOT NULL REFERENCES targets (id),
	PRIMARY KEY (run_id, target_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_targets_target ON run_targets (target_id, run_id);

INSERT INTO run_targets (run_id, target_id)
	SELECT DISTINCT run_id, target_id FROM links WHERE target_id IS NOT NULL
	ON CONFLICT DO NOTHING;

CREATE INDEX IF NOT EXISTS links_robust ON links (run_id) WHERE has_robust = 1;
CREATE INDEX IF NOT EXISTS links_mset ON links (run_id) WHERE has_mset = 1;
