package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// lineHashFields is LineHash as first written, over bytes.Fields.
func lineHashFields(line []byte) string {
	h := sha256.New()
	for i, f := range bytes.Fields(line) {
		if i > 0 {
			h.Write([]byte{' '})
		}
		h.Write(f)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func TestLineHash(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", "  see  [x](https://example.org/x)\t", "a\u00a0b\u2003c\u3000", "\xff \xfe\x85",
		"é 中 😀\v\f\r\n", strings.Repeat("word ", 1000), "a\u0085b\u2028 \u2029c", "\xc2", " \xe2\x80", strings.Repeat("x", 600) + " y",
	} {
		if got, want := LineHash([]byte(s)), lineHashFields([]byte(s)); got != want {
			t.Errorf("LineHash(%q) = %s, want %s", s, got, want)
		}
	}
	if LineHash([]byte("  a   b ")) != LineHash([]byte("a b")) {
		t.Error("white space runs are not collapsed")
	}
}

func FuzzLineHash(f *testing.F) {
	f.Add("  a \u00a0 b\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := LineHash([]byte(s)), lineHashFields([]byte(s)); got != want {
			t.Errorf("LineHash(%q) = %s, want %s", s, got, want)
		}
	})
}
