package extract

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/pagefacts"
	"github.com/linkrot/linkrot/urls"
)

// The one pass reads a page with the HTML tokenizer once and builds no
// tree: a small model of the HTML standard's tree construction (the stack
// of open elements, the implied html, head and body, the implied end tags
// of p, li, dt, dd, option and optgroup, headings closing headings, void
// and raw-text elements with the leading newline of pre, listing and
// textarea, tables whose content stays in place with their implied tbody,
// tr and colgroup, select, template content, SVG with its self-closing
// tags and no raw text) turns the tokens into the events a walk of
// html.Parse's tree would meet (an element opened, a text node, an
// element closed), and the extraction, the positions (the tokens' raw
// bytes counted) and the page evidence (pagefacts.Facts) are computed
// from those events.
//
// Where the tree builder would move, clone, merge or drop what the pass
// does not follow, the pass gives up on the page (fallback) and
// ParseDocument reads it the old way, with html.Parse: the results are
// then the tree path's by construction. The constructs that fall back:
//
//   - misnested or unclosed formatting elements (a, b, em, code, ...) that
//     the adoption agency or the reconstruction of active formatting
//     elements would rebuild: a formatting element closed by anything but
//     its own end tag while it is the current node, an <a> or <nobr>
//     opened while one is open;
//   - table content that would be foster-parented (text or any element but
//     the table's own in a table, tbody, thead, tfoot or tr) and a table
//     opened inside a <p> (whether the p closes depends on quirks mode);
//   - anything after </body> or </html> but white space and comments;
//   - a second <html> or <body> tag with attributes (merged into the
//     first), <frameset>, <frame>, <plaintext>, <image>, MathML, SVG's
//     HTML integration points (foreignObject, desc, title) and HTML tags
//     breaking out of SVG, table parts directly in a <template>, table
//     tags outside a table, ruby tags in a ruby, a nested <form> (or one
//     in a template) or <button>, a </form> that is not the current node,
//     and in a <select> anything but option, optgroup, text and comments;
//   - NUL bytes (the tree builder drops or replaces them by context);
//   - a <base> start tag (the base URL applies to every link of the
//     page, also those before it in the source);
//   - text that cites a pwid (the pwid scan reads the page text a second
//     time);
//   - more than maxPassDepth open elements (html.Parse refuses 512).
//
// FallbackPages counts the pages that fell back.

var fallbackPages atomic.Int64

// FallbackPages returns how many pages ParseDocument read with html.Parse
// because the one pass met a construct it does not model (see the list
// above), since the process started.
func FallbackPages() int64 { return fallbackPages.Load() }

// maxPassDepth bounds the open elements of the pass: html.Parse fails
// beyond 512, a page that deep is read by it.
const maxPassDepth = 400

// Facts is the evidence the one pass reads of an HTML document that is
// already decoded (a rendered Markdown page, the prefix of a page the
// checker cuts at its body cap), or nil when the document needs the tree
// (see the fallback rules above). The links are not extracted.
func Facts(decoded []byte) *pagefacts.Facts {
	if bytes.IndexByte(decoded, 0) >= 0 {
		return nil
	}
	u, _ := url.Parse("http://localhost/")
	p := newPass(decoded, u, nil, Options{}, true)
	if !p.run() {
		return nil
	}
	return p.facts
}

// passResult is what the one pass read of a page.
type passResult struct {
	ex    audit.Extraction
	facts *pagefacts.Facts
}

// onePass reads decoded (served at pageURL with header) in one pass, or
// returns nil when the page must be read with html.Parse.
func runPass(decoded []byte, pageURL *url.URL, header http.Header, opt Options) *passResult {
	if bytes.IndexByte(decoded, 0) >= 0 {
		return nil
	}
	p := newPass(decoded, pageURL, header, opt, false)
	ok := p.run()
	p.x.release()
	if !ok {
		return nil
	}
	return &passResult{ex: p.x.ex, facts: p.facts}
}

// pass modes: where the tree builder is.
const (
	modeBeforeHTML = iota
	modeBeforeHead
	modeInHead
	modeAfterHead
	modeInBody
	modeAfterBody
)

// entry is an element of the pass's stack of open elements with the
// state each consumer keeps for it.
type entry struct {
	a          atom.Atom
	name       string
	hidden     bool // the hidden attribute
	hasChild   bool
	formatting bool
	info       elemInfo
	// extraction
	text     *linkText // innermost open link's text (nil outside links)
	ownText  bool
	inHidden bool
	title    bool // the title the extractor reads
	block    bool
	// signals: sigSkip says the descendants are not visited by
	// pageSignals (title, h1, script, template, style)
	sigSkip bool
	nodeTxt int // 1: the title read, 2: an h1 read (its NodeText)
	scriptS bool
	foreign bool // an SVG element
	cell    bool // a td or th is in table scope (cellOpen)
	flags   elemFlags
}

// capture is a main-text root being written (writeText of textsim).
type capture struct {
	depth   int // stack depth of the root
	buf     []byte
	skip    int // depth of the element whose subtree is not written, 0 none
	always  int // depth of the skipAlways element whose text is not counted, 0 none
	rootLen int
	form    *formSeg
	forms   []formSeg
	closed  bool
}

type formSeg struct {
	depth, start, end, n int
}

