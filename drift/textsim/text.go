package textsim

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/linkrot/linkrot/internal/pagefacts"
)

// MainText returns the visible text of an HTML document's main content,
// with runs of white space collapsed to one space and no leading or
// trailing space. The result is always valid UTF-8 (invalid input bytes
// become U+FFFD).
//
// The content root is the first <main> element when there is one, else
// every <article> that is not inside another one, else <body>. Below the
// root, the text of these elements is skipped: script, style, noscript,
// template, nav, header, footer, aside, form, svg, select, and any element
// with the hidden attribute. A <form> holding more than half of the root's
// text is not skipped: some frameworks (ASP.NET Web Forms) wrap the whole
// page in one.
//
// A document the parser refuses (x/net/html stops at 512 nested open
// elements) is read token by token instead: the same elements are skipped,
// but there is no <main> or <article> preference.
//
// Text of adjacent inline elements (a, b, em, span, ...) is joined as
// written; every other element separates words, so "<p>a</p><p>b</p>"
// gives "a b".
func MainText(htmlBody []byte) string {
	doc, err := html.Parse(bytes.NewReader(htmlBody))
	if err != nil {
		// The parser refuses documents nesting more than 512 open
		// elements; fall back to a flat scan of the tokens.
		return tokenText(htmlBody)
	}
	return MainTextOf(doc)
}

// CollapseRaw is MainTextOf for a raw main text gathered another way (a
// one-pass reading's, pagefacts.Facts.MainText): runs of white space
// become one space, invalid UTF-8 becomes U+FFFD, and the ends are
// trimmed. Its words are those of the raw text (EachRawWordBytes).
func CollapseRaw(raw []byte) string { return collapse(string(raw)) }

// MainTextOf is MainText of a document already parsed by html.Parse, for
// callers that read the tree for other things too. The tree is not
// modified.
func MainTextOf(doc *html.Node) string {
	return collapse(rawMainText(doc))
}

// EachRawWordBytes calls yield with each word of the raw text raw (a
// main text before white space is collapsed, such as pagefacts.Facts'
// MainText, or a collapsed main text: the words do not depend on how white
// space is collapsed or invalid bytes replaced, since both only ever
// separate words), in order, without allocating for each word: w is
// valid only until yield returns. raw's words may be lower-cased in place.
func EachRawWordBytes(raw []byte, yield func(w []byte)) {
	var scratch []byte
	eachWordSpan(raw, func(start, end int, lower bool) {
		w := raw[start:end]
		if !lower {
			w, scratch = lowerWord(w, scratch)
		}
		yield(w)
	})
}

// lowerWord returns strings.ToLower of the word w (a word of
// eachWordSpan: valid UTF-8): lower-cased in place when it is ASCII, else
// in scratch, which it returns for reuse.
func lowerWord(w, scratch []byte) (lw, s []byte) {
	ascii := true
	for _, c := range w {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for i, c := range w {
			if 'A' <= c && c <= 'Z' {
				w[i] = c + 'a' - 'A'
			}
		}
		return w, scratch
	}
	scratch = scratch[:0]
	for i := 0; i < len(w); {
		r, size := utf8.DecodeRune(w[i:])
		scratch = utf8.AppendRune(scratch, unicode.ToLower(r))
		i += size
	}
	return scratch, scratch
}

// textWriter is what writeText writes to (a strings.Builder).
type textWriter interface {
	WriteString(s string) (int, error)
	WriteByte(c byte) error
}

// rawMainText is the main text of doc before collapse.
func rawMainText(doc *html.Node) string {
	var b strings.Builder
	b.Grow(4 << 10) // most pages' main text, without growing
	writeMainText(&b, doc)
	return b.String()
}

// writeMainText writes the text of doc's content roots to w, each
// followed by a space.
func writeMainText(w textWriter, doc *html.Node) {
	for _, r := range contentRoots(doc) {
		writeText(w, r)
		w.WriteByte(' ')
	}
}

// contentRoots picks the nodes whose text is the page's main content.
func contentRoots(doc *html.Node) []*html.Node {
	var body *html.Node
	var articles []*html.Node
	// Iterative pre-order walk: a hostile page can nest elements deeply.
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Main:
				if !hidden(n) {
					return []*html.Node{n}
				}
				continue
			case atom.Article:
				if !hidden(n) {
					articles = append(articles, n)
				}
				continue // nested articles belong to this one
			case atom.Body:
				if body == nil {
					body = n
				}
			}
			if skipAlways(n.DataAtom) {
				continue
			}
		}
		// Push children in reverse so the first child is visited first.
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	switch {
	case len(articles) > 0:
		return articles
	case body != nil:
		return []*html.Node{body}
	}
	return []*html.Node{doc}
}

