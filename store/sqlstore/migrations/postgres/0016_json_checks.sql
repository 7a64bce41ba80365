-- PostgreSQL text of migrations/0016_json_checks.sql (the same version; the comments
-- below are the SQLite file's). Translated by the rules of
-- postgres/0001_init.sql: the unnamed column constraints SQLite rebuilds
-- its tables to lose have PostgreSQL's default names (table_column_check)
-- and are dropped by name.
-- 0016: the JSON columns of checks (redirects, headers, soft404_signals)
-- and page_evidence (headers, anchors, signals) without their CHECK
-- constraints calling json_valid and json_type.
--
-- SQLite parses the JSON text of each such column of each row it writes
-- to evaluate them: about a tenth of the CPU of writing a check. The
-- writer builds that text itself (encoding/json, or the equivalent direct
-- encoders of checks.go for printable-ASCII header maps and string lists,
-- which give the same text), so it is valid JSON of the right type by
-- construction; TestJSONColumns_Valid proves it for what the writer can
-- be handed. Every other constraint, index and trigger is kept as it was.

ALTER TABLE checks DROP CONSTRAINT checks_redirects_check;
ALTER TABLE checks DROP CONSTRAINT checks_headers_check;
ALTER TABLE checks DROP CONSTRAINT checks_soft404_signals_check;
ALTER TABLE page_evidence DROP CONSTRAINT page_evidence_headers_check;
ALTER TABLE page_evidence DROP CONSTRAINT page_evidence_anchors_check;
ALTER TABLE page_evidence DROP CONSTRAINT page_evidence_signals_check;
