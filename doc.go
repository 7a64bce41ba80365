// Package linkrot is the linkrot pipeline as a library: one run of an
// audit, end to end. Start creates a run from its Settings (or resumes
// one) and builds everything the run needs once (Open): the crawler's
// and the checker's options sharing one politeness scheduler, the
// robots.txt gate and its Crawl-delay rules, the SSRF scope (the audited
// origins may be private, nothing else) and the archives stage. The
// job's Audit then crawls the site, checks every unique target as soon as
// the crawl discovers it, stores everything through one batched writer,
// derives findings, looks up archives (starting while the checks run),
// updates the targets' histories and finishes the run. cmd/linkrot maps
// flags and the configuration file onto Settings and prints; the linkrot
// commands, the scale-out coordinator and workers (package scaleout) and
// a Go caller all build their runs here.
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
//	               Archiver.Checked (archives.Stage): broken
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
// with the run (JSON) so that a resumed run gets the same ones; what it
// crawls is a typed Input (a site, a URL list, sitemaps, a local
// directory served under a base URL). No flag package is involved. The
// stores are small interfaces (Store, FindingsStore, ...) over the domain
// types of package audit; the store adapters implement them.
//
// Example shows the whole run from Go: open a store, Start a run of the
// Settings, run the job's Audit; robots.txt binds it as it binds linkrot
// audit.
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
