package check

import (
	"strings"

	"github.com/linkrot/linkrot/audit"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Bounds of PageSignals.
const (
	signalTextMax   = 300 // bytes of a title or heading kept
	signalH1Max     = 3   // headings kept
	signalParkMax   = 12  // parking fingerprints kept
	signalScriptMax = 64 << 10
	// signalURLMax is the bytes kept of a URL a fingerprint records
	// ("goto:", "offer:", "renew:"), signalURLKinds how many of each such
	// kind.
	signalURLMax   = 300
	signalURLKinds = 2
)

// pageSignals reads, from a parsed HTML document, what the soft-404
// classifier needs besides the main text: the title, the first <h1>
// headings and the parking-service fingerprints (parked.go), each
// "kind:value":
//
//   - infra: a parking host a script, frame, object or refresh loads or an
//     inline script names.
//   - var: a parking variable an inline script sets (parkingScriptVar), or
//     "data-adblockkey": the Adblock Plus site key on <html> that parking
//     landers carry to have their ads shown to Adblock users.
//   - ads: Google's ad code for parked domains (parkedAdPaths).
//   - link: a marketplace's page for a domain an <a href> points at (the
//     marketplacePaths prefix); offer: that href (the domain it names
//     is compared with the target's at classification).
//   - renew: an <a href> to a registrar's or marketplace's site that is no
//     marketplace page for a domain (a renewal, a WHOIS record).
//   - goto: where a <meta http-equiv=refresh> or an inline script sends
//     the browser, when that is a domain marketplace or a "wwN." host
//     (see gotoWorthKeeping).
//
// A nil doc gives nil.
func pageSignals(doc *html.Node) *audit.PageSignals {
	if doc == nil {
		return nil
	}
	ps := &audit.PageSignals{}
	seen := map[string]bool{}
	perKind := map[string]int{}
	park := func(kind, v string) {
		isURL := kind == "goto" || kind == "offer" || kind == "renew"
		if isURL {
			v = cutText(strings.Map(dropControl, v), signalURLMax)
		}
		f := kind + ":" + v
		if v == "" || len(ps.Parking) >= signalParkMax || seen[f] || isURL && perKind[kind] >= signalURLKinds {
			return
		}
		perKind[kind]++
		seen[f] = true
		ps.Parking = append(ps.Parking, f)
	}
	gotoURL := func(u string) {
		if gotoWorthKeeping(u) {
			park("goto", strings.TrimSpace(u))
		}
	}
	titleDone := false
	// Iterative walk: a hostile page nests deeply.
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Title:
				if !titleDone && n.Namespace == "" {
					ps.Title = cutText(nodeText(n), signalTextMax)
					titleDone = true
				}
				continue
			case atom.H1:
				if len(ps.H1) < signalH1Max && !hiddenNode(n) {
					if t := cutText(nodeText(n), signalTextMax); t != "" {
						ps.H1 = append(ps.H1, t)
					}
				}
				continue
			case atom.Html:
				if attrOf(n, "data-adblockkey") != "" {
					park("var", "data-adblockkey")
				}
			case atom.Script:
				if src := attrOf(n, "src"); src != "" {
					park("infra", parkingHostOf(src))
					park("ads", parkedAdOf(src))
				} else if n.FirstChild != nil && n.FirstChild.Type == html.TextNode {
					d := n.FirstChild.Data
					d = d[:min(len(d), signalScriptMax)]
					park("infra", parkingInScript(d))
					park("var", parkingScriptVar(d))
					park("ads", parkedAdInScript(d))
					for _, u := range scriptRedirects(d) {
						gotoURL(u)
					}
				}
				continue
			case atom.Iframe, atom.Frame, atom.Embed:
				park("infra", parkingHostOf(attrOf(n, "src")))
			case atom.Object:
				park("infra", parkingHostOf(attrOf(n, "data")))
			case atom.Meta:
				if strings.EqualFold(attrOf(n, "http-equiv"), "refresh") {
					u := refreshURL(attrOf(n, "content"))
					park("infra", parkingHostOf(u))
					gotoURL(u)
				}
			case atom.A:
				href := attrOf(n, "href")
				if m := marketplaceOf(href); m != "" {
					park("link", m)
					park("offer", strings.TrimSpace(href))
				} else if registrarLink(href) {
					park("renew", strings.TrimSpace(href))
				}
			case atom.Template, atom.Style:
				continue
			}
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	if ps.Title == "" && len(ps.H1) == 0 && len(ps.Parking) == 0 {
		return nil
	}
	return ps
}

// dropControl drops control characters from a URL kept as a fingerprint.
func dropControl(r rune) rune {
	if r < 0x20 || r == 0x7f {
		return -1
	}
	return r
}

// hiddenNode reports an element with the hidden attribute.
func hiddenNode(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == "hidden" {
			return true
		}
	}
	return false
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// refreshURL returns the URL of a refresh directive "5; url=...".
func refreshURL(content string) string {
	_, after, ok := strings.Cut(content, ";")
	if !ok {
		_, after, ok = strings.Cut(content, ",")
		if !ok {
			return ""
		}
	}
	after = strings.TrimSpace(after)
	if len(after) >= 4 && strings.EqualFold(after[:3], "url") {
		after = strings.TrimSpace(after[3:])
		after = strings.TrimSpace(strings.TrimPrefix(after, "="))
	}
	return strings.Trim(after, `'"`)
}

// nodeText is the text below n (scripts and styles left out), white space
// collapsed.
func nodeText(n *html.Node) string {
	var b strings.Builder
	stack := []*html.Node{n}
	for len(stack) > 0 && b.Len() < 4*signalTextMax {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
			b.WriteByte(' ')
			continue
		case html.ElementNode:
			if c.DataAtom == atom.Script || c.DataAtom == atom.Style || c.DataAtom == atom.Template || c != n && hiddenNode(c) {
				continue
			}
		}
		for k := c.LastChild; k != nil; k = k.PrevSibling {
			stack = append(stack, k)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// cutText cuts s to at most max bytes on a rune boundary, valid UTF-8.
func cutText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}