type pass struct {
	src   []byte
	z     *html.Tokenizer
	x     *extractor
	opt   Options
	facts *pagefacts.Facts
	stack []*entry
	mode  int
	fail  bool
	pos   int
	tags  []tagAt
	text  []byte // the pending text node
	// formOpen: the form element pointer is set.
	formOpen    bool
	selfClosing bool
	nameBuf     []byte
	templates   int // open template elements
	scratch     html.Node
	attrs       []html.Attribute // the start tag's attributes a reader looks at
	nattrs      int              // how many attributes the start tag has
	spans       []attrSpan
	seen        map[string]bool
	// signals
	h1Count int
	node    *strings.Builder // NodeText being read
	nodeAt  int              // its root's depth
	nodeSk  int              // depth of a skipped subtree of it, 0 none
	// main text
	body     *capture
	articles []*capture
	article  *capture
	main     *capture
	mainDone bool
	search   int // depth of a subtree contentRoots does not search, 0 none
	capBuf   []*capture
	sigSkip  int // depth of the element whose descendants pageSignals skips
	pool     []*entry
	// factsOnly: only the facts are read, not the links (Facts).
	factsOnly bool
}

func newPass(src []byte, pageURL *url.URL, header http.Header, opt Options, factsOnly bool) *pass {
	opt = opt.withDefaults()
	x := newExtractor(pageURL, opt)
	x.ex.Base = x.baseHref
	// The links and their tags are preallocated for the page's href
	// attributes as written in lower case: the slices grown by doubling
	// allocated and copied each link half as much again. At most
	// maxPrealloc: a page of "href=" text is no page of links, and beyond
	// it the slices grow as before.
	n := 0
	if !factsOnly {
		n = min(linkEstimate(src), opt.MaxLinks, maxPrealloc)
	}
	if n > 0 {
		x.ex.Links = make([]audit.Link, 0, n)
	}
	x.headerLinks(header)
	return &pass{src: src, x: x, opt: opt, facts: &pagefacts.Facts{}, z: html.NewTokenizer(bytes.NewReader(src)),
		tags: make([]tagAt, 0, n), factsOnly: factsOnly}
}

// maxPrealloc bounds the links preallocated for a page.
const maxPrealloc = 4096

// linkEstimate is how many links src may hold: its "href=" (a count,
// not a parse: the text may hold it too) and a margin for the src
// attributes and upper-case names, which are not counted ("s" is
// frequent in text, which makes counting "src=" several times dearer);
// one link past the estimate doubles the slice.
func linkEstimate(src []byte) int {
	n := bytes.Count(src, []byte("href="))
	return n + n/8 + 16
}

func (p *pass) run() bool {
	for !p.fail {
		top := p.top()
		p.z.AllowCDATA(top != nil && top.foreign)
		tt := p.z.Next()
		raw := p.z.Raw()
		off := p.pos
		p.pos += len(raw)
		switch tt {
		case html.ErrorToken:
			p.eof()
			if p.fail {
				return false
			}
			return p.finish()
		case html.TextToken:
			p.onText(p.z.Text())
		case html.CommentToken:
			p.onComment()
		case html.DoctypeToken:
			// Ignored by the tree builder but in the initial mode.
		case html.StartTagToken, html.SelfClosingTagToken:
			p.selfClosing = tt == html.SelfClosingTagToken
			p.onStart(off, off+len(raw))
		case html.EndTagToken:
			var a atom.Atom
			var name string
			if top != nil && endsName(p.src[off+2:off+len(raw)], top.name) {
				a, name = top.a, top.name // the current node's end tag
			} else {
				a, name = p.tagName(p.src[off+2 : off+len(raw)])
			}
			p.onEnd(a, name)
		}
	}
	return false
}

// finish completes the extraction and the facts after the last token.
func (p *pass) finish() bool {
	x := p.x
	if x.pwidText {
		return false // the tree path builds the page text
	}
	if !p.factsOnly {
		x.checkIdentifiers()
		urls.RedactStrings(&x.ex)
	}
	// Positions: the start tags met, matched as Offsets matches them.
	if len(x.ex.Links) > 0 {
		ix := NewLineIndex(p.src)
		for i, off := range matchOffsets(p.src, p.tags, x.ex.Links) {
			if off >= 0 {
				ix.Place(&x.ex.Links[i], off)
			}
		}
	}
	// The main text: the first main, else the articles, else the body.
	f := p.facts
	switch {
	case p.main != nil:
		f.MainText = p.main.text()
	case len(p.articles) > 0:
		var b []byte
		for _, c := range p.articles {
			b = append(b, c.text()...)
		}
		f.MainText = b
	case p.body != nil:
		f.MainText = p.body.text()
	default:
		return false
	}
	return true
}

// text is the capture's main text with its forms left out where they hold
// at most half of the root's text, followed by a space.
func (c *capture) text() []byte {
	out := c.buf
	if len(c.forms) > 0 {
		out = make([]byte, 0, len(c.buf))
		at := 0
		for _, f := range c.forms {
			if 2*f.n <= c.rootLen {
				out = append(out, c.buf[at:f.start]...)
				at = f.end
			}
		}
		out = append(out, c.buf[at:]...)
	}
	return append(out, ' ')
}

func (p *pass) top() *entry {
	if len(p.stack) == 0 {
		return nil
	}
	return p.stack[len(p.stack)-1]
}

// ---- tree construction ----

