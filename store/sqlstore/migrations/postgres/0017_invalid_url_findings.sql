-- 0017: findings may have the verdict 'invalid-url', a link's own verdict
-- (like 'fragment-missing'): the link's URL does not parse, so it has no
-- target (links.target_id NULL) and no check; the findings stage records
-- the reason extraction gave. Checks keep their verdicts: no target can
-- have this one. Replaced with ALTER TABLE ... DROP/ADD CONSTRAINT as in
-- 0015; ADD CONSTRAINT checks the existing rows.

ALTER TABLE findings DROP CONSTRAINT findings_verdict;
ALTER TABLE findings ADD CONSTRAINT findings_verdict CHECK (
	verdict = 'ok' OR verdict = 'redirected' OR verdict = 'moved' OR
	verdict = 'not-found' OR verdict = 'gone' OR verdict = 'client-error' OR
	verdict = 'blocked' OR verdict = 'rate-limited' OR verdict = 'server-error' OR
	verdict = 'timeout' OR verdict = 'dns-error' OR
	verdict = 'connection-error' OR verdict = 'tls-error' OR
	verdict = 'too-many-redirects' OR verdict = 'redirect-loop' OR
	verdict = 'soft-404' OR verdict = 'redirect-to-root' OR verdict = 'parked' OR
	verdict = 'skipped' OR verdict = 'fragment-missing' OR verdict = 'refused' OR
	verdict = 'invalid-url');
