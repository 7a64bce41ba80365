package sqlite

import (
	"testing"
	"unicode/utf8"
)

func TestPGEscape(t *testing.T) {
	for _, s := range []string{"", "plain", "a\x00b\x00", "\xff\xfe\xc3\x28 invalid \xed\xa0\x80 UTF-8",
		string(pgEscape), string(pgEscape) + "x41", "é\x00" + string(pgEscape) + "0"} {
		e := pgEscapeString(s)
		if !utf8.ValidString(e) {
			t.Errorf("escape(%q) = %q: not UTF-8", s, e)
		}
		for i := 0; i < len(e); i++ {
			if e[i] == 0 {
				t.Errorf("escape(%q) = %q holds NUL", s, e)
			}
		}
		if got := pgUnescapeString(e); got != s {
			t.Errorf("unescape(escape(%q)) = %q", s, got)
		}
		if a, b := pgEscapeString(s+"#"+s), pgEscapeString(s)+"#"+pgEscapeString(s); a != b {
			t.Errorf("escape does not commute with concatenation: %q vs %q", a, b)
		}
	}
	if s := "plain text"; pgEscapeString(s) != s {
		t.Error("ordinary string changed")
	}
}
