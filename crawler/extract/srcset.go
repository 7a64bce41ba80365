package extract

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/linkrot/linkrot/audit"
)

// Diagnostic codes of the srcset parser.
const (
	// CodeInvalidSrcset: a srcset image candidate has a descriptor the
	// HTML standard rejects ("2y", "0w", "1x 100w", ...); browsers drop the
	// candidate, so its URL is not recorded.
	CodeInvalidSrcset = "invalid-srcset"
	// CodeLenientSrcset: a srcset has stray commas (a leading, doubled or
	// repeated trailing comma), a parse error browsers recover from; the
	// candidates are kept.
	CodeLenientSrcset = "lenient-srcset"
)

// SrcsetCandidate is one image candidate of a srcset attribute.
type SrcsetCandidate struct {
	// URL is the candidate's URL as written (not resolved).
	URL string
	// Offset is the byte offset of URL in the attribute value.
	Offset int
	// Width is the w descriptor (0 when absent), Density the x descriptor
	// (HasDensity tells 0x from absent), Height the h descriptor (0 when
	// absent; it needs a width).
	Width      int
	Density    float64
	HasDensity bool
	Height     int
}

// ParseSrcset parses a srcset attribute value by the HTML standard's
// "parse a srcset attribute" (4.8.4.3.10): candidates are separated by
// commas that follow a URL or a candidate's descriptors; a URL is the
// run of non-whitespace characters (it may hold commas) without its
// trailing commas; descriptors are read up to the next comma outside
// parentheses. A candidate with an invalid descriptor is dropped with a
// CodeInvalidSrcset diagnostic, as browsers drop it; stray commas give a
// CodeLenientSrcset one. At most MaxValues candidates are read.
func ParseSrcset(v string) ([]SrcsetCandidate, []audit.Diagnostic) {
	var (
		out   []SrcsetCandidate
		diags []audit.Diagnostic
		stray bool
	)
	pos := 0
	for {
		// Splitting loop: whitespace and commas before a candidate.
		start := pos
		for pos < len(v) && (isHTMLSpace(v[pos]) || v[pos] == ',') {
			pos++
		}
		if strings.IndexByte(v[start:pos], ',') >= 0 {
			stray = true
		}
		if pos >= len(v) {
			break
		}
		if len(out) >= MaxValues {
			diags = append(diags, newDiag("srcset", CodeTooManyValues, "srcset has more than %d candidates; the rest are not read", MaxValues))
			break
		}
		urlStart := pos
		for pos < len(v) && !isHTMLSpace(v[pos]) {
			pos++
		}
		url := v[urlStart:pos]
		var descriptors []string
		if strings.HasSuffix(url, ",") {
			trimmed := strings.TrimRight(url, ",")
			if len(url)-len(trimmed) > 1 {
				stray = true
			}
			url = trimmed
		} else {
			descriptors, pos = srcsetDescriptors(v, pos)
		}
		c := SrcsetCandidate{URL: url, Offset: urlStart}
		if why := c.describe(descriptors); why != "" {
			diags = append(diags, newDiag("srcset", CodeInvalidSrcset,
				"srcset candidate %s is dropped, as browsers drop it: %s", quoteValue(strings.TrimRight(strings.TrimSpace(v[urlStart:min(pos, len(v))]), ",")), why))
			continue
		}
		out = append(out, c)
	}
	if stray {
		diags = append(diags, newDiag("srcset", CodeLenientSrcset,
			"srcset %s has stray commas (leading, doubled or repeated after a URL); browsers skip them", quoteValue(v)))
	}
	return out, diags
}

