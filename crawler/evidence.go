package crawler

import (
	"maps"
	"net/http"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler/extract"
	"github.com/linkrot/linkrot/internal/pagefacts"
)

// evidence records what a check of the page's URL needs of its response
// (Options.Observe), so that the checker judges the site's own pages from
// the crawl instead of fetching each a second time. h is the header as
// capTransport passed it on: the server's Content-Type is put back first.
// doc is the page as the extraction read it (nil when it was not): its
// one pass's facts, or its tree when it fell back to html.Parse, offered
// for reuse, so a page is read once for both.
func (cr *crawl) evidence(p *audit.Page, h http.Header, body []byte, doc *extract.Document) *audit.PageEvidence {
	if cr.opts.Observe == nil {
		return nil
	}
	orig := maps.Clone(h)
	if ct := h.Values(headerOrigContentType); len(ct) > 0 {
		orig["Content-Type"] = ct
	} else {
		delete(orig, "Content-Type")
	}
	delete(orig, headerOrigContentType)
	delete(orig, headerFile)
	if doc != nil {
		return cr.opts.Observe(p.Status, orig, body, !p.Truncated, &pagefacts.Parsed{Decoded: doc.Decoded, Doc: doc.Root, Facts: doc.Facts, Read: extract.Facts})
	}
	return cr.opts.Observe(p.Status, orig, body, !p.Truncated, nil)
}
