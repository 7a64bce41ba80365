package extract

import (
	"testing"

	"golang.org/x/net/html/atom"

	"github.com/linkrot/linkrot/internal/pagefacts"
)

// allAtoms returns every atom of the atom package, found by asking each
// offset and length of its table (an atom is offset<<8 | length).
func allAtoms() []atom.Atom {
	var out []atom.Atom
	for off := uint32(0); off < 1<<14; off++ {
		for n := uint32(1); n < 1<<8; n++ {
			a := atom.Atom(off<<8 | n)
			s := a.String()
			if s == "" {
				break
			}
			if atom.Lookup([]byte(s)) == a {
				out = append(out, a)
			}
		}
	}
	return out
}

// TestInfoOf checks the one table of the pass against the tables it
// replaces, for every atom and for names that are no atom.
func TestInfoOf(t *testing.T) {
	atoms := allAtoms()
	if len(atoms) < 300 {
		t.Fatalf("found %d atoms, want the whole table", len(atoms))
	}
	for _, a := range append(atoms, 0) {
		info := infoOf(a)
		_, url := urlAttrs[a]
		for _, c := range []struct {
			name string
			got  bool
			want bool
		}{
			{"url", info&infoURL != 0, url},
			{"formatting", info&infoFormatting != 0, formattingElems[a]},
			{"block", info&infoBlock != 0, blockElements[a]},
			{"closesP", info&infoClosesP != 0, closesP[a]},
			{"blockEnd", info&infoBlockEnd != 0, blockEnd[a]},
			{"special", info&infoSpecial != 0, a != 0 && specialElems[a]},
			{"skipAlways", info.flags()&flagSkipAlways != 0, a != 0 && pagefacts.SkipAlways(a)},
			{"skipBoilerplate", info.flags()&flagSkipBoilerplate != 0, a != 0 && pagefacts.SkipBoilerplate(a)},
			{"inline", info.flags()&flagInline != 0, a != 0 && pagefacts.Inline(a)},
		} {
			if c.got != c.want {
				t.Errorf("infoOf(%q) %s = %v, want %v", a.String(), c.name, c.got, c.want)
			}
		}
	}
	// Names sharing an offset of the atom table with a listed one.
	for _, n := range []string{"abbr", "basefont", "listing", "foreignObject", "inputmode", "selected"} {
		a := atom.Lookup([]byte(n))
		if a == 0 {
			continue
		}
		if got, want := infoOf(a)&infoURL != 0, urlAttrs[a] != nil; got != want {
			t.Errorf("infoOf(%q) url = %v, want %v", n, got, want)
		}
	}
}

// TestPassAttr: the pass keeps the attributes the extractor reads of an
// element whose links are extracted (its URL attributes and the one that
// enables them), and drops the others.
func TestPassAttr(t *testing.T) {
	for _, spec := range urlAttrs {
		names := []string{}
		for _, a := range spec.attrs {
			names = append(names, a.name)
		}
		if spec.only != "" {
			names = append(names, spec.only)
		}
		for _, n := range names {
			if !passAttr(true, []byte(n)) {
				t.Errorf("<%s %s> not kept", spec.element, n)
			}
		}
	}
	for _, c := range []struct {
		all  bool
		name string
		want bool
	}{
		{false, "id", true}, {false, "hidden", true}, {false, "type", true}, {false, "data-adblockkey", true},
		{false, "href", false}, {true, "href", true}, {true, "mset", true}, {true, "data-versionurl", true},
		{true, "class", false}, {true, "title", false}, {false, "style", false}, {true, "HREF", false},
	} {
		if got := passAttr(c.all, []byte(c.name)); got != c.want {
			t.Errorf("passAttr(%v, %q) = %v, want %v", c.all, c.name, got, c.want)
		}
	}
}

// TestEndsName: endsName agrees with tagName on whether an end tag names
// an element.
func TestEndsName(t *testing.T) {
	p := &pass{}
	for _, c := range []struct {
		raw, name string
	}{
		{"p>", "p"}, {"P>", "p"}, {"p >", "p"}, {"p/>", "p"}, {"pre>", "p"}, {"p>", "pre"},
		{"DiV\n>", "div"}, {"clipPath>", "clipPath"}, {"clippath>", "clipPath"}, {"x-Y>", "x-y"},
		{"\u212a>", "k"}, {"é>", "é"}, {"a", "a"}, {">", "a"},
	} {
		_, name := p.tagName([]byte(c.raw))
		if got, want := endsName([]byte(c.raw), c.name), name == c.name; got != want {
			t.Errorf("endsName(%q, %q) = %v, tagName reads %q", c.raw, c.name, got, name)
		}
	}
}
