package check

import (
	"bytes"

	"golang.org/x/net/html"
)

// anchors returns the fragment targets of an HTML page, in document order
// without repeats, at most limit of them: the id of every element and the
// name of every <a> (HTML's "indicated part of the document").
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
