package store

import (
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// LinkTargetKey returns the key of the target l's href names and whether
// it names one: urls.TargetKey(l.Href)'s key and ok, taken from the key
// the crawler recorded on the link (audit.Link.Target) when there is one
// for its current href. The pipeline's router and the store both map a
// link to its target with it, so that they always agree.
func LinkTargetKey(l *audit.Link) (key string, ok bool) {
	if key, ok, known := l.Target(); known {
		return key, ok
	}
	key, _, ok = urls.TargetKey(l.Href)
	return key, ok
}
