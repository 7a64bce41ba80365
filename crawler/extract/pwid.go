package extract

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

const fieldPWID = "pwid"

// maxPWIDLen bounds the length of a pwid URI (its archived item is a URI,
// and URIs longer than this are not citations).
const maxPWIDLen = 16 << 10

// contentSpecs are the content-spec keywords of the pwid ABNF, without
// the leading "_" (pwid:) or the surrounding ":" (urn:pwid:).
var contentSpecs = [...]string{"page", "part", "coll", "snapshot", "rec", "other"}

const (
	pwidForm = "pwid:archive-id:YYYY-MM-DD_hh.mm.ssZ[_page|_part|_coll|_snapshot|_rec|_other]:archived-item (pwid-uri ABNF, section 3; \"T\" for \"_\" and no dots also valid)"
	urnForm  = "urn:pwid:archive-id:YYYY-MM-DDThh:mm:ssZ:content-spec:archived-item"
)

// isUnreserved reports whether c is an RFC 3986 unreserved character.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// contentSpec matches word against the content-spec keywords ignoring case;
// exact reports a lower-case (ABNF) spelling.
func contentSpec(word string) (spec string, exact, ok bool) {
	for _, k := range contentSpecs {
		if strings.EqualFold(word, k) {
			return k, word == k, true
		}
	}
	return "", false, false
}

// alphaRun returns the length of the run of ASCII letters of s at i.
func alphaRun(s string, i int) int {
	j := i
	for j < len(s) && isAlpha(s[j]) {
		j++
	}
	return j - i
}

// hasURIScheme reports whether s starts with an RFC 3986 scheme and ":".
func hasURIScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return true
		case isAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.':
		default:
			return false
		}
	}
	return false
}

// pwidReasons collects the lenient deviations of a pwid, once each.
type pwidReasons []string

func (r *pwidReasons) add(s string) {
	for _, x := range *r {
		if x == s {
			return
		}
	}
	*r = append(*r, s)
}

