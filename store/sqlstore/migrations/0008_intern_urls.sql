-- 0008: a link row references its URL through its target instead of
-- repeating the string; so does a finding tied to a link.
--
-- Conventions are those of 0001 and 0002. Tables are altered, never
-- rebuilt (later migrations add columns to links and findings).
--
-- links.url_form says which URL columns of the row are stored through
-- other rows (bits; 0: both verbatim, every row written before this
-- version):
--   1  href is '' in the row and is the target's URL (targets.url), plus
--      '#' and the fragment column when that is not empty;
--   2  raw_href is '' in the row and equals the href.
-- A bit is set only when the derived string is exactly the one written,
-- byte for byte, so reading is lossless. The view link_urls (below) gives
-- every link's href and raw_href as written.
ALTER TABLE links ADD COLUMN url_form INTEGER NOT NULL DEFAULT 0 CHECK (url_form BETWEEN 0 AND 3);

-- findings.url_form, for a finding with a link (bits; 0: verbatim):
--   1  page_url is '' in the row and is the URL of the link's page;
--   2  target is '' in the row and is the URL of the link's target.
ALTER TABLE findings ADD COLUMN url_form INTEGER NOT NULL DEFAULT 0 CHECK (url_form BETWEEN 0 AND 3);

-- Existing rows are rewritten in the compact form (the data stays the
-- same; the file shrinks as SQLite reuses the freed space, or at once with
-- VACUUM).
UPDATE links SET url_form =
	(CASE WHEN target_id IS NOT NULL AND href = (SELECT t.url FROM targets t WHERE t.id = links.target_id)
		|| CASE WHEN fragment <> '' THEN '#' || fragment ELSE '' END THEN 1 ELSE 0 END)
	| (CASE WHEN raw_href = href THEN 2 ELSE 0 END);
UPDATE links SET
	href = CASE WHEN url_form & 1 THEN '' ELSE href END,
	raw_href = CASE WHEN url_form & 2 THEN '' ELSE raw_href END
WHERE url_form <> 0;

UPDATE findings SET url_form =
	coalesce((SELECT p.url = findings.page_url FROM links l JOIN pages p ON p.id = l.page_id
		WHERE l.id = findings.link_id), 0)
	| (coalesce((SELECT t.url = findings.target FROM links l JOIN targets t ON t.id = l.target_id
		WHERE l.id = findings.link_id), 0) << 1)
WHERE link_id IS NOT NULL;
UPDATE findings SET
	page_url = CASE WHEN url_form & 1 THEN '' ELSE page_url END,
	target = CASE WHEN url_form & 2 THEN '' ELSE target END
WHERE url_form <> 0;

-- link_urls: every link's href and raw_href as written.
CREATE VIEW link_urls (link_id, href, raw_href) AS
	SELECT l.id,
		CASE WHEN l.url_form & 1 THEN t.url || CASE WHEN l.fragment <> '' THEN '#' || l.fragment ELSE '' END ELSE l.href END,
		CASE WHEN l.url_form & 2 THEN
			CASE WHEN l.url_form & 1 THEN t.url || CASE WHEN l.fragment <> '' THEN '#' || l.fragment ELSE '' END ELSE l.href END
		ELSE l.raw_href END
	FROM links l LEFT JOIN targets t ON t.id = l.target_id;
