package study

import (
	"fmt"
	"strconv"
	"strings"
)

// BibTeX is read by a small tolerant parser of its own rather than a kept
// library: the Go BibTeX parsers stop at the first malformed entry (and
// github.com/nickng/bibtex, the usual choice, is not among the modules
// vetted for this project), while a study must skip a bad entry with its
// line number and go on. The parser knows what reference managers (Zotero, Better BibTeX,
// JabRef, Mendeley) write: @type{key, field = {braced} or "quoted" or
// number or macro, joined with #}, @string macros (and the month macros
// jan..dec), @comment and @preamble, and text between entries (ignored,
// as BibTeX does).
//
// From an entry: url (a \url{...} wrapper and the LaTeX escapes \_ \% \&
// \# \$ \~ undone), the date cited from urldate, else biblatex's date,
// else year with month (CitedAt keeps a year alone or a year and month as
// an interval); id is the entry key; title, and group from a field named
// group (reference managers have no standard field for it).

type bibParser struct {
	s      string
	pos    int
	line   int
	macros map[string]string
}

var bibMonths = map[string]string{
	"jan": "1", "feb": "2", "mar": "3", "apr": "4", "may": "5", "jun": "6",
	"jul": "7", "aug": "8", "sep": "9", "oct": "10", "nov": "11", "dec": "12",
}

func parseBibTeX(b []byte, in *Input) {
	p := &bibParser{s: string(b), line: 1, macros: map[string]string{}}
	for k, v := range bibMonths {
		p.macros[k] = v
	}
	for {
		if !p.skipTo('@') {
			return
		}
		start, startLine := p.pos, p.line
		p.advance(1)
		fields, key, kind, err := p.entry()
		if err != nil {
			in.Errors = append(in.Errors, RowError{Line: startLine, Reason: "BibTeX: " + err.Error()})
			// Resynchronise at the next @ after the bad entry's own.
			p.pos, p.line = start, startLine
			p.advance(1)
			continue
		}
		if kind != "entry" {
			continue
		}
		ref, err := bibReference(startLine, key, fields)
		if err != nil {
			in.Errors = append(in.Errors, RowError{Line: startLine, Reason: fmt.Sprintf("entry %q: %v", short(key), err)})
			continue
		}
		in.References = append(in.References, ref)
	}
}

func bibReference(line int, key string, f map[string]string) (Reference, error) {
	u := f["url"]
	if u == "" {
		return Reference{}, fmt.Errorf("no url field")
	}
	u = bibURL(u)
	var at CitedAt
	var err error
	switch {
	case f["urldate"] != "":
		at, err = ParseCitedAt(f["urldate"])
		if err != nil {
			return Reference{}, fmt.Errorf("urldate: %w", err)
		}
	case f["date"] != "":
		at, err = ParseCitedAt(f["date"])
		if err != nil {
			return Reference{}, fmt.Errorf("date: %w", err)
		}
	case f["year"] != "":
		y, yerr := strconv.Atoi(strings.TrimSpace(f["year"]))
		if yerr != nil {
			return Reference{}, fmt.Errorf("year %q is not a number", short(f["year"]))
		}
		m := 0
		if ms := strings.ToLower(strings.TrimSpace(f["month"])); ms != "" {
			if n, ok := bibMonths[ms[:min(3, len(ms))]]; ok {
				ms = n
			}
			m, err = strconv.Atoi(ms)
			if err != nil {
				return Reference{}, fmt.Errorf("month %q is not a month", short(f["month"]))
			}
		}
		at, err = datePartsAt(y, m, 0)
		if err != nil {
			return Reference{}, err
		}
	default:
		return Reference{}, fmt.Errorf("no urldate, date or year field")
	}
	if _, err := checkURL(u); err != nil {
		return Reference{}, err
	}
	return Reference{Line: line, URL: strings.TrimSpace(u), CitedAt: at, ID: clean(key), Group: clean(bibText(f["group"])), Title: clean(bibText(f["title"]))}, nil
}

// bibURL undoes the wrappers and escapes a URL field may carry.
func bibURL(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `\url{`) && strings.HasSuffix(s, "}") {
		s = s[len(`\url{`) : len(s)-1]
	}
	r := strings.NewReplacer(`\_`, "_", `\%`, "%", `\&`, "&", `\#`, "#", `\$`, "$", `\~`, "~", `{`, "", `}`, "")
	return r.Replace(s)
}

// bibText drops the braces that protect case in titles.
func bibText(s string) string {
	return strings.NewReplacer("{", "", "}", "").Replace(s)
}

func (p *bibParser) advance(n int) {
	for i := 0; i < n && p.pos < len(p.s); i++ {
		if p.s[p.pos] == '\n' {
			p.line++
		}
		p.pos++
	}
}

func (p *bibParser) skipTo(c byte) bool {
	for p.pos < len(p.s) {
		if p.s[p.pos] == c {
			return true
		}
		p.advance(1)
	}
	return false
}

func (p *bibParser) skipSpace() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.advance(1)
	}
}

func (p *bibParser) ident() string {
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c <= ' ' || strings.IndexByte(`{}(),="#@%'`, c) >= 0 {
			break
		}
		p.advance(1)
	}
	return p.s[start:p.pos]
}

