package report

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// jw appends compact JSON to a byte slice. It exists because the HTML
// report embeds one row array per link (100,000 of them in large runs) and
// building them as []any for encoding/json costs several times the memory.
// Strings are escaped like encoding/json with HTML escaping on: <, >, & and
// U+2028/U+2029 as \u escapes, invalid UTF-8 as U+FFFD, so the output is
// also safe inside a <script> element.
type jw struct{ b []byte }

func (w *jw) raw(s string) { w.b = append(w.b, s...) }
func (w *jw) comma()       { w.b = append(w.b, ',') }

func (w *jw) int(n int64) { w.b = strconv.AppendInt(w.b, n, 10) }

func (w *jw) num(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = strconv.AppendFloat(w.b, f, 'g', 4, 64)
}

func (w *jw) bool(v bool) {
	if v {
		w.b = append(w.b, '1')
	} else {
		w.b = append(w.b, '0')
	}
}

// time writes t as Unix seconds, or 0 when zero (the script formats it).
func (w *jw) time(t time.Time) {
	if t.IsZero() {
		w.b = append(w.b, '0')
		return
	}
	w.b = strconv.AppendInt(w.b, t.Unix(), 10)
}

const hexDigits = "0123456789abcdef"

func (w *jw) str(s string) {
	b := append(w.b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	w.b = append(b, '"')
}

func itoa(n int) string { return strconv.Itoa(n) }
