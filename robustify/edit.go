// Package robustify adds Robust Links attributes (data-originalurl,
// data-versiondate, data-versionurl; robustlinks.mementoweb.org/spec) to
// the outbound links of a local build directory, in place.
//
// It changes nothing else: files are edited by byte offsets found with
// the x/net/html tokenizer (the HTML parsing spec's tokenizer, so that
// comments, raw text of script and style, and invalid markup are read
// exactly as a browser reads them), never re-serialised from a tree; the
// only bytes that change are the inserted attributes (or, with Fix, the
// replaced values of a broken declared snapshot). Writes are atomic
// (temporary file and rename inside the directory, through os.Root, so
// that no path or symlink leads out of it), and a second run changes
// nothing because every link it could protect now carries the
// attributes, which are audited, not rewritten.
package robustify

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/net/html"
)

// Tag is an <a> or <area> start tag found in a document.
type Tag struct {
	// Start and End are the byte offsets of the tag ("<" to ">"
	// inclusive) in the document.
	Start, End int
	// Line is the 1-based line of Start.
	Line int
	// Name is "a" or "area"; Attrs the attributes as the tokenizer read
	// them (names lower-cased, values unescaped; the first of duplicates
	// wins, as in a browser).
	Name  string
	Attrs map[string]string
	// SelfClosing is true for "<a ... />".
	SelfClosing bool
	// Raw is the tag's bytes.
	Raw []byte
}

// Tags returns the <a> and <area> start tags of doc with their offsets.
// Tags the tokenizer does not see whole (cut by the end of the file) are
// left out.
func Tags(doc []byte) []Tag {
	var out []Tag
	z := html.NewTokenizer(bytes.NewReader(doc))
	z.SetMaxBuf(0)
	pos, line := 0, 1
	for {
		tt := z.Next()
		raw := z.Raw()
		start := pos
		pos += len(raw)
		if tt == html.ErrorToken {
			// io.EOF, or an error the tokenizer cannot go past.
			return out
		}
		if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
			name, hasAttr := z.TagName()
			n := string(name)
			if (n == "a" || n == "area") && len(raw) > 0 && raw[len(raw)-1] == '>' {
				t := Tag{Start: start, End: pos, Line: line, Name: n, Attrs: map[string]string{},
					SelfClosing: tt == html.SelfClosingTagToken, Raw: append([]byte(nil), raw...)}
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if _, dup := t.Attrs[string(k)]; !dup {
						t.Attrs[string(k)] = string(v)
					}
				}
				out = append(out, t)
			}
		}
		line += bytes.Count(raw, []byte{'\n'})
	}
}

// Robust Links attribute names.
const (
	AttrOriginal = "data-originalurl"
	AttrDate     = "data-versiondate"
	AttrVersion  = "data-versionurl"
)

// HasRobust reports whether t carries any Robust Links attribute.
func (t Tag) HasRobust() bool {
	for _, a := range []string{AttrOriginal, AttrDate, AttrVersion} {
		if _, ok := t.Attrs[a]; ok {
			return true
		}
	}
	return false
}

// Edit is one change to a document: replace doc[Start:End] with Text
// (Start == End inserts).
type Edit struct {
	Start, End int
	Text       string
}

// Apply returns doc with edits applied; edits must not overlap.
func Apply(doc []byte, edits []Edit) []byte {
	if len(edits) == 0 {
		return doc
	}
	sorted := append([]Edit(nil), edits...)
	for i := 1; i < len(sorted); i++ { // insertion sort: few edits
		for j := i; j > 0 && sorted[j].Start < sorted[j-1].Start; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var b bytes.Buffer
	b.Grow(len(doc) + 256*len(sorted))
	at := 0
	for _, e := range sorted {
		b.Write(doc[at:e.Start])
		b.WriteString(e.Text)
		at = e.End
	}
	b.Write(doc[at:])
	return b.Bytes()
}

// insertAt is the offset in t.Raw where attributes go: before the
// closing ">" (or the "/" of "/>" of a self-closing tag).
func (t Tag) insertAt() int {
	at := len(t.Raw) - 1
	if t.SelfClosing && at > 0 && t.Raw[at-1] == '/' {
		at--
	}
	return at
}

// Insertable reports whether attributes can be added to t without
// changing another: not when the tag ends in a dangling "=" ("<a x=>"),
// where the inserted text would become x's value.
func (t Tag) Insertable() bool {
	i := t.insertAt() - 1
	for i > 0 && isSpace(t.Raw[i]) {
		i--
	}
	return i > 0 && t.Raw[i] != '='
}

// InsertAttrs returns the edit that adds attrs (name, value pairs) to t:
// before its closing ">" (or "/>" of a self-closing tag), each preceded by
// one space, values double-quoted and escaped. t must be Insertable.
func InsertAttrs(t Tag, attrs [][2]string) Edit {
	at := t.Start + t.insertAt()
	var b strings.Builder
	for _, a := range attrs {
		fmt.Fprintf(&b, ` %s="%s"`, a[0], EscapeAttr(a[1]))
	}
	return Edit{Start: at, End: at, Text: b.String()}
}

// EscapeAttr escapes a value for a double-quoted attribute.
func EscapeAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// attrSpan is where one attribute sits in a tag's raw bytes.
type attrSpan struct {
	name       string // lower-cased
	start, end int    // the whole attribute, name to value end
}

// attrSpans scans a start tag's raw bytes for its attributes, following
// the HTML tokenizer's states (attribute name, before/after value,
// quoted and unquoted values).
func attrSpans(raw []byte) []attrSpan {
	var out []attrSpan
	i := 1
	for i < len(raw) && !isSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++ // tag name
	}
	for i < len(raw) {
		for i < len(raw) && (isSpace(raw[i]) || raw[i] == '/') {
			i++
		}
		if i >= len(raw) || raw[i] == '>' {
			return out
		}
		start := i
		i++ // the first character may be '=' (a name, per the spec)
		for i < len(raw) && !isSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' && raw[i] != '=' {
			i++
		}
		name := strings.ToLower(string(raw[start:i]))
		j := i
		for j < len(raw) && isSpace(raw[j]) {
			j++
		}
		if j < len(raw) && raw[j] == '=' {
			j++
			for j < len(raw) && isSpace(raw[j]) {
				j++
			}
			switch {
			case j < len(raw) && (raw[j] == '"' || raw[j] == '\''):
				q := raw[j]
				k := bytes.IndexByte(raw[j+1:], q)
				if k < 0 {
					j = len(raw) - 1
				} else {
					j = j + 1 + k + 1
				}
			default:
				for j < len(raw) && !isSpace(raw[j]) && raw[j] != '>' {
					j++
				}
			}
			i = j
		}
		out = append(out, attrSpan{name: name, start: start, end: i})
	}
	return out
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// ReplaceAttr returns the edit that replaces attribute name of t (its
// first occurrence) with name="value"; false when t has no such
// attribute.
func ReplaceAttr(t Tag, name, value string) (Edit, bool) {
	for _, s := range attrSpans(t.Raw) {
		if s.name == name {
			return Edit{Start: t.Start + s.start, End: t.Start + s.end, Text: fmt.Sprintf(`%s="%s"`, name, EscapeAttr(value))}, true
		}
	}
	return Edit{}, false
}
