package extract

import (
	"fmt"

	"golang.org/x/net/html/atom"

	"github.com/linkrot/linkrot/internal/pagefacts"
)

// elemInfo is what the one pass needs to know of an element name: the
// element tables it consults (urlAttrs, formattingElems, blockElements,
// closesP, blockEnd, specialElems and pagefacts' SkipAlways,
// SkipBoilerplate and Inline), looked up once per tag in one table
// instead of a map each.
type elemInfo uint16

const (
	infoURL elemInfo = 1 << iota // urlAttrs holds it
	infoFormatting
	infoBlock // blockElements
	infoClosesP
	infoBlockEnd
	infoSpecial
	infoSkipAlways
	infoSkipBoilerplate
	infoInline
)

// flags returns the elemFlags of the info.
func (i elemInfo) flags() elemFlags {
	var f elemFlags
	if i&infoSkipAlways != 0 {
		f |= flagSkipAlways
	}
	if i&infoSkipBoilerplate != 0 {
		f |= flagSkipBoilerplate
	}
	if i&infoInline != 0 {
		f |= flagInline
	}
	return f
}

// infoSlot holds the atoms that start at one offset of the atom table
// (an atom is its offset and length: "a" and "abbr" share offset 0).
type infoSlot [infoPerSlot]struct {
	a    atom.Atom
	info elemInfo
}

const infoPerSlot = 2

// infoTable is indexed by an atom's offset (atom.Atom>>8).
var infoTable = buildInfoTable()

// infoOf returns the info of the element name a (0 for an unknown name
// or one in none of the tables).
func infoOf(a atom.Atom) elemInfo {
	if o := int(a >> 8); o < len(infoTable) {
		s := &infoTable[o]
		if s[0].a == a {
			return s[0].info
		}
		if s[1].a == a {
			return s[1].info
		}
	}
	return 0
}

func buildInfoTable() []infoSlot {
	m := map[atom.Atom]elemInfo{}
	for a := range urlAttrs {
		m[a] |= infoURL
	}
	for _, set := range []struct {
		elems map[atom.Atom]bool
		bit   elemInfo
	}{
		{formattingElems, infoFormatting}, {blockElements, infoBlock}, {closesP, infoClosesP},
		{blockEnd, infoBlockEnd}, {specialElems, infoSpecial},
	} {
		for a, ok := range set.elems {
			if ok {
				m[a] |= set.bit
			}
		}
	}
	for _, a := range pagefactsElems {
		if pagefacts.SkipAlways(a) {
			m[a] |= infoSkipAlways
		}
		if pagefacts.SkipBoilerplate(a) {
			m[a] |= infoSkipBoilerplate
		}
		if pagefacts.Inline(a) {
			m[a] |= infoInline
		}
	}
	var t []infoSlot
	for a, info := range m {
		if a == 0 || info == 0 {
			continue
		}
		o := int(a >> 8)
		for len(t) <= o {
			t = append(t, infoSlot{})
		}
		placed := false
		for k := range t[o] {
			if t[o][k].a == 0 {
				t[o][k].a, t[o][k].info = a, info
				placed = true
				break
			}
		}
		if !placed {
			panic(fmt.Sprintf("extract: more than %d element names at atom offset %d", infoPerSlot, o))
		}
	}
	return t
}

// pagefactsElems are the element names pagefacts' SkipAlways,
// SkipBoilerplate or Inline may accept: every HTML element name (the
// tests check infoOf against the functions for every atom).
var pagefactsElems = []atom.Atom{
	atom.A, atom.Abbr, atom.Address, atom.Area, atom.Article, atom.Aside, atom.Audio, atom.B, atom.Base,
	atom.Bdi, atom.Bdo, atom.Big, atom.Blockquote, atom.Body, atom.Br, atom.Button, atom.Canvas,
	atom.Caption, atom.Center, atom.Cite, atom.Code, atom.Col, atom.Colgroup, atom.Data, atom.Datalist,
	atom.Dd, atom.Del, atom.Details, atom.Dfn, atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Dt, atom.Em,
	atom.Embed, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Font, atom.Footer, atom.Form, atom.Frame,
	atom.Frameset, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Head, atom.Header,
	atom.Hgroup, atom.Hr, atom.Html, atom.I, atom.Iframe, atom.Img, atom.Input, atom.Ins, atom.Kbd,
	atom.Label, atom.Legend, atom.Li, atom.Link, atom.Main, atom.Map, atom.Mark, atom.Math, atom.Menu,
	atom.Meta, atom.Meter, atom.Nav, atom.Nobr, atom.Noscript, atom.Object, atom.Ol, atom.Optgroup,
	atom.Option, atom.Output, atom.P, atom.Param, atom.Picture, atom.Pre, atom.Progress, atom.Q, atom.Rp,
	atom.Rt, atom.Ruby, atom.S, atom.Samp, atom.Script, atom.Search, atom.Section, atom.Select,
	atom.Slot, atom.Small, atom.Source, atom.Span, atom.Strike, atom.Strong, atom.Style, atom.Sub,
	atom.Summary, atom.Sup, atom.Svg, atom.Table, atom.Tbody, atom.Td, atom.Template, atom.Textarea,
	atom.Tfoot, atom.Th, atom.Thead, atom.Time, atom.Title, atom.Tr, atom.Track, atom.Tt, atom.U, atom.Ul,
	atom.Var, atom.Video, atom.Wbr,
}
