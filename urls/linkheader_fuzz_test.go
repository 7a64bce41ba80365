package urls

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseLinkHeader parses two field values and checks the invariants of
// the result. Seeds: every table case of TestParseLinkHeader, plus inputs
// found by fuzzing.
func FuzzParseLinkHeader(f *testing.F) {
	for _, tc := range linkHeaderCases {
		switch len(tc.fields) {
		case 0:
			f.Add("", "")
		case 1:
			f.Add(tc.fields[0], "")
		default:
			f.Add(tc.fields[0], strings.Join(tc.fields[1:], ", "))
		}
	}
	for _, s := range []string{
		`<a>; title="\"\"\"`,
		`x",x",x"`,
		"<a>; t=\"\\\n\", <b>",
		"<a>;;;, ,<b>;",
		`<a>; title*=UTF-8''; rel*=UTF-8''x`,
		`<a>; *=UTF-8''%41`,
		"<a>; rel=\"a\tb\"",
		"<\x00>, <a\x7f>",
	} {
		f.Add(s, "")
	}
	// Inputs found by fuzzing.
	f.Add("<>;rel=\"\xf7\"", "0") // non-UTF-8 relation type (a test bug: strings.ToUpper rewrote it)
	f.Add("<\u2000>", "0")        // Unicode space in the target (a test bug: strings.TrimSpace trims it)

	base, err := url.Parse("http://example.org/dir/page?q=1#f")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		links, err := ParseLinkHeader(a, b)
		checkLinkInvariants(t, links)
		checkLinkErrors(t, err, len(a)+len(", ")+len(b))

		// Fields are independent: parsing them together is parsing each.
		la, errA := ParseLinkHeader(a)
		lb, errB := ParseLinkHeader(b)
		if want := append(append([]WebLink(nil), la...), lb...); !reflect.DeepEqual(links, nonEmpty(want)) {
			t.Fatalf("ParseLinkHeader(a, b) != ParseLinkHeader(a) + ParseLinkHeader(b)")
		}
		// RFC 9110 §5.3: combining two clean field lines with ", " does not
		// change their meaning.
		if errA == nil && errB == nil {
			combined, errC := ParseLinkHeader(a + ", " + b)
			if errC != nil || !reflect.DeepEqual(combined, links) {
				t.Fatalf("combined field %q: %v\n got %s\nwant %s", a+", "+b, errC, fmtLinks(combined), fmtLinks(links))
			}
		}

		// String output parses back, without error, to the same links.
		s := joinLinks(links)
		again, err := ParseLinkHeader(s)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", s, err)
		}
		if !reflect.DeepEqual(again, links) {
			t.Fatalf("round trip via %q:\n got %s\nwant %s", s, fmtLinks(again), fmtLinks(links))
		}

		// ResolveLinks never panics, keeps the count and does not touch its
		// input.
		before := joinLinks(links)
		if r := ResolveLinks(base, links); len(r) != len(links) {
			t.Fatalf("ResolveLinks returned %d links for %d", len(r), len(links))
		}
		if joinLinks(links) != before {
			t.Fatal("ResolveLinks modified its input")
		}
	})
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

func nonEmpty(l []WebLink) []WebLink {
	if len(l) == 0 {
		return nil
	}
	return l
}

func checkLinkInvariants(t *testing.T, links []WebLink) {
	t.Helper()
	if links != nil && len(links) == 0 {
		t.Fatal("empty non-nil result")
	}
	for _, l := range links {
		if strings.ContainsAny(l.URI, "<>") {
			t.Fatalf("URI %q contains '<' or '>'", l.URI)
		}
		for i := 0; i < len(l.URI); i++ {
			if isCTL(l.URI[i]) {
				t.Fatalf("URI %q contains a control character", l.URI)
			}
		}
		if strings.Trim(l.URI, " ") != l.URI {
			t.Fatalf("URI %q has surrounding space", l.URI)
		}
		if l.Rel != nil && len(l.Rel) == 0 {
			t.Fatalf("empty non-nil Rel in %+v", l)
		}
		for i, r := range l.Rel {
			if r == "" {
				t.Fatalf("empty relation type in %q", l.Rel)
			}
			for j := 0; j < len(r); j++ {
				if r[j] <= ' ' || r[j] == 0x7f {
					t.Fatalf("relation type %q contains whitespace or a control character", r)
				}
			}
			if !strings.Contains(r, ":") && asciiLower(r) != r {
				t.Fatalf("registered relation type %q is not lower-case", r)
			}
			for _, prev := range l.Rel[:i] {
				if asciiEqualFold(prev, r) {
					t.Fatalf("duplicate relation type %q in %q", r, l.Rel)
				}
			}
			if !l.HasRel(r) || !l.HasRel(asciiUpper(r)) {
				t.Fatalf("HasRel(%q) false for %q", r, l.Rel)
			}
		}
		if l.Params != nil && len(l.Params) == 0 {
			t.Fatalf("empty non-nil Params in %+v", l)
		}
		for k, v := range l.Params {
			if k == "" || k == "rel" || asciiLower(k) != k {
				t.Fatalf("bad parameter name %q", k)
			}
			for j := 0; j < len(k); j++ {
				if !isTchar(k[j]) {
					t.Fatalf("parameter name %q is not a token", k)
				}
			}
			if strings.HasSuffix(k, "*") && !utf8.ValidString(v) {
				t.Fatalf("decoded %s value %q is not UTF-8", k, v)
			}
		}
	}
}

func checkLinkErrors(t *testing.T, err error, combinedLen int) {
	t.Helper()
	if err == nil {
		return
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T is not an errors.Join", err)
	}
	errs := joined.Unwrap()
	if len(errs) == 0 || len(errs) > maxLinkHeaderErrors+1 {
		t.Fatalf("%d errors", len(errs))
	}
	for _, e := range errs {
		var le *linkHeaderError
		if !errors.As(e, &le) {
			t.Fatalf("%T is not a *linkHeaderError", e)
		}
		if le.Reason == "" || le.Offset < 0 || le.Offset > combinedLen || len(le.Excerpt) > linkExcerptLen {
			t.Fatalf("bad error %+v (input length %d)", le, combinedLen)
		}
	}
}
