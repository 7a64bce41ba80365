// Package markdown extracts links from Markdown documents (CommonMark with
// the GitHub Flavored Markdown extensions) the way package extract does
// from HTML: inline links, reference links, autolinks (<…> and GFM's bare
// www. and http(s) links), images, and links in raw HTML, which is run
// through the HTML extractor so that Robust Links and mset attributes in
// it count. Every link carries its line and UTF-16 column in the source.
//
// It also renders the document to HTML with GitHub's heading anchors
// ("## Install Go" becomes id="install-go"), so that #fragment links to a
// Markdown file are checked like links to an HTML page.
//
// Parsing is github.com/yuin/goldmark's: a maintained, CommonMark-compliant
// parser whose AST records the byte offset of every inline link, so
// positions come from the parser rather than from searching the text.
package markdown
