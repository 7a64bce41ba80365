// Package pagefacts holds what the crawler's one pass over an HTML page
// (crawler/extract) reads for the checker's page evidence (check.Observe),
// and the element rules of the main text both sides share: the crawler
// cannot import the checker or the drift measure, so the pass hands its
// results over in these leaf types, and textsim reads its skip and inline
// tables from here so that the pass and the tree path cannot drift apart.
package pagefacts

import (
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Parsed is a body the caller already decoded and read (the crawler's
// extraction), offered to check.Observe so that it need not read it
// again. It is used only when Decoded is exactly the document the checker
// would read. Doc is html.Parse of Decoded (nil when the one pass read
// the page without a tree); Facts is what the one pass read (nil when the
// page was parsed into a tree instead).
type Parsed struct {
	Decoded []byte
	Doc     *html.Node
	Facts   *Facts
	// Read, when not nil, reads another decoded document (the prefix of
	// a page longer than the checker's body cap) the way Facts was read,
	// or returns nil when that document needs the tree: the checker then
	// parses it with html.Parse, which costs more.
	Read func(decoded []byte) *Facts
}

// Facts is the evidence input the one pass read from a page, equal to
// what the checker's tree functions compute from html.Parse of the same
// page (the differential tests of crawler/extract assert it).
type Facts struct {
	// MainText is the main text before white space is collapsed: its
	// words are those of textsim.MainTextOf of the tree.
	MainText []byte
	// Anchors are the fragment targets (check's anchorsOf): the id of
	// every element and the name of every <a>, in document order without
	// repeats, at most MaxAnchors.
	Anchors []string
	// Title is the text of the first <title> (NodeText rules), HasTitle
	// whether there is one the soft-404 signals read.
	Title    string
	HasTitle bool
	// H1 are the texts (NodeText rules) of the <h1> elements without the
	// hidden attribute, in document order, that are not inside another
	// <h1>: as many as it takes to have MaxH1 non-empty ones.
	H1 []string
	// Signals are the elements the parking fingerprints read, in
	// document order.
	Signals []Signal
}

// SignalKind is what a Signal holds.
type SignalKind uint8

// The kinds of Signal.
const (
	AdblockKey SignalKind = iota // <html data-adblockkey> not empty; Value empty
	ScriptSrc                    // <script src>, not empty
	ScriptText                   // an inline <script>'s text (its first text child)
	FrameSrc                     // <iframe src>, <frame src>, <embed src> (may be empty)
	ObjectData                   // <object data> (may be empty)
	Refresh                      // <meta http-equiv=refresh content> (may be empty)
	AnchorHref                   // <a href> (may be empty)
)

// Signal is an element the parking fingerprints read.
type Signal struct {
	Kind  SignalKind
	Value string
}

// Bounds the checker's tree functions apply, which the pass applies too.
const (
	// MaxAnchors bounds the anchors of a page.
	MaxAnchors = 20000
	// NodeTextMax is the length from which NodeText stops adding text
	// nodes (4 × the checker's signal text bound).
	NodeTextMax = 4 * 300
	// MaxH1 is how many non-empty headings the signals keep.
	MaxH1 = 3
	// ScriptMax is how much of an inline script the signals read.
	ScriptMax = 64 << 10
)

// SkipAlways reports elements whose content is never main text.
func SkipAlways(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Select,
		atom.Head, atom.Iframe, atom.Object, atom.Textarea:
		return true
	}
	return false
}

// SkipBoilerplate reports the page-chrome elements skipped below a main
// text root.
func SkipBoilerplate(a atom.Atom) bool {
	switch a {
	case atom.Nav, atom.Header, atom.Footer, atom.Aside:
		return true
	}
	return false
}

// Inline reports elements whose text runs on with its neighbours in the
// main text.
func Inline(a atom.Atom) bool {
	switch a {
	case atom.A, atom.Abbr, atom.B, atom.Bdi, atom.Bdo, atom.Cite, atom.Code, atom.Data,
		atom.Dfn, atom.Em, atom.Font, atom.I, atom.Kbd, atom.Mark, atom.Q, atom.S, atom.Samp,
		atom.Small, atom.Span, atom.Strong, atom.Sub, atom.Sup, atom.Time, atom.U, atom.Var,
		atom.Wbr, atom.Strike, atom.Tt, atom.Big, atom.Label, atom.Ins, atom.Del:
		return true
	}
	return false
}
