package markdown

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/extract"
)

// ContentType is the media type of Markdown (RFC 7763).
const ContentType = "text/markdown; charset=utf-8"

// IsPath reports whether the file name p has a Markdown extension (.md or
// .markdown, any case).
func IsPath(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown":
		return true
	}
	return false
}

// Document is a parsed Markdown document.
type Document struct {
	// Extraction holds the links, in document order, with their positions;
	// links found in raw HTML come with their identifiers, pwids and
	// diagnostics.
	Extraction audit.Extraction
	// HTML is the document rendered to HTML (raw HTML kept) with GitHub's
	// heading anchors as id attributes: what a #fragment link to the file
	// is checked against.
	HTML []byte
	// Anchors are the heading anchors, in document order.
	Anchors []string
}

// md is the parser: CommonMark plus GitHub Flavored Markdown (tables,
// strikethrough, task lists, bare-URL autolinks). Raw HTML is rendered
// as is: the rendering is only parsed again for its anchors, never shown.
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithRendererOptions(ghtml.WithUnsafe()),
)

// Parse parses src, a Markdown document at pageURL, and extracts its
// links, resolved against pageURL. It never fails: broken values become
// diagnostics. Invalid UTF-8 is parsed as is.
func Parse(src []byte, pageURL *url.URL, opt extract.Options) *Document {
	if opt.MaxLinks <= 0 {
		opt.MaxLinks = 100_000
	}
	if opt.MaxTextLen <= 0 {
		opt.MaxTextLen = 300
	}
	x := &extractor{
		src:   src,
		lines: extract.NewLineIndex(src),
		page:  pageURL,
		opt:   opt,
		ex: audit.Extraction{
			URL:         pageURL.String(),
			Base:        pageURL.String(),
			Identifiers: []audit.Identifier{},
			PWIDs:       []audit.PWID{},
			Diagnostics: []audit.Diagnostic{},
			Links:       []audit.Link{},
			Parsed:      true,
		},
		slugs: map[string]int{},
		used:  map[string]bool{},
	}
	root := md.Parser().Parse(text.NewReader(src))
	doc := &Document{Anchors: []string{}}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			t := plainText(n, src)
			id := x.slug(t)
			n.SetAttributeString("id", []byte(id))
			doc.Anchors = append(doc.Anchors, id)
			if x.ex.Title == "" && n.Level == 1 {
				x.ex.Title = truncate(strings.Join(strings.Fields(t), " "), opt.MaxTextLen)
			}
		case *ast.Link:
			x.add("a", "href", destination(n.Destination), plainText(n, src), false, n.Pos())
		case *ast.Image:
			x.add("img", "src", destination(n.Destination), plainText(n, src), true, n.Pos())
		case *ast.AutoLink:
			u := string(n.URL(src))
			switch {
			case n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:"):
				u = "mailto:" + u
			case n.AutoLinkType == ast.AutoLinkURL && !hasScheme(u):
				u = "http://" + u // GFM: a bare www. link is http
			}
			x.add("a", "href", u, string(n.Label(src)), false, n.Pos())
		case *ast.RawHTML:
			if n.Segments.Len() > 0 {
				x.rawHTML(n.Segments.At(0).Start, n.Segments.At(n.Segments.Len()-1).Stop)
			}
		case *ast.HTMLBlock:
			lines := n.Lines()
			if lines.Len() > 0 {
				stop := lines.At(lines.Len() - 1).Stop
				if n.HasClosure() {
					stop = max(stop, n.ClosureLine.Stop)
				}
				x.rawHTML(lines.At(0).Start, stop)
			}
		}
		return ast.WalkContinue, nil
	})
	var buf bytes.Buffer
	if err := md.Renderer().Render(&buf, src, root); err == nil {
		doc.HTML = buf.Bytes()
	}
	doc.Extraction = x.ex
	return doc
}

type extractor struct {
	src       []byte
	lines     *extract.LineIndex
	page      *url.URL
	opt       extract.Options
	ex        audit.Extraction
	slugs     map[string]int  // suffixes used per base anchor
	used      map[string]bool // anchors given
	truncated bool
}

