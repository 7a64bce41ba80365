package extract

import (
	"bytes"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
)

// LineIndex turns byte offsets of a document into SARIF 2.1.0 text
// positions (section 3.30.2): 1-based lines separated by the newline
// sequences CR LF, LF or CR, and 1-based columns counted in UTF-16 code
// units (columnKind "utf16CodeUnits"). A byte order mark at the start of
// the document is not counted, as the SARIF spec requires. Bytes that are
// not valid UTF-8 count as one code unit each (the decoder would turn them
// into U+FFFD).
//
// Place remembers where it last was, so placing offsets in document order
// costs time linear in the document however long its lines are; a
// LineIndex is therefore not safe for concurrent use by Place (Position,
// LineText and NewLineIndex's result shared read-only are).
type LineIndex struct {
	src    []byte
	starts []int // byte offset of the start of each line

	// The cursor of Place: the byte offset at, its 0-based line, the
	// start its column counts from, and its column; at is a character
	// boundary of the text decoded from start, so the column of a later
	// offset on the line is col plus the code units from at.
	cur struct{ at, line, start, col int }
	// lastLine, lastHash and long memoize LineHash: of the line last
	// hashed and of the long lines hashed (a short line is cheap to hash
	// again).
	lastLine int // 1-based, 0 for none
	lastHash string
	long     map[int]string
}

// NewLineIndex indexes the lines of src. src is not copied and must not be
// modified while the index is used.
func NewLineIndex(src []byte) *LineIndex {
	starts := make([]int, 1, 1+bytes.Count(src, []byte{'\n'})+1)
	if bytes.IndexByte(src, '\r') < 0 {
		// Only LF ends lines (the usual case): found by IndexByte, not
		// IndexAny.
		for i := 0; ; {
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			starts = append(starts, i)
		}
		ix := &LineIndex{src: src, starts: starts}
		ix.cur.col = 1
		return ix
	}
	for i := 0; i < len(src); {
		j := bytes.IndexAny(src[i:], "\r\n")
		if j < 0 {
			break
		}
		i += j
		if src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n' {
			i++
		}
		i++
		starts = append(starts, i)
	}
	ix := &LineIndex{src: src, starts: starts}
	ix.cur.col = 1 // at the start of the document
	return ix
}

// Position returns the 1-based line and UTF-16 column of the byte offset
// off (clamped to the document). An offset inside a multi-byte character
// counts the bytes of the character before it as invalid UTF-8 (one code
// unit each). Position costs time proportional to the column; Place is
// linear over offsets given in document order.
func (ix *LineIndex) Position(off int) (line, col int) {
	off = max(0, min(off, len(ix.src)))
	i := ix.lineOf(off)
	start := ix.lineStart(i, off)
	return i + 1, 1 + UTF16Len(ix.src[start:off])
}

// lineOf returns the 0-based line of the clamped offset off.
func (ix *LineIndex) lineOf(off int) int {
	return sort.Search(len(ix.starts), func(i int) bool { return ix.starts[i] > off }) - 1
}

// lineStart returns the byte offset the columns of the 0-based line i
// count from, for the offset off on it: the line's start but past a byte
// order mark starting the document.
func (ix *LineIndex) lineStart(i, off int) int {
	start := ix.starts[i]
	if start == 0 && off >= len(bom) && bytes.HasPrefix(ix.src, bom) {
		start = len(bom)
	}
	return start
}

// position is Position from the cursor: when off is on the cursor's line
// and not before it, only the text between them is decoded.
func (ix *LineIndex) position(off int) (line, col int) {
	off = max(0, min(off, len(ix.src)))
	c := &ix.cur
	var at, start int
	if off >= c.at &&
		(c.line+1 == len(ix.starts) || off < ix.starts[c.line+1]) && ix.lineStart(c.line, off) == c.start {
		line, at, start, col = c.line, c.at, c.start, c.col
	} else {
		line = ix.lineOf(off)
		start = ix.lineStart(line, off)
		at, col = start, 1
	}
	// Decode the line from at: each step a character (or an invalid byte)
	// as it reads in the whole text, so the cursor stays on a boundary; a
	// character that straddles off is counted as its bytes before off, as
	// UTF16Len counts a truncated character.
	src := ix.src
	for at < off {
		if b := src[at]; b < utf8.RuneSelf {
			at++
			col++
			continue
		}
		r, size := utf8.DecodeRune(src[at:])
		if at+size > off {
			break
		}
		at += size
		if r >= 0x10000 {
			col += 2
		} else {
			col++
		}
	}
	c.line, c.start, c.at, c.col = line, start, at, col
	return line + 1, col + UTF16Len(src[at:off])
}

