-- 0018: text columns hold valid text (store.ValidText: NUL and each byte
-- that is not valid UTF-8 become U+FFFD), applied to every string bound
-- from this version on. Nothing to change in an existing SQLite file: the
-- rows earlier versions wrote keep the bytes they were given (SQL cannot
-- tell invalid UTF-8 apart), and read back as stored. The PostgreSQL text
-- of this migration decodes the escapes earlier versions wrote there.
SELECT 1;
