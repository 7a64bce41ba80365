-- 0018: text columns hold valid text (store.ValidText). Earlier versions
-- kept NUL bytes and invalid UTF-8 in PostgreSQL text by escaping them
-- with the noncharacter U+10FFFE, followed by '0' for NUL, 'x' and two
-- hex digits for a byte that is not UTF-8, or 'e' for U+10FFFE itself.
-- This decodes every such escape in every text column of the schema's
-- tables into the new rule: NUL and each invalid byte become U+FFFD, an
-- escaped U+10FFFE becomes itself. A row whose decoded value would
-- collide with another row's under a unique constraint (two URLs that
-- differed only in invalid bytes) keeps its escaped text. jsonb values
-- never held escapes: JSON encoding replaced invalid UTF-8 and wrote NUL
-- as \u0000 before they were bound.
DO $$
DECLARE
	col record;
	r record;
BEGIN
	FOR col IN
		SELECT c.table_name, c.column_name
		FROM information_schema.columns c
		JOIN information_schema.tables t
			ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
		WHERE c.table_schema = current_schema() AND c.data_type = 'text'
		ORDER BY c.table_name, c.column_name
	LOOP
		FOR r IN EXECUTE format('SELECT ctid AS row FROM %I WHERE strpos(%I, chr(1114110)) > 0',
			col.table_name, col.column_name)
		LOOP
			BEGIN
				EXECUTE format('UPDATE %I SET %I = replace(regexp_replace(%I, chr(1114110) || ''(0|x[0-9a-f]{2})'', chr(65533), ''g''), chr(1114110) || ''e'', chr(1114110)) WHERE ctid = $1',
					col.table_name, col.column_name, col.column_name) USING r.row;
			EXCEPTION WHEN unique_violation THEN
				NULL; -- keep the escaped text (see above)
			END;
		END LOOP;
	END LOOP;
END
$$;