// ParsePWID parses a pwid: URI (pwid-uri ABNF, section 3 of the pwid
// draft):
//
//	pwid-uri       = "pwid" ":" archive-id ":" archived-date [content-spec] ":" archived-item
//	archive-id     = 1*unreserved
//	archived-date  = full-date ("_" / "T") time-hour ["."] time-minute ["."] time-second "Z"
//	content-spec   = "_page" / "_part" / "_coll" / "_snapshot" / "_rec" / "_other"
//	archived-item  = URI / 1*unreserved
//
// or the later URN form, urn:pwid:archive-id:YYYY-MM-DDThh:mm:ssZ:page:item
// (e.g. urn:pwid:archive.org:2016-01-22T11:20:29Z:page:https://www.dr.dk),
// where the content spec is a ":"-delimited segment. Schemes are
// case-insensitive (PWID: is valid). Leading and trailing HTML whitespace is
// ignored.
//
// Lenient forms are accepted with one CodeLenientPWID diagnostic listing
// every deviation: colons in the time of a pwid: URI (dots or nothing in a
// urn:pwid: one), a ":page:" segment under pwid: ("_page" under urn:pwid:),
// a lower-case "t" or "z", a missing "Z" (UTC assumed), a content spec in
// upper case, a urn:pwid: without or with an unknown content spec
// (ContentSpec is then ""), a percent-encoded archive id (the draft's
// section 7 allows what its ABNF does not), and an archived item that is
// neither a URI nor 1*unreserved but still parses as a URI reference. A
// time of 23:59:60 is a leap second (CodeLeapSecond, see ParseVersionDate).
//
// ok is false when s is not a pwid at all (no diagnostics) or is invalid:
// missing parts, an impossible date (2016-02-30), characters outside the
// archive-id grammar, an unknown content spec under pwid:, an empty or
// unparsable item (a CodeInvalidPWID diagnostic says why); p is then the
// zero PWID. When ok, Raw (s trimmed), ArchiveID, Datetime (UTC),
// ContentSpec (without "_": page, part, coll, snapshot, rec, other, or "")
// and Item are set; Source and Link are left for the caller.
func ParsePWID(s string) (p audit.PWID, diags []audit.Diagnostic, ok bool) {
	raw := trimHTMLSpace(s)
	urn := false
	var rest string
	switch {
	case hasPrefixFold(raw, "urn:pwid:"):
		urn, rest = true, raw[len("urn:pwid:"):]
	case hasPrefixFold(raw, "pwid:"):
		rest = raw[len("pwid:"):]
	default:
		return audit.PWID{}, nil, false
	}
	form := pwidForm
	if urn {
		form = urnForm
	}
	invalid := func(format string, args ...any) (audit.PWID, []audit.Diagnostic, bool) {
		// Only the reason: other diagnostics are moot for a dropped pwid.
		return audit.PWID{}, []audit.Diagnostic{newDiag(fieldPWID, CodeInvalidPWID,
			"invalid pwid %s: %s; expected %s", quoteValue(raw), fmt.Sprintf(format, args...), form)}, false
	}
	if len(raw) > maxPWIDLen {
		return invalid("%d bytes is too long", len(raw))
	}
	var why pwidReasons

	// archive-id = 1*unreserved
	k := strings.IndexByte(rest, ':')
	switch {
	case k < 0:
		return invalid("no archived date after the archive id")
	case k == 0:
		return invalid("empty archive id")
	}
	archiveID := rest[:k]
	for i := 0; i < len(archiveID); i++ {
		c := archiveID[i]
		switch {
		case isUnreserved(c):
		case c == '%' && i+2 < len(archiveID) && isHex(archiveID[i+1]) && isHex(archiveID[i+2]):
			why.add("percent-encoded archive id")
			i += 2
		case c == '%':
			return invalid("archive id %s has a bad percent-encoding at %s (expected %% and two hex digits)",
				quoteValue(archiveID), quoteValue(archiveID[i:min(i+3, len(archiveID))]))
		default:
			return invalid("archive id %s contains %s (only unreserved characters A-Z a-z 0-9 - . _ ~ are allowed)",
				quoteValue(archiveID), quoteValue(archiveID[i:i+1]))
		}
	}
	rest = rest[k+1:]

	// archived-date = full-date ("_" / "T") hh ["."] mm ["."] ss "Z"
	t, leap, n, reason := scanPWIDDate(rest, urn, &why)
	if reason != "" {
		return invalid("%s", reason)
	}
	if leap {
		diags = append(diags, audit.Diagnostic{Field: fieldPWID, Code: CodeLeapSecond, Message: leapSecondMessage(raw, t)})
	}
	i := n

	// content-spec: "_page" before the ":" (pwid:), or a ":page:" segment
	// (urn:pwid:).
	spec := ""
	if i < len(rest) && rest[i] == '_' {
		w := alphaRun(rest, i+1)
		word := rest[i+1 : i+1+w]
		sp, exact, known := contentSpec(word)
		if !known {
			return invalid("unknown content spec %s after the archived date (expected _page, _part, _coll, _snapshot, _rec or _other)",
				quoteValue("_"+word))
		}
		if !exact {
			why.add(fmt.Sprintf("content spec %s is not lower-case", quoteValue(word)))
		}
		if urn {
			why.add(fmt.Sprintf(`"_%s" (the pwid: form) instead of ":%s:"`, sp, sp))
		}
		spec = sp
		i += 1 + w
	}
	if i >= len(rest) || rest[i] != ':' {
		if i >= len(rest) {
			return invalid("no archived item after the archived date")
		}
		return invalid("unexpected %s after the archived date (expected a content spec or \":\" and the archived item)",
			quoteValue(rest[i:]))
	}
	i++
	if spec == "" {
		// A ":word:" segment. It is the content spec of urn:pwid:, and a
		// lenient one under pwid:. A word followed by "://" is the scheme
		// of the archived item, not a content spec.
		w := alphaRun(rest, i)
		isSegment := w > 0 && i+w < len(rest) && rest[i+w] == ':' && !strings.HasPrefix(rest[i+w+1:], "//")
		word := rest[i : i+w]
		sp, exact, known := contentSpec(word)
		switch {
		case isSegment && known:
			spec = sp
			i += w + 1
			if !exact {
				why.add(fmt.Sprintf("content spec %s is not lower-case", quoteValue(word)))
			}
			if !urn {
				why.add(fmt.Sprintf(`":%s:" segment (the urn:pwid: form) instead of "_%s"`, sp, sp))
			}
		case isSegment && urn:
			why.add(fmt.Sprintf("unknown content spec %s ignored (expected page part coll snapshot rec or other)", quoteValue(word)))
			i += w + 1
		case urn:
			why.add("no content spec segment (urn:pwid: has archive-id:time:content-spec:item)")
		}
	}

	// archived-item = URI / 1*unreserved
	item := rest[i:]
	if reason := checkPWIDItem(item, &why); reason != "" {
		return invalid("%s", reason)
	}
	if len(why) > 0 {
		diags = append(diags, newDiag(fieldPWID, CodeLenientPWID,
			"lenient pwid %s: %s; accepted, but expected %s", quoteValue(raw), strings.Join(why, ", "), form))
	}
	return audit.PWID{
		Raw:         raw,
		ArchiveID:   archiveID,
		Datetime:    audit.NewTime(t),
		ContentSpec: spec,
		Item:        item,
		LeapSecond:  leap,
	}, diags, true
}

