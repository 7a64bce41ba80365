// Package warc makes a researcher's own web archive an archive source:
// WARC files (.warc, .warc.gz), directories of them and WACZ packages,
// indexed by a CDXJ index (the collection's own where present, else one
// built on first use and kept in an index directory next to the database,
// rebuilt when the files change).
//
// A Collection answers Memento questions exactly as a remote archive
// does, through an http.Handler (TimeGate, TimeMap, replay with the id_
// raw form) that Transport serves in-process on a reserved host name
// (".warc.linkrot.invalid"): lookups, nearest-memento choice, snapshot
// audit and drift run through the same client code as for the Internet
// Archive, with no network.
//
// WARC records are read with github.com/nlnwa/gowarc/v3 (v3.1.0). Judged
// against the alternatives the module proxy serves: nlnwa/gowarc is a
// WARC 1.0/1.1 reader and writer maintained by the National Library of
// Norway for its own crawler and replay stack (veidemann, gowarcserver);
// v3 reads gzip members and plain records alike, reports each record's
// file offset and size (what a CDXJ index needs), parses HTTP blocks and
// revisit records, and has error policies that turn malformed records
// into validation findings instead of failures. v1.6.0 and v2 are the
// older APIs of the same library (no offsets iterator, older Go);
// github.com/internetarchive/gowarc v0.8.96 is Zeno's WARC writer, built
// around capturing through an HTTP client, with a heavier dependency set
// and a reader that is secondary to it.
//
// Records that do not parse (a truncated gzip member, a broken header) are
// Diagnostics of the Collection, never a failure of the run.
package warc
