package extract

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseRefresh(t *testing.T) {
	tests := []struct {
		in string
		ok bool
		// want is "delay" or "delay url@offset".
		want string
	}{
		{"0; url=x", true, "0 x@7"},
		{"0;URL='x'", true, "0 x@7"},
		{`0; url="a b.html" trailing`, true, "0 a b.html@8"},
		{"0; url='unclosed", true, "0 unclosed@8"},
		{"5, x", true, "5 x@3"},
		{"5 x", true, "5 x@2"},
		{"0", true, "0"},
		{"30;", true, "30"},
		{"  7  ", true, "7"},
		{"1.5; url=x", true, "1 x@9"},
		{".5;url=x", true, "0 x@7"},
		{"0; url = x", true, "0 x@9"},
		{"0; URL\t=\n'x'", true, "0 x@10"},
		{"0;url=", true, "0 @6"},
		{"0; 'quoted.html'", true, "0 quoted.html@4"},
		// "url" not followed by "=" is the start of the URL.
		{"0; urlx.html", true, "0 urlx.html@3"},
		{"0; u.html", true, "0 u.html@3"},
		{"0; ur", true, "0 ur@3"},
		{"0; url", true, "0 url@3"},
		{"0;;x", true, "0 ;x@2"},
		{"0 ; url=x", true, "0 x@8"},
		{"99999999999999999999; url=x", true, "2147483647 x@26"},
		// Invalid: browsers ignore them.
		{"", false, ""},
		{"url=x", false, ""},
		{"; url=x", false, ""},
		{"garbage", false, ""},
		{"5x", false, ""},
		{"-1; url=x", false, ""},
		{"   ", false, ""},
	}
	for _, tt := range tests {
		r, ok := ParseRefresh(tt.in)
		if ok != tt.ok {
			t.Errorf("ParseRefresh(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		got := fmt.Sprint(r.Delay)
		if r.HasURL {
			got += fmt.Sprintf(" %s@%d", r.URL, r.Offset)
		}
		if got != tt.want {
			t.Errorf("ParseRefresh(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzParseRefresh checks that ParseRefresh never fails, that a URL is
// found at its offset after a delay, and that content a browser would act
// on starts with a digit or a dot after whitespace.
func FuzzParseRefresh(f *testing.F) {
	for _, s := range []string{"0; url=x", "0;URL='x'", "5, x", "0", "url=x", "1.5 , 'a b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, ok := ParseRefresh(in)
		if !ok {
			if r.HasURL {
				t.Errorf("invalid content with a URL: %+v", r)
			}
			return
		}
		lead := strings.TrimLeft(in, " \t\n\f\r")
		if lead == "" || !(lead[0] >= '0' && lead[0] <= '9' || lead[0] == '.') {
			t.Errorf("ParseRefresh(%q) accepted content without a delay", in)
		}
		if r.Delay < 0 {
			t.Errorf("delay %d", r.Delay)
		}
		if r.HasURL && (r.Offset < 0 || r.Offset+len(r.URL) > len(in) || in[r.Offset:r.Offset+len(r.URL)] != r.URL) {
			t.Errorf("URL %q at offset %d of %q", r.URL, r.Offset, in)
		}
	})
}
