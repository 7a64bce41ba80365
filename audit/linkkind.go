package audit

// LinkKind is what a browser does with a link's URL. The kind decides
// whether the URL is a checked target at all; LinkRule adds whether the
// target is a page (its #fragment judged, the crawl following it).
type LinkKind string

const (
	// KindNavigation: the browser goes to the URL, or shows it as the
	// source of a quotation (a, area, meta refresh, cite).
	KindNavigation LinkKind = "navigation"
	// KindResource: the browser fetches the URL to embed or run it (img,
	// script, stylesheets, media, frames, ...).
	KindResource LinkKind = "resource"
	// KindHint: the URL names an origin the browser may resolve or connect
	// to ahead of time (link rel=dns-prefetch, rel=preconnect); nothing is
	// fetched from it, so it is recorded but never checked.
	KindHint LinkKind = "hint"
)

// LinkRule is how linkrot treats the links of one element and attribute.
type LinkRule struct {
	Element string // lower-case element name
	Attr    string // the attribute holding the URL
	// Rel, when set, restricts the rule to links whose rel tokens are
	// all among these (link rel=dns-prefetch, preconnect).
	Rel  []string
	Kind LinkKind
	// Page: the target is a document the browser shows as a page (a
	// navigation, an iframe's document), so a #fragment names an element
	// of it and is checked, and a crawl follows it. An embedded resource's
	// fragment is no anchor (media fragments such as #t=10, SVG sprite
	// ids) and is not checked.
	Page bool
}

// Checked reports whether links of the rule are checked targets: every
// kind but connection hints. Soft-404 detection applies to every checked
// target whose answer is an HTML page (for an embedded resource such an
// answer is itself the catch-all symptom).
func (r LinkRule) Checked() bool { return r.Kind != KindHint }

// LinkRules is the table of the URL-bearing attributes linkrot extracts
// from HTML (and Markdown, which yields a href and img src), in the order
// docs/links.md lists them. Extraction, target creation, crawling and
// the fragment rule all read it through RuleOf.
var LinkRules = []LinkRule{
	{Element: "a", Attr: "href", Kind: KindNavigation, Page: true},
	{Element: "area", Attr: "href", Kind: KindNavigation, Page: true},
	{Element: "meta", Attr: "content", Kind: KindNavigation, Page: true}, // http-equiv=refresh
	{Element: "blockquote", Attr: "cite", Kind: KindNavigation, Page: true},
	{Element: "q", Attr: "cite", Kind: KindNavigation, Page: true},
	{Element: "del", Attr: "cite", Kind: KindNavigation, Page: true},
	{Element: "ins", Attr: "cite", Kind: KindNavigation, Page: true},
	{Element: "iframe", Attr: "src", Kind: KindResource, Page: true},
	{Element: "link", Attr: "href", Rel: []string{"dns-prefetch", "preconnect"}, Kind: KindHint},
	{Element: "link", Attr: "href", Kind: KindResource},
	{Element: "img", Attr: "src", Kind: KindResource},
	{Element: "img", Attr: "srcset", Kind: KindResource},
	{Element: "source", Attr: "src", Kind: KindResource},
	{Element: "source", Attr: "srcset", Kind: KindResource},
	{Element: "script", Attr: "src", Kind: KindResource},
	{Element: "video", Attr: "src", Kind: KindResource},
	{Element: "video", Attr: "poster", Kind: KindResource},
	{Element: "audio", Attr: "src", Kind: KindResource},
	{Element: "track", Attr: "src", Kind: KindResource},
	{Element: "embed", Attr: "src", Kind: KindResource},
	{Element: "object", Attr: "data", Kind: KindResource},
	{Element: "input", Attr: "src", Kind: KindResource}, // type=image
}

// RuleOf returns the rule of a link of element whose URL is in attr, with
// the link's rel tokens (lower case). A link matching no row (an element
// an older linkrot or another producer recorded) is an embedded resource
// that is checked, not a page.
func RuleOf(element, attr string, rel []string) LinkRule {
	for _, r := range LinkRules {
		if r.Element != element || r.Attr != attr {
			continue
		}
		if r.Rel != nil && !allIn(rel, r.Rel) {
			continue
		}
		return r
	}
	return LinkRule{Element: element, Attr: attr, Kind: KindResource}
}

// allIn reports whether tokens is not empty and each of its tokens is in
// set.
func allIn(tokens, set []string) bool {
	if len(tokens) == 0 {
		return false
	}
	for _, t := range tokens {
		found := false
		for _, s := range set {
			found = found || t == s
		}
		if !found {
			return false
		}
	}
	return true
}

// Rule returns l's rule (RuleOf its element, attribute and rel).
func (l *Link) Rule() LinkRule { return RuleOf(l.Element, l.Attr, l.Rel) }

// Checked reports whether l's URL is a target to check: false for a
// connection hint (link rel=dns-prefetch or preconnect), whose origin is
// connected to, not fetched.
func (l *Link) Checked() bool { return l.Rule().Checked() }

// FragmentChecked reports whether the #fragment of a link of element and
// attr names an element of its target page (LinkRule.Page): links found
// in the store carry no rel, which only separates connection hints,
// never checked.
func FragmentChecked(element, attr string) bool { return RuleOf(element, attr, nil).Page }