// entry parses what follows an @: it returns kind "entry" with the key
// and the fields (names lower-case), or "string", "comment", "preamble".
func (p *bibParser) entry() (map[string]string, string, string, error) {
	p.skipSpace()
	typ := strings.ToLower(p.ident())
	if typ == "" {
		return nil, "", "", fmt.Errorf("@ without an entry type")
	}
	p.skipSpace()
	if p.pos >= len(p.s) || (p.s[p.pos] != '{' && p.s[p.pos] != '(') {
		if typ == "comment" {
			return nil, "", "comment", nil
		}
		return nil, "", "", fmt.Errorf("@%s is not followed by { or (", short(typ))
	}
	open := p.s[p.pos]
	close := byte('}')
	if open == '(' {
		close = ')'
	}
	p.advance(1)
	switch typ {
	case "comment", "preamble":
		if err := p.skipBalanced(close); err != nil {
			return nil, "", "", err
		}
		return nil, "", typ, nil
	case "string":
		fields, err := p.fields(close)
		if err != nil {
			return nil, "", "", err
		}
		for k, v := range fields {
			p.macros[k] = v
		}
		return nil, "", "string", nil
	}
	p.skipSpace()
	keyStart := p.pos
	for p.pos < len(p.s) && p.s[p.pos] != ',' && p.s[p.pos] != close && p.s[p.pos] != '\n' {
		p.advance(1)
	}
	key := strings.TrimSpace(p.s[keyStart:p.pos])
	if p.pos >= len(p.s) {
		return nil, "", "", fmt.Errorf("entry not closed")
	}
	if p.s[p.pos] == close {
		p.advance(1)
		return map[string]string{}, key, "entry", nil
	}
	if p.s[p.pos] == '\n' {
		p.skipSpace()
		if p.pos >= len(p.s) || p.s[p.pos] != ',' {
			return nil, "", "", fmt.Errorf("entry key %q is not followed by a comma", short(key))
		}
	}
	if key == "" {
		return nil, "", "", fmt.Errorf("entry without a key")
	}
	p.advance(1)
	fields, err := p.fields(close)
	if err != nil {
		return nil, "", "", fmt.Errorf("entry %q: %w", short(key), err)
	}
	return fields, key, "entry", nil
}

// fields parses name = value pairs up to the entry's closing delimiter.
func (p *bibParser) fields(close byte) (map[string]string, error) {
	out := map[string]string{}
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, fmt.Errorf("entry not closed")
		}
		if p.s[p.pos] == close {
			p.advance(1)
			return out, nil
		}
		if p.s[p.pos] == ',' {
			p.advance(1)
			continue
		}
		name := strings.ToLower(p.ident())
		if name == "" {
			return nil, fmt.Errorf("line %d: expected a field name, found %q", p.line, p.s[p.pos:p.pos+1])
		}
		p.skipSpace()
		if p.pos >= len(p.s) || p.s[p.pos] != '=' {
			return nil, fmt.Errorf("line %d: field %q has no =", p.line, short(name))
		}
		p.advance(1)
		v, err := p.value(close)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", short(name), err)
		}
		out[name] = v
	}
}

// value parses a field value: parts joined with #.
func (p *bibParser) value(close byte) (string, error) {
	var b strings.Builder
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return "", fmt.Errorf("value not closed")
		}
		switch c := p.s[p.pos]; {
		case c == '{':
			p.advance(1)
			start := p.pos
			if err := p.skipBalanced('}'); err != nil {
				return "", err
			}
			b.WriteString(p.s[start : p.pos-1])
		case c == '"':
			p.advance(1)
			start, depth := p.pos, 0
			for {
				if p.pos >= len(p.s) {
					return "", fmt.Errorf("quoted value not closed")
				}
				c := p.s[p.pos]
				if c == '{' {
					depth++
				} else if c == '}' {
					depth--
				} else if c == '"' && depth <= 0 && (p.pos == 0 || p.s[p.pos-1] != '\\') {
					break
				}
				p.advance(1)
			}
			b.WriteString(p.s[start:p.pos])
			p.advance(1)
		default:
			id := p.ident()
			if id == "" {
				return "", fmt.Errorf("line %d: expected a value, found %q", p.line, string(c))
			}
			if m, ok := p.macros[strings.ToLower(id)]; ok {
				b.WriteString(m)
			} else if _, err := strconv.Atoi(id); err == nil {
				b.WriteString(id)
			} else {
				return "", fmt.Errorf("line %d: undefined macro %q", p.line, short(id))
			}
		}
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == '#' {
			p.advance(1)
			continue
		}
		if p.pos < len(p.s) && (p.s[p.pos] == ',' || p.s[p.pos] == close) {
			return b.String(), nil
		}
		if p.pos >= len(p.s) {
			return "", fmt.Errorf("entry not closed")
		}
		return "", fmt.Errorf("line %d: expected , or the end of the entry, found %q", p.line, p.s[p.pos:p.pos+1])
	}
}

// skipBalanced moves past the close that ends the current group, counting
// nested braces; a backslash escapes the next byte.
func (p *bibParser) skipBalanced(close byte) error {
	depth := 0
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '\\':
			p.advance(2)
			continue
		case c == '{':
			depth++
		case c == '}' && (depth > 0 || close != '}'):
			if depth == 0 {
				return fmt.Errorf("line %d: unbalanced }", p.line)
			}
			depth--
		case c == close && depth == 0:
			p.advance(1)
			return nil
		}
		p.advance(1)
	}
	return fmt.Errorf("not closed (unbalanced braces)")
}
