// Package extract turns an HTML page into linkrot's extraction: every link
// and resource reference with its Robust Links attributes (data-originalurl,
// data-versiondate, data-versionurl), its mset attribute, the page's
// rel="identifier" and rel="cite-as" links (from <link> and HTTP Link
// headers) and every pwid URI, with diagnostics for invalid values.
//
// A page is read in one pass of golang.org/x/net/html's Tokenizer, without
// a parse tree (onepass.go): a model of the HTML tree construction rules
// that matter here (implied html/head/body, implied end tags of p, li, dt,
// dd, option, void and raw-text elements, tables whose content stays in
// place, template content, SVG) yields the extraction, the link positions (from the
// tokens' raw bytes) and the page evidence's inputs (pagefacts.Facts)
// exactly as html.Parse and a walk of its tree would. A page holding a
// construct the pass does not model (misnested formatting elements,
// foster-parented table content, content after </body>, table parts in
// a <template>, MathML and SVG integration points, <base>, NUL bytes, a pwid in the
// text, ...: the list is in onepass.go) falls back to html.Parse, counted
// by FallbackPages; the differential tests and FuzzOnePass hold the two
// paths equal.
//
// The package is pure: no network, no colly, no storage. The grammars of the
// specs in ../shared/specs are implemented here by hand, because they are the
// heart of linkrot and no library implements these drafts.
package extract
