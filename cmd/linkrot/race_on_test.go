//go:build race

package main

// raceEnabled: under the race detector, TestAudit_PythonDocs audits the
// whole tree once (as a build directory) and serves only a part of it.
const raceEnabled = true
