package linkrot

import "embed"

// DemoFiles holds testdata/demo: the small web site and Memento archive
// that `linkrot demo` serves on loopback. site/ is served as the demo
// site, archive/ as the demo archive's mementos (archive/mementos.json
// lists them).
//
//go:embed testdata/demo
var DemoFiles embed.FS
