-- 0012: the soft-404 classifier's evidence (audit.Soft404Evidence: score,
-- parked score and named signals), the verdict parked, and the page
-- signals the crawl records for it (audit.PageSignals).
--
-- Conventions are those of 0001 and 0002. The verdict constraints of
-- checks and findings (0002) are replaced with ALTER TABLE ... DROP/ADD
-- CONSTRAINT (SQLite 3.53+), which keeps the tables and whatever columns
-- other migrations added to them; ADD CONSTRAINT checks the existing rows.

ALTER TABLE checks DROP CONSTRAINT checks_verdict;
ALTER TABLE checks ADD CONSTRAINT checks_verdict CHECK (verdict IN (
	'ok', 'redirected', 'moved', 'not-found', 'gone', 'client-error', 'blocked',
	'rate-limited', 'server-error', 'timeout', 'dns-error', 'connection-error',
	'tls-error', 'too-many-redirects', 'redirect-loop', 'soft-404',
	'redirect-to-root', 'parked', 'skipped', 'fragment-missing', 'refused'));

ALTER TABLE findings DROP CONSTRAINT findings_verdict;
ALTER TABLE findings ADD CONSTRAINT findings_verdict CHECK (verdict IN (
	'ok', 'redirected', 'moved', 'not-found', 'gone', 'client-error', 'blocked',
	'rate-limited', 'server-error', 'timeout', 'dns-error', 'connection-error',
	'tls-error', 'too-many-redirects', 'redirect-loop', 'soft-404',
	'redirect-to-root', 'parked', 'skipped', 'fragment-missing', 'refused'));

-- checks.soft404_signals is the classifier's result as a JSON object
-- {"score": n, "parked": n, "signals": [{"name", "score", "match",
-- "where"}, ...]}, NULL when the check has no soft-404 evidence or was
-- made before this version. A check whose evidence has no probe (a page
-- read from a local directory) stores soft404_probe_url = '' and
-- soft404_probe_status = 0.
ALTER TABLE checks ADD COLUMN soft404_signals TEXT
	CHECK (soft404_signals IS NULL OR (json_valid(soft404_signals) AND json_type(soft404_signals) = 'object'));

-- The checking stage writes soft404_signals with a statement of its own,
-- only for a check with soft-404 evidence (as from_crawl, 0007); a check
-- saved again replaces the row's other columns, and this trigger resets
-- the signals of the row it replaces.
CREATE TRIGGER checks_soft404_signals_reset AFTER UPDATE OF verdict ON checks
WHEN OLD.soft404_signals IS NOT NULL
BEGIN
	UPDATE checks SET soft404_signals = NULL WHERE run_id = NEW.run_id AND target_id = NEW.target_id;
END;

-- page_evidence.signals is audit.PageSignals as a JSON object (title,
-- h1, parking), NULL when the page has none or was crawled before this
-- version.
ALTER TABLE page_evidence ADD COLUMN signals TEXT
	CHECK (signals IS NULL OR (json_valid(signals) AND json_type(signals) = 'object'));
