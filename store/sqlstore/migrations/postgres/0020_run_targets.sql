-- 0020: the targets of a run, once each, and the run's Robust Links and
-- mset links by partial index (see the SQLite text of this migration).
CREATE TABLE IF NOT EXISTS run_targets (
	run_id    BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target_id BIGINT NOT NULL REFERENCES targets (id),
	PRIMARY KEY (run_id, target_id)
);
CREATE INDEX IF NOT EXISTS run_targets_target ON run_targets (target_id, run_id);

INSERT INTO run_targets (run_id, target_id)
	SELECT DISTINCT run_id, target_id FROM links WHERE target_id IS NOT NULL
	ON CONFLICT DO NOTHING;

CREATE INDEX IF NOT EXISTS links_robust ON links (run_id) WHERE has_robust = 1;
CREATE INDEX IF NOT EXISTS links_mset ON links (run_id) WHERE has_mset = 1;
