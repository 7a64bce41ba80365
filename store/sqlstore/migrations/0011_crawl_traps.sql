-- 0011: crawl traps. Each row is a finding of kind crawl-trap: a guard of
-- the crawl (repeated path segments, too many path segments, too many
-- query variants of one path, session-id parameters, URL too long) cut
-- URLs matching pattern; page_url is the page where the trap starts (see
-- audit.CrawlTrap), example the first URL cut, cut how many URLs (links)
-- it cut.
-- A resumed crawl adds to cut.
CREATE TABLE crawl_traps (
	id          INTEGER PRIMARY KEY,
	run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	kind        TEXT    NOT NULL CONSTRAINT crawl_traps_kind CHECK (kind IN (
		'repeated-segments', 'too-deep', 'query-variants', 'session-id', 'url-too-long')),
	pattern     TEXT    NOT NULL,
	page_url    TEXT    NOT NULL,
	example     TEXT    NOT NULL,
	cut         INTEGER NOT NULL CONSTRAINT crawl_traps_cut CHECK (cut >= 0),
	trap_limit  INTEGER NOT NULL,
	UNIQUE (run_id, kind, pattern)
) STRICT;