func isWhitespace(s []byte) bool {
	for _, c := range s {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

func (p *pass) onText(d []byte) {
	if p.fail {
		return
	}
	if t := p.top(); t != nil && isRawText(t.a) {
		if t.a == atom.Textarea && !t.hasChild {
			if len(d) > 0 && d[0] == '\r' {
				d = d[1:]
			}
			if len(d) > 0 && d[0] == '\n' {
				d = d[1:]
			}
		}
		p.addText(d) // its raw text
		return
	}
	mode := p.mode
	if p.templates > 0 {
		mode = modeInBody
	}
	switch mode {
	case modeBeforeHTML, modeBeforeHead:
		d = bytes.TrimLeft(d, "\t\n\f\r ")
		if len(d) == 0 {
			return
		}
		if p.mode == modeBeforeHTML {
			p.implied(atom.Html, "html")
			p.mode = modeBeforeHead
		}
		p.implied(atom.Head, "head")
		p.mode = modeInHead
		fallthrough
	case modeInHead, modeAfterHead:
		t := bytes.TrimLeft(d, "\t\n\f\r ")
		if len(t) < len(d) {
			p.addText(d[:len(d)-len(t)])
		}
		if len(t) == 0 {
			return
		}
		if p.mode == modeInHead {
			p.pop() // head
		}
		p.implied(atom.Body, "body")
		p.mode = modeInBody
		p.addText(t)
		return
	case modeAfterBody:
		if !isWhitespace(d) {
			p.bail()
			return
		}
		p.addText(d)
		return
	}
	top := p.top()
	if top.foreign {
		p.addText(d)
		return
	}
	switch top.a {
	case atom.Table, atom.Tbody, atom.Thead, atom.Tfoot, atom.Tr:
		if !isWhitespace(d) {
			p.bail() // foster parenting
			return
		}
	case atom.Colgroup:
		if !isWhitespace(d) {
			p.bail()
			return
		}
	case atom.Pre, atom.Listing, atom.Textarea:
		if !top.hasChild {
			if len(d) > 0 && d[0] == '\r' {
				d = d[1:]
			}
			if len(d) > 0 && d[0] == '\n' {
				d = d[1:]
			}
		}
	}
	p.addText(d)
}

func (p *pass) onComment() {
	if p.mode == modeAfterBody || p.mode == modeBeforeHTML {
		return // a child of the html element or the document
	}
	p.flush()
	if t := p.top(); t != nil {
		t.hasChild = true
	}
}

// tagName returns the tag name at the start of b (the raw tag past "<"
// or "</") as the tokenizer's TagName gives it (ASCII lower-cased), its
// atom and its string, without TagName's copy.
func (p *pass) tagName(b []byte) (atom.Atom, string) {
	i := 0
	for i < len(b) && !isSpace(b[i]) && b[i] != '/' && b[i] != '>' {
		i++
	}
	p.nameBuf = append(p.nameBuf[:0], b[:i]...)
	lower := p.nameBuf
	for j, c := range lower {
		if 'A' <= c && c <= 'Z' {
			lower[j] = c + 'a' - 'A'
		}
	}
	if a := atom.Lookup(lower); a != 0 {
		return a, a.String()
	}
	return 0, string(lower)
}

// endsName reports whether the tag name at the start of b (the raw tag
// past "</") is name once ASCII is lower-cased, as tagName reads it.
func endsName(b []byte, name string) bool {
	if len(b) < len(name) {
		return false
	}
	if len(b) > len(name) {
		if c := b[len(name)]; !isSpace(c) && c != '/' && c != '>' {
			return false
		}
	}
	for i := 0; i < len(name); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// onStart reads the start tag src[start:end].
func (p *pass) onStart(start, end int) {
	raw := p.src[start:end]
	a, name := p.tagName(raw[1:])
	if a == atom.Base {
		// Wherever it is (in the head, the body, a template, SVG): the
		// base URL applies to every link of the page, also those before
		// it. A "<base" in text, a comment or an attribute is no
		// element, in the tree either.
		p.bail()
		return
	}
	// The URLs of the tag, for the positions (scanTag, with the element
	// known: the tag name is looked up once).
	if p.factsOnly {
		// No links.
	} else if isASCII(p.nameBuf) {
		if infoOf(a)&infoURL != 0 {
			p.tags = scanTagOf(p.tags, p.src, start, end, urlAttrs[a], 1+len(p.nameBuf))
		}
	} else {
		p.tags = scanTag(p.tags, p.src, start, end)
	}
	// The attributes as the tokenizer reads them (TagAttr), read from the
	// raw tag when no value needs decoding and no name lower-casing:
	// TagAttr copies every name and value. Only the attributes a reader
	// of the page looks at are kept (passAttr), more of them for the
	// elements whose links are extracted.
	all := infoOf(a)&infoURL != 0 || a == atom.Html
	p.attrs, p.nattrs = p.attrs[:0], 0
	if spans, ok := rawAttrs(raw, p.spans[:0]); ok {
		p.spans = spans
		for _, sp := range spans {
			p.keep(all, raw[sp.ks:sp.ke], raw[sp.vs:sp.ve])
		}
	} else {
		for {
			k, v, more := p.z.TagAttr()
			if k == nil && !more {
				break
			}
			p.keep(all, k, v)
			if !more {
				break
			}
		}
	}
	p.start(a, name)
}

// keep records an attribute of the start tag being read.
func (p *pass) keep(all bool, k, v []byte) {
	p.nattrs++
	if !passAttr(all, k) {
		return
	}
	p.attrs = append(p.attrs, html.Attribute{Key: atom.String(k), Val: string(v)})
}

// passAttr reports whether the pass keeps the attribute named k of a
// start tag (all: of an element whose links are extracted, or html): the
// attributes its readers look at, the extractor (element, addLink,
// robust, mset, relTokens), the anchors (id, name of a), the soft-404
// signals (data-adblockkey, src, data, http-equiv, content, href) and the
// tree construction (hidden, type). The others (class, title, style,
// ...) are not copied.
func passAttr(all bool, k []byte) bool {
	switch string(k) {
	case "hidden", "id", "data-adblockkey", "type":
		return true
	case "href", "src", "srcset", "poster", "cite", "data", "content", "http-equiv", "name",
		"mset", "alt", "rel", "data-originalurl", "data-versiondate", "data-versionurl":
		return all
	}
	return false
}

// attrSpan is an attribute of a raw start tag: name raw[ks:ke], value
// raw[vs:ve].
type attrSpan struct{ ks, ke, vs, ve int }

// rawAttrs lists the attributes of the raw start tag raw as the tokenizer
// splits them (HTML standard 13.2.5.32 onwards, as scanTag reads them;
// a repeated name dropped),
// or reports false when a name holds an upper-case letter or a value a
// character reference or CR (the tokenizer's TagAttr then changes them).
func rawAttrs(raw []byte, spans []attrSpan) ([]attrSpan, bool) {
	i := 1
	for i < len(raw) && !isSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	for i < len(raw) {
		for i < len(raw) && (isSpace(raw[i]) || raw[i] == '/') {
			i++
		}
		if i >= len(raw) || raw[i] == '>' {
			break
		}
		ks := i
		i++ // a first '=' belongs to the name
		for i < len(raw) && !isSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' && raw[i] != '=' {
			i++
		}
		ke := i
		for j := ks; j < ke; j++ {
			if c := raw[j]; 'A' <= c && c <= 'Z' {
				return spans, false
			}
		}
		var vs, ve int
		vs, ve, i = attrValue(raw, i)
		if bytes.IndexByte(raw[vs:ve], '&') >= 0 || bytes.IndexByte(raw[vs:ve], '\r') >= 0 {
			return spans, false
		}
		// A repeated name is dropped: the first wins, as the tokenizer
		// keeps it.
		dup := false
		for _, sp := range spans {
			if bytes.Equal(raw[sp.ks:sp.ke], raw[ks:ke]) {
				dup = true
				break
			}
		}
		if !dup {
			spans = append(spans, attrSpan{ks, ke, vs, ve})
		}
	}
	return spans, true
}

// start processes a start tag (attributes in p.attrs).
func (p *pass) start(a atom.Atom, name string) {
	if p.fail {
		return
	}
	mode := p.mode
	if p.templates > 0 {
		// A template's content is read by the in-body rules ("in
		// template" switches to them for everything but table parts
		// directly in the template, which the pass does not follow).
		switch a {
		case atom.Caption, atom.Colgroup, atom.Tbody, atom.Tfoot, atom.Thead, atom.Col, atom.Tr, atom.Td, atom.Th:
			if p.top().a == atom.Template {
				p.bail()
				return
			}
		}
		mode = modeInBody
	}
	switch mode {
	case modeAfterBody:
		p.bail()
		return
	case modeBeforeHTML:
		if a == atom.Html {
			p.insert(a, name, p.attrs)
			p.mode = modeBeforeHead
			return
		}
		p.implied(atom.Html, "html")
		p.mode = modeBeforeHead
		fallthrough
	case modeBeforeHead:
		switch a {
		case atom.Html:
			p.htmlAgain()
			return
		case atom.Head:
			p.insert(a, name, p.attrs)
			p.mode = modeInHead
			return
		}
		p.implied(atom.Head, "head")
		p.mode = modeInHead
		fallthrough
	case modeInHead:
		if p.inHead(a, name) {
			return
		}
		p.pop() // head
		p.mode = modeAfterHead
		fallthrough
	case modeAfterHead:
		switch a {
		case atom.Html:
			p.htmlAgain()
			return
		case atom.Body:
			p.insert(a, name, p.attrs)
			p.mode = modeInBody
			return
		case atom.Frameset:
			p.bail()
			return
		case atom.Base, atom.Basefont, atom.Bgsound, atom.Link, atom.Meta, atom.Noframes, atom.Script, atom.Style, atom.Title, atom.Template:
			// Inserted into the head, which holds nothing after them:
			// the walk's order is the source's.
			p.inHead(a, name)
			return
		case atom.Head:
			return
		}
		p.implied(atom.Body, "body")
		p.mode = modeInBody
	}
	if len(p.stack) > maxPassDepth {
		p.bail()
		return
	}
	// In body (or a table, cell or select inside it).
	top := p.top()
	if top.foreign {
		p.foreignStart(a, name)
		return
	}
	switch top.a {
	case atom.Table, atom.Tbody, atom.Thead, atom.Tfoot, atom.Tr:
		p.inTable(a, name)
		return
	case atom.Colgroup:
		if a == atom.Col {
			p.insert(a, name, p.attrs)
			p.pop()
			return
		}
		p.pop()
		p.start(a, name)
		return
	case atom.Select, atom.Option, atom.Optgroup:
		if p.inScope(atom.Select, nil) {
			p.inSelect(a, name)
			return
		}
	}
	if p.cellOpen() {
		switch a {
		case atom.Caption, atom.Col, atom.Colgroup, atom.Tbody, atom.Td, atom.Tfoot, atom.Th, atom.Thead, atom.Tr:
			// Closes the cell, then the table's rules.
			if !p.closeCell() {
				return
			}
			p.start(a, name)
			return
		}
	}
	p.inBody(a, name)
}

// htmlAgain is a second <html> start tag: its attributes join the first's.
func (p *pass) htmlAgain() {
	if p.nattrs > 0 {
		p.bail()
	}
}

// inHead processes the start tags of head content; false for others.
func (p *pass) inHead(a atom.Atom, name string) bool {
	switch a {
	case atom.Base, atom.Basefont, atom.Bgsound, atom.Link, atom.Meta:
		p.insert(a, name, p.attrs)
		p.pop()
	case atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Noframes:
		p.insert(a, name, p.attrs) // raw text: the tokenizer returns its text and end tag
	case atom.Template:
		p.insert(a, name, p.attrs)
		p.templates++
	case atom.Html:
		p.htmlAgain()
	case atom.Head:
	default:
		return false
	}
	return true
}

var closesP = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Center: true,
	atom.Details: true, atom.Dialog: true, atom.Dir: true, atom.Div: true, atom.Dl: true,
	atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true, atom.Footer: true, atom.Header: true,
	atom.Hgroup: true, atom.Main: true, atom.Menu: true, atom.Nav: true, atom.Ol: true, atom.P: true,
	atom.Search: true, atom.Section: true, atom.Summary: true, atom.Ul: true,
}

var formattingElems = map[atom.Atom]bool{
	atom.A: true, atom.B: true, atom.Big: true, atom.Code: true, atom.Em: true, atom.Font: true,
	atom.I: true, atom.Nobr: true, atom.S: true, atom.Small: true, atom.Strike: true,
	atom.Strong: true, atom.Tt: true, atom.U: true,
}

func (p *pass) inBody(a atom.Atom, name string) {
	switch a {
	case atom.Html:
		p.htmlAgain()
	case atom.Base, atom.Basefont, atom.Bgsound, atom.Link, atom.Meta, atom.Noframes, atom.Script, atom.Style, atom.Title, atom.Template:
		p.inHead(a, name)
	case atom.Body:
		if p.nattrs > 0 {
			p.bail()
		}
	case atom.Svg:
		p.insertForeign(a, name)
	case atom.Frameset, atom.Frame, atom.Plaintext, atom.Image, atom.Math,
		atom.Caption, atom.Col, atom.Colgroup, atom.Head, atom.Tbody, atom.Td, atom.Tfoot, atom.Th, atom.Thead, atom.Tr,
		atom.Keygen:
		p.bail()
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		p.closePInButtonScope()
		switch p.top().a {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			p.pop()
		}
		p.insert(a, name, p.attrs)
	case atom.Pre, atom.Listing, atom.Xmp:
		p.closePInButtonScope()
		p.insert(a, name, p.attrs)
	case atom.Form:
		if p.formOpen || p.templates > 0 {
			p.bail()
			return
		}
		p.closePInButtonScope()
		p.insert(a, name, p.attrs)
		p.formOpen = true
	case atom.Li:
		p.closeItem(func(b atom.Atom) bool { return b == atom.Li })
		p.insert(a, name, p.attrs)
	case atom.Dd, atom.Dt:
		p.closeItem(func(b atom.Atom) bool { return b == atom.Dd || b == atom.Dt })
		p.insert(a, name, p.attrs)
	case atom.Button:
		if p.inScope(atom.Button, nil) {
			p.bail()
			return
		}
		p.insert(a, name, p.attrs)
	case atom.A, atom.Nobr:
		if p.onStack(a) {
			p.bail()
			return
		}
		p.insert(a, name, p.attrs)
	case atom.Table:
		if p.inScope(atom.P, buttonScope) {
			p.bail() // closes the p in no-quirks mode only
			return
		}
		p.insert(a, name, p.attrs)
	case atom.Area, atom.Br, atom.Embed, atom.Img, atom.Wbr, atom.Input, atom.Param, atom.Source, atom.Track:
		p.insert(a, name, p.attrs)
		p.pop()
	case atom.Hr:
		p.closePInButtonScope()
		p.insert(a, name, p.attrs)
		p.pop()
	case atom.Select:
		p.insert(a, name, p.attrs)
	case atom.Optgroup, atom.Option:
		if p.top().a == atom.Option {
			p.pop()
		}
		p.insert(a, name, p.attrs)
	case atom.Rb, atom.Rtc, atom.Rp, atom.Rt:
		if p.inScope(atom.Ruby, nil) {
			p.bail()
			return
		}
		p.insert(a, name, p.attrs)
	default:
		if infoOf(a)&infoClosesP != 0 {
			p.closePInButtonScope()
		}
		p.insert(a, name, p.attrs)
	}
}

// inTable processes a start tag whose current node is a table, a table
// section or a row.
func (p *pass) inTable(a atom.Atom, name string) {
	top := p.top().a
	switch a {
	case atom.Script, atom.Style:
		p.inHead(a, name)
		return
	case atom.Input:
		for _, at := range p.attrs {
			if at.Key == "type" && strings.EqualFold(at.Val, "hidden") {
				p.insert(a, name, p.attrs)
				p.pop()
				return
			}
		}
		p.bail()
		return
	}
	switch top {
	case atom.Table:
		switch a {
		case atom.Caption:
			p.insert(a, name, p.attrs)
		case atom.Tbody, atom.Thead, atom.Tfoot:
			p.insert(a, name, p.attrs)
		case atom.Tr, atom.Td, atom.Th:
			p.implied(atom.Tbody, "tbody")
			p.start(a, name)
		case atom.Colgroup:
			p.insert(a, name, p.attrs)
		case atom.Col:
			p.implied(atom.Colgroup, "colgroup")
			p.start(a, name)
		default:
			p.bail()
		}
	case atom.Tbody, atom.Thead, atom.Tfoot:
		switch a {
		case atom.Tr:
			p.insert(a, name, p.attrs)
		case atom.Td, atom.Th:
			p.implied(atom.Tr, "tr")
			p.start(a, name)
		case atom.Caption, atom.Col, atom.Colgroup, atom.Tbody, atom.Thead, atom.Tfoot:
			p.pop()
			p.start(a, name)
		default:
			p.bail()
		}
	case atom.Tr:
		switch a {
		case atom.Td, atom.Th:
			p.insert(a, name, p.attrs)
		case atom.Caption, atom.Col, atom.Colgroup, atom.Tbody, atom.Thead, atom.Tfoot, atom.Tr:
			p.pop()
			p.start(a, name)
		default:
			p.bail()
		}
	}
}

// inSelect processes a start tag in a select.
func (p *pass) inSelect(a atom.Atom, name string) {
	switch a {
	case atom.Option:
		if p.top().a == atom.Option {
			p.pop()
		}
		p.insert(a, name, p.attrs)
	case atom.Optgroup:
		if p.top().a == atom.Option {
			p.pop()
		}
		if p.top().a == atom.Optgroup {
			p.pop()
		}
		p.insert(a, name, p.attrs)
	case atom.Script:
		p.inHead(a, name)
	default:
		p.bail()
	}
}

// cellOpen reports whether a td or th is in table scope.
func (p *pass) cellOpen() bool {
	t := p.top()
	return t != nil && t.cell
}

// closeCell closes the open td or th (generate implied end tags, pop
// until it).
func (p *pass) closeCell() bool {
	for i := len(p.stack) - 1; i >= 0; i-- {
		if a := p.stack[i].a; a == atom.Td || a == atom.Th {
			p.popUntil(i)
			return !p.fail
		}
	}
	p.bail()
	return false
}

func (p *pass) onEnd(a atom.Atom, name string) {
	if p.fail {
		return
	}
	if a == atom.Template && (p.top() == nil || !p.top().foreign) {
		p.closeTemplate()
		return
	}
	mode := p.mode
	if p.templates > 0 {
		mode = modeInBody
	}
	switch mode {
	case modeAfterBody:
		if a == atom.Html || a == atom.Body {
			return
		}
		p.bail()
		return
	case modeBeforeHTML, modeBeforeHead, modeInHead, modeAfterHead:
		// A raw-text element's end tag (the tokenizer's) closes it.
		if t := p.top(); t != nil && isRawText(t.a) {
			if t.a == a {
				p.pop()
			}
			return
		}
	}
	switch mode {
	case modeBeforeHTML, modeBeforeHead:
		switch a {
		case atom.Head, atom.Body, atom.Html, atom.Br:
		default:
			return // ignored
		}
		if p.mode == modeBeforeHTML {
			p.implied(atom.Html, "html")
		}
		p.implied(atom.Head, "head")
		p.mode = modeInHead
		fallthrough
	case modeInHead:
		switch a {
		case atom.Head:
			p.pop()
			p.mode = modeAfterHead
			return
		case atom.Body, atom.Html, atom.Br:
			p.pop()
			p.mode = modeAfterHead
		case atom.Template:
			p.bail()
			return
		default:
			return
		}
		fallthrough
	case modeAfterHead:
		switch a {
		case atom.Body, atom.Html, atom.Br:
			p.implied(atom.Body, "body")
			p.mode = modeInBody
		case atom.Template:
			p.bail()
			return
		default:
			return
		}
	}
	top := p.top()
	if top.foreign {
		// Closes the current node when it is the element named (the
		// names compared in lower case); the pass gives up on others.
		if strings.ToLower(top.name) == name {
			p.pop()
			return
		}
		p.bail()
		return
	}
	// Raw text (script, style, title, textarea, ...): the tokenizer's end
	// tag closes it.
	switch top.a {
	case atom.Script, atom.Style, atom.Title, atom.Textarea, atom.Noscript, atom.Noframes, atom.Iframe, atom.Noembed, atom.Xmp:
		if top.a == a {
			p.pop()
			return
		}
	case atom.Table, atom.Tbody, atom.Thead, atom.Tfoot, atom.Tr:
		p.endInTable(a)
		return
	case atom.Colgroup:
		if a == atom.Colgroup {
			p.pop()
			return
		}
		if a == atom.Col {
			return
		}
		p.pop()
		p.onEnd(a, name)
		return
	case atom.Select, atom.Option, atom.Optgroup:
		if p.inScope(atom.Select, nil) {
			p.endInSelect(a)
			return
		}
	}
	if p.cellOpen() {
		switch a {
		case atom.Td, atom.Th:
			if !p.inScope(a, tableScope) {
				return
			}
			p.closeCell()
			return
		case atom.Table, atom.Tbody, atom.Tfoot, atom.Thead, atom.Tr:
			if !p.closeCell() {
				return
			}
			p.onEnd(a, name)
			return
		case atom.Body, atom.Caption, atom.Col, atom.Colgroup, atom.Html:
			p.bail()
			return
		}
	}
	p.endInBody(a, name)
}

func (p *pass) endInTable(a atom.Atom) {
	switch a {
	case atom.Table:
		for i := len(p.stack) - 1; i >= 0; i-- {
			if p.stack[i].a == atom.Table {
				p.popUntil(i)
				return
			}
		}
		p.bail()
	case atom.Tbody, atom.Thead, atom.Tfoot:
		top := p.top().a
		if top == atom.Tr {
			p.bail()
			return
		}
		if top == a {
			p.pop()
			return
		}
		p.bail()
	case atom.Tr:
		if p.top().a == atom.Tr {
			p.pop()
			return
		}
		p.bail()
	default:
		p.bail()
	}
}

func (p *pass) endInSelect(a atom.Atom) {
	switch a {
	case atom.Option:
		if p.top().a == atom.Option {
			p.pop()
		}
	case atom.Optgroup:
		if p.top().a == atom.Option && len(p.stack) > 1 && p.stack[len(p.stack)-2].a == atom.Optgroup {
			p.pop()
		}
		if p.top().a == atom.Optgroup {
			p.pop()
		}
	case atom.Select:
		for i := len(p.stack) - 1; i >= 0; i-- {
			if p.stack[i].a == atom.Select {
				p.popUntil(i)
				return
			}
		}
	default:
		p.bail()
	}
}

var blockEnd = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Button: true,
	atom.Center: true, atom.Details: true, atom.Dialog: true, atom.Dir: true, atom.Div: true,
	atom.Dl: true, atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true, atom.Footer: true,
	atom.Header: true, atom.Hgroup: true, atom.Listing: true, atom.Main: true, atom.Menu: true,
	atom.Nav: true, atom.Ol: true, atom.Pre: true, atom.Search: true, atom.Section: true,
	atom.Summary: true, atom.Ul: true,
}

