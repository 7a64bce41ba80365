-- 0019: nothing to change on PostgreSQL. The SQLite text of this migration
-- puts the fragment into the links_fragment index (0014) so that the
-- findings stage reads the distinct (target, fragment) pairs from the
-- index alone. A PostgreSQL B-tree entry cannot exceed about 2.7 kB, and a
-- fragment is as long as the page wrote it (a URL may be 64,000 bytes):
-- with it in the index, such a link could not be stored. PostgreSQL
-- groups the pairs of the (run_id, target_id) index's rows by hashing.
SELECT 1;
