-- 0014: the links of a run that carry a #fragment, by target.
--
-- The findings stage reads two kinds of links: those whose target's check
-- is not ok, and those with a fragment (checked against the target's
-- anchors). Without this index it scanned every link of the run for the
-- second kind (a million-link run: seconds after the crawl, in its serial
-- tail). Partial: only links with a fragment are in it, so it costs the
-- writer nothing for the others.
CREATE INDEX links_fragment ON links (run_id, target_id) WHERE fragment <> '';
