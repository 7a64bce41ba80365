package extract

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/linkrot/linkrot/internal/pagefacts"
)

// The consumers of the one pass's events: what Page's walk, check's
// pageSignals and anchorsOf, and textsim's main text do at each element
// and text node of the tree, done as the pass opens and closes them.

// insert opens an element (its attributes attrs) as a child of the
// current node.
func (p *pass) insert(a atom.Atom, name string, attrs []html.Attribute) {
	p.flush()
	parent := p.top()
	if parent != nil {
		parent.hasChild = true
	}
	var e *entry
	if n := len(p.pool); n > 0 {
		e = p.pool[n-1]
		p.pool = p.pool[:n-1]
		*e = entry{}
	} else {
		e = &entry{}
	}
	e.a, e.name = a, name
	for _, at := range attrs {
		if at.Key == "hidden" {
			e.hidden = true
			break
		}
	}
	info := infoOf(a)
	e.info = info
	e.formatting = info&infoFormatting != 0
	e.flags = info.flags()
	switch {
	case a == atom.Td || a == atom.Th:
		e.cell = true
	case a == atom.Table || a == atom.Template || a == atom.Html:
	case parent != nil:
		e.cell = parent.cell
	}
	p.stack = append(p.stack, e)
	d := len(p.stack)

	// Page's walk.
	x := p.x
	if parent != nil {
		e.inHidden, e.text = parent.inHidden, parent.text
	}
	switch a {
	case atom.Script, atom.Style, atom.Template, atom.Noscript:
		e.inHidden = true
	case atom.Title:
		if x.ex.Title == "" && x.title.Len() == 0 {
			x.inTitle, e.title = true, true
		}
	}
	if info&infoURL != 0 && !p.factsOnly {
		p.scratch = html.Node{Type: html.ElementNode, Data: name, DataAtom: a, Attr: attrs}
		if idx := x.element(&p.scratch); idx >= 0 && !x.ex.Links[idx].Resource {
			e.text, e.ownText = x.openText(idx), true
		}
	}
	if info&infoBlock != 0 {
		e.block = true
		x.addPageText(" ")
	}

	// anchorsOf.
	f := p.facts
	for _, at := range attrs {
		if len(f.Anchors) >= pagefacts.MaxAnchors {
			break
		}
		if at.Val == "" || !(at.Key == "id" || at.Key == "name" && name == "a") {
			continue
		}
		if p.seen == nil {
			p.seen = map[string]bool{}
		}
		if !p.seen[at.Val] {
			p.seen[at.Val] = true
			f.Anchors = append(f.Anchors, at.Val)
		}
	}

	// pageSignals.
	if p.node != nil && p.nodeSk == 0 {
		switch {
		case a == atom.Script || a == atom.Style || a == atom.Template || e.hidden:
			p.nodeSk = d
		}
	}
	if p.sigSkipAt() == 0 {
		switch a {
		case atom.Title:
			if !f.HasTitle {
				f.HasTitle = true
				e.nodeTxt = 1
				p.node, p.nodeAt, p.nodeSk = &strings.Builder{}, d, 0
			}
			e.sigSkip = true
		case atom.H1:
			if p.h1Count < pagefacts.MaxH1 && !e.hidden {
				e.nodeTxt = 2
				p.node, p.nodeAt, p.nodeSk = &strings.Builder{}, d, 0
			}
			e.sigSkip = true
		case atom.Html:
			if attrVal(attrs, "data-adblockkey") != "" {
				f.Signals = append(f.Signals, pagefacts.Signal{Kind: pagefacts.AdblockKey})
			}
		case atom.Script:
			if src := attrVal(attrs, "src"); src != "" {
				f.Signals = append(f.Signals, pagefacts.Signal{Kind: pagefacts.ScriptSrc, Value: src})
			} else {
				e.scriptS = true
			}
			e.sigSkip = true
		case atom.Iframe, atom.Frame, atom.Embed:
			f.Signals = append(f.Signals, pagefacts.Signal{Kind: pagefacts.FrameSrc, Value: attrVal(attrs, "src")})
		case atom.Object:
			f.Signals = append(f.Signals, pagefacts.Signal{Kind: pagefacts.ObjectData, Value: attrVal(attrs, "data")})
		case atom.Meta:
			if strings.EqualFold(attrVal(attrs, "http-equiv"), "refresh") {
				f.Signals = append(f.Signals, pagefacts.Signal{Kind: pagefacts.Refresh, Value: attrVal(attrs, "content")})
			}
		case atom.A:
			f.Signals = append(f.Signals, pagefacts.Signal{Kind: pagefacts.AnchorHref, Value: attrVal(attrs, "href")})
		case atom.Template, atom.Style:
			e.sigSkip = true
		}
		if e.sigSkip {
			p.sigSkip = d
		}
	}

	// The main text: the captures below their roots, then the search for
	// the roots (contentRoots).
	for _, c := range p.caps() {
		c.open(e, d)
	}
	if p.search == 0 && !p.mainDone {
		switch {
		case a == atom.Main:
			if e.hidden {
				p.search = d
			} else {
				p.main = newCapture(d, p.textEstimate())
				p.recaps()
				p.mainDone = true
			}
		case a == atom.Article:
			p.search = d
			if !e.hidden {
				p.article = newCapture(d, 0)
				p.articles = append(p.articles, p.article)
				p.recaps()
			}
		case a == atom.Body:
			if p.body == nil {
				p.body = newCapture(d, p.textEstimate())
				p.recaps()
			}
		case e.flags&flagSkipAlways != 0:
			p.search = d
		}
	}
}

