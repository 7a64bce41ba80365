package extract

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/internal/pagefacts"
	"github.com/linkrot/linkrot/urls"
)

// Options bounds extraction. The zero value is useful: anchor text is cut to
// 300 characters, at most 100,000 links are kept per page and at most 1 MiB
// of page text is searched for pwid URIs.
type Options struct {
	MaxTextLen  int
	MaxLinks    int
	MaxTextScan int
}

func (o Options) withDefaults() Options {
	if o.MaxTextLen <= 0 {
		o.MaxTextLen = 300
	}
	if o.MaxLinks <= 0 {
		o.MaxLinks = 100_000
	}
	if o.MaxTextScan <= 0 {
		o.MaxTextScan = 1 << 20
	}
	return o
}

// Decode converts an HTML body to UTF-8. The character set is determined in
// the HTML standard's order: byte order mark, the Content-Type charset, a
// <meta charset> or <meta http-equiv> in the first 1024 bytes, then UTF-8 if
// the whole body is valid UTF-8, else windows-1252. It returns the decoded
// body and the canonical name of the character set used.
func Decode(body []byte, contentType string) ([]byte, string) {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if !certain && name == "windows-1252" && utf8.Valid(body) {
		// DetermineEncoding only looks at 1024 bytes: an ASCII head followed
		// by UTF-8 text would otherwise be mis-decoded.
		return body, "utf-8"
	}
	if enc == encoding.Nop || name == "utf-8" {
		return body, "utf-8"
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return body, "utf-8"
	}
	return out, name
}

// Parse decodes body (see Decode), parses it as HTML and extracts it with
// Page. header holds the HTTP response header fields (may be nil). It
// returns the extraction and the character set the body was decoded from.
func Parse(body []byte, contentType string, pageURL *url.URL, header http.Header, opt Options) (audit.Extraction, string, error) {
	ex, cs, _, err := ParseDocument(body, contentType, pageURL, header, opt)
	return ex, cs, err
}

// Document is a page as Parse read it: the body decoded to UTF-8 and
// either what the one pass read of it for the page evidence (Facts, Root
// nil) or, for a page that fell back to html.Parse, its parse tree (Root,
// Facts nil), which Page does not modify.
type Document struct {
	Decoded []byte
	Root    *html.Node
	Facts   *pagefacts.Facts
}

// ParseDocument is Parse that also returns the document it read (nil
// when parsing failed), for callers that read the page further. A page
// is read in one tokenizer pass without a tree (see onepass.go) unless it
// holds a construct the pass does not model: then it is parsed with
// html.Parse (counted by FallbackPages). The results are the same.
func ParseDocument(body []byte, contentType string, pageURL *url.URL, header http.Header, opt Options) (audit.Extraction, string, *Document, error) {
	decoded, cs := Decode(body, contentType)
	if r := runPass(decoded, pageURL, header, opt); r != nil {
		return r.ex, cs, &Document{Decoded: decoded, Facts: r.facts}, nil
	}
	fallbackPages.Add(1)
	return parseTree(decoded, cs, pageURL, header, opt)
}

// parseTree is ParseDocument by html.Parse: the reference the one pass
// is compared with, and the path of the pages it falls back on.
func parseTree(decoded []byte, cs string, pageURL *url.URL, header http.Header, opt Options) (audit.Extraction, string, *Document, error) {
	root, err := html.Parse(bytes.NewReader(decoded))
	if err != nil {
		return audit.Extraction{URL: pageURL.String()}, cs, nil, fmt.Errorf("parse html: %w", err)
	}
	ex := Page(root, pageURL, header, opt)
	Locate(decoded, ex.Links)
	return ex, cs, &Document{Decoded: decoded, Root: root}, nil
}

// newExtractor returns the extractor of a page served at pageURL, before
// its <base> (if any) is read: the tree walk and the one pass start from
// it.
func newExtractor(pageURL *url.URL, opt Options) *extractor {
	opt = opt.withDefaults()
	x := &extractor{
		opt: opt,
		ex: audit.Extraction{
			URL:         pageURL.String(),
			Identifiers: []audit.Identifier{},
			PWIDs:       []audit.PWID{},
			Diagnostics: []audit.Diagnostic{},
			Links:       []audit.Link{},
			Parsed:      true,
		},
		pageURL:  pageURL,
		base:     pageURL,
		baseHref: pageURL.String(),
	}
	x.docRes = resolverFor(pageURL)
	x.res = x.docRes
	return x
}

