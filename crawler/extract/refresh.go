package extract

// CodeInvalidRefresh: the content of a <meta http-equiv="refresh"> does
// not follow the HTML standard's refresh grammar (no leading delay, a
// delay followed by something other than ";", "," or whitespace);
// browsers ignore such a refresh, so no link is recorded.
const CodeInvalidRefresh = "invalid-refresh"

// Refresh is a declarative refresh: the content of a <meta
// http-equiv="refresh"> (or a Refresh header field) as a browser reads it.
type Refresh struct {
	// Delay is the delay in whole seconds (saturated at math.MaxInt32).
	Delay int
	// URL is the URL to load as written, quotes removed; HasURL is false
	// when the content names none (the page reloads itself).
	URL    string
	HasURL bool
	// Offset is the byte offset of URL in the content.
	Offset int
}

// ParseRefresh parses content by the HTML standard's "shared declarative
// refresh steps" (4.2.5.3): ASCII whitespace, a delay of digits (whose
// integer part counts) and dots, then optionally ";" or "," and
// whitespace, then the URL: after "url" (any case), optional whitespace,
// "=" and whitespace when present, and inside single or double quotes up
// to the closing quote when quoted (an unclosed quote runs to the end).
// A URL without "url=" is read from where it starts ("5, page.html").
// It reports false, the refresh ignored by browsers, for empty content,
// content not starting with a delay ("url=x") or a delay followed by
// something other than ";", "," or whitespace ("5x").
func ParseRefresh(content string) (Refresh, bool) {
	var r Refresh
	if content == "" {
		return r, false
	}
	pos := skipHTMLSpace(content, 0)
	digits := pos
	for pos < len(content) && content[pos] >= '0' && content[pos] <= '9' {
		pos++
	}
	if pos == digits {
		if pos >= len(content) || content[pos] != '.' {
			return r, false
		}
	} else {
		r.Delay = parseNonNegative(content[digits:pos])
	}
	for pos < len(content) && (content[pos] >= '0' && content[pos] <= '9' || content[pos] == '.') {
		pos++
	}
	if pos < len(content) {
		c := content[pos]
		if c != ';' && c != ',' && !isHTMLSpace(c) {
			return r, false
		}
		pos = skipHTMLSpace(content, pos)
		if pos < len(content) && (content[pos] == ';' || content[pos] == ',') {
			pos++
		}
		pos = skipHTMLSpace(content, pos)
	}
	if pos >= len(content) {
		return r, true
	}
	// The URL as it starts here, unless "url=" and quotes are found.
	r.URL, r.Offset, r.HasURL = content[pos:], pos, true
	p := pos
	if lower(content[p]) == 'u' {
		p++
		if p >= len(content) || lower(content[p]) != 'r' {
			return r, true
		}
		p++
		if p >= len(content) || lower(content[p]) != 'l' {
			return r, true
		}
		p = skipHTMLSpace(content, p+1)
		if p >= len(content) || content[p] != '=' {
			return r, true
		}
		p = skipHTMLSpace(content, p+1)
	}
	// Skip quotes.
	var quote byte
	if p < len(content) && (content[p] == '\'' || content[p] == '"') {
		quote = content[p]
		p++
	}
	r.URL, r.Offset = content[p:], p
	if quote != 0 {
		for i := 0; i < len(r.URL); i++ {
			if r.URL[i] == quote {
				r.URL = r.URL[:i]
				break
			}
		}
	}
	return r, true
}

func skipHTMLSpace(s string, pos int) int {
	for pos < len(s) && isHTMLSpace(s[pos]) {
		pos++
	}
	return pos
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