var bom = []byte("\uFEFF")

// LineText returns the text of the 1-based line (without its newline
// sequence), or nil when there is no such line.
func (ix *LineIndex) LineText(line int) []byte {
	if line < 1 || line > len(ix.starts) {
		return nil
	}
	start, end := ix.starts[line-1], len(ix.src)
	if line < len(ix.starts) {
		end = ix.starts[line]
	}
	return bytes.TrimRight(ix.src[start:end], "\r\n")
}

// longLine is the length from which a line's hash is kept for the whole
// document, not only while it is the last line hashed: hashing a shorter
// line again for a link costs no more than a constant per link.
const longLine = 256

// lineHash returns audit.LineHash of the 1-based line's text, hashing each
// line once however many links it holds.
func (ix *LineIndex) lineHash(line int) string {
	if line == ix.lastLine {
		return ix.lastHash
	}
	text := ix.LineText(line)
	h, ok := ix.long[line]
	if !ok {
		h = audit.LineHash(text)
		if len(text) >= longLine {
			if ix.long == nil {
				ix.long = map[int]string{}
			}
			ix.long[line] = h
		}
	}
	ix.lastLine, ix.lastHash = line, h
	return h
}

// Place sets l's Line, Column and LineHash from the byte offset off.
// Offsets placed in document order cost time linear in the document; an
// offset before the previous one is placed from the start of its line.
func (ix *LineIndex) Place(l *audit.Link, off int) {
	l.Line, l.Column = ix.position(off)
	l.LineHash = ix.lineHash(l.Line)
}