// Page extracts links, robustness data, identifiers and pwids from a parsed
// HTML document served at pageURL with the given response header fields.
// It never fails: broken values become diagnostics.
func Page(root *html.Node, pageURL *url.URL, header http.Header, opt Options) audit.Extraction {
	x := newExtractor(pageURL, opt)
	x.findBase(root)
	x.ex.Base = x.baseHref
	x.headerLinks(header)
	x.walk(root, nil, false)
	x.textPWIDs(root)
	x.checkIdentifiers()
	// Secrets never leave the extractor: URL passwords in raw values,
	// resolved URLs, messages and text become "***".
	urls.RedactStrings(&x.ex)
	x.release()
	return x.ex
}

type extractor struct {
	opt     Options
	ex      audit.Extraction
	pageURL *url.URL
	base    *url.URL
	// baseHref is the base URL's serialisation, its fragment included.
	baseHref string
	// docRes resolves against the document URL, res against the base URL
	// (the same unless a <base href> applies).
	docRes, res urls.Resolver
	// freeTexts are buffers for the raw anchor text of links, reused
	// from link to link.
	freeTexts []*linkText
	title     strings.Builder
	inTitle   bool
	// The visible text for the pwid scan (bounded by MaxTextScan) is
	// only measured as the walk meets it: textLen bytes, whose last four
	// are textTail, and whether it holds "pwid:" in any case. Only a page
	// that does is walked again (textOnly) to build it in pageText.
	textLen   int
	textTail  [4]byte
	pwidText  bool
	textOnly  bool
	pageText  strings.Builder
	truncated bool
	// memo is what the page repeats (nil until the first link; see
	// memoOf and release).
	memo *pageMemo
	// textBuf is the link text being collapsed, reused from link to link.
	textBuf []byte
}