// sigSkipAt is the depth of the element whose descendants pageSignals
// does not visit, 0 for none.
func (p *pass) sigSkipAt() int { return p.sigSkip }

// caps returns the captures being written.
func (p *pass) caps() []*capture { return p.capBuf }

// recaps sets the captures being written after main, body or article
// changed.
func (p *pass) recaps() {
	p.capBuf = p.capBuf[:0]
	if p.main != nil {
		p.capBuf = append(p.capBuf, p.main)
		return
	}
	if p.body != nil {
		p.capBuf = append(p.capBuf, p.body)
	}
	if p.article != nil {
		p.capBuf = append(p.capBuf, p.article)
	}
}

// newCapture starts the capture of a root at depth d, its buffer sized
// for size bytes of text.
func newCapture(d, size int) *capture {
	// writeText of the root: not skipped, not inline (main, article,
	// body): a space before its text.
	buf := make([]byte, 1, max(size, 16))
	buf[0] = ' '
	return &capture{depth: d, buf: buf}
}

// textEstimate is the size of the main text below the element just
// opened: a third of the page's bytes left (its markup takes the rest
// on documentation pages), so that the buffer grows seldom.
func (p *pass) textEstimate() int {
	return (len(p.src) - p.pos) / 3
}

// open is writeText meeting an element below the root at depth d.
func (c *capture) open(e *entry, d int) {
	if c.closed || d <= c.depth {
		return
	}
	if c.always == 0 && e.flags&flagSkipAlways != 0 {
		c.always = d
	}
	if c.skip != 0 {
		return
	}
	if e.flags&(flagSkipAlways|flagSkipBoilerplate) != 0 || e.hidden {
		c.skip = d
		return
	}
	if e.a == atom.Form && c.form == nil {
		c.form = &formSeg{depth: d, start: len(c.buf)}
	}
	if e.a == atom.Br {
		c.buf = append(c.buf, ' ')
		return
	}
	if e.flags&flagInline == 0 {
		c.buf = append(c.buf, ' ')
	}
}

