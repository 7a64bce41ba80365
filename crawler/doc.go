// Package crawler fetches a site with Colly and turns every fetched page into
// an audit.Page: HTTP outcome, redirect chain, and for HTML the extraction
// of crawler/extract. It owns politeness (robots.txt with RFC 9309
// semantics, Crawl-delay, per-host parallelism and delay), scope (host and
// port, allowed domains, include/exclude patterns, depth and page budgets),
// the crawl-trap guards (trap.go: repeated path segments, path depth,
// query variants, session ids, URL length; each trap recorded as an
// audit.CrawlTrap), the robots.txt gate shared with the check stage
// (RobotsGate) and the hostile-input bounds (timeouts, body caps after
// decompression, redirect hop caps). Connections go through package
// netguard.
//
// Inputs are a start URL (recursive crawl), a list of URLs (no recursion),
// sitemaps (their URLs are seeds of a recursive crawl) or a local directory
// served through an in-process transport under a base URL.
package crawler