// srcsetDescriptors is the descriptor tokenizer of "parse a srcset
// attribute": the descriptors from pos up to the comma ending the
// candidate (outside parentheses) or the end, and the position after it.
func srcsetDescriptors(v string, pos int) ([]string, int) {
	for pos < len(v) && isHTMLSpace(v[pos]) {
		pos++
	}
	var (
		out     []string
		current strings.Builder
	)
	const (
		inDescriptor = iota
		inParens
		afterDescriptor
	)
	state := inDescriptor
	flush := func() {
		if current.Len() > 0 {
			out = append(out, current.String())
			current.Reset()
		}
	}
	for ; ; pos++ {
		if pos >= len(v) { // EOF
			if state == inParens {
				out = append(out, current.String())
			} else {
				flush()
			}
			return out, pos
		}
		c := v[pos]
		switch state {
		case inDescriptor:
			switch {
			case isHTMLSpace(c):
				flush()
				state = afterDescriptor
			case c == ',':
				flush()
				return out, pos + 1
			case c == '(':
				current.WriteByte(c)
				state = inParens
			default:
				current.WriteByte(c)
			}
		case inParens:
			current.WriteByte(c)
			if c == ')' {
				state = inDescriptor
			}
		case afterDescriptor:
			if !isHTMLSpace(c) {
				state = inDescriptor
				pos-- // read c again in descriptor
			}
		}
	}
}

// describe applies the descriptor parser of "parse a srcset attribute" to
// c and returns why the candidate is dropped, or "".
func (c *SrcsetCandidate) describe(descriptors []string) string {
	var hasWidth, hasHeight bool
	for _, d := range descriptors {
		if len(d) < 2 {
			return fmt.Sprintf("descriptor %s is not a width (100w), a density (2x) or a height (100h)", quoteValue(d))
		}
		num, unit := d[:len(d)-1], d[len(d)-1]
		switch {
		case unit == 'w' && isDigits(num):
			if hasWidth || c.HasDensity {
				return fmt.Sprintf("descriptor %s: a candidate has one width or density", quoteValue(d))
			}
			n := parseNonNegative(num)
			if n == 0 {
				return fmt.Sprintf("descriptor %s: a width must be greater than zero", quoteValue(d))
			}
			hasWidth, c.Width = true, n
		case unit == 'x' && isFloat(num):
			if hasWidth || c.HasDensity || hasHeight {
				return fmt.Sprintf("descriptor %s: a density cannot be combined with another density, a width or a height", quoteValue(d))
			}
			f, err := strconv.ParseFloat(num, 64)
			if err != nil && !isRangeErr(err) {
				return fmt.Sprintf("descriptor %s is not a number", quoteValue(d))
			}
			if f < 0 {
				return fmt.Sprintf("descriptor %s: a density cannot be negative", quoteValue(d))
			}
			c.HasDensity, c.Density = true, f
		case unit == 'h' && isDigits(num):
			if hasHeight || c.HasDensity {
				return fmt.Sprintf("descriptor %s: a candidate has one height, and none with a density", quoteValue(d))
			}
			n := parseNonNegative(num)
			if n == 0 {
				return fmt.Sprintf("descriptor %s: a height must be greater than zero", quoteValue(d))
			}
			hasHeight, c.Height = true, n
		default:
			return fmt.Sprintf("descriptor %s is not a width (100w), a density (2x) or a height (100h)", quoteValue(d))
		}
	}
	if hasHeight && !hasWidth {
		return "a height descriptor needs a width descriptor"
	}
	return ""
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// isDigits reports whether s is a valid non-negative integer: one or more
// ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseNonNegative reads a string of ASCII digits, saturating at
// math.MaxInt32.
func parseNonNegative(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
		if n > math.MaxInt32 {
			return math.MaxInt32
		}
	}
	return n
}

// isFloat reports whether s is a valid floating-point number (HTML
// standard 2.3.4.3): an optional "-", digits, an optional fraction of "."
// and digits (digits before the "." may be omitted, not after it), and an
// optional exponent of "e" or "E", an optional sign and digits.
func isFloat(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	hasInt := i > intStart
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == fracStart {
			return false
		}
	} else if !hasInt {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		expStart := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == expStart {
			return false
		}
	}
	return i == len(s)
}
