package extract

// The reference implementation of position.go as it was before Place kept
// a cursor and a line hash memo and scanTag stopped allocating: one binary
// search, one decoding from the start of the line and one LineHash per
// offset. TestLocateMatchesReference and FuzzLocate check that the
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

// refTagAt is a start tag of an element linkrot extracts, as the tokenizer
// met it in the source.
type refTagAt struct {
	element string
	value   string // the URL attribute's value, entities decoded
	has     bool   // the URL attribute is present
	off     int    // byte offset of the value (of the tag when has is false)
	used    bool
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
// to start tags in document order by element name and attribute value;
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
			j = refFindElement(tags, cursor, l.Element)
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
		if !t.used && t.has && t.element == l.Element && t.value == l.RawHref {
			return j
		}
	}
	return -1
}

func refFindElement(tags []refTagAt, from int, element string) int {
	for j := from; j < len(tags); j++ {
		if !tags[j].used && tags[j].has && tags[j].element == element {
			return j
		}
	}
	return -1
}

// refScanTags lists the start tags of the elements in urlAttrs with the
// offset of their URL attribute.
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
			if t, ok := refScanTag(raw); ok {
				t.off += off
				tags = append(tags, t)
			}
		}
		off += len(raw)
	}
}

// refScanTag reads a raw start tag ("<a\n href='x'>") the way the HTML
// tokenizer does (HTML standard, 13.2.5.8 tag name state onwards) and
// returns its URL attribute's offset within raw.
func refScanTag(raw []byte) (refTagAt, bool) {
	i := 1 // past '<'
	for i < len(raw) && !refIsSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	name := strings.ToLower(string(raw[1:i]))
	spec, ok := refURLAttrByName[name]
	if !ok {
		return refTagAt{}, false
	}
	t := refTagAt{element: name}
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
		if attr == spec && !t.has { // the first of duplicate attributes wins
			t.has, t.off = true, vs
			t.value = html.UnescapeString(string(raw[vs:ve]))
		}
	}
	return t, true
}

func refIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// refURLAttrByName is urlAttrs by element name.
var refURLAttrByName = func() map[string]string {
	m := make(map[string]string, len(urlAttrs))
	for a, s := range urlAttrs {
		m[a.String()] = s.attr
	}
	return m
}()
