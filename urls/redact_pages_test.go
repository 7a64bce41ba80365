package urls_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// redactPage has the shape of a stored page: nested structs, slices of
// structs, a pointer and a map of strings.
type redactPage struct {
	URL       string
	Links     []redactLink
	Redirects []struct{ From, To string }
	Evidence  *struct{ Headers map[string]string }
}

type redactLink struct {
	Href   string
	Robust *struct{ OriginalRaw string }
}

func TestRedactStrings(t *testing.T) {
	p := &redactPage{
		URL:       "https://u:pw1@h/",
		Links:     []redactLink{{Href: "https://u:pw2@h/", Robust: &struct{ OriginalRaw string }{"https://u:pw3@h/"}}},
		Redirects: []struct{ From, To string }{{From: "https://h/", To: "https://u:pw4@h/"}},
		Evidence:  &struct{ Headers map[string]string }{Headers: map[string]string{"Location": "https://u:pw5@h/"}},
	}
	urls.RedactStrings(p)
	for _, s := range []string{p.URL, p.Links[0].Href, p.Links[0].Robust.OriginalRaw, p.Redirects[0].To, p.Evidence.Headers["Location"]} {
		if s != "https://u:***@h/" {
			t.Errorf("got %q, want it redacted", s)
		}
	}
}

// redactNode is a recursive type for TestRedactStrings_Shapes.
type redactNode struct {
	Next  *redactNode
	Kids  []redactNode
	Count int
	Name  string
}

type redactName string

// TestRedactStrings_Shapes: the walk skips only what cannot hold a string
// (it caches which fields can): strings behind interfaces, nested slices,
// maps of slices, named string types, recursive types and embedded
// structs are redacted; unexported fields and map keys are left alone.
func TestRedactStrings_Shapes(t *testing.T) {
	const secret, redacted = "https://u:pw@h/", "https://u:***@h/"
	type Embedded struct{ E string }
	type shapes struct {
		Embedded
		N       int
		When    audit.Time
		Any     any
		AnyPtr  any
		Nested  [][]string
		Arr     [2]string
		MapList map[string][]string
		Named   map[string]redactName
		Tree    *redactNode
		hidden  string
		Keys    map[string]int
	}
	v := &shapes{
		Embedded: Embedded{E: secret},
		Any:      secret,
		AnyPtr:   &audit.Redirect{To: secret},
		Nested:   [][]string{{"x", secret}},
		Arr:      [2]string{secret, "y"},
		MapList:  map[string][]string{"k": {secret}},
		Named:    map[string]redactName{"k": secret, "plain": "ok"},
		Tree:     &redactNode{Next: &redactNode{Name: secret}, Kids: []redactNode{{Name: secret}}},
		hidden:   secret,
		Keys:     map[string]int{secret: 1},
	}
	urls.RedactStrings(v)
	for i, s := range []string{v.E, v.Any.(string), v.AnyPtr.(*audit.Redirect).To, v.Nested[0][1], v.Arr[0],
		v.MapList["k"][0], string(v.Named["k"]), v.Tree.Next.Name, v.Tree.Kids[0].Name} {
		if s != redacted {
			t.Errorf("string %d = %q, want it redacted", i, s)
		}
	}
	if v.hidden != secret || v.Keys[secret] != 1 || v.Named["plain"] != "ok" {
		t.Errorf("unexported field, map key or clean value changed: %+v", v)
	}
}

// TestRedactStrings_CleanAllocs: a page without a password costs the
// walk no allocation (the store redacts every page and check it writes).
func TestRedactStrings_CleanAllocs(t *testing.T) {
	p := &audit.Page{
		Extraction: audit.Extraction{
			URL:   "https://h/",
			Links: []audit.Link{{Href: "https://h/a", Rel: []string{"x"}}, {Href: "https://h/b", Robust: &audit.Robust{OriginalRaw: "https://h/c"}}},
		},
		Redirects: []audit.Redirect{{From: "https://h/", To: "https://h/x"}},
		Evidence:  &audit.PageEvidence{Headers: map[string]string{"Location": "https://h/", "Content-Type": "text/html"}},
	}
	if n := testing.AllocsPerRun(20, func() { urls.RedactStrings(p) }); n != 0 {
		t.Errorf("%v allocations per clean page, want 0", n)
	}
}

// TestRedactStrings_Nested covers what the per-type walk must still reach
// (and what it must leave alone) beyond a page: recursive types,
// interfaces, maps of structs, arrays, named string types, unexported
// fields, and types that hold no string at all.
func TestRedactStrings_Nested(t *testing.T) {
	const secret, redacted = "https://u:pw@h/", "https://u:***@h/"
	type named string
	type node struct {
		Val  string
		Next *node
		Kids []node
	}
	type inner struct{ S named }
	type shapes struct {
		List     *node
		Any      any
		AnyPtr   any
		Map      map[string]inner
		Arr      [2]string
		Named    named
		NoString struct {
			N int
			B []byte
		}
		hidden string
	}
	v := &shapes{
		List:   &node{Val: secret, Next: &node{Val: secret, Kids: []node{{Val: secret}}}},
		Any:    secret,
		AnyPtr: &inner{S: secret},
		Map:    map[string]inner{"k": {S: secret}},
		Arr:    [2]string{"plain", secret},
		Named:  secret,
		hidden: secret,
	}
	v.NoString.B = []byte(secret)
	urls.RedactStrings(v)
	for name, got := range map[string]string{
		"list":       v.List.Val,
		"list.next":  v.List.Next.Val,
		"list.kids":  v.List.Next.Kids[0].Val,
		"any":        v.Any.(string),
		"any ptr":    string(v.AnyPtr.(*inner).S),
		"map value":  string(v.Map["k"].S),
		"array":      v.Arr[1],
		"named type": string(v.Named),
	} {
		if got != redacted {
			t.Errorf("%s: %q, want %q", name, got, redacted)
		}
	}
	if v.Arr[0] != "plain" {
		t.Errorf("array: %q changed", v.Arr[0])
	}
	if v.hidden != secret || string(v.NoString.B) != secret {
		t.Errorf("unexported field or bytes changed: %q %q (RedactStrings reaches exported strings only)", v.hidden, v.NoString.B)
	}
	if urls.HoldsStrings(reflect.TypeOf(v.NoString)) {
		t.Error("a struct of an int and a []byte: plan says it holds a string")
	}
}

func BenchmarkRedactStrings_Page(b *testing.B) {
	p := &audit.Page{Extraction: audit.Extraction{URL: "https://h/"}}
	for i := range 50 {
		p.Links = append(p.Links, audit.Link{Href: fmt.Sprintf("https://h/%d", i), RawHref: "/x", Text: "text", Rel: []string{"a"}})
	}
	for b.Loop() {
		urls.RedactStrings(p)
	}
}
