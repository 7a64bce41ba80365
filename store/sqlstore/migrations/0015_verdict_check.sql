-- 0015: the verdict constraints of checks and findings (0012) as a chain
-- of equalities joined by OR instead of an IN list, with the same verdicts.
--
-- SQLite codes a CHECK constraint's IN list of more than two constants as
-- an ephemeral index, which it builds again for every row it writes: 21
-- inserts into a temporary b-tree for each check saved. Equalities joined
-- by OR compare the value with each verdict in turn and build nothing.
-- PostgreSQL gets the same text, so that the two schemas keep saying the
-- same thing. Replaced with ALTER TABLE ... DROP/ADD CONSTRAINT as in 0012;
-- ADD CONSTRAINT checks the existing rows.

ALTER TABLE checks DROP CONSTRAINT checks_verdict;
ALTER TABLE checks ADD CONSTRAINT checks_verdict CHECK (
	verdict = 'ok' OR verdict = 'redirected' OR verdict = 'moved' OR
	verdict = 'not-found' OR verdict = 'gone' OR verdict = 'client-error' OR
	verdict = 'blocked' OR verdict = 'rate-limited' OR verdict = 'server-error' OR
	verdict = 'timeout' OR verdict = 'dns-error' OR
	verdict = 'connection-error' OR verdict = 'tls-error' OR
	verdict = 'too-many-redirects' OR verdict = 'redirect-loop' OR
	verdict = 'soft-404' OR verdict = 'redirect-to-root' OR verdict = 'parked' OR
	verdict = 'skipped' OR verdict = 'fragment-missing' OR verdict = 'refused');

ALTER TABLE findings DROP CONSTRAINT findings_verdict;
ALTER TABLE findings ADD CONSTRAINT findings_verdict CHECK (
	verdict = 'ok' OR verdict = 'redirected' OR verdict = 'moved' OR
	verdict = 'not-found' OR verdict = 'gone' OR verdict = 'client-error' OR
	verdict = 'blocked' OR verdict = 'rate-limited' OR verdict = 'server-error' OR
	verdict = 'timeout' OR verdict = 'dns-error' OR
	verdict = 'connection-error' OR verdict = 'tls-error' OR
	verdict = 'too-many-redirects' OR verdict = 'redirect-loop' OR
	verdict = 'soft-404' OR verdict = 'redirect-to-root' OR verdict = 'parked' OR
	verdict = 'skipped' OR verdict = 'fragment-missing' OR verdict = 'refused');
