package check

import (
	"bytes"

	"golang.org/x/net/html"
)

// anchors returns the fragment targets of an HTML page, in document order
// without repeats, at most limit of them: the id of every element and the
// name of every <a> (HTML's "indicated part of the document"), read from
// the tokens. It is for pages the parser refuses; anchorsOf reads the
// parsed tree of the others.
func anchors(page []byte, limit int) []string {
	z := html.NewTokenizer(bytes.NewReader(page))
	seen := map[string]bool{}
	var out []string
	for len(out) < limit {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			isA := len(name) == 1 && name[0] == 'a'
			for more && len(out) < limit {
				var k, v []byte
				k, v, more = z.TagAttr()
				if len(v) == 0 || !(string(k) == "id" || isA && string(k) == "name") {
					continue
				}
				if s := string(v); !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// anchorsOf is anchors for a parsed document: the id of every element and
// the name of every <a> in the tree, in document order without repeats,
// at most limit of them. The tree is the DOM a browser resolves a
// fragment in, so attributes the parser drops (a repeated attribute, a
// nested <form>) are not anchors.
func anchorsOf(doc *html.Node, limit int) []string {
	var seen map[string]bool
	var out []string
	stack := []*html.Node{doc}
	for len(stack) > 0 && len(out) < limit {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Namespace != "" || a.Val == "" || !(a.Key == "id" || a.Key == "name" && n.Data == "a") {
					continue
				}
				if !seen[a.Val] {
					if seen == nil {
						seen = map[string]bool{}
					}
					seen[a.Val] = true
					out = append(out, a.Val)
					if len(out) == limit {
						break
					}
				}
			}
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return out
}
