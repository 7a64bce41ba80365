package crawler

import (
	"net/http"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/check"
	"github.com/linkrot/linkrot/crawler/extract"
)

// evidence records what a check of the page's URL needs of its response
// (check.Observe), so that the checker judges the site's own pages from the
// crawl instead of fetching each a second time: the evidence header fields
// and validators, the bot-challenge signal, and for a 2xx HTML page the
// SHA-256 and main-text SimHash of the body, its anchors and its main text
// (capped), all over the bytes the checker would read (CheckMaxBody). h is
// the header as capTransport passed it on: the server's Content-Type is
// put back first. doc is the page as the extraction parsed it (nil when it
// was not): reused when it is the document the checker would parse, so a
// page is usually parsed once for both.
func (cr *crawl) evidence(p *audit.Page, h http.Header, body []byte, doc *extract.Document) *audit.PageEvidence {
	// Only the fields the checker reads of a response.
	orig := make(http.Header, 4)
	for _, k := range check.ResponseFields {
		if v := h.Values(k); len(v) > 0 {
			orig[http.CanonicalHeaderKey(k)] = v
		}
	}
	if ct := h.Values(headerOrigContentType); len(ct) > 0 {
		orig["Content-Type"] = ct
	} else {
		delete(orig, "Content-Type")
	}
	var parsed *check.ParsedHTML
	if doc != nil {
		parsed = &check.ParsedHTML{Decoded: doc.Decoded, Doc: doc.Root}
	}
	return check.Observe(p.Status, orig, body, !p.Truncated, cr.opts.CheckMaxBody, parsed)
}