func (p *pass) endInBody(a atom.Atom, name string) {
	switch {
	case a == atom.Body || a == atom.Html:
		for i := len(p.stack) - 1; i >= 0; i-- {
			switch p.stack[i].a {
			case atom.Body:
				p.mode = modeAfterBody
				return
			case atom.Applet, atom.Caption, atom.Html, atom.Table, atom.Td, atom.Th, atom.Marquee, atom.Object, atom.Template:
				p.bail()
				return
			}
		}
		p.bail()
	case a == atom.Template:
		p.bail()
	case infoOf(a)&infoBlockEnd != 0:
		i := p.scopeIndex(a, nil)
		if i < 0 {
			return
		}
		p.popUntil(i)
	case a == atom.Form:
		p.formOpen = false
		i := p.scopeIndex(a, nil)
		if i < 0 {
			return
		}
		p.impliedEnds(0)
		if p.top().a != atom.Form {
			p.bail()
			return
		}
		p.pop()
	case a == atom.P:
		i := p.scopeIndex(a, buttonScope)
		if i < 0 {
			p.implied(atom.P, "p")
			p.pop()
			return
		}
		p.popUntil(i)
	case a == atom.Li:
		i := p.scopeIndex(a, listScope)
		if i < 0 {
			return
		}
		p.popUntil(i)
	case a == atom.Dd || a == atom.Dt:
		i := p.scopeIndex(a, nil)
		if i < 0 {
			return
		}
		p.popUntil(i)
	case a == atom.H1 || a == atom.H2 || a == atom.H3 || a == atom.H4 || a == atom.H5 || a == atom.H6:
		i := -1
		for j := len(p.stack) - 1; j >= 0; j-- {
			switch p.stack[j].a {
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				i = j
			case atom.Applet, atom.Caption, atom.Html, atom.Table, atom.Td, atom.Th, atom.Marquee, atom.Object, atom.Template:
				j = -1
			}
			if i >= 0 {
				break
			}
		}
		if i < 0 {
			return
		}
		p.popUntil(i)
	case infoOf(a)&infoFormatting != 0:
		if top := p.top(); top.a == a {
			p.pop()
			return
		}
		if p.onStack(a) {
			p.bail() // the adoption agency
			return
		}
		p.anyOtherEnd(a, name)
	case a == atom.Applet || a == atom.Marquee || a == atom.Object:
		i := p.scopeIndex(a, nil)
		if i < 0 {
			return
		}
		p.popUntil(i)
	case a == atom.Br:
		p.attrs = p.attrs[:0]
		p.insert(atom.Br, "br", nil)
		p.pop()
	default:
		p.anyOtherEnd(a, name)
	}
}

