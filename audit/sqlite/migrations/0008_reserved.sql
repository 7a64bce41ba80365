-- 0008: reserved for a migration of a branch developed in parallel (issue
-- 11); this placeholder keeps the versions gapless (migrate.go) until that
-- branch lands. When it does, delete this file in favour of its 0008_*.sql:
-- two files of one version make the migration list panic, on purpose.
SELECT 1;