// scanPWIDDate reads the archived date at the start of s and returns the
// UTC instant and the number of bytes read, or a reason it is invalid.
// Under pwid: the time is hh[.]mm[.]ss; under urn:pwid: hh:mm:ss. The
// other separators are lenient.
func scanPWIDDate(s string, urn bool, why *pwidReasons) (t time.Time, leap bool, n int, reason string) {
	year, ok := digitsAt(s, 0, 4)
	var month, day int
	if ok && len(s) > 7 && s[4] == '-' && s[7] == '-' {
		month, ok = digitsAt(s, 5, 2)
		if ok {
			day, ok = digitsAt(s, 8, 2)
		}
	} else {
		ok = false
	}
	if !ok {
		return t, false, 0, fmt.Sprintf("no archived date YYYY-MM-DD at %s", quoteValue(s))
	}
	i := 10
	switch {
	case i < len(s) && (s[i] == '_' || s[i] == 'T'):
		if urn && s[i] == '_' {
			why.add(`"_" (the pwid: form) instead of "T" between date and time`)
		}
	case i < len(s) && s[i] == 't':
		why.add(`lower-case "t" between date and time`)
	default:
		return t, false, 0, fmt.Sprintf("the archived date %s is not followed by \"_\" or \"T\" and a time", quoteValue(s[:i]))
	}
	i++
	var hms [3]int
	for k := range hms {
		if k > 0 {
			// An optional separator before minutes and seconds.
			switch {
			case i < len(s) && s[i] == '.':
				if urn {
					why.add("dots in the time (the pwid: form)")
				}
				i++
			case i+2 < len(s) && s[i] == ':' && isDigit(s[i+1]) && isDigit(s[i+2]):
				if !urn {
					why.add("colons in the time (the urn:pwid: form)")
				}
				i++
			default:
				if urn {
					why.add("no colons in the time (the pwid: form)")
				}
			}
		}
		v, ok := digitsAt(s, i, 2)
		if !ok {
			return t, false, 0, fmt.Sprintf("the archived time at %s is not hh.mm.ssZ", quoteValue(s[10:]))
		}
		hms[k] = v
		i += 2
	}
	switch {
	case i < len(s) && s[i] == 'Z':
		i++
	case i < len(s) && s[i] == 'z':
		why.add(`lower-case "z"`)
		i++
	default:
		why.add(`no "Z" after the time (UTC assumed)`)
	}
	tt, leap, reason := civilTime(year, month, day, hms[0], hms[1], hms[2], 0)
	if reason != "" {
		return t, false, 0, fmt.Sprintf("archived date %s: %s", quoteValue(s[:i]), reason)
	}
	return tt, leap, i, ""
}

// checkPWIDItem validates an archived item: a URI, or 1*unreserved. Items
// that are neither but parse as a URI reference (www.dr.dk/news) are
// lenient.
func checkPWIDItem(item string, why *pwidReasons) string {
	if item == "" {
		return "no archived item after the last \":\""
	}
	for i := 0; i < len(item); i++ {
		if c := item[i]; c <= ' ' || c == 0x7f {
			return fmt.Sprintf("the archived item %s contains white space or a control character", quoteValue(item))
		}
	}
	if hasLonePercent(item) {
		return fmt.Sprintf("the archived item %s has a bad percent-encoding (a %%, not followed by two hex digits)", quoteValue(item))
	}
	if hasURIScheme(item) {
		// The URL parser of every other URL (urls.ParseURL, WHATWG).
		if _, err := urls.ParseURL(item); err != nil {
			return fmt.Sprintf("the archived item %s is not a valid URI (%s)", quoteValue(item), errText(err))
		}
		return ""
	}
	unreserved := true
	for i := 0; i < len(item); i++ {
		if !isUnreserved(item[i]) {
			unreserved = false
			break
		}
	}
	if unreserved {
		return ""
	}
	if _, err := url.Parse(item); err != nil {
		return fmt.Sprintf("the archived item %s is neither a URI nor an archive identifier", quoteValue(item))
	}
	why.add(fmt.Sprintf("the archived item %s is neither a URI (it has no scheme) nor an archive identifier (unreserved characters)", quoteValue(item)))
	return ""
}

