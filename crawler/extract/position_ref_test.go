package extract

// A straightforward reference implementation of position.go, without
// Place's cursor and line hash memo and with an allocating scanTag: one
// binary search, one decoding from the start of the line and one LineHash
// per offset. TestLocateMatchesReference and FuzzLocate check that the
// optimised code gives the same results. Only the names differ (ref...).

import (
	"bytes"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
)

// refLineIndex turns byte offsets of a document into SARIF 2.1.0 text
// positions (section 3.30.2): 1-based lines separated by the newline
// sequences CR LF, LF or CR, and 1-based columns counted in UTF-16 code
// units (columnKind "utf16CodeUnits"). A byte order mark at the start of
// the document is not counted, as the SARIF spec requires. Bytes that are
// not valid UTF-8 count as one code unit each (the decoder would turn them
// into U+FFFD).
type refLineIndex struct {
	src    []byte
	starts []int // byte offset of the start of each line
}

// refNewLineIndex indexes the lines of src. src is not copied and must not be
// modified while the index is used.
func refNewLineIndex(src []byte) *refLineIndex {
	starts := []int{0}
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return &refLineIndex{src: src, starts: starts}
}

// Position returns the 1-based line and UTF-16 column of the byte offset
// off (clamped to the document). An offset inside a multi-byte character
// counts the character as begun.
func (ix *refLineIndex) Position(off int) (line, col int) {
	off = max(0, min(off, len(ix.src)))
	i := sort.Search(len(ix.starts), func(i int) bool { return ix.starts[i] > off }) - 1
	start := ix.starts[i]
	if start == 0 && bytes.HasPrefix(ix.src, refBOM) && off >= len(refBOM) {
		start = len(refBOM)
	}
	return i + 1, 1 + refUTF16Len(ix.src[start:off])
}

var refBOM = []byte("\uFEFF")

// LineText returns the text of the 1-based line (without its newline
// sequence), or nil when there is no such line.
func (ix *refLineIndex) LineText(line int) []byte {
	if line < 1 || line > len(ix.starts) {
		return nil
	}
	start, end := ix.starts[line-1], len(ix.src)
	if line < len(ix.starts) {
		end = ix.starts[line]
	}
	return bytes.TrimRight(ix.src[start:end], "\r\n")
}

// Place sets l's Line, Column and LineHash from the byte offset off.
func (ix *refLineIndex) Place(l *audit.Link, off int) {
	l.Line, l.Column = ix.Position(off)
	l.LineHash = audit.LineHash(ix.LineText(l.Line))
}

// refUTF16Len returns the number of UTF-16 code units of the UTF-8 text b:
// two for a character outside the Basic Multilingual Plane, one for any
// other character and for each byte of an invalid sequence.
func refUTF16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		b = b[size:]
	}
	return n
}

// refTagAt is a URL in a start tag of an element linkrot extracts, as
// the tokenizer met it in the source.
type refTagAt struct {
	element, attr string
	value         string // the URL, entities decoded
	off           int    // byte offset of the URL
	used          bool
}

// refLocate sets Line and Column of links, which were extracted in document
// order from src (the decoded document), from the byte offsets found by
// refOffsets. Links it cannot place keep 0.
func refLocate(src []byte, links []audit.Link) {
	if len(links) == 0 {
		return
	}
	ix := refNewLineIndex(src)
	for i, off := range refOffsets(src, links) {
		if off >= 0 {
			ix.Place(&links[i], off)
		}
	}
}

// refOffsets returns, for each link, the byte offset in src of the first
// character of its URL attribute value (after the quote), or -1 when the
// link is not found in the source. It tokenizes src with the HTML
// tokenizer, which returns every token's raw bytes, so offsets are exact
// whatever the markup: CR LF line ends, tags and attributes split across
// lines, entities and non-ASCII text before the link. Links are matched
// to the URLs of start tags in document order by element, attribute and
// URL;
// the tree builder can move elements (a table's foster parenting), so a
// link not found after the previous match is searched from the start.
func refOffsets(src []byte, links []audit.Link) []int {
	tags := refScanTags(src)
	out := make([]int, len(links))
	cursor := 0
	for i, l := range links {
		out[i] = -1
		j := refFindTag(tags, cursor, l)
		if j < 0 {
			j = refFindTag(tags, 0, l)
		}
		if j < 0 {
			// An entity the attribute rules leave alone ("&copy=") can
			// decode differently here: the next tag of the same element.
			j = refFindElement(tags, cursor, l.Element, l.Attr)
		}
		if j < 0 {
			continue
		}
		tags[j].used = true
		out[i] = tags[j].off
		cursor = j + 1
	}
	return out
}

func refFindTag(tags []refTagAt, from int, l audit.Link) int {
	for j := from; j < len(tags); j++ {
		t := &tags[j]
		if !t.used && t.element == l.Element && t.attr == l.Attr && t.value == l.RawHref {
			return j
		}
	}
	return -1
}

func refFindElement(tags []refTagAt, from int, element, attr string) int {
	for j := from; j < len(tags); j++ {
		if !tags[j].used && tags[j].element == element && tags[j].attr == attr {
			return j
		}
	}
	return -1
}

// refURLAttr is a URL attribute of an element and how it holds URLs.
type refURLAttr struct{ name, form string }

