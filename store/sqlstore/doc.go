// Package sqlstore is linkrot's SQL store, the same for every engine: it
// implements store.Store (and so audit.Store) with database/sql and SQL
// that runs unchanged on SQLite, the embedded default (one file, no
// server; the engine is package store/sqlite), and on PostgreSQL, for
// databases shared by several machines (package store/postgres). It
// imports no database driver: OpenWith takes a file path or a postgres://
// (postgresql://) URL and the Engines to open it on; everything above
// OpenWith is the same for both.
//
// A database holds any number of runs. Its schema is created and upgraded
// by the SQL files under migrations/, embedded in the binary and applied in
// order by Open; SQLite records the last one applied in PRAGMA
// user_version. migrations/postgres/ holds the PostgreSQL text of the same
// versions (same file names, the same tables and columns: a test compares
// them); PostgreSQL records the version in the one-row table
// schema_version, read and bumped inside each migration's transaction
// under an advisory lock, so that processes opening a new database at once
// apply each migration once. Open refuses a database written by a newer
// linkrot (ErrNewerSchema) before writing anything.
//
// The store's SQL is written once and runs unchanged on both engines
// (docs/store-adapters.md): $n parameters, explicit NULLS FIRST/LAST
// where a column may be NULL, rows addressed by their keys, functions
// both engines have; nothing rewrites statements at run time. The few
// statements that must differ ask the DB's dialect (postgres.go). The
// PostgreSQL engine converts values only (booleans as 0/1, strings as
// store.ValidText) and runs COPY (PostgresEngine.Copy): on
// PostgreSQL a batch of pages COPYs its links and the rows hanging off
// them (pgcopy.go). On SQLite the writer's batches write many rows per
// statement (multirow.go, batchtargets.go): a page's links, the batch's
// new targets, new checks and queued URLs, with statements prepared once
// at Open, the new rows' IDs consecutive from the last insert rowid, in
// the order one statement per row would write them; plain links (without
// Robust Links or mset data, most of them) through a statement with those
// columns as constants. Those generated statements take anonymous (?)
// parameters on SQLite, $n on PostgreSQL (paramStyle: SQLite looks a
// named parameter up by a linear scan). The JSON columns of
// checks and page_evidence have no CHECK constraint (SQLite would parse
// every value written to evaluate it): the writer's own encoders keep
// them valid.
//
// Credentials for PostgreSQL come from the URL, the environment
// (PGPASSWORD, PGPASSFILE and the other libpq variables, which pgx
// honours) or ~/.pgpass; Path and every error show the URL without the
// password, and the run's stored arguments have URL passwords redacted.
// An unreachable server, wrong credentials or a missing database give
// one-line errors.
//
// The checking stage of a run stores its results in the same run as the
// crawl: one check per (run, target), findings per link and link-maintenance
// records (SaveChecks, SaveFindings, SaveMaintenance); PreviousChecks finds
// what earlier runs learnt about a target.
//
// Every string read from the web (URLs, link text, attribute values,
// diagnostics) is bound as a parameter and stored as valid text: NUL
// bytes and invalid UTF-8 become U+FFFD on both engines (store.ValidText,
// applied where values enter each engine's driver). A
// link's href may be stored through another row that holds the same
// text: its target (intern.go). Instants are stored as RFC 3339 UTC text.
//
// Reads that scale with the links of a run stream: EachLink walks them in
// chunks in one read transaction, PageList gives the pages without them.
//
// A DB is safe for concurrent use. On SQLite, writes go through one
// connection and start with BEGIN IMMEDIATE, reads use a separate pool;
// several processes (or several DB values) may share a file, waiting for
// each other's write transactions for up to ten seconds. On PostgreSQL,
// writes also go through one connection per DB, reads through a pool of
// read-only sessions (REPEATABLE READ read transactions, one snapshot
// each, as on SQLite); processes on any number of machines may share the
// database, and the run lock (TryLock) is a row whose check and take-over
// are serialised by an advisory lock.
package sqlstore
