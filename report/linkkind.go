package report

import "github.com/linkrot/linkrot/audit"

// elementLabel names where a link's URL is written, for the outputs
// that show one word per link: the element alone when the URL is in its
// main attribute (a href, img src, ...; the first of audit.LinkRules for
// the element), else the element and the attribute ("img srcset", "video
// poster"), so that an image candidate or a poster is told from the
// element's main URL.
func elementLabel(element, attr string) string {
	if attr == "" || attr == mainAttr(element) {
		return element
	}
	return element + " " + attr
}

// mainAttr is the attribute of the first rule of element in
// audit.LinkRules, "" for an element not in the table.
func mainAttr(element string) string {
	for _, r := range audit.LinkRules {
		if r.Element == element {
			return r.Attr
		}
	}
	return ""
}

// linkSubject is how a finding's message names the link: "Link to" for
// a hyperlink (a, area), else the element and attribute as written
// ("<img srcset>", "<video poster>", "<meta content>").
func linkSubject(l *Link) string {
	if l == nil || l.Element == "a" || l.Element == "area" || l.Element == "" {
		return "Link to"
	}
	if l.Attr == "" {
		return "<" + l.Element + ">"
	}
	return "<" + l.Element + " " + l.Attr + ">"
}
