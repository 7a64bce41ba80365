package maintain

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseRequestLine(t *testing.T) {
	cases := []struct {
		line string
		want Request
		err  bool
	}{
		{"LINK http://a/ http://b/", Request{Method: "LINK", Source: "http://a/", Target: "http://b/"}, false},
		{"LINK http://a/ http://b/ LINKMOD", Request{Method: "LINK", Source: "http://a/", Target: "http://b/", LinkMod: true}, false},
		// Any amount of white space is one separator (section 11).
		{"  UNLINK \t http://a/   http://b/\thttp://c/ ", Request{Method: "UNLINK", Source: "http://a/", Target: "http://b/", Repl: "http://c/"}, false},
		{"UNLINKR http://a/ http://b/ http://c/", Request{Method: "UNLINKR", Source: "http://a/", Target: "http://b/", Repl: "http://c/"}, false},
		{"LINKMOD http://a/ http://b/", Request{Method: "LINKMOD", Source: "http://a/", Target: "http://b/"}, false},
		{"LINK http://a/ http://b/ linkmod", Request{Method: "LINK", Source: "http://a/", Target: "http://b/", LinkMod: true}, false},
		{"LINK http://a/ http://b/ http://c/", Request{}, true}, // LINK's third token is LINKMOD
		{"LINKMOD http://a/ http://b/ http://c/", Request{}, true},
		{"link http://a/ http://b/", Request{}, true}, // methods are case-sensitive, as in HTTP
		{"GET / HTTP/1.1", Request{}, true},
		{"UNLINK http://a/", Request{}, true},
		{"UNLINKR a b c d", Request{}, true},
		{"", Request{}, true},
		{"LINK http://a/\x00 http://b/", Request{}, true},
		{"LINK http://a/ \xff", Request{}, true},
		{"LINK http://a/" + strings.Repeat("x", MaxLineLen) + " http://b/", Request{}, true},
	}
	for _, c := range cases {
		got, err := ParseRequestLine(c.line)
		if (err != nil) != c.err {
			t.Errorf("ParseRequestLine(%q) error %v, want error %v", c.line, err, c.err)
			continue
		}
		if err != nil && !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseRequestLine(%q) error %v does not wrap ErrSyntax", c.line, err)
		}
		if err == nil && got != c.want {
			t.Errorf("ParseRequestLine(%q) = %+v, want %+v", c.line, got, c.want)
		}
	}
}

func TestIsDraftLine(t *testing.T) {
	for line, want := range map[string]bool{
		"LINK http://a/ http://b/":      true,
		"UNLINKR http://a/ HTTP/1.1":    false,
		"UNLINKR /a HTTP/1.0":           false,
		"GET / HTTP/1.1":                false,
		"LINKMOD http://a/ http://b/  ": true,
		"":                              false,
	} {
		if got := IsDraftLine([]byte(line)); got != want {
			t.Errorf("IsDraftLine(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestValidateURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"http://example.org/a":                                 true,
		"https://example.org:8443/a?b#c":                       true,
		"ftp://example.org/":                                   false,
		"javascript:alert(1)":                                  false,
		"http:///path":                                         false,
		"http://user:pw@example.org/":                          false,
		"http://127.0.0.1:6666\\@1.1.1.1/":                     false, // parser confusion (pitfalls.md)
		"http://example.org:80x/":                              false,
		"//example.org/":                                       false,
		"http://exa mple.org/":                                 false,
		"http://example.org/" + strings.Repeat("a", MaxURLLen): false,
		"": false,
	} {
		_, err := ValidateURL("source", raw)
		if (err == nil) != ok {
			t.Errorf("ValidateURL(%q) error %v, want ok %v", raw, err, ok)
		}
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"http://a/":            "http://a/",
		"http://a/\x1b[31mred": `http://a/\x1b[31mred`,
		"line\nbreak":          `line\x0abreak`,
		"bidi\u202eevil":       `bidi\xe2\x80\xaeevil`,
		"bad\xffbyte":          `bad\xffbyte`,
		"é":                    "é",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseRequestLine: the parser of untrusted request lines never
// panics, and what it accepts is a draft line that round-trips.
func FuzzParseRequestLine(f *testing.F) {
	for _, s := range []string{
		"LINK http://a.example/x http://b.example/y",
		"LINK http://a.example/x http://b.example/y LINKMOD",
		"UNLINK http://a/ http://b/ http://c/",
		"UNLINKR  http://a/\thttp://b/ http://c/",
		"LINKMOD http://a/ http://b/",
		"UNLINKR http://a/ HTTP/1.1",
		"GET / HTTP/1.1",
		"LINK \x00 \xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		r, err := ParseRequestLine(line)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not wrap ErrSyntax", err)
			}
			return
		}
		if !IsDraftMethod(r.Method) || r.Source == "" || r.Target == "" || !utf8.ValidString(line) {
			t.Fatalf("accepted %q as %+v", line, r)
		}
		again, err := ParseRequestLine(r.String())
		if err != nil || again != r {
			t.Fatalf("round trip of %q: %+v, %v", line, again, err)
		}
		// Answers quote the URLs: they stay one printable line.
		if s := sanitizeLine(r.Source); strings.ContainsAny(s, "\r\n") {
			t.Fatalf("sanitizeLine kept a line break: %q", s)
		}
		_, _ = ValidateURL("source", r.Source)
	})
}
