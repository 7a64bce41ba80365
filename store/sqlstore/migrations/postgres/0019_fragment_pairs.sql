-- 0019: nothing to change on PostgreSQL. The SQLite text of this migration
-- puts the fragment into the links_fragment index (0014) so that the
-- findings stage reads the distinct (target, fragment) pairs from the
-- index alone. A PostgreSQL index entry is limited to a few kilobytes (a
-- B-tree entry to about 2.7 kB; TestFindingLinks_LongFragment), and a
-- fragment is as long as the page wrote it (a URL may be 64,000 bytes):
-- with it in the index, such a link could not be stored. PostgreSQL
-- finds the fragment links by 0014's (run_id, target_id) index and groups
-- the pairs itself.
SELECT 1;