func (x *extractor) diag(field, code, format string, args ...any) {
	x.ex.Diagnostics = append(x.ex.Diagnostics, audit.Diagnostic{Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
}

// findBase sets the document base URL by HTML's rules: the first <base>
// element with an href attribute, in tree order, resolved against the
// document URL. A first base that does not parse, or whose scheme linkrot
// cannot fetch (javascript:, data:, mailto:, ...), is ignored with a
// diagnostic and the document URL stays the base; later <base href>
// elements are ignored (also with a diagnostic).
func (x *extractor) findBase(n *html.Node) {
	found := false
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Base {
			if v, ok := attr(n, "href"); ok {
				if found {
					x.diag("base", CodeIgnoredBase, "<base href=%s> ignored: only the first <base> with an href sets the base URL", quote(urls.RedactURLString(v)))
				} else {
					found = true
					x.setBase(v)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(n)
}

func (x *extractor) setBase(v string) {
	if x.memo != nil { // resolved against the base before
		clear(x.memo.hrefs)
		clear(x.memo.bases)
	}
	v = urls.RedactURLString(v)
	u, warnings, err := x.docRes.Resolve(v)
	if err != nil {
		x.diag("base", CodeIgnoredBase, "<base href=%s> ignored: not a valid URL (%s); links resolve against the document URL", quote(v), errText(err))
		return
	}
	if !fetchable(u.Scheme()) {
		x.diag("base", CodeIgnoredBase, "<base href=%s> ignored: a %s: URL cannot be a base URL (HTML ignores a base whose scheme is not fetchable); links resolve against the document URL", quote(v), truncate(u.Scheme(), 40))
		return
	}
	x.ex.Diagnostics = append(x.ex.Diagnostics, urlDiags("base", v, u, warnings)...)
	r, err := urls.NewResolver(u.String())
	if err != nil {
		x.diag("base", CodeIgnoredBase, "<base href=%s> ignored: %s", quote(v), errText(err))
		return
	}
	x.base, x.baseHref, x.res = u.NetURL(), u.Href(), r
}

// linkText is the raw anchor text of the link at index idx.
type linkText struct {
	idx int
	buf []byte
}

// openText returns an empty text for the link at idx.
func (x *extractor) openText(idx int) *linkText {
	if n := len(x.freeTexts); n > 0 {
		t := x.freeTexts[n-1]
		x.freeTexts = x.freeTexts[:n-1]
		t.idx = idx
		return t
	}
	return &linkText{idx: idx}
}

// closeText sets the link's Text from t and keeps t's buffer for the next.
func (x *extractor) closeText(t *linkText) {
	x.ex.Links[t.idx].Text = x.linkText(t.buf)
	t.buf = t.buf[:0]
	x.freeTexts = append(x.freeTexts, t)
}

// linkText returns collapseBytes(b, MaxTextLen), as the string made for
// the same text of an earlier link of the page if there is one.
func (x *extractor) linkText(b []byte) string {
	x.textBuf = appendCollapsed(x.textBuf[:0], b)
	if len(x.textBuf) == 0 {
		return ""
	}
	if utf8.RuneCount(x.textBuf) > x.opt.MaxTextLen {
		return truncate(string(x.textBuf), x.opt.MaxTextLen)
	}
	texts := x.memoOf().texts
	if s, ok := texts[string(x.textBuf)]; ok {
		return s
	}
	s := string(x.textBuf)
	texts[s] = s
	return s
}

// pageMemo is what an extractor remembers of the page's repeats, so that
// a repeat takes the string already made: hrefs are the resolved hrefs
// of the raw URL values that resolved without a diagnostic (against the
// extractor's res), bases the resolved URLs without fragment of those
// values with a fragment, by the value's part before its "#" (see
// knownHref), texts the link texts.
type pageMemo struct {
	hrefs, bases, texts map[string]string
}

// memoPool keeps the maps of pages extracted for the next pages: grown
// again for every page, they allocated more bytes than the strings
// they save. A page's memo is cleared before another page takes it, so
// that no string of a page outlives the page's links through it.
var memoPool = sync.Pool{New: func() any {
	return &pageMemo{hrefs: map[string]string{}, bases: map[string]string{}, texts: map[string]string{}}
}}

// maxPooledMemo bounds the entries of a memo kept for another page: the
// maps of a page of many distinct links are left to the collector.
const maxPooledMemo = 4096

// memoOf returns the page's memo, taken from memoPool at the first use.
func (x *extractor) memoOf() *pageMemo {
	if x.memo == nil {
		x.memo = memoPool.Get().(*pageMemo)
	}
	return x.memo
}

// release gives the page's memo back, cleared, once the page is
// extracted; x does not use it again.
func (x *extractor) release() {
	m := x.memo
	if m == nil {
		return
	}
	x.memo = nil
	if len(m.hrefs)+len(m.bases)+len(m.texts) > maxPooledMemo {
		return
	}
	clear(m.hrefs)
	clear(m.bases)
	clear(m.texts)
	memoPool.Put(m)
}

// walk extracts n and its descendants; text is the innermost open link's
// anchor text (nil outside links).
func (x *extractor) walk(n *html.Node, text *linkText, inHidden bool) {
	switch n.Type {
	case html.TextNode:
		if x.textOnly {
			if !inHidden {
				x.addPageText(n.Data)
			}
			return
		}
		if x.inTitle {
			x.title.WriteString(n.Data)
		}
		if text != nil && len(text.buf) < x.opt.MaxTextLen*4 {
			text.buf = append(text.buf, n.Data...)
		}
		if !inHidden {
			x.addPageText(n.Data)
		}
		return
	case html.ElementNode:
		switch n.DataAtom {
		case atom.Script, atom.Style, atom.Template, atom.Noscript:
			inHidden = true
		case atom.Title:
			if x.ex.Title == "" && x.title.Len() == 0 && !x.textOnly {
				x.inTitle = true
				defer func() {
					x.inTitle = false
					x.ex.Title = collapse(x.title.String(), x.opt.MaxTextLen)
				}()
			}
		}
		if x.textOnly {
			// Only the text.
		} else if idx := x.element(n); idx >= 0 && !x.ex.Links[idx].Resource {
			text = x.openText(idx)
			defer x.closeText(text)
		}
	}
	// Inline elements (<em>, <span>, ...) join their text with their
	// neighbours' (a pwid may be split by markup); block elements separate.
	block := n.Type == html.ElementNode && blockElements[n.DataAtom]
	if block {
		x.addPageText(" ")
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		x.walk(c, text, inHidden)
	}
	if block {
		x.addPageText(" ")
	}
}

// blockElements separate the page text searched for pwid URIs.
var blockElements = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Br: true, atom.Li: true, atom.Ul: true, atom.Ol: true,
	atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Table: true, atom.Tr: true, atom.Td: true,
	atom.Th: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
	atom.H6: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true,
	atom.Nav: true, atom.Aside: true, atom.Main: true, atom.Blockquote: true, atom.Pre: true,
	atom.Figure: true, atom.Figcaption: true, atom.Hr: true, atom.Body: true, atom.Title: true,
}

// addPageText appends visible text to the text searched for pwid URIs,
// bounded by MaxTextScan: in pageText when the walk is textOnly, else
// only to its measure (textLen, textTail, pwidText).
func (x *extractor) addPageText(s string) { addPageText(x, s) }

// addPageText is the method for text as a string (the tree's) or as bytes
// (the one pass's, not copied to a string).
func addPageText[T string | []byte](x *extractor, s T) {
	if x.textLen >= x.opt.MaxTextScan {
		return
	}
	x.textLen += len(s)
	if x.textOnly {
		x.pageText.WriteString(string(s))
		return
	}
	if x.pwidText || len(s) == 0 {
		return
	}
	// "pwid:" across the end of the text so far and s, or in s.
	var edge [8]byte
	k := copy(edge[:], x.textTail[:])
	k += copy(edge[k:], s)
	x.pwidText = containsFold(edge[:k], "pwid:") || containsFold(s, "pwid:")
	if len(s) >= len(x.textTail) {
		copy(x.textTail[:], s[len(s)-len(x.textTail):])
	} else {
		copy(x.textTail[:], edge[k-len(x.textTail):k])
	}
}

// element records the links of n when it is an element linkrot extracts
// and returns the index of its first new link, or -1.
func (x *extractor) element(n *html.Node) int {
	spec, ok := urlAttrs[n.DataAtom]
	if !ok {
		return -1
	}
	if spec.only != "" {
		if v, _ := attr(n, spec.only); !equalFoldASCIIString(v, spec.onlyValue) {
			return -1
		}
	}
	main := spec.attrs[0].name
	if _, has := attr(n, main); !has {
		if _, hasMset := attr(n, "mset"); hasMset {
			x.diag("mset", CodeMsetWithoutHref, "<%s> has an mset attribute but no %s: the mset spec requires mset to be omitted when href is absent", n.Data, main)
		}
	}
	first := -1
	for i, a := range spec.attrs {
		v, has := attr(n, a.name)
		if !has {
			continue
		}
		var idx int
		switch a.form {
		case formSrcset:
			idx = x.srcset(n, spec, v)
		case formRefresh:
			idx = x.refresh(n, spec, v)
		default:
			idx = x.urlLink(n, spec, a.name, v, i == 0)
		}
		if first < 0 {
			first = idx
		}
	}
	return first
}

// srcset records a link for each image candidate of n's srcset value v
// and returns the index of the first, or -1.
func (x *extractor) srcset(n *html.Node, spec *elementSpec, v string) int {
	if blank(v) {
		x.diag("srcset", CodeEmptyValue, "<%s srcset=%s> is empty: it offers no image candidate", n.Data, quote(v))
		return -1
	}
	cands, diags := ParseSrcset(v)
	for i := range diags {
		diags[i].Message = urls.RedactText(diags[i].Message)
	}
	x.ex.Diagnostics = append(x.ex.Diagnostics, diags...)
	first := -1
	for _, c := range cands {
		idx := x.addLink(n, spec, "srcset", c.URL, false)
		if first < 0 {
			first = idx
		}
	}
	return first
}

// refresh records the link of a <meta http-equiv=refresh> with content v
// and returns its index, or -1: none when browsers ignore the content
// or when it reloads the page itself (no URL, or an empty one).
func (x *extractor) refresh(n *html.Node, spec *elementSpec, v string) int {
	r, ok := ParseRefresh(v)
	if !ok {
		x.diag("content", CodeInvalidRefresh, "<meta http-equiv=refresh content=%s> is ignored by browsers: it must start with a delay in seconds, then \";\" or \",\" and the URL (\"0; url=page.html\")", quote(urls.RedactText(v)))
		return -1
	}
	if !r.HasURL || blank(r.URL) {
		return -1
	}
	return x.addLink(n, spec, "content", r.URL, false)
}

// urlLink records the link of n's attribute name holding one URL v (main:
// the element's main URL attribute) and returns its index, or -1.
func (x *extractor) urlLink(n *html.Node, spec *elementSpec, name, v string, main bool) int {
	if blank(v) && !spec.emptyIsDocument {
		x.diag(name, CodeEmptyValue, "<%s %s=%s> is empty: a browser fetches nothing for it", n.Data, name, quote(v))
		return -1
	}
	return x.addLink(n, spec, name, v, main)
}

// addLink records a link of n to the URL raw written in its attribute
// name and returns its index, or -1 when the page has MaxLinks links
// already. main says raw is the element's main URL, which its Robust
// Links and mset attributes annotate.
func (x *extractor) addLink(n *html.Node, spec *elementSpec, name, raw string, main bool) int {
	// A password in the URL never reaches a record or a message: the URL
	// is read as written but for it (it is never sent either).
	raw = urls.RedactURLString(raw)
	if len(x.ex.Links) >= x.opt.MaxLinks {
		if len(x.ex.Links) == x.opt.MaxLinks && !x.truncated {
			x.truncated = true
			x.diag("page", CodeTooManyValues, "page has more than %d links; the rest are not recorded", x.opt.MaxLinks)
		}
		return -1
	}
	l := audit.Link{
		Element:     n.Data,
		Attr:        name,
		RawHref:     raw,
		Resource:    !spec.hyperlink,
		Rel:         relTokens(n),
		Diagnostics: []audit.Diagnostic{},
	}
	if l.Rel == nil {
		l.Rel = []string{}
	}
	idx := len(x.ex.Links)
	trimmed := strings.TrimSpace(raw)
	hrefOK := false
	if isPWID(trimmed) {
		l.Href = trimmed
		l.Diagnostics = append(l.Diagnostics, audit.Diagnostic{Field: name, Code: CodePWIDInHref,
			Message: fmt.Sprintf("%s=%s is a pwid URI: it identifies an archived resource, but browsers cannot follow it; link to the archive's replay URL and keep the pwid in the text or data attributes", name, quote(trimmed))})
		x.addPWID(&l, idx, trimmed, "href", name)
	} else if href, ok := x.knownHref(raw); ok {
		l.Href = href
		hrefOK = true
	} else if u, warnings, err := x.res.Resolve(raw); err != nil {
		l.Href = trimmed
		l.Diagnostics = append(l.Diagnostics, audit.Diagnostic{Field: name, Code: CodeInvalidURL,
			Message: fmt.Sprintf("%s=%s is not a valid URL: %v", name, quote(raw), errText(err))})
	} else {
		l.Href = u.String()
		diags := urlDiags(name, raw, u, warnings)
		l.Diagnostics = append(l.Diagnostics, diags...)
		hrefOK = true
		if len(diags) == 0 {
			x.knowHref(raw, l.Href, u)
		}
	}
	if n.DataAtom == atom.Img || n.DataAtom == atom.Input {
		if alt, ok := attr(n, "alt"); ok {
			l.Text = collapse(alt, x.opt.MaxTextLen)
		}
	}
	if main {
		x.robust(n, &l, idx, hrefOK)
		x.mset(n, &l, idx)
	}
	if n.DataAtom == atom.Link {
		for _, r := range l.Rel {
			if r == "identifier" || r == "cite-as" {
				x.ex.Identifiers = append(x.ex.Identifiers, audit.Identifier{URL: l.Href, Rel: r, Source: "html"})
			}
		}
	}
	x.ex.Links = append(x.ex.Links, l)
	return idx
}

// knownHref returns what raw resolves to when the page resolved it
// before without a diagnostic (which urlDiags makes from raw and its URL
// only, whatever the attribute), or resolved another value with the same
// part before a fragment when raw's fragment is one that resolving keeps
// as written and adds no diagnostic to (plainFragment). The part before
// the first "#" is read alike whatever follows it; what the URL parser
// does to a whole value (trims its ends, drops tabs and newlines, refuses
// a long one) the fragment then does not need.
func (x *extractor) knownHref(raw string) (string, bool) {
	if x.memo == nil {
		return "", false
	}
	if h, ok := x.memo.hrefs[raw]; ok {
		return h, true
	}
	rest, frag, found := strings.Cut(raw, "#")
	if !found || len(raw) >= maxKnownRef || !plainFragment(frag) {
		return "", false
	}
	base, ok := x.memo.bases[rest]
	if !ok {
		return "", false
	}
	h := base + "#" + frag
	x.memo.hrefs[raw] = h
	return h, true
}

// knowHref remembers that raw resolved to u (href: its String) without a
// diagnostic.
func (x *extractor) knowHref(raw, href string, u urls.URL) {
	m := x.memoOf()
	m.hrefs[raw] = href
	if rest, _, found := strings.Cut(raw, "#"); found && len(raw) < maxKnownRef {
		m.bases[rest] = u.Unfragmented()
	}
}

// maxKnownRef bounds the values knownHref derives from another: the URL
// parser judges the length of a longer one (urls.ParseURL's limits).
const maxKnownRef = 512

// plainFragment reports whether frag, not empty, holds only URL code
// points that the URL Standard's fragment state keeps as written and
// without a validation error: no percent sign, no second "#", nothing
// percent-encoded, removed or trimmed.
func plainFragment(frag string) bool {
	if frag == "" {
		return false
	}
	for i := 0; i < len(frag); i++ {
		c := frag[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:@/?", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// robust reads the Robust Links attributes (robust-links spec, section 3).
func (x *extractor) robust(n *html.Node, l *audit.Link, idx int, hrefOK bool) {
	orig, hasOrig := attr(n, "data-originalurl")
	orig = urls.RedactURLString(orig)
	date, hasDate := attr(n, "data-versiondate")
	vurl, hasVURL := attr(n, "data-versionurl")
	vurl = urls.RedactText(vurl) // whitespace-separated tokens
	if !hasOrig && !hasDate && !hasVURL {
		return
	}
	r := &audit.Robust{OriginalRaw: orig, VersionDateRaw: date, VersionURLRaw: vurl, Snapshots: []audit.Snapshot{}}
	ldiag := func(field, code, format string, args ...any) {
		l.Diagnostics = append(l.Diagnostics, audit.Diagnostic{Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	switch o := strings.TrimSpace(orig); {
	case !hasOrig || o == "":
		// Section 3.5: a client may use the absolute href as the original.
		if hrefOK {
			r.OriginalURL = l.Href
			r.OriginalInferred = true
		}
		ldiag("data-originalurl", CodeMissingOriginalURL, "data-originalurl is required (robust-links 3.2) but %s; using href %s (section 3.5)", missingOrEmpty(hasOrig), quote(l.Href))
	default:
		// The same URL rules as snapshot URIs (host required for http(s),
		// markup characters rejected, other schemes flagged); a relative
		// value is resolved leniently with its own diagnostic code.
		abs, diags, ok := resolveRef("data-originalurl", "data-originalurl", o, x.base)
		for _, d := range diags {
			if d.Code == CodeRelativeURL {
				d.Code = CodeRelativeOriginalURL
				d.Message = fmt.Sprintf("data-originalurl=%s must be absolute (robust-links 3.2); resolved leniently to %s", quote(orig), quote(abs))
			}
			l.Diagnostics = append(l.Diagnostics, d)
		}
		if ok {
			r.OriginalURL = abs
		}
	}
	if !hasDate || strings.TrimSpace(date) == "" {
		ldiag("data-versiondate", CodeMissingVersionDate, "data-versiondate is required (robust-links 3.3) but %s", missingOrEmpty(hasDate))
	} else {
		t, dateOnly, diags := ParseVersionDate("data-versiondate", date)
		r.VersionDate, r.VersionDateOnly = t, dateOnly
		r.VersionDateLeapSecond = hasLeapSecond(diags)
		l.Diagnostics = append(l.Diagnostics, diags...)
	}
	if hasVURL {
		snaps, diags := ParseVersionURL(vurl, x.base)
		if snaps != nil {
			r.Snapshots = snaps
		}
		l.Diagnostics = append(l.Diagnostics, diags...)
		for _, s := range snaps {
			if isPWID(s.URL) {
				x.addPWID(l, idx, s.URL, "versionurl", "data-versionurl")
			}
		}
	}
	l.Robust = r
}

func (x *extractor) mset(n *html.Node, l *audit.Link, idx int) {
	v, ok := attr(n, "mset")
	if !ok {
		return
	}
	v = urls.RedactText(v)
	m, diags := ParseMset(v, x.base)
	l.Diagnostics = append(l.Diagnostics, diags...)
	if m == nil {
		return
	}
	if m.Temporal == nil {
		m.Temporal = []audit.Time{}
	}
	if m.Copies == nil {
		m.Copies = []audit.Copy{}
	}
	for _, c := range m.Copies {
		if isPWID(c.URL) {
			x.addPWID(l, idx, c.URL, "mset", "mset")
		}
	}
	l.Mset = m
}

func (x *extractor) addPWID(l *audit.Link, idx int, raw, source, field string) {
	p, diags, ok := ParsePWID(raw)
	for i := range diags {
		diags[i].Field = field
	}
	l.Diagnostics = append(l.Diagnostics, diags...)
	if !ok {
		return
	}
	p.Source, p.Link = source, idx
	x.ex.PWIDs = append(x.ex.PWIDs, p)
}

// textPWIDs finds pwid URIs written in the page text (citations in
// prose) of the document root that walk extracted.
func (x *extractor) textPWIDs(root *html.Node) {
	if !x.pwidText {
		return
	}
	// The page cites a pwid in its text: build the text (walk again).
	x.textOnly, x.textLen = true, 0
	x.walk(root, nil, false)
	x.textOnly = false
	seen := map[string]bool{}
	for _, p := range x.ex.PWIDs {
		seen[p.Raw] = true
	}
	tooLong := func(head string, n int) {
		x.diag("text", CodeInvalidPWID, "invalid pwid %s…: a candidate of %d bytes is too long (at most %d are read); not parsed", quote(head), n, maxPWIDCandidate)
	}
	for _, raw := range FindPWIDsReport(x.pageText.String(), tooLong) {
		if seen[raw] {
			continue
		}
		seen[raw] = true
		p, diags, ok := ParsePWID(raw)
		for i := range diags {
			diags[i].Field = "text"
		}
		x.ex.Diagnostics = append(x.ex.Diagnostics, diags...)
		if ok {
			p.Source, p.Link = "text", -1
			x.ex.PWIDs = append(x.ex.PWIDs, p)
		}
	}
}

// headerLinks reads identifier and cite-as links from HTTP Link fields. Their
// context is the request URL, so relative targets resolve against it, not
// against <base>.
func (x *extractor) headerLinks(h http.Header) {
	fields := h.Values("Link")
	if len(fields) == 0 {
		return
	}
	links, err := urls.ParseLinkHeader(fields...)
	if err != nil {
		x.diag("link-header", CodeInvalidLinkHeader, "malformed HTTP Link header: %s", truncate(err.Error(), 300))
	}
	for _, l := range urls.ResolveLinks(x.pageURL, links) {
		// An anchor parameter changes the link's context (RFC 8288 3.2):
		// an identifier anchored elsewhere (a section, another resource)
		// is not the page's.
		if a, ok := l.Params["anchor"]; ok && (l.HasRel("identifier") || l.HasRel("cite-as")) {
			if au, _, err := x.docRes.Resolve(a); err != nil || au.String() != x.docRes.Base() {
				x.diag("link-header", CodeAnchoredLink, "Link <%s> has anchor=%s: its identifier is for that context, not for this page; ignored", truncate(l.URI, 200), quote(a))
				continue
			}
		}
		for _, rel := range []string{"identifier", "cite-as"} {
			if l.HasRel(rel) {
				x.ex.Identifiers = append(x.ex.Identifiers, audit.Identifier{URL: l.URI, Rel: rel, Source: "header"})
			}
		}
	}
}

// checkIdentifiers flags more than one distinct identifying URI per relation:
// the identifier draft says the access URI SHOULD provide only one.
func (x *extractor) checkIdentifiers() {
	distinct := map[string]map[string]bool{}
	for _, id := range x.ex.Identifiers {
		if distinct[id.Rel] == nil {
			distinct[id.Rel] = map[string]bool{}
		}
		distinct[id.Rel][id.URL] = true
	}
	for _, rel := range []string{"identifier", "cite-as"} {
		if n := len(distinct[rel]); n > 1 {
			x.diag("rel-"+rel, CodeMultipleIdentifiers, "page declares %d different rel=%q URIs; the access URI should provide only one", n, rel)
		}
	}
}

func attr(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

func relTokens(n *html.Node) []string {
	v, ok := attr(n, "rel")
	if !ok {
		return nil
	}
	var out []string
	for _, f := range strings.Fields(strings.ToLower(v)) {
		dup := false
		for _, o := range out {
			dup = dup || o == f
		}
		if !dup && len(out) < 32 {
			out = append(out, f)
		}
	}
	return out
}

// containsFold reports whether s contains the lower-case ASCII substr,
// ignoring ASCII case, without copying s: strings.EqualFold at each
// offset (no other rune folds to an ASCII letter but K and S, which have
// the Kelvin and long s signs: substr must hold neither). A substr that
// ends in a byte other than a letter is searched from that byte's
// occurrences (IndexByte), not byte by byte.
func containsFold[T string | []byte](s T, substr string) bool {
	m := len(substr)
	if m == 0 {
		return true
	}
	last := substr[m-1]
	if 'a' <= last && last <= 'z' {
		for i := 0; i+m <= len(s); i++ {
			if hasPrefixFold(s[i:i+m], substr) {
				return true
			}
		}
		return false
	}
	for i := m - 1; i < len(s); {
		j := indexByte(s[i:], last)
		if j < 0 {
			return false
		}
		i += j
		if hasPrefixFold(s[i+1-m:i+1], substr) {
			return true
		}
		i++
	}
	return false
}

// indexByte is strings.IndexByte or bytes.IndexByte.
func indexByte[T string | []byte](s T, c byte) int {
	switch v := any(s).(type) {
	case string:
		return strings.IndexByte(v, c)
	case []byte:
		return bytes.IndexByte(v, c)
	}
	panic("unreachable")
}

// isPWID reports whether s starts with "pwid:" or "urn:pwid:" once
// lower-cased (strings.ToLower: the Kelvin sign becomes k, a dotted
// capital I becomes i). A head of ASCII is compared in place.
func isPWID(s string) bool {
	head := s[:min(len(s), len("urn:pwid:"))]
	for i := 0; i < len(head); i++ {
		if head[i] >= utf8.RuneSelf {
			l := strings.ToLower(s)
			return strings.HasPrefix(l, "pwid:") || strings.HasPrefix(l, "urn:pwid:")
		}
	}
	return hasPrefixFold(head, "pwid:") || hasPrefixFold(head, "urn:pwid:")
}

// collapse trims s, collapses runs of white space to one space and cuts the
// result to max runes.
func collapse(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	return truncate(s, max)
}

// appendCollapsed appends the fields of b (those of strings.Fields)
// joined by single spaces to dst.
func appendCollapsed(dst, b []byte) []byte {
	start := len(dst)
	for f := range bytes.FieldsSeq(b) {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		dst = append(dst, f...)
	}
	return dst
}

// collapseBytes is collapse(string(b), max) without copying b to a
// string first: the rule linkText keeps (which remembers the results).
func collapseBytes(b []byte, max int) string {
	return truncate(string(appendCollapsed(make([]byte, 0, len(b)), b)), max)
}

func truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}

func quote(s string) string { return fmt.Sprintf("%q", truncate(s, 120)) }

func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func missingOrEmpty(present bool) string {
	if present {
		return "it is empty"
	}
	return "it is missing"
}
