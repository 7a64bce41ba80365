// Package check checks live link targets and tells, for each, what became
// of it: the honest verdict taxonomy of audit.Verdict (ok, moved, gone,
// blocked, soft-404, ...) with the evidence behind it.
//
// A Checker fetches every target once with GET, follows redirects itself
// (recording each hop), retries transient failures with backoff, detects
// soft 404s by probing a sibling URL that cannot exist (Bar-Yossef et al.
// 2004), fingerprints HTML bodies for drift measurement, and reuses an
// earlier run's verdict when the server answers a conditional request with
// 304 Not Modified.
//
// Fetching untrusted URLs is dangerous, so everything is bounded: connect
// and total time per attempt, redirects, body bytes after decompression,
// header bytes. The default transport dials only addresses that pass the
// SSRF policy of package netguard, checked on the resolved IP at connect
// time, on every hop: private addresses only with AllowPrivate or for the
// exact hosts of AllowPrivateHosts. With Options.Robots, robots.txt binds
// the audited site's own URLs: disallowed ones are skipped, redirects into
// them not followed, and every request waits for its host's Crawl-delay.
//
// Run schedules targets over a fixed pool of workers with per-host queues:
// a worker is handed a target only when the run's politeness Scheduler
// (Options.Scheduler, shared with the crawl; see package politeness)
// grants its host a slot: concurrency, delay, Crawl-delay, pauses after
// 429/503, the adaptive rate. No worker waits on a busy or paused host
// while other hosts could be served: a refused target goes back to the
// dispatcher until its pause is over, and the targets of a host given up
// are tried once more at the end of the run, then recorded rate-limited.
// A target whose own window (Retry-After, or a quota's reset) runs longer
// than MaxRetryWait is recorded rate-limited at once, its reason ending
// "retry after <RFC 3339 time>", and is not requested inside that window.
package check
