package audit

// linkTarget is the target key a Link carries (SetTarget).
type linkTarget struct {
	href string // the Href key was computed from
	key  string
	ok   bool
	set  bool
}

// SetTarget records key and ok as the key of the link's target for its
// current Href: what urls.TargetKey(l.Href) returns (its key, and ok
// false when the href names no target). The crawler sets it when it
// makes a page's links (computing each page's keys through one
// urls.TargetKeys), so that the router and the store's writer, which
// both map the link to its target, find it without parsing the href
// again. Recording anything else would make them disagree with a link
// that has none.
func (l *Link) SetTarget(key string, ok bool) {
	l.target = linkTarget{href: l.Href, key: key, ok: ok, set: true}
}

// Target returns what SetTarget recorded, with known true, when it was
// recorded for the link's current Href. known is false for a link that
// has none (made by a test, a front end, read back from JSON or the
// store) or whose Href changed since: the caller then computes
// urls.TargetKey(l.Href) itself, and gets the same as with it.
func (l *Link) Target() (key string, ok, known bool) {
	t := &l.target
	if !t.set || t.href != l.Href {
		return "", false, false
	}
	return t.key, t.ok, true
}