// anyOtherEnd is the in-body rule for "any other end tag".
func (p *pass) anyOtherEnd(a atom.Atom, name string) {
	for i := len(p.stack) - 1; i >= 0; i-- {
		n := p.stack[i]
		if n.name == name {
			p.popUntil(i)
			return
		}
		if special(n) {
			return
		}
	}
}

// popUntil generates implied end tags and pops the stack down to and
// including the element at index i; a formatting element popped on the
// way would be rebuilt later (the pass falls back).
func (p *pass) popUntil(i int) {
	for len(p.stack) > i && !p.fail {
		t := p.top()
		if t.formatting && len(p.stack)-1 != i {
			p.bail()
			return
		}
		if t.formatting {
			// Its own end tag came through the generic rules: the
			// element is the one closed.
		}
		p.pop()
	}
}

// impliedEnds pops dd, dt, li, optgroup, option, p, rb, rp, rt, rtc
// (except the atom except).
func (p *pass) impliedEnds(except atom.Atom) {
	for {
		switch t := p.top(); t.a {
		case atom.Dd, atom.Dt, atom.Li, atom.Optgroup, atom.Option, atom.P, atom.Rb, atom.Rp, atom.Rt, atom.Rtc:
			if t.a == except {
				return
			}
			p.pop()
		default:
			return
		}
	}
}

