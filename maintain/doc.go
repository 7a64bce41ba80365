// Package maintain speaks link maintenance on the wire, both directions:
// the HTTP link-maintenance draft (draft-pritchard-http-links-00, in
// ../shared/specs/http-link-maintenance.txt: LINK, UNLINK, UNLINKR,
// LINKMOD) and W3C Webmention (2017).
//
// As a receiver (linkrot serve), a Listener sits in front of net/http and
// peeks at the request line of each connection: the draft's own framing
// ("UNLINKR Source-URL Target-URL [Repl-Target-URL]", which net/http
// rejects) is parsed by ParseRequestLine and answered by the Receiver;
// everything else (the HTTP/1.1 framing of the same methods, Webmention,
// the dashboard) goes to net/http. Every notification is hostile input:
// the Limiter bounds requests per client address, URLs are validated
// (ValidateURL) before anything is fetched, and nothing is fetched while
// the client waits: accepted notifications are stored as queued (the
// durable queue, so a stopped server loses none) and the Verifier works
// them off with per-host politeness and budgets, through the SSRF-guarded
// transport of check.
//
// As a sender (linkrot notify), Notifier tells the registered sources of
// backlinks when one of our pages moved (UNLINKR with the replacement) or
// changed (LINKMOD, where they asked for it), once per change.
package maintain
