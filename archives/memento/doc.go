// Package archive talks to web archives: Memento TimeGates (RFC 7089
// datetime negotiation, 302-style and 200-style), mementos (with their
// Memento-Datetime and Link rel="original"), TimeMaps (application/
// link-format, paging and index TimeMaps followed to a cap), Wayback
// Machine URLs (/web/<14 digits>[flags]/<url>, id_ raw mode), pwid
// resolution through a registry of replay URL templates, and Save Page Now
// 2 capture requests.
//
// Archives are configured, never hard-wired (Archive, ParseArchive); the
// defaults are the Internet Archive's Wayback Machine and the Memento
// TimeTravel aggregator (see Defaults for the documented endpoints and
// their sources).
//
// Politeness toward archives is a budget of its own, separate from the
// audited site: every request to an archive's host waits for a slot of
// that host's token bucket (Limiter), shared by all goroutines using the
// Client, so the configured rate is never exceeded however many workers
// run. A 429 with Retry-After pauses the host's whole bucket. A host that
// fails at the network level several times in a row is marked unavailable
// for the rest of the Client's life, so an unreachable archive degrades to
// recorded errors quickly instead of stalling a run.
//
// Everything an archive answers is untrusted input: Link headers go
// through urls.ParseLinkHeader, datetimes through strict parsers, bodies
// are capped after decompression and every connection goes through the
// SSRF guard of package netguard (httpx.NewTransport).
package memento
