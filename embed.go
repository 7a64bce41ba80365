// Package linkrot holds the files the linkrot command embeds: the small web
// site and Memento archive that `linkrot demo` serves on loopback
// (testdata/demo). The tool itself lives in cmd/linkrot; its packages are
// audit, crawler and report.
package linkrot

import "embed"

// DemoFiles holds testdata/demo: site/ is served as the demo site,
// archive/ as the demo archive's mementos (archive/mementos.json lists
// them).
//
//go:embed testdata/demo
var DemoFiles embed.FS
