package check

import (
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/pagefacts"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Bounds of PageSignals.
const (
	signalTextMax   = 300             // bytes of a title or heading kept
	signalH1Max     = pagefacts.MaxH1 // headings kept
	signalParkMax   = 12              // parking fingerprints kept
	signalScriptMax = pagefacts.ScriptMax
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
	sb := newSignalBuilder()
	ps := sb.ps
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
					sb.signal(pagefacts.AdblockKey, "")
				}
			case atom.Script:
				if src := attrOf(n, "src"); src != "" {
					sb.signal(pagefacts.ScriptSrc, src)
				} else if n.FirstChild != nil && n.FirstChild.Type == html.TextNode {
					sb.signal(pagefacts.ScriptText, n.FirstChild.Data)
				}
				continue
			case atom.Iframe, atom.Frame, atom.Embed:
				sb.signal(pagefacts.FrameSrc, attrOf(n, "src"))
			case atom.Object:
				sb.signal(pagefacts.ObjectData, attrOf(n, "data"))
			case atom.Meta:
				if strings.EqualFold(attrOf(n, "http-equiv"), "refresh") {
					sb.signal(pagefacts.Refresh, attrOf(n, "content"))
				}
			case atom.A:
				sb.signal(pagefacts.AnchorHref, attrOf(n, "href"))
			case atom.Template, atom.Style:
				continue
			}
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return sb.result()
}

// signalsOf is pageSignals of the page the crawler's one pass read into
// f: the same title, headings and fingerprints, from the same elements in
// the same order.
func signalsOf(f *pagefacts.Facts) *audit.PageSignals {
	sb := newSignalBuilder()
	if f.HasTitle {
		sb.ps.Title = cutText(f.Title, signalTextMax)
	}
	for _, h := range f.H1 {
		if len(sb.ps.H1) >= signalH1Max {
			break
		}
		if t := cutText(h, signalTextMax); t != "" {
			sb.ps.H1 = append(sb.ps.H1, t)
		}
	}
	for _, s := range f.Signals {
		sb.signal(s.Kind, s.Value)
	}
	return sb.result()
}

// signalBuilder collects the parking fingerprints of a page's elements.
type signalBuilder struct {
	ps      *audit.PageSignals
	seen    map[string]bool
	perKind map[string]int
}

func newSignalBuilder() *signalBuilder {
	return &signalBuilder{ps: &audit.PageSignals{}, seen: map[string]bool{}, perKind: map[string]int{}}
}

func (sb *signalBuilder) park(kind, v string) {
	isURL := kind == "goto" || kind == "offer" || kind == "renew"
	if isURL {
		v = cutText(strings.Map(dropControl, v), signalURLMax)
	}
	f := kind + ":" + v
	if v == "" || len(sb.ps.Parking) >= signalParkMax || sb.seen[f] || isURL && sb.perKind[kind] >= signalURLKinds {
		return
	}
	sb.perKind[kind]++
	sb.seen[f] = true
	sb.ps.Parking = append(sb.ps.Parking, f)
}

func (sb *signalBuilder) gotoURL(u string) {
	if gotoWorthKeeping(u) {
		sb.park("goto", strings.TrimSpace(u))
	}
}

// signal parks the fingerprints of one element (see pageSignals).
func (sb *signalBuilder) signal(kind pagefacts.SignalKind, v string) {
	switch kind {
	case pagefacts.AdblockKey:
		sb.park("var", "data-adblockkey")
	case pagefacts.ScriptSrc:
		sb.park("infra", parkingHostOf(v))
		sb.park("ads", parkedAdOf(v))
	case pagefacts.ScriptText:
		d := v[:min(len(v), signalScriptMax)]
		sb.park("infra", parkingInScript(d))
		sb.park("var", parkingScriptVar(d))
		sb.park("ads", parkedAdInScript(d))
		for _, u := range scriptRedirects(d) {
			sb.gotoURL(u)
		}
	case pagefacts.FrameSrc, pagefacts.ObjectData:
		sb.park("infra", parkingHostOf(v))
	case pagefacts.Refresh:
		u := refreshURL(v)
		sb.park("infra", parkingHostOf(u))
		sb.gotoURL(u)
	case pagefacts.AnchorHref:
		if m := marketplaceOf(v); m != "" {
			sb.park("link", m)
			sb.park("offer", strings.TrimSpace(v))
		} else if registrarLink(v) {
			sb.park("renew", strings.TrimSpace(v))
		}
	}
}

func (sb *signalBuilder) result() *audit.PageSignals {
	ps := sb.ps
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
	for len(stack) > 0 && b.Len() < pagefacts.NodeTextMax {
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