// refElement is an element linkrot extracts: its URL attributes in the
// order of its links, and the attribute and value it needs (if any).
type refElement struct {
	attrs       []refURLAttr
	cond, value string
}

// refElements is the table of elements, written out apart from
// elements.go.
var refElements = map[string]refElement{
	"a": {attrs: []refURLAttr{{"href", "url"}}}, "area": {attrs: []refURLAttr{{"href", "url"}}},
	"link": {attrs: []refURLAttr{{"href", "url"}}}, "script": {attrs: []refURLAttr{{"src", "url"}}},
	"iframe": {attrs: []refURLAttr{{"src", "url"}}}, "audio": {attrs: []refURLAttr{{"src", "url"}}},
	"track": {attrs: []refURLAttr{{"src", "url"}}}, "embed": {attrs: []refURLAttr{{"src", "url"}}},
	"object":     {attrs: []refURLAttr{{"data", "url"}}},
	"img":        {attrs: []refURLAttr{{"src", "url"}, {"srcset", "srcset"}}},
	"source":     {attrs: []refURLAttr{{"src", "url"}, {"srcset", "srcset"}}},
	"video":      {attrs: []refURLAttr{{"src", "url"}, {"poster", "url"}}},
	"input":      {attrs: []refURLAttr{{"src", "url"}}, cond: "type", value: "image"},
	"meta":       {attrs: []refURLAttr{{"content", "refresh"}}, cond: "http-equiv", value: "refresh"},
	"blockquote": {attrs: []refURLAttr{{"cite", "url"}}}, "q": {attrs: []refURLAttr{{"cite", "url"}}},
	"del": {attrs: []refURLAttr{{"cite", "url"}}}, "ins": {attrs: []refURLAttr{{"cite", "url"}}},
}

// refScanTags lists the URLs of the start tags of the elements in
// refElements with their offsets.
func refScanTags(src []byte) []refTagAt {
	var tags []refTagAt
	z := html.NewTokenizer(bytes.NewReader(src))
	off := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return tags // io.EOF, or input the tokenizer gave up on
		}
		raw := z.Raw()
		if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
			tags = append(tags, refScanTag(raw, off)...)
		}
		off += len(raw)
	}
}

// refScanTag reads a raw start tag ("<a\n href='x'>") at offset base the
// way the HTML tokenizer does (HTML standard, 13.2.5.8 tag name state
// onwards) and returns its URLs.
func refScanTag(raw []byte, base int) []refTagAt {
	i := 1 // past '<'
	for i < len(raw) && !refIsSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	name := strings.ToLower(string(raw[1:i]))
	spec, ok := refElements[name]
	if !ok {
		return nil
	}
	type span struct{ vs, ve int }
	attrs := map[string]span{} // the first of duplicate attributes wins
	for i < len(raw) {
		for i < len(raw) && (refIsSpace(raw[i]) || raw[i] == '/') {
			i++
		}
		if i >= len(raw) || raw[i] == '>' {
			break
		}
		ns := i
		i++ // a first '=' belongs to the name
		for i < len(raw) && !refIsSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' && raw[i] != '=' {
			i++
		}
		attr := strings.ToLower(string(raw[ns:i]))
		for i < len(raw) && refIsSpace(raw[i]) {
			i++
		}
		vs, ve := i, i
		if i < len(raw) && raw[i] == '=' {
			i++
			for i < len(raw) && refIsSpace(raw[i]) {
				i++
			}
			if i < len(raw) && (raw[i] == '"' || raw[i] == '\'') {
				q := raw[i]
				i++
				vs = i
				for i < len(raw) && raw[i] != q {
					i++
				}
				ve = i
				if i < len(raw) {
					i++
				}
			} else {
				vs = i
				for i < len(raw) && !refIsSpace(raw[i]) && raw[i] != '>' {
					i++
				}
				ve = i
			}
		}
		if _, dup := attrs[attr]; !dup {
			attrs[attr] = span{vs, ve}
		}
	}
	if spec.cond != "" {
		c, ok := attrs[spec.cond]
		if !ok || !refASCIIFold(html.UnescapeString(string(raw[c.vs:c.ve])), spec.value) {
			return nil
		}
	}
	var out []refTagAt
	add := func(attr string, vs, ve int) {
		out = append(out, refTagAt{element: name, attr: attr, off: base + vs, value: html.UnescapeString(string(raw[vs:ve]))})
	}
	for _, a := range spec.attrs {
		sp, ok := attrs[a.name]
		if !ok {
			continue
		}
		v := string(raw[sp.vs:sp.ve])
		switch a.form {
		case "srcset":
			cands, _ := ParseSrcset(v)
			for _, c := range cands {
				add(a.name, sp.vs+c.Offset, sp.vs+c.Offset+len(c.URL))
			}
		case "refresh":
			if r, ok := ParseRefresh(v); ok && r.HasURL {
				add(a.name, sp.vs+r.Offset, sp.vs+r.Offset+len(r.URL))
			}
		default:
			add(a.name, sp.vs, sp.ve)
		}
	}
	return out
}

// refASCIIFold reports whether s equals the lower-case t but for the case
// of ASCII letters.
func refASCIIFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != t[i] {
			return false
		}
	}
	return true
}

func refIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}