// close is writeText leaving the element at depth d.
func (c *capture) close(e *entry, d int) {
	if c.closed {
		return
	}
	if d == c.depth {
		c.buf = append(c.buf, ' ')
		c.closed = true
		return
	}
	if c.always == d {
		c.always = 0
	}
	if c.skip == d {
		c.skip = 0
		return
	}
	if c.skip != 0 {
		return
	}
	if e.a != atom.Br && e.flags&flagInline == 0 {
		c.buf = append(c.buf, ' ')
	}
	if c.form != nil && c.form.depth == d {
		c.form.end = len(c.buf)
		c.forms = append(c.forms, *c.form)
		c.form = nil
	}
}

// textNode is writeText and textLen meeting a text node.
func (c *capture) textNode(s []byte) {
	if c.closed {
		return
	}
	if c.always == 0 {
		n := len(bytes.TrimSpace(s))
		c.rootLen += n
		if c.form != nil && c.skip == 0 {
			c.form.n += n
		}
	}
	if c.skip == 0 {
		c.buf = append(c.buf, s...)
	}
}

// pop closes the current element.
func (p *pass) pop() {
	p.flush()
	e := p.top()
	if e == nil {
		p.bail()
		return
	}
	d := len(p.stack)
	x := p.x
	if e.block {
		x.addPageText(" ")
	}
	if e.ownText {
		x.closeText(e.text)
	}
	if e.title {
		x.inTitle = false
		x.ex.Title = collapse(x.title.String(), x.opt.MaxTextLen)
	}
	// pageSignals.
	if p.node != nil {
		if p.nodeSk == d {
			p.nodeSk = 0
		}
		if p.nodeAt == d {
			t := strings.Join(strings.Fields(p.node.String()), " ")
			if e.nodeTxt == 1 {
				p.facts.Title = t
			} else if t != "" {
				p.facts.H1 = append(p.facts.H1, t)
				p.h1Count++
			}
			p.node = nil
		}
	}
	if p.sigSkip == d {
		p.sigSkip = 0
	}
	// The main text.
	for _, c := range p.caps() {
		c.close(e, d)
	}
	if p.article != nil && p.article.closed {
		p.article = nil
		p.recaps()
	}
	if p.search == d {
		p.search = 0
	}
	p.stack = p.stack[:d-1]
	p.pool = append(p.pool, e)
}

// addText adds character data to the current node's text.
func (p *pass) addText(d []byte) {
	if len(d) == 0 {
		return
	}
	if t := p.top(); t != nil {
		t.hasChild = true
	}
	p.text = append(p.text, d...)
}

// flush delivers the pending text node.
func (p *pass) flush() {
	if len(p.text) == 0 {
		return
	}
	b := p.text
	p.text = p.text[:0]
	x := p.x
	top := p.top()
	inHidden := top != nil && top.inHidden
	var link *linkText
	if top != nil {
		link = top.text
	}
	if x.inTitle || !inHidden {
		if x.inTitle {
			x.title.Write(b)
		}
		if !inHidden {
			addPageText(x, b)
			if x.pwidText {
				p.bail() // the tree path builds the page text (see finish)
				return
			}
		}
	}
	if link != nil && len(link.buf) < x.opt.MaxTextLen*4 {
		link.buf = append(link.buf, b...)
	}
	if p.node != nil && p.nodeSk == 0 && p.node.Len() < pagefacts.NodeTextMax {
		p.node.Write(b)
		p.node.WriteByte(' ')
	}
	if top != nil && top.scriptS {
		top.scriptS = false
		p.facts.Signals = append(p.facts.Signals, pagefacts.Signal{Kind: pagefacts.ScriptText, Value: string(b[:min(len(b), pagefacts.ScriptMax)])})
	}
	for _, c := range p.caps() {
		c.textNode(b)
	}
}

// attrVal is attrOf of check: the first attribute key's value, "" when
// there is none.
func attrVal(attrs []html.Attribute, key string) string {
	for _, a := range attrs {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
