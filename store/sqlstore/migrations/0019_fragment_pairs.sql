-- 0019: the fragment links' index holds the fragment too.
--
-- The findings stage judges a run's fragment links by their distinct
-- (target, fragment) pairs: a documentation tree links to the same anchors
-- of the same pages again and again, and most name an anchor. With the
-- fragment in the index (still partial: only links with a fragment), the
-- pairs come from the index alone, in order and without a sort, and the
-- links of a pair that gives a finding are found by a seek; 0014's index
-- made SQLite read the fragment from each link's row.
DROP INDEX links_fragment;
CREATE INDEX links_fragment ON links (run_id, target_id, fragment) WHERE fragment <> '';
