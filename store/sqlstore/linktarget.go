package sqlstore

import (
	"context"
	"fmt"
	"net/url"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// A link's target is found by its key (store.LinkTargetKey), as the
// pipeline's router finds it. The crawler records the key on the links it
// makes (audit.Link.Target), so that this, on the writer's one goroutine,
// does not parse every href again: an href is parsed here only for a link
// without one, or to create its target (its host and scheme).

// linkTarget is targetURL(ctx, l.Href, false), the key from
// store.LinkTargetKey.
func (s *saver) linkTarget(ctx context.Context, l *audit.Link) (targetOf, error) {
	if t, ok := s.byRaw[l.Href]; ok {
		return t, nil
	}
	t := targetOf{}
	if norm, ok := store.LinkTargetKey(l); ok {
		var err error
		if t, err = s.targetOfKey(ctx, l.Href, norm, nil); err != nil {
			return targetOf{}, err
		}
	}
	s.byRaw[l.Href] = t
	return t, nil
}

// hrefURL returns raw, an href whose target key is norm, parsed
// (targetURLOf), for creating the target. A key that is not raw's is an
// error: the link's recorded key would then not be urls.TargetKey's.
func hrefURL(raw, norm string) (*url.URL, error) {
	n, u, ok := targetURLOf(raw, false)
	if !ok || n != norm {
		return nil, fmt.Errorf("target %s: the link's recorded key is not that of its href %s", quote(norm), quote(raw))
	}
	return u, nil
}
