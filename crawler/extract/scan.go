package extract

import "bytes"

// The tag scan of Locate finds where each start tag of the source begins
// and ends exactly as golang.org/x/net/html's Tokenizer splits the source
// into tokens (the tokenizer states of the HTML standard as that package
// implements them, section 13.2.5), without building tokens: the
// tokenizer copies and lower-cases every attribute name of every tag and
// keeps them in a map, work a scan for boundaries does not need (see
// docs/performance.md). Only the boundaries are computed here; scanTag then
// reads the tags of the elements linkrot extracts. A tag cut off by the
// end of the source is no tag (the tokenizer reports an error instead),
// and nothing after it is scanned.

// eachStartTag calls yield with the byte offsets [start, end) of each
// start tag (self-closing ones included) of src, in order, as the
// tokenizer reads them.
func eachStartTag(src []byte, yield func(start, end int)) {
	n := len(src)
	p := 0
	for {
		i := bytes.IndexByte(src[p:], '<')
		if i < 0 || p+i+1 >= n {
			return // text to the end
		}
		i += p
		c := src[i+1]
		switch {
		case isLetter(c):
			end, nameEnd, ok := tagEnd(src, i+2)
			if !ok {
				return
			}
			yield(i, end)
			p = end
			if raw := rawTextOf(src[i+1 : nameEnd]); raw != "" {
				if p = skipRawText(src, p, raw); p < 0 {
					return
				}
			}
		case c == '/':
			if i+2 >= n {
				return
			}
			switch d := src[i+2]; {
			case d == '>':
				p = i + 3 // "</>" is no token
			case isLetter(d):
				end, _, ok := tagEnd(src, i+3)
				if !ok {
					return
				}
				p = end
			default: // a bogus comment to the next '>'
				if p = closeAngle(src, i+2); p < 0 {
					return
				}
			}
		case c == '?':
			if p = closeAngle(src, i+1); p < 0 {
				return
			}
		case c == '!':
			if i+3 < n && src[i+2] == '-' && src[i+3] == '-' {
				p = commentEnd(src, i+4)
			} else {
				// A doctype or a bogus comment: both end at the first '>'.
				p = closeAngle(src, i+2)
			}
			if p < 0 {
				return
			}
		default:
			p = i + 1 // a '<' in the text
		}
	}
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// closeAngle returns the offset after the first '>' from p, or -1.
func closeAngle(src []byte, p int) int {
	j := bytes.IndexByte(src[p:], '>')
	if j < 0 {
		return -1
	}
	return p + j + 1
}

// tagEnd reads a start or end tag whose name's first letter is before p:
// the name, then attributes (names, '=' and values quoted or not) up to
// the '>' that closes the tag. It returns the offset after that '>' and
// the end of the name; ok is false when the source ends first.
func tagEnd(src []byte, p int) (end, nameEnd int, ok bool) {
	n := len(src)
	for p < n && !isSpace(src[p]) && src[p] != '/' && src[p] != '>' {
		p++
	}
	nameEnd = p
	if p < n && isSpace(src[p]) {
		p++ // the space after the name is part of it as read
	}
	p = skipSpace(src, p)
	for {
		if p >= n {
			return 0, 0, false
		}
		if src[p] == '>' {
			return p + 1, nameEnd, true
		}
		// The attribute's name: a leading '=' belongs to it.
		ks := p
		for p < n {
			c := src[p]
			if c == '=' && p == ks {
				p++
				continue
			}
			if isSpace(c) || c == '/' || c == '>' || c == '=' {
				break
			}
			p++
		}
		if p >= n {
			return 0, 0, false
		}
		// Its value.
		if p = skipSpace(src, p); p >= n {
			return 0, 0, false
		}
		switch src[p] {
		case '/':
			p++
		case '=':
			if p = skipSpace(src, p+1); p >= n {
				return 0, 0, false
			}
			switch q := src[p]; q {
			case '>':
			case '"', '\'':
				j := bytes.IndexByte(src[p+1:], q)
				if j < 0 {
					return 0, 0, false
				}
				p += j + 2
			default:
				p++
				for {
					if p >= n {
						return 0, 0, false
					}
					c := src[p]
					if c == '>' {
						break
					}
					p++
					if isSpace(c) {
						break
					}
				}
			}
		}
		if p = skipSpace(src, p); p >= n {
			return 0, 0, false
		}
	}
}

func skipSpace(src []byte, p int) int {
	for p < len(src) && isSpace(src[p]) {
		p++
	}
	return p
}

// rawTextOf returns the name of an element whose content the tokenizer
// reads as text up to its end tag (name is a start tag's name as
// written), or "".
func rawTextOf(name []byte) string {
	for _, s := range rawTextElements {
		if equalFoldASCII(name, s) {
			return s
		}
	}
	return ""
}

// rawTextElements are the start tags after which the tokenizer reads
// text (script data, raw text, RCDATA, plain text) whatever the context.
var rawTextElements = [...]string{"iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"}

// equalFoldASCII reports whether b is s (lower-case ASCII letters) with
// ASCII letters in either case.
func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// endTagAt reports whether src[p:] starts with "</" name and a character
// that ends a tag name (white space, '/' or '>'), in any ASCII case. ok is
// false when the source ends before that could be decided.
func endTagAt(src []byte, p int, name string) (match, ok bool) {
	n := len(src)
	if p+1 >= n {
		return false, false
	}
	if src[p+1] != '/' {
		return false, true
	}
	for i := 0; i < len(name); i++ {
		if p+2+i >= n {
			return false, false
		}
		c := src[p+2+i]
		if c != name[i] && c != name[i]-('a'-'A') {
			return false, true
		}
	}
	k := p + 2 + len(name)
	if k >= n {
		return false, false
	}
	c := src[k]
	return isSpace(c) || c == '/' || c == '>', true
}

// skipRawText returns the offset of the end tag that ends the text
// content of a raw text element (name) starting at p, or -1 when the text
// runs to the end of the source.
func skipRawText(src []byte, p int, name string) int {
	switch name {
	case "plaintext":
		return -1
	case "script":
		return skipScript(src, p)
	}
	for {
		i := bytes.IndexByte(src[p:], '<')
		if i < 0 {
			return -1
		}
		p += i
		match, ok := endTagAt(src, p, name)
		if !ok {
			return -1
		}
		if match {
			return p
		}
		p++
	}
}

// Script data states (HTML standard 13.2.5.4 and 13.2.5.15 onwards, as
// the tokenizer implements them).
const (
	scriptData = iota
	scriptEscaped
	scriptEscapedDash
	scriptEscapedDashDash
	scriptDoubleEscaped
	scriptDoubleEscapedDash
	scriptDoubleEscapedDashDash
)

// skipScript returns the offset of the "</script" that ends script data
// starting at p, or -1 when it runs to the end of the source.
func skipScript(src []byte, p int) int {
	n := len(src)
	state := scriptData
	for p < n {
		c := src[p]
		switch state {
		case scriptData:
			if c != '<' {
				i := bytes.IndexByte(src[p:], '<')
				if i < 0 {
					return -1
				}
				p += i
			}
			// At a '<'.
			if p+1 >= n {
				return -1
			}
			switch src[p+1] {
			case '/':
				match, ok := endTagAt(src, p, "script")
				if !ok {
					return -1
				}
				if match {
					return p
				}
				p += 2 // then the character that did not match
			case '!':
				// "<!--" escapes; "<!-" or "<!" then another character
				// goes back to script data at that character.
				switch {
				case p+2 >= n:
					return -1
				case src[p+2] != '-':
					p += 2
				case p+3 >= n:
					return -1
				case src[p+3] != '-':
					p += 3
				default:
					p += 4
					state = scriptEscapedDashDash
				}
			default:
				p++ // the character after '<' is read again
			}
		case scriptEscaped, scriptEscapedDash, scriptEscapedDashDash:
			switch c {
			case '-':
				p++
				if state == scriptEscaped {
					state = scriptEscapedDash
				} else {
					state = scriptEscapedDashDash
				}
			case '<':
				if p+1 >= n {
					return -1
				}
				switch d := src[p+1]; {
				case d == '/':
					match, ok := endTagAt(src, p, "script")
					if !ok {
						return -1
					}
					if match {
						return p
					}
					p += 2
					state = scriptEscaped
				case isLetter(d):
					// "<script" and an end of tag name starts double
					// escaping; otherwise back to escaped at the first
					// character that differs.
					q := p + 1
					i := 0
					for ; i < len("script"); i++ {
						if q+i >= n {
							return -1
						}
						if d := src[q+i]; d != "script"[i] && d != "SCRIPT"[i] {
							break
						}
					}
					if i < len("script") {
						p, state = q+i, scriptEscaped
						break
					}
					if q+6 >= n {
						return -1
					}
					if d := src[q+6]; isSpace(d) || d == '/' || d == '>' {
						p, state = q+7, scriptDoubleEscaped
					} else {
						p, state = q+6, scriptEscaped
					}
				default:
					p++ // the character after '<' is read again, in script data
					state = scriptData
				}
			case '>':
				p++
				if state == scriptEscapedDashDash {
					state = scriptData
				} else {
					state = scriptEscaped
				}
			default:
				p++
				state = scriptEscaped
			}
		default: // double escaped
			switch c {
			case '-':
				p++
				if state == scriptDoubleEscaped {
					state = scriptDoubleEscapedDash
				} else {
					state = scriptDoubleEscapedDashDash
				}
			case '<':
				if p+1 >= n {
					return -1
				}
				if src[p+1] != '/' {
					p++ // the character after '<' is read again
					state = scriptDoubleEscaped
					break
				}
				match, ok := endTagAt(src, p, "script")
				if !ok {
					return -1
				}
				if match {
					p += len("</script>")
					state = scriptEscaped
				} else {
					p += 2
					state = scriptDoubleEscaped
				}
			case '>':
				p++
				if state == scriptDoubleEscapedDashDash {
					state = scriptData
				} else {
					state = scriptDoubleEscaped
				}
			default:
				p++
				state = scriptDoubleEscaped
			}
		}
	}
	return -1
}

// commentEnd returns the offset after the end of a comment whose "<!--"
// ends before p ("-->", "--!>", or at its very beginning "<!-->" and
// "<!--->"), or -1 when it runs to the end of the source.
func commentEnd(src []byte, p int) int {
	n := len(src)
	dashes, beginning := 0, true
	for p < n {
		c := src[p]
		p++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return p
			}
		case '!':
			if dashes >= 2 {
				if p >= n {
					return -1
				}
				c = src[p]
				p++
				if c == '>' {
					return p
				}
				if c == '-' {
					dashes, beginning = 1, false
					continue
				}
			}
		}
		dashes, beginning = 0, false
	}
	return -1
}

// attrValue reads the optional "= value" that follows an attribute's name
// in the raw start tag raw, from i (just after the name), as the
// tokenizer reads it: it returns the bounds of the value (vs == ve when
// there is none, or it is empty) and where the next attribute may begin.
// The value is raw: quotes removed, character references not decoded.
func attrValue(raw []byte, i int) (vs, ve, next int) {
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	vs, ve = i, i
	if i < len(raw) && raw[i] == '=' {
		i++
		for i < len(raw) && isSpace(raw[i]) {
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
			for i < len(raw) && !isSpace(raw[i]) && raw[i] != '>' {
				i++
			}
			ve = i
		}
	}
	return vs, ve, i
}
