// Package scaleout is linkrot's scale-out mode: the crawl and the checks
// of a run carried as units of work on NATS JetStream to any number of
// worker processes (linkrot worker), the results in one shared store
// (PostgreSQL; a SQLite file only when every process is on one machine),
// the rest of the run (findings, archives, history, the run's end, the
// report) done by the coordinating linkrot audit --nats through the
// pipeline's own functions (linkrot.Config.Work).
//
//	linkrot audit --nats            linkrot worker  x N (any machines)
//	  |  seeds                        |  FetchNoWait(1) round-robin over
//	  v                               |  the partitions, --workers at once
//	+------------- JetStream: stream LINKROT_WORK (WorkQueuePolicy) -----+
//	| linkrot.work.<run>.<p>   p = FNV-1a(host) mod --partitions         |
//	| one durable pull consumer per p, MaxAckPending = --per-host        |
//	| KV LINKROT_SEEN: run's seen set   KV LINKROT_HOSTS: next slot and  |
//	| KV LINKROT_ANCHORS               pause of each host (429 / 503)    |
//	+--------------------------------------------------------------------+
//	  ^ drained? (no unit of the run       |  crawl unit: crawler.FetchUnit
//	  | left in the stream)                |  -> store page + links -> judge
//	  |                                    |  own URL (check.Known) -> publish
//	  |                                    |  new pages, route new targets
//	  |                                    |  check unit: check.Checker
//	  |                                    v  -> store check -> ack
//	  +------------------ shared store (PostgreSQL) <-----------------+
//	  then: findings -> archives -> history -> run's end -> report
//
// # Decisions
//
// Units. A crawl unit is one page of the audited site: fetched by the
// crawler exactly as a recursive crawl fetches it (robots.txt, scope,
// redirects, trap guards on its path, body caps, extraction, evidence:
// crawler.Crawler.FetchUnit), stored with its links, then its own URLs
// are judged from its response when they are targets waiting for it
// (check.Known, no second request), the pages it adds to the crawl are
// published as crawl units and each target seen for the first time in
// the run is routed: to the crawl's response when the crawl admitted it,
// else to a check unit (one live check by check.Checker). That is the
// router of the single-process pipeline, with its in-memory maps replaced
// by the run's seen set.
//
// Politeness by the engine. Units are partitioned by host: every unit of
// a host is on the subject of one partition, and the partition's consumer
// has MaxAckPending = --per-host, so the server never lets more than that
// many units of the host be worked on at once, however many workers
// fetch. Hosts sharing a partition share that limit (they can only get
// less). A worker fetches one unit at a time per goroutine (FetchNoWait,
// no prefetch: a prefetched unit would hold a slot without using it).
// What needs time rather than a count is shared state: a KV entry per
// host holds the next start slot (the larger of --delay and the
// robots.txt Crawl-delay, reserved with compare-and-set) and the end of a
// pause a 429 or 503 asked for (Retry-After, 1 s without one, capped by
// --max-retry-wait). Every request of every worker reserves its slot
// first and looks at the pause again just before it is sent; the local
// politeness.Scheduler of each worker (AIMD rate, giving a host up) still
// runs inside.
//
// Delivery. A unit is acked after its results are committed and the
// units it produced are published (published with Nats-Msg-Id: the same
// unit is queued once within the stream's two-hour window). A worker that
// dies holds its unit until AckWait (--ack-wait, 30 s; the worker tells
// the server InProgress every third of it while it works) and the unit is
// delivered again; a unit that fails (store or NATS unreachable) is
// handed back with NakWithDelay; a stopping worker (SIGTERM) naks what it
// holds. At-least-once is made exactly-once in effect by idempotent
// writes: a page is unique per run (ON CONFLICT DO NOTHING), a check per
// run and target (upsert), findings are derived once, by the
// coordinator, after the work drained (replacing any earlier pass). The
// seen set's claims are KV Creates (first writer wins) whose value names
// the claiming unit, so that a unit redelivered after it claimed a URL but
// before it published it wins its claim again and publishes it.
//
// Dead letters. The server's MaxDeliver is unlimited on purpose: a unit
// that exhausted it would stay in the work-queue stream for ever and the
// run would never drain. Instead a worker receiving a unit for the
// (DeadAfter+1)th time (5 failed deliveries) does not work on it: it
// records it as the run's data, a page that could not be fetched or a
// skipped check, both with the reason "dead letter: ...", and acks it.
//
// Archives. Archive budgets (the Internet Archive's TimeMap/CDX pool of
// about 24 requests a minute) are per client address and bound by time,
// not by workers: more workers cannot go faster, and per-archive
// consumers would only add a second way to exceed a budget. The
// coordinator runs the archives stage alone, after the work drained,
// with the single-process code and budgets.
//
// Settings and credentials. A worker reads the run's settings from the
// shared store (the settings linkrot audit stores for --resume: the same
// flags, parsed by the same code), so crawl and checks are configured as
// in a single-process run; header values of [[host]] rules come from the
// worker's own --config, NATS credentials from LINKROT_NATS_USER /
// LINKROT_NATS_PASSWORD, LINKROT_NATS_TOKEN or LINKROT_NATS_CREDS, the
// database password from the environment (PGPASSWORD) or a config file:
// never from the command line, never stored with the run.
//
// Runs on the queue. A run is named on the queue by RunKey (its ID and a
// digest of its start and seeds), so that two databases behind one NATS
// server never share a seen set. Killed, the coordinator is started
// again with --resume: the run is reopened, the seeds are claimed already
// (published again only when their page is not stored), and it waits for
// the same units.
//
// # Not guaranteed
//
//   - --max-pages is refused with --nats (it needs one counter for the
//     run), and only crawls from URLs are scaled out (not --urls,
//     --sitemap or a directory).
//   - The query-variants trap guard counts per page, not per run; the path
//     guards (repeated segments, depth, length) hold as in one process.
//   - A redirect followed to another host is not counted against that
//     host's partition; robots.txt is read once per worker and host
//     (in a unit of that host: inside its limit, outside its spacing); a
//     target whose page the crawl reached through a
//     redirect after the target was routed is checked live (same verdict,
//     one request more).
//   - Results of earlier runs (conditional requests, --max-age) are not
//     used by the workers.
//   - Partitions must be the same number in every process; the consumers'
//     --per-host and --ack-wait are the latest coordinator's, for every
//     run on the server.
//   - The progress display counts what workers report over core NATS
//     (may miss a few); the summary and report are read from the store.
package scaleout