// maxPWIDCandidate bounds a pwid candidate found in text.
const maxPWIDCandidate = 4096

// isTextURIByte reports whether ASCII byte c can be part of a URI written
// in prose: printable, not space, not one of < > " { } | \ ^ `.
func isTextURIByte(c byte) bool {
	return c > ' ' && c < 0x7f && !strings.ContainsRune("<>\"{}|\\^`", rune(c))
}

// uriEnd returns the end of the URI-like run of text starting at i: ASCII
// URI characters, and non-ASCII letters, digits and marks (IRIs); it stops
// at white space, quotes (including typographic ones) and other
// punctuation.
func uriEnd(text string, i int) int {
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if !isTextURIByte(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError || !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) {
			return i
		}
		i += size
	}
	return i
}

// trimProse removes trailing characters that end a sentence rather than a
// URI: . , ; : ! ? ' and closing brackets that have no opening one in the
// candidate (so that a Wikipedia-style "(disambiguation)" survives). It is
// linear in len(s).
func trimProse(s string) string {
	open := map[byte]int{'(': 0, '[': 0}
	closing := map[byte]int{')': 0, ']': 0}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[':
			open[c]++
		case ')', ']':
			closing[c]++
		}
	}
	for s != "" {
		switch c := s[len(s)-1]; c {
		case '.', ',', ';', ':', '!', '?', '\'':
			s = s[:len(s)-1]
			continue
		case ')', ']':
			o := byte('(')
			if c == ']' {
				o = '['
			}
			if open[o] < closing[c] {
				closing[c]--
				s = s[:len(s)-1]
				continue
			}
		}
		break
	}
	return s
}

// FindPWIDs returns the pwid: and urn:pwid: URI candidates in free text
// (page text), in order of appearance, duplicates included. The scheme is
// matched case-insensitively and must not be glued to a preceding letter or
// digit (xpwid: is not a pwid). A candidate runs to the first white space or
// character that cannot be in a URI, and is then trimmed of trailing
// punctuation that ends prose rather than the URI (. , ; : ! ? ' and
// unbalanced ) or ]); quotes and > already stop it. Every candidate with
// something after the scheme is returned, also when it breaks the grammar
// (pwid:archive.org, pwid::2016-..., ...), so that ParsePWID reports why;
// the scheme alone (prose like "the pwid: scheme") yields nothing. Work is
// linear in len(text); at most MaxValues candidates of at most 4096 bytes
// each are returned (see FindPWIDsReport for the longer ones).
func FindPWIDs(text string) []string {
	return FindPWIDsReport(text, nil)
}

// FindPWIDsReport is FindPWIDs that calls tooLong(head, n) for each
// candidate longer than 4096 bytes, which is not returned: head is its
// first bytes, n its length.
func FindPWIDsReport(text string, tooLong func(head string, n int)) []string {
	var out []string
	for i := 0; i < len(text) && len(out) < MaxValues; {
		k := strings.IndexAny(text[i:], "pP")
		if k < 0 {
			break
		}
		j := i + k
		if !hasPrefixFold(text[j:], "pwid:") {
			i = j + 1
			continue
		}
		start, prefix := j, len("pwid:")
		if j >= 4 && hasPrefixFold(text[j-4:], "urn:") {
			start, prefix = j-4, len("urn:pwid:")
		}
		end := uriEnd(text, start)
		i = max(end, j+len("pwid:"))
		if start > 0 {
			if c := text[start-1]; isAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.' {
				continue
			}
		}
		cand := trimProse(text[start:end])
		if len(cand) <= prefix {
			continue
		}
		if len(cand) > maxPWIDCandidate {
			if tooLong != nil {
				tooLong(strings.Clone(cand[:64]), len(cand))
			}
			continue
		}
		// A copy, so that the candidates do not pin a huge page text.
		out = append(out, strings.Clone(cand))
	}
	return out
}