// closeItem is the in-body rule for a start tag of li, dd or dt: the
// nearest open element that same accepts is closed (with what is open
// inside it), unless a special element other than address, div and p
// comes first; then a p in button scope is closed.
func (p *pass) closeItem(same func(atom.Atom) bool) {
	for i := len(p.stack) - 1; i >= 0; i-- {
		n := p.stack[i]
		if same(n.a) {
			p.popUntil(i)
			break
		}
		if special(n) && n.a != atom.Address && n.a != atom.Div && n.a != atom.P {
			break
		}
	}
	p.closePInButtonScope()
}

func (p *pass) closePInButtonScope() {
	if i := p.scopeIndex(atom.P, buttonScope); i >= 0 {
		p.popUntil(i)
	}
}

var (
	buttonScope = map[atom.Atom]bool{atom.Button: true}
	listScope   = map[atom.Atom]bool{atom.Ol: true, atom.Ul: true}
	tableScope  = map[atom.Atom]bool{}
)

// scopeIndex returns the index of the element a in scope (extra: the
// scope's additional boundaries; tableScope: the table scope), or -1.
func (p *pass) scopeIndex(a atom.Atom, extra map[atom.Atom]bool) int {
	for i := len(p.stack) - 1; i >= 0; i-- {
		n := p.stack[i].a
		if n == a {
			return i
		}
		if extra != nil && len(extra) == 0 { // table scope
			if n == atom.Html || n == atom.Table || n == atom.Template {
				return -1
			}
			continue
		}
		switch n {
		case atom.Applet, atom.Caption, atom.Html, atom.Table, atom.Td, atom.Th, atom.Marquee, atom.Object, atom.Template:
			return -1
		}
		if extra[n] {
			return -1
		}
	}
	return -1
}

