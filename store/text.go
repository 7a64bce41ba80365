package store

import (
	"strings"
	"unicode/utf8"
)

// ValidText returns s as the store keeps text, on every engine: each NUL
// byte, and each byte that is not part of a valid UTF-8 sequence, is
// replaced with U+FFFD (one replacement per byte); everything else is
// unchanged. PostgreSQL's text type cannot hold either, and one rule for
// both engines means they store and return the same strings, and that
// any other client of the database reads honest text.
//
// Each engine applies it to every string it binds, at the one place
// where values enter the driver. Raw bytes that are not text are bound
// as []byte (BLOB, bytea) and left alone.
func ValidText(s string) string {
	if IsValidText(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1, r == 0:
			b.WriteRune(utf8.RuneError)
			n = 1
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// IsValidText reports whether ValidText leaves s as it is: s holds no NUL
// and is valid UTF-8.
func IsValidText(s string) bool { return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) }
