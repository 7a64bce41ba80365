package report

import "github.com/linkrot/linkrot/audit"

// What other HTML views of a run (the dashboard of `linkrot serve`) share
// with the report, so that they look the same without copying it.

// StyleSheet returns the report's CSS, as embedded in every HTML report.
// A page that inlines it must allow it in its Content-Security-Policy (by
// hash: it is constant).
func StyleSheet() string { return reportCSS }

// VerdictClass returns the CSS class (good, info, warn, bad, muted) the
// report gives a verdict.
func VerdictClass(v audit.Verdict) string { return verdictClass(v) }

// BandClass returns the CSS class the report gives a drift band.
func BandClass(band string) string { return bandClass(band) }
