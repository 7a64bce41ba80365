package extract

import (
	"golang.org/x/net/html/atom"
)

// attrForm is how an attribute holds its URLs.
type attrForm uint8

const (
	formURL     attrForm = iota // one URL, possibly surrounded by spaces
	formSrcset                  // image candidates (ParseSrcset)
	formRefresh                 // a declarative refresh (ParseRefresh)
)

// urlAttr is an attribute holding URLs.
type urlAttr struct {
	name string
	form attrForm
}

// elementSpec is an element whose attributes hold URLs a browser fetches
// or follows. Its kind, and whether its targets are pages, are in
// audit.LinkRules.
type elementSpec struct {
	element string
	// attrs are the URL attributes in the order their links are
	// recorded; the first is the element's main URL, which Robust Links
	// and mset attributes annotate.
	attrs []urlAttr
	// hyperlink: the links are navigations (audit.Link.Resource false)
	// whose anchor text is the element's text.
	hyperlink bool
	// only, when set, is an attribute that must have the value onlyValue
	// (ASCII case-insensitive) for the element to have URLs: input
	// type=image, meta http-equiv=refresh.
	only, onlyValue string
	// emptyIsDocument: an empty URL is the document itself (a link to
	// the page); for the other elements an empty URL fetches nothing.
	emptyIsDocument bool
}

// maxURLAttrs is the most URL attributes an element has.
const maxURLAttrs = 2

// urlAttrs are the elements linkrot records links of.
var urlAttrs = map[atom.Atom]*elementSpec{
	atom.A:          {element: "a", attrs: []urlAttr{{"href", formURL}}, hyperlink: true, emptyIsDocument: true},
	atom.Area:       {element: "area", attrs: []urlAttr{{"href", formURL}}, hyperlink: true, emptyIsDocument: true},
	atom.Meta:       {element: "meta", attrs: []urlAttr{{"content", formRefresh}}, hyperlink: true, only: "http-equiv", onlyValue: "refresh"},
	atom.Blockquote: {element: "blockquote", attrs: []urlAttr{{"cite", formURL}}, hyperlink: true},
	atom.Q:          {element: "q", attrs: []urlAttr{{"cite", formURL}}, hyperlink: true},
	atom.Del:        {element: "del", attrs: []urlAttr{{"cite", formURL}}, hyperlink: true},
	atom.Ins:        {element: "ins", attrs: []urlAttr{{"cite", formURL}}, hyperlink: true},
	atom.Link:       {element: "link", attrs: []urlAttr{{"href", formURL}}},
	atom.Img:        {element: "img", attrs: []urlAttr{{"src", formURL}, {"srcset", formSrcset}}},
	atom.Script:     {element: "script", attrs: []urlAttr{{"src", formURL}}},
	atom.Iframe:     {element: "iframe", attrs: []urlAttr{{"src", formURL}}},
	atom.Source:     {element: "source", attrs: []urlAttr{{"src", formURL}, {"srcset", formSrcset}}},
	atom.Video:      {element: "video", attrs: []urlAttr{{"src", formURL}, {"poster", formURL}}},
	atom.Audio:      {element: "audio", attrs: []urlAttr{{"src", formURL}}},
	atom.Track:      {element: "track", attrs: []urlAttr{{"src", formURL}}},
	atom.Embed:      {element: "embed", attrs: []urlAttr{{"src", formURL}}},
	atom.Object:     {element: "object", attrs: []urlAttr{{"data", formURL}}},
	atom.Input:      {element: "input", attrs: []urlAttr{{"src", formURL}}, only: "type", onlyValue: "image"},
}

// urlAttrByName is urlAttrs by element name.
var urlAttrByName = func() map[string]*elementSpec {
	m := make(map[string]*elementSpec, len(urlAttrs))
	for _, s := range urlAttrs {
		m[s.element] = s
	}
	return m
}()

// blank reports whether a URL is empty once the URL parser strips its
// leading and trailing C0 controls and spaces.
func blank(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > ' ' {
			return false
		}
	}
	return true
}

// equalFoldASCIIString reports whether s equals the lower-case ASCII t,
// ignoring ASCII case only (the HTML standard's "ASCII
// case-insensitive": no Unicode folding of the long s or Kelvin sign).
func equalFoldASCIIString(s, t string) bool {
	return len(s) == len(t) && hasPrefixFold(s, t)
}
