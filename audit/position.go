package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"unicode"
	"unicode/utf8"
)

// LineHash identifies the text of a source line for the baseline rule
// (an occurrence is old when the same target occurred before on a line
// with the same text, in any file): the hex SHA-256, cut to 128 bits, of
// the line with its white space trimmed and runs of white space collapsed,
// so re-indenting or re-wrapping spaces does not make a link new.
//
// White space is what bytes.Fields splits on (unicode.IsSpace). The
// collapsed line is built in one buffer and hashed once: hashing field
// by field cost a Write per word (9% of extracting a typical page).
func LineHash(line []byte) string {
	var stack [512]byte
	b := stack[:0]
	gap := false // white space seen since the last field byte
	for i := 0; i < len(line); {
		c := line[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] != 0 {
				gap = true
				i++
				continue
			}
			// A run of ASCII field bytes is copied at once; it is found
			// eight bytes at a time while all of them are in 0x21..0x7f
			// (no byte below 0x21, none with the high bit).
			j := i + 1
			for j+8 <= len(line) {
				w := binary.LittleEndian.Uint64(line[j:])
				if ((w-0x2121212121212121)|w)&0x8080808080808080 != 0 {
					break
				}
				j += 8
			}
			for j < len(line) && line[j] < utf8.RuneSelf && asciiSpace[line[j]] == 0 {
				j++
			}
			if gap && len(b) > 0 {
				b = append(b, ' ')
			}
			gap = false
			b = append(b, line[i:j]...)
			i = j
			continue
		}
		r, size := utf8.DecodeRune(line[i:])
		if unicode.IsSpace(r) {
			gap = true
		} else {
			if gap && len(b) > 0 {
				b = append(b, ' ')
			}
			gap = false
			b = append(b, line[i:i+size]...)
		}
		i += size
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// asciiSpace marks the ASCII bytes unicode.IsSpace accepts.
var asciiSpace = [256]uint8{'\t': 1, '\n': 1, '\v': 1, '\f': 1, '\r': 1, ' ': 1}
