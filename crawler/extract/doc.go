// Package extract turns an HTML page into linkrot's extraction: every link
// and resource reference with its Robust Links attributes (data-originalurl,
// data-versiondate, data-versionurl), its mset attribute, the page's
// rel="identifier" and rel="cite-as" links (from <link> and HTTP Link
// headers) and every pwid URI, with diagnostics for invalid values.
//
// The package is pure: no network, no colly, no storage. The grammars of the
// specs in ../shared/specs are implemented here by hand, because they are the
// heart of linkrot and no library implements these drafts.
package extract
