-- 0007: what the crawl saw of each page's response, so that the checking
-- stage judges the audited site's own pages from the crawl instead of
-- fetching every one of them a second time (audit.PageEvidence,
-- check.Known); and the mark of checks judged that way.
--
-- Conventions are those of 0001 and 0002.

-- page_evidence holds, for a page that got a response, what a check of its
-- URL needs: the evidence header fields and validators, the bot-challenge
-- signal, and for a 2xx HTML page (html = 1) the fingerprint of the first
-- body_cap decoded bytes (the checker's body cap) with its anchors and its
-- main text. Rows go with their page (ON DELETE CASCADE). Pages of runs
-- made before this version have none: their URLs are fetched by the check.
CREATE TABLE page_evidence (
	page_id        INTEGER PRIMARY KEY REFERENCES pages (id) ON DELETE CASCADE,
	headers        TEXT    NOT NULL DEFAULT '{}'  -- JSON object, field name -> value
		CHECK (json_valid(headers) AND json_type(headers) = 'object'),
	etag           TEXT    NOT NULL,
	last_modified  TEXT    NOT NULL,
	challenge      TEXT    NOT NULL,              -- '' when the response is no bot challenge
	body_cap       INTEGER NOT NULL,              -- the checker's body cap the evidence was made under
	html           INTEGER NOT NULL CHECK (html IN (0, 1)),
	-- The rest is 0, '' or empty unless html = 1.
	body_bytes     INTEGER NOT NULL,              -- decoded bytes fingerprinted
	body_truncated INTEGER NOT NULL CHECK (body_truncated IN (0, 1)), -- the body went on past them
	sha256         TEXT    NOT NULL,
	simhash        INTEGER NOT NULL,              -- the uint64 bit pattern as int64
	words          INTEGER NOT NULL,
	anchors        TEXT    NOT NULL DEFAULT '[]'  -- JSON array of id and <a name> values
		CHECK (json_valid(anchors) AND json_type(anchors) = 'array'),
	-- The main text's words joined by single spaces (at most 64 KiB, cut
	-- between words; text_capped: the page had more), stored as raw
	-- DEFLATE (RFC 1951); an empty blob is no text.
	text           BLOB    NOT NULL,
	text_capped    INTEGER NOT NULL CHECK (text_capped IN (0, 1))
) STRICT;

-- checks.from_crawl is 1 for a check judged from the response the crawl of
-- the same run got (audit.Check.FromCrawl): no request of the checker's
-- own but the soft-404 probe.
ALTER TABLE checks ADD COLUMN from_crawl INTEGER NOT NULL DEFAULT 0 CHECK (from_crawl IN (0, 1));

-- The checking stage writes from_crawl with a statement of its own, only
-- for a check that has it (so that a check without it can be written as
-- before); a check saved again replaces the row's other columns, and this
-- trigger resets the mark of the row it replaces.
CREATE TRIGGER checks_from_crawl_reset AFTER UPDATE OF verdict ON checks
WHEN OLD.from_crawl = 1
BEGIN
	UPDATE checks SET from_crawl = 0 WHERE run_id = NEW.run_id AND target_id = NEW.target_id;
END;
