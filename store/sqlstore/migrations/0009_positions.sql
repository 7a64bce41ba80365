-- 0009: where each link occurrence is in its source, and which file a
-- local page came from (linkrot audit DIR, README.md), for CI outputs
-- (SARIF regions, JUnit file/line, path:line:col, GitHub annotations) and
-- for the baseline rule of --fail-on introduced.
--
-- Conventions are those of 0001. Columns only: rows of earlier runs read
-- as "position unknown" (0, '').

-- line and col: 1-based line and UTF-16 column (SARIF columnKind
-- utf16CodeUnits) of the link's URL in the page source; 0 when unknown.
ALTER TABLE links ADD COLUMN line INTEGER NOT NULL DEFAULT 0 CHECK (line >= 0);
ALTER TABLE links ADD COLUMN col INTEGER NOT NULL DEFAULT 0 CHECK (col >= 0);
-- line_hash: audit.LineHash of the source line's text; '' when unknown.
ALTER TABLE links ADD COLUMN line_hash TEXT NOT NULL DEFAULT '';

-- file: the page's source file, slash-separated, relative to the audited
-- directory; '' for pages fetched from the web.
ALTER TABLE pages ADD COLUMN file TEXT NOT NULL DEFAULT '';
