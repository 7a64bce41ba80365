// Package httpx holds the HTTP plumbing every stage that fetches untrusted
// URLs shares: the SSRF-guarded transport, the decoded-and-capped body
// reader, network error classes and the test of what is an HTML page.
// The live checker, the crawler, the archive client and robustify fetch
// URLs named by crawled pages and by archive answers, all equally
// untrusted, so they go through the same guard and the same caps, and
// agree on what a page is.
//
// Retry-After is read by package politeness (ParseRetryAfter), whose
// scheduler must read it itself; there is one parser and it lives there.
//
// httpx imports only the standard library, golang.org/x/net and netguard.
package httpx