func (p *pass) inScope(a atom.Atom, extra map[atom.Atom]bool) bool {
	return p.scopeIndex(a, extra) >= 0
}

func (p *pass) onStack(a atom.Atom) bool {
	for _, e := range p.stack {
		if e.a == a {
			return true
		}
	}
	return false
}

func special(e *entry) bool {
	return e.info&infoSpecial != 0
}

var specialElems = func() map[atom.Atom]bool {
	m := map[atom.Atom]bool{}
	for _, s := range strings.Fields(`address applet area article aside base basefont bgsound blockquote body br button
		caption center col colgroup dd details dir div dl dt embed fieldset figcaption figure footer form frame frameset
		h1 h2 h3 h4 h5 h6 head header hgroup hr html iframe img input keygen li link listing main marquee menu meta nav
		noembed noframes noscript object ol p param plaintext pre script section select source style summary table tbody
		td template textarea tfoot th thead title tr track ul wbr xmp`) {
		m[atom.Lookup([]byte(s))] = true
	}
	return m
}()

func (p *pass) eof() {
	if p.mode == modeBeforeHTML {
		p.implied(atom.Html, "html")
		p.mode = modeBeforeHead
	}
	if p.mode == modeBeforeHead {
		p.implied(atom.Head, "head")
		p.mode = modeInHead
	}
	if p.mode == modeInHead {
		p.pop()
		p.mode = modeAfterHead
	}
	if p.mode == modeAfterHead {
		p.implied(atom.Body, "body")
		p.mode = modeInBody
	}
	for len(p.stack) > 0 {
		p.pop()
	}
	p.flush()
}

