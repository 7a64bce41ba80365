// Package sqlite implements audit.Store on SQLite, through the pure-Go
// driver modernc.org/sqlite.
//
// A database is one file holding any number of runs. Its schema is created
// and upgraded by the SQL files under migrations/, embedded in the binary and
// applied in order by Open; PRAGMA user_version records the last one applied.
// Open refuses a database written by a newer linkrot (ErrNewerSchema).
//
// The checking stage of a run stores its results in the same run as the
// crawl: one check per (run, target), findings per link and link-maintenance
// records (SaveChecks, SaveFindings, SaveMaintenance); PreviousChecks finds
// what earlier runs learnt about a target.
//
// Every string read from the web (URLs, link text, attribute values,
// diagnostics) is bound as a parameter and stored verbatim, including NUL
// bytes and invalid UTF-8 (or, since migration 0008, through another row
// that holds the same bytes: a link's href through its target, see
// intern.go). Instants are stored as RFC 3339 UTC text.
//
// Reads that scale with the links of a run stream: EachLink walks them one
// at a time in one read transaction, PageList gives the pages without them.
//
// A DB is safe for concurrent use. Writes go through one connection and
// start with BEGIN IMMEDIATE, reads use a separate pool; several processes
// (or several DB values) may share a file, waiting for each other's write
// transactions for up to ten seconds.
package sqlite