// UTF16Len returns the number of UTF-16 code units of the UTF-8 text b:
// two for a character outside the Basic Multilingual Plane, one for any
// other character and for each byte of an invalid sequence.
func UTF16Len(b []byte) int {
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

// tagAt is a URL in a start tag of an element linkrot extracts, as the
// tokenizer met it in the source: a URL attribute's value, a srcset
// candidate or a meta refresh URL.
type tagAt struct {
	element, attr string
	// The URL is src[off:end] when it holds no '&', else value (entities
	// decoded): most values hold none and are not copied.
	value    string
	escaped  bool
	off, end int // byte offsets of the URL in src
	used     bool
}

// is reports whether the tag's URL is v.
func (t *tagAt) is(src []byte, v string) bool {
	if t.escaped {
		return t.value == v
	}
	return string(src[t.off:t.end]) == v
}

// Locate sets Line and Column of links, which were extracted in document
// order from src (the decoded document), from the byte offsets found by
// Offsets. Links it cannot place keep 0.
func Locate(src []byte, links []audit.Link) {
	if len(links) == 0 {
		return
	}
	ix := NewLineIndex(src)
	for i, off := range Offsets(src, links) {
		if off >= 0 {
			ix.Place(&links[i], off)
		}
	}
}

// Offsets returns, for each link, the byte offset in src of the first
// character of its URL as written (the attribute value after the quote;
// in a srcset, the candidate's URL; in a meta refresh, the URL after
// "url="), or -1 when the link is not found in the source. It tokenizes src with the HTML
// tokenizer, which returns every token's raw bytes, so offsets are exact
// whatever the markup: CR LF line ends, tags and attributes split across
// lines, entities and non-ASCII text before the link. Links are matched
// to the URLs of start tags in document order by element, attribute and
// URL;
// the tree builder can move elements (a table's foster parenting), so a
// link not found after the previous match is searched from the start.
func Offsets(src []byte, links []audit.Link) []int {
	return matchOffsets(src, scanTags(src, len(links)), links)
}

// matchOffsets is Offsets with the URLs of src's start tags already
// listed (scanTags, or the one pass's tokens).
func matchOffsets(src []byte, tags []tagAt, links []audit.Link) []int {
	out := make([]int, len(links))
	cursor := 0
	var fb *fallback // built on the first link not found in order
	for i, l := range links {
		out[i] = -1
		// The usual case: the next tags in order (a link the tree builder
		// kept in place is found within a few tags of the cursor).
		j := findTag(src, tags, cursor, l, nearTags)
		if j < 0 {
			if fb == nil {
				fb = newFallback(src, tags)
			}
			j = fb.find(cursor, l)
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

// nearTags is how many tags after the cursor Offsets compares one by one
// before it asks its index.
const nearTags = 8

// findTag returns the first unused tag among the limit tags from from
// that is l's element and attribute with l's URL, or -1.
func findTag(src []byte, tags []tagAt, from int, l audit.Link, limit int) int {
	for j := from; j < len(tags) && j < from+limit; j++ {
		t := &tags[j]
		if !t.used && t.element == l.Element && t.attr == l.Attr && t.is(src, l.RawHref) {
			return j
		}
	}
	return -1
}

// fallback indexes the tags by element, attribute and URL, and by
// element and attribute, so that
// a page whose links are not found in order (a table's foster parenting,
// values the tokenizer reads otherwise, thousands of links the tokenizer
// cannot see) costs a lookup per link, not a scan of every tag: without
// it such a page would be quadratic in its links.
type fallback struct {
	tags      []tagAt
	byValue   map[string]*tagList // element NUL attr NUL value -> its tags
	byElement map[string]*tagList // element NUL attr -> its tags
}

// tagList is tag indices in ascending order; those before head are used.
type tagList struct {
	idx  []int
	head int
}

func newFallback(src []byte, tags []tagAt) *fallback {
	fb := &fallback{tags: tags, byValue: map[string]*tagList{}, byElement: map[string]*tagList{}}
	add := func(m map[string]*tagList, k string, j int) {
		l := m[k]
		if l == nil {
			l = &tagList{}
			m[k] = l
		}
		l.idx = append(l.idx, j)
	}
	for j := range tags {
		t := &tags[j]
		v := t.value
		if !t.escaped {
			v = string(src[t.off:t.end])
		}
		ea := t.element + "\x00" + t.attr
		add(fb.byValue, ea+"\x00"+v, j)
		add(fb.byElement, ea, j)
	}
	return fb
}

// find returns the tag of l as Offsets did by scanning: the first unused
// tag of its element, attribute and URL from cursor on, else from the
// start, else (an entity the attribute rules leave alone, "&copy=", can
// decode differently here; a redacted password) the next unused tag of
// its element and attribute from cursor on; -1 when there is none.
func (fb *fallback) find(cursor int, l audit.Link) int {
	ea := l.Element + "\x00" + l.Attr
	same := fb.byValue[ea+"\x00"+l.RawHref]
	if j := fb.firstUnused(same, cursor); j >= 0 {
		return j
	}
	if j := fb.firstUnused(same, 0); j >= 0 {
		return j
	}
	return fb.firstUnused(fb.byElement[ea], cursor)
}

// firstUnused returns the first index of list that is at least from and
// whose tag is unused, or -1 (list may be nil). The used tags at the
// list's front are passed over once for all (a tag never becomes unused
// again), so that the searches of a page stay near linear.
func (fb *fallback) firstUnused(list *tagList, from int) int {
	if list == nil {
		return -1
	}
	for list.head < len(list.idx) && fb.tags[list.idx[list.head]].used {
		list.head++
	}
	k, _ := slices.BinarySearch(list.idx[list.head:], from)
	for k += list.head; k < len(list.idx); k++ {
		if !fb.tags[list.idx[k]].used {
			return list.idx[k]
		}
	}
	return -1
}

// scanTags lists the URLs of the start tags of the elements in urlAttrs
// (see scanTag); n is the number expected.
func scanTags(src []byte, n int) []tagAt {
	tags := make([]tagAt, 0, n)
	eachStartTag(src, func(start, end int) {
		tags = scanTag(tags, src, start, end)
	})
	return tags
}

// scanTag reads the raw start tag src[start:end] ("<a\n href='x'>") the
// way the HTML tokenizer does (HTML standard, 13.2.5.8 tag name state
// onwards) and appends the URLs of an element in urlAttrs to tags, in the
// order the extractor records its links: each URL attribute present (the
// first of duplicates), a srcset's candidates one by one, a meta
// refresh's URL; none when the element's condition (input type=image,
// meta http-equiv=refresh) does not hold. Other tags append nothing.
func scanTag(tags []tagAt, src []byte, start, end int) []tagAt {
	raw := src[start:end]
	i := 1 // past '<'
	for i < len(raw) && !isSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	spec, ok := lookupLower(raw[1:i])
	if !ok {
		return tags
	}
	return scanTagOf(tags, src, start, end, spec, i)
}

// scanTagOf is scanTag of a start tag of the element spec, whose
// attributes start at src[start+i:].
func scanTagOf(tags []tagAt, src []byte, start, end int, spec *elementSpec, i int) []tagAt {
	raw := src[start:end]
	type span struct {
		vs, ve int
		has    bool
	}
	var (
		spans [maxURLAttrs]span
		only  span
	)
	for i < len(raw) {
		for i < len(raw) && (isSpace(raw[i]) || raw[i] == '/') {
			i++
		}
		if i >= len(raw) || raw[i] == '>' {
			break
		}
		ns := i
		i++ // a first '=' belongs to the name
		for i < len(raw) && !isSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' && raw[i] != '=' {
			i++
		}
		name := raw[ns:i]
		var vs, ve int
		vs, ve, i = attrValue(raw, i)
		// The first of duplicate attributes wins.
		for k, a := range spec.attrs {
			if !spans[k].has && equalLower(name, a.name) {
				spans[k] = span{start + vs, start + ve, true}
			}
		}
		if spec.only != "" && !only.has && equalLower(name, spec.only) {
			only = span{start + vs, start + ve, true}
		}
	}
	if spec.only != "" {
		if !only.has {
			return tags
		}
		v := src[only.vs:only.ve]
		if bytes.IndexByte(v, '&') >= 0 {
			v = []byte(html.UnescapeString(string(v)))
		}
		if !equalFoldASCII(v, spec.onlyValue) {
			return tags
		}
	}
	for k, a := range spec.attrs {
		sp := spans[k]
		if !sp.has {
			continue
		}
		switch a.form {
		case formSrcset:
			cands, _ := ParseSrcset(string(src[sp.vs:sp.ve]))
			for _, c := range cands {
				off := sp.vs + c.Offset
				tags = appendTag(tags, src, spec.element, a.name, off, off+len(c.URL))
			}
		case formRefresh:
			if r, ok := ParseRefresh(string(src[sp.vs:sp.ve])); ok && r.HasURL {
				off := sp.vs + r.Offset
				tags = appendTag(tags, src, spec.element, a.name, off, off+len(r.URL))
			}
		default:
			tags = appendTag(tags, src, spec.element, a.name, sp.vs, sp.ve)
		}
	}
	return tags
}

// appendTag appends the URL src[off:end] of element's attribute attr.
func appendTag(tags []tagAt, src []byte, element, attr string, off, end int) []tagAt {
	t := tagAt{element: element, attr: attr, off: off, end: end}
	if bytes.IndexByte(src[off:end], '&') >= 0 {
		t.escaped = true
		t.value = html.UnescapeString(string(src[off:end]))
	}
	return append(tags, t)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// lookupLower returns urlAttrByName[strings.ToLower(string(name))] without
// allocating for an ASCII name.
func lookupLower(name []byte) (*elementSpec, bool) {
	if !isASCII(name) {
		// Unicode lower-casing, as strings.ToLower does (it can map a
		// non-ASCII letter to an ASCII one: U+212A KELVIN SIGN to 'k').
		s, ok := urlAttrByName[strings.ToLower(string(name))]
		return s, ok
	}
	var buf [16]byte // longer than every name in urlAttrByName
	if len(name) > len(buf) {
		return nil, false
	}
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	s, ok := urlAttrByName[string(buf[:len(name)])]
	return s, ok
}

// equalLower reports whether strings.ToLower(string(b)) == s, without
// allocating for an ASCII b.
func equalLower(b []byte, s string) bool {
	if !isASCII(b) {
		return strings.ToLower(string(b)) == s
	}
	return equalFoldASCII(b, s)
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