// implied inserts an element without attributes.
func (p *pass) implied(a atom.Atom, name string) {
	p.insert(a, name, nil)
}

// ParseTree is ParseDocument by html.Parse, whatever the page holds: the
// reference the one pass is tested against (the differential tests), and
// what a reader that needs the tree calls.
func ParseTree(body []byte, contentType string, pageURL *url.URL, header http.Header, opt Options) (audit.Extraction, string, *Document, error) {
	decoded, cs := Decode(body, contentType)
	return parseTree(decoded, cs, pageURL, header, opt)
}

// OnePass is ParseDocument by the one pass only: ok false when the page
// holds a construct the pass does not model (ParseDocument then falls
// back to html.Parse).
func OnePass(body []byte, contentType string, pageURL *url.URL, header http.Header, opt Options) (ex audit.Extraction, charset string, doc *Document, ok bool) {
	decoded, cs := Decode(body, contentType)
	r := runPass(decoded, pageURL, header, opt)
	if r == nil {
		return audit.Extraction{}, cs, nil, false
	}
	return r.ex, cs, &Document{Decoded: decoded, Facts: r.facts}, true
}

// bail gives up the pass on this page (the page falls back to html.Parse).
func (p *pass) bail() { p.fail = true }

// breakout are the start tags that leave foreign content.
var breakout = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Fields(`b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6
		head hr i img li listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var font`) {
		m[s] = true
	}
	return m
}()

// foreignStart processes a start tag in SVG content.
func (p *pass) foreignStart(a atom.Atom, name string) {
	if breakout[name] {
		p.bail() // back to HTML
		return
	}
	p.insertForeign(a, name)
}

// insertForeign inserts an SVG element: the HTML integration points
// (foreignObject, desc, title) and MathML make the pass give up; the
// namespaced attributes (xlink:href, xml:lang, ...) are left out, since
// no reader of the tree reads them; the tokenizer reads no raw text in
// it; a self-closing tag closes it.
func (p *pass) insertForeign(a atom.Atom, name string) {
	switch name {
	case "foreignobject", "desc", "title", "math":
		p.bail()
		return
	}
	kept := p.attrs[:0]
	for _, at := range p.attrs {
		switch at.Key {
		case "xlink:actuate", "xlink:arcrole", "xlink:href", "xlink:role", "xlink:show", "xlink:title", "xlink:type", "xml:lang", "xml:space", "xmlns:xlink":
			continue
		}
		kept = append(kept, at)
	}
	p.attrs = kept
	if n, ok := svgTagNames[name]; ok {
		name = n
	}
	p.insert(a, name, p.attrs)
	p.top().foreign = true
	p.z.NextIsNotRawText()
	if p.selfClosing {
		p.pop()
	}
}

// svgTagNames are the SVG element names the tree builder writes in mixed
// case.
var svgTagNames = func() map[string]string {
	m := map[string]string{}
	for _, s := range strings.Fields(`altGlyph altGlyphDef altGlyphItem animateColor animateMotion animateTransform
		clipPath feBlend feColorMatrix feComponentTransfer feComposite feConvolveMatrix feDiffuseLighting
		feDisplacementMap feDistantLight feDropShadow feFlood feFuncA feFuncB feFuncG feFuncR feGaussianBlur
		feImage feMerge feMergeNode feMorphology feOffset fePointLight feSpecularLighting feSpotLight feTile
		feTurbulence foreignObject glyphRef linearGradient radialGradient textPath`) {
		m[strings.ToLower(s)] = s
	}
	return m
}()

// isRawText reports the elements whose content the tokenizer reads as
// raw text or RCDATA up to their end tag.
func isRawText(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Title, atom.Textarea, atom.Noscript, atom.Noframes, atom.Iframe, atom.Noembed, atom.Xmp:
		return true
	}
	return false
}

// closeTemplate is a </template> end tag: ignored without a template open;
// else the implied end tags are generated thoroughly and the stack is
// popped down to the template.
func (p *pass) closeTemplate() {
	if p.templates == 0 {
		return
	}
	for {
		switch p.top().a {
		case atom.Caption, atom.Colgroup, atom.Dd, atom.Dt, atom.Li, atom.Optgroup, atom.Option, atom.P,
			atom.Rb, atom.Rp, atom.Rt, atom.Rtc, atom.Tbody, atom.Td, atom.Tfoot, atom.Th, atom.Thead, atom.Tr:
			p.pop()
			continue
		}
		break
	}
	for i := len(p.stack) - 1; i >= 0; i-- {
		if p.stack[i].a == atom.Template {
			p.popUntil(i)
			p.templates--
			return
		}
	}
	p.bail()
}

// elemFlags are the element tables the pass consults for each element,
// looked up once when it is opened.
type elemFlags uint8

const (
	flagSkipAlways elemFlags = 1 << iota
	flagSkipBoilerplate
	flagInline
)