// The element rules (which elements are always skipped, which are page
// chrome, which run inline) are package pagefacts', shared with the
// crawler's one pass that computes the same main text without a tree.
var (
	skipAlways      = pagefacts.SkipAlways
	skipBoilerplate = pagefacts.SkipBoilerplate
	inline          = pagefacts.Inline
)

func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == "hidden" {
			return true
		}
	}
	return false
}

// writeText appends the visible text below root to b.
func writeText(b textWriter, root *html.Node) {
	// A <form> is skipped unless it holds more than half of the root's
	// text: the root's text is counted only as far as that needs
	// (rootLen, exact when rootDone, else a lower bound).
	rootLen, rootDone := 0, false
	type frame struct {
		n    *html.Node
		exit bool
	}
	stack := []frame{{n: root}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := f.n
		if f.exit {
			b.WriteByte(' ')
			continue
		}
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			continue
		case html.ElementNode:
			if n != root {
				if skipAlways(n.DataAtom) || skipBoilerplate(n.DataAtom) || hidden(n) {
					continue
				}
				if n.DataAtom == atom.Form {
					need := 2 * textLen(n, -1)
					if !rootDone && rootLen < need {
						rootLen = textLen(root, need)
						rootDone = rootLen < need
					}
					if need <= rootLen {
						continue
					}
				}
			}
			if n.DataAtom == atom.Br {
				b.WriteByte(' ')
				continue
			}
			if !inline(n.DataAtom) {
				b.WriteByte(' ')
				stack = append(stack, frame{n: n, exit: true})
			}
		case html.DocumentNode:
		default:
			continue // comments, doctypes
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, frame{n: c})
		}
	}
}

// textLen counts the bytes of text below n that could be visible (the
// elements that are always skipped excluded). With limit >= 0 it may stop
// counting once the count reaches limit (the result is then at least
// limit).
func textLen(n *html.Node, limit int) int {
	total := 0
	stack := []*html.Node{n}
	for len(stack) > 0 && (limit < 0 || total < limit) {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n.Type {
		case html.TextNode:
			total += len(strings.TrimSpace(n.Data))
			continue
		case html.ElementNode:
			if skipAlways(n.DataAtom) {
				continue
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, c)
		}
	}
	return total
}

// collapse joins the white-space separated fields of s with single spaces
// and makes the result valid UTF-8: strings.ToValidUTF8 of
// strings.Join(strings.Fields(s), " ") with U+FFFD as the replacement of
// each run of invalid bytes, in one pass.
func collapse(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false   // white space seen since the last byte written
	invalid := false // the last thing written replaced invalid bytes
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if asciiSpace[c] {
				space = true
				continue
			}
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space, invalid = false, false
			b.WriteByte(c)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size > 1 && unicode.IsSpace(r) {
			i += size
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			invalid = false
		}
		space = false
		if size == 1 { // r == utf8.RuneError: an invalid byte
			if !invalid {
				b.WriteString("\uFFFD")
				invalid = true
			}
		} else {
			b.WriteString(s[i : i+size])
			invalid = false
		}
		i += size
	}
	return b.String()
}

// asciiSpace are the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// tokenText is MainText for documents html.Parse refuses: the text of
// every token outside skipped elements.
func tokenText(htmlBody []byte) string {
	z := html.NewTokenizer(bytes.NewReader(htmlBody))
	var b strings.Builder
	var skipName string // the element being skipped, "" when none
	depth := 0          // open elements named skipName
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return collapse(b.String())
		case html.TextToken:
			if skipName == "" {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if skipName != "" {
				if string(name) == skipName && tt == html.StartTagToken {
					depth++
				}
				continue
			}
			isHidden := false
			for hasAttr {
				var k []byte
				k, _, hasAttr = z.TagAttr()
				if string(k) == "hidden" {
					isHidden = true
				}
			}
			switch {
			case tt == html.SelfClosingTagToken || voidElement[a]:
				b.WriteByte(' ')
			case skipAlways(a) || skipBoilerplate(a) || a == atom.Form || isHidden:
				skipName, depth = string(name), 1
			case !inline(a):
				b.WriteByte(' ')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if skipName != "" {
				if string(name) == skipName {
					if depth--; depth == 0 {
						skipName = ""
					}
				}
				continue
			}
			if !inline(atom.Lookup(name)) {
				b.WriteByte(' ')
			}
		}
	}
}

// voidElement are elements that have no end tag.
var voidElement = map[atom.Atom]bool{
	atom.Area: true, atom.Base: true, atom.Br: true, atom.Col: true, atom.Embed: true,
	atom.Hr: true, atom.Img: true, atom.Input: true, atom.Link: true, atom.Meta: true,
	atom.Source: true, atom.Track: true, atom.Wbr: true,
}
