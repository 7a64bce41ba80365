// Package report turns one run of linkrot into documents people and tools
// read: a self-contained HTML report (index.html: inline CSS, JavaScript
// and SVG charts, a restrictive Content-Security-Policy, no network), and
// machine outputs for CI and research (JSON, CSV, JUnit XML, SARIF 2.1.0,
// Markdown).
//
// The package is read-only and knows no storage: the caller loads a
// Dataset (cmd/linkrot reads it from the store) and hands it to
// WriteHTML, WriteDir or Write. Everything in a Dataset came from the web
// and is treated as hostile: HTML goes through html/template, URLs become
// links only for http, https and mailto, and data for the page's scripts is
// JSON escaped for a script context.
//
// A Dataset may stream its links (Dataset.EachLink) instead of holding
// them: every writer then walks them once or twice and keeps counts and a
// bounded set of links to detail, so that a run of a million links is
// reported in bounded memory. WriteDir writes the links of such a run
// into static link pages (links/N.html) beside index.html.
package report
