-- PostgreSQL text of migrations/0012_soft404_signals.sql (the same version; the comments
-- below are the SQLite file's). Translated by the rules of
-- postgres/0001_init.sql: INTEGER PRIMARY KEY id columns are identities,
-- INTEGER is BIGINT, REAL DOUBLE PRECISION, BLOB BYTEA, TEXT compares
-- bytewise (COLLATE "C", as SQLite's BINARY), JSON checks cast to json,
-- STRICT and WITHOUT ROWID are dropped.
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
ALTER TABLE checks ADD COLUMN soft404_signals TEXT COLLATE "C"
	CHECK (soft404_signals IS NULL OR (json_typeof(CAST(soft404_signals AS json)) = 'object'));

-- The checking stage writes soft404_signals with a statement of its own,
-- only for a check with soft-404 evidence (as from_crawl, 0007); a check
-- saved again replaces the row's other columns, and this trigger resets
-- the signals of the row it replaces.
-- PostgreSQL: a BEFORE trigger, as checks_from_crawl_reset (0007).
CREATE FUNCTION checks_soft404_signals_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.soft404_signals := NULL;
	RETURN NEW;
END
$$;
CREATE TRIGGER checks_soft404_signals_reset BEFORE UPDATE OF verdict ON checks
FOR EACH ROW WHEN (OLD.soft404_signals IS NOT NULL)
EXECUTE FUNCTION checks_soft404_signals_reset();

-- page_evidence.signals is audit.PageSignals as a JSON object (title,
-- h1, parking), NULL when the page has none or was crawled before this
-- version.
ALTER TABLE page_evidence ADD COLUMN signals TEXT COLLATE "C"
	CHECK (signals IS NULL OR (json_typeof(CAST(signals AS json)) = 'object'));
