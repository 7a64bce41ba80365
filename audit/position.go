package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
)

// LineHash identifies the text of a source line for the baseline rule
// (an occurrence is old when the same target occurred before on a line
// with the same text, in any file): the hex SHA-256, cut to 128 bits, of
// the line with its white space trimmed and runs of white space collapsed,
// so re-indenting or re-wrapping spaces does not make a link new.
func LineHash(line []byte) string {
	h := sha256.New()
	first := true
	for f := range bytes.FieldsSeq(line) { // bytes.Fields without its slice
		if !first {
			h.Write(space)
		}
		first = false
		h.Write(f)
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

var space = []byte{' '}