func (x *extractor) full() bool {
	if len(x.ex.Links) < x.opt.MaxLinks {
		return false
	}
	if !x.truncated {
		x.truncated = true
		x.ex.Diagnostics = append(x.ex.Diagnostics, audit.Diagnostic{Field: "page", Code: extract.CodeTooManyValues,
			Message: fmt.Sprintf("page has more than %d links; the rest are not recorded", x.opt.MaxLinks)})
	}
	return true
}

// add records a Markdown link whose construct starts at byte offset pos.
func (x *extractor) add(element, attr, raw, linkText string, resource bool, pos int) {
	if x.full() {
		return
	}
	l := audit.Link{Element: element, Attr: attr, RawHref: raw, Resource: resource,
		Rel: []string{}, Diagnostics: []audit.Diagnostic{},
		Text: truncate(strings.Join(strings.Fields(linkText), " "), x.opt.MaxTextLen)}
	trimmed := strings.TrimSpace(raw)
	if u, err := x.page.Parse(trimmed); err != nil {
		l.Href = trimmed
		l.Diagnostics = append(l.Diagnostics, audit.Diagnostic{Field: attr, Code: extract.CodeInvalidURL,
			Message: fmt.Sprintf("link destination %s is not a valid URL: %v", strconv.Quote(truncate(raw, 120)), err)})
	} else {
		l.Href = u.String()
	}
	if pos >= 0 {
		x.lines.Place(&l, pos)
	}
	x.ex.Links = append(x.ex.Links, l)
}

// rawHTML runs src[start:stop], HTML written in the Markdown, through the
// HTML extractor and adds what it finds, positioned in the Markdown.
func (x *extractor) rawHTML(start, stop int) {
	if start < 0 || stop > len(x.src) || start >= stop {
		return
	}
	frag := x.src[start:stop]
	if !bytes.ContainsRune(frag, '<') {
		return
	}
	root, err := html.Parse(bytes.NewReader(frag))
	if err != nil {
		return
	}
	sub := extract.Page(root, x.page, nil, x.opt)
	offs := extract.Offsets(frag, sub.Links)
	first := len(x.ex.Links)
	kept := 0
	for i, l := range sub.Links {
		if x.full() {
			break
		}
		if offs[i] >= 0 {
			x.lines.Place(&l, start+offs[i])
		}
		x.ex.Links = append(x.ex.Links, l)
		kept++
	}
	for _, p := range sub.PWIDs {
		if p.Link >= kept {
			continue
		}
		if p.Link >= 0 {
			p.Link += first
		}
		x.ex.PWIDs = append(x.ex.PWIDs, p)
	}
	x.ex.Identifiers = append(x.ex.Identifiers, sub.Identifiers...)
	x.ex.Diagnostics = append(x.ex.Diagnostics, sub.Diagnostics...)
}

// slug returns GitHub's anchor for a heading with text t: lower case,
// punctuation other than '-' and '_' removed, each space a '-', and a
// repeated anchor suffixed -1, -2, … in document order.
func (x *extractor) slug(t string) string {
	base := Slug(t)
	id := base
	for x.used[id] {
		x.slugs[base]++
		id = base + "-" + strconv.Itoa(x.slugs[base])
	}
	x.used[id] = true
	return id
}

// Slug is GitHub's anchor rule for one heading text, without the
// duplicate suffix: lower case; letters, marks, digits, '-' and '_' kept;
// each space becomes '-'; everything else is dropped.
func Slug(t string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(t)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) || unicode.Is(unicode.Nl, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// plainText is the text content of n as rendered: text, code spans and
// autolink labels, without markup or raw HTML tags.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.AutoLink:
			b.Write(c.Label(src))
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return html.UnescapeString(b.String())
}

// destination is a link destination as the parser returns it, with
// CommonMark's backslash escapes and character references resolved (the
// order goldmark's renderer uses).
func destination(d []byte) string {
	return string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(d))))
}

func hasScheme(u string) bool {
	i := strings.IndexByte(u, ':')
	if i <= 0 {
		return false
	}
	for j, r := range u[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

func truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}
