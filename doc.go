// Package linkrot is the linkrot pipeline as a library: one run of an
// audit, end to end. Audit crawls a site, checks every unique target as
// soon as the crawl discovers it, stores everything through one batched
// writer, derives findings, looks up archives (starting while the checks
// run), updates the targets' histories and finishes the run; cmd/linkrot is a thin front end that maps
// flags and the configuration file onto a Config, and a test, a worker
// process or a server can run the same pipeline.
//
// The data flow of a run:
//
//	           seeds / sitemap / URL list / directory
//	                            |
//	                            v
//	+----------------- crawler (colly) ------------------+
//	| fetch page -> parse once (links, Robust Links,     |
//	|   anchors, text fingerprint = page evidence)       |
//	+---+-----------------------+------------------------+
//	    | Frontier.Queue        | Sink.Add(page)
//	    | (URLs it will fetch)  v
//	    |            +---------------------+  first sight of a target URL:
//	    +----------->|  router (dedupe)    |--- page of the site: wait for
//	                 |                     |    its page, judge from it
//	                 |                     |    (check.Known, no request)
//	                 +----------+----------+--- robots/depth/budget/other
//	                            |               hosts: check live
//	                            v
//	               check.Checker.Stream (Run's dispatcher:
//	               Workers in all, one politeness.Scheduler
//	               slot per request; soft-404 probes)
//	                            |
//	 pages, frontier, checks    v
//	----------------------> audit.Batcher -> single writer (Store)
//	                            |
//	                            | each check once stored
//	                            v
//	               Archiver.Checked (robust.Stage): broken
//	               targets' nearest-memento questions, bounded
//	               queue per archive, asked while the checks
//	               go on (same politeness.Scheduler budgets)
//	                            |
//	          after the crawl and the checks are done,
//	          three at once (reads wait for no writer):
//	                            v
//	 findings (audit.LinkFindings over the links streamed from
//	 the store, one target at a time; a fragment link is read
//	 whole only when it gives something)
//	 || history (the run's checks into the targets' histories)
//	 || the summary's reads (verdict counts, top broken, stats)
//	                            v
//	 Archiver.Finish (takes the answers asked ahead, asks the
//	 rest; snapshots, drift, identifiers, suggestions) -> run
//	 finished (complete / interrupted / failed) -> report
//
// A run's settings are a Settings value: plain data a front end fills
// (the linkrot command from its flags and configuration file), stored
// with the run (JSON) so that a resumed run gets the same ones, from
// which Settings.CrawlOptions, Settings.CheckOptions and
// ArchiveSettings.Stage build the Config's options and archives stage; no
// flag package is involved. Audit's stores are
// small interfaces (Store, FindingsStore, Finisher, ...) over the domain
// types of package audit; store/sqlite implements them.
//
// Example shows one way to run an audit from Go: open a store, create
// the run and store its Settings, build the Config from them, and call
// Audit.
//
// Nothing holds all pages, links or responses of a run: a page's
// response lives until the targets waiting for it are judged (a link that
// turns up after its page was stored has the page's response read back
// from the store); the router keeps a 16-byte digest per unique target
// URL and per page, the redirects the crawl saw and the crawl's queued
// URLs; at most a few thousand targets wait for the checker (the crawl
// waits when the checks fall behind); findings are derived from a stream
// of the links that can have one.
//
// Package linkrot also holds the files the linkrot command embeds for
// `linkrot demo` (DemoFiles).
package linkrot
