package store

import (
	"testing"
	"unicode/utf8"
)

func TestValidText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"é\u2028\U0010FFFE", "é\u2028\U0010FFFE"},
		{"a\x00b\x00", "a\uFFFDb\uFFFD"},
		{"\xff\xfe", "\uFFFD\uFFFD"},
		{"\xc3\x28", "\uFFFD("},
		{"x\xed\xa0\x80y", "x\uFFFD\uFFFD\uFFFDy"},
	} {
		got := ValidText(c.in)
		if got != c.want {
			t.Errorf("ValidText(%q) = %q, want %q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) || ValidText(got) != got {
			t.Errorf("ValidText(%q) = %q: not valid text, or not a fixed point", c.in, got)
		}
	}
}
