package audit

// PageEvidence is what the crawl saw of a page's response that a check of
// the page's URL needs, so that the checker can judge the site's own pages
// from the crawl's response instead of fetching them a second time (see
// check.Known). The crawler fills it for every page that got a
// response; the fingerprint fields only for a 2xx HTML page.
//
// Everything here is computed by check.Observe with the checker's own
// code, over the bytes the checker would have read (its body cap), so that
// a verdict, fingerprint or soft-404 comparison made from it is the one a
// fetch would have given.
type PageEvidence struct {
	// Headers are the response header fields kept as evidence (as
	// Check.Headers); ETag and LastModified the validators (as
	// Check.ETag and Check.LastModified).
	Headers      map[string]string `json:"headers,omitempty"`
	ETag         string            `json:"etag,omitempty"`
	LastModified string            `json:"last_modified,omitempty"`
	// Challenge names the bot-challenge signal of the response ("" when it
	// is not one).
	Challenge string `json:"challenge,omitempty"`

	// BodyCap is the body cap the evidence was computed under (the
	// checker's MaxBody).
	BodyCap int64 `json:"body_cap,omitempty"`

	// HTML reports a 2xx HTML response: the fields below are set.
	HTML bool `json:"html,omitempty"`
	// BodyBytes is the decoded bytes the fingerprint covers, BodyTruncated
	// that the body went on past them.
	BodyBytes     int64 `json:"body_bytes,omitempty"`
	BodyTruncated bool  `json:"body_truncated,omitempty"`
	// SHA256, SimHash and Words are the content fingerprint (as in Check).
	SHA256  string `json:"sha256,omitempty"`
	SimHash uint64 `json:"simhash,omitempty"`
	Words   int    `json:"words,omitempty"`
	// Anchors are the page's id and <a name> values (bounded, as
	// Check.Anchors).
	Anchors []string `json:"anchors,omitempty"`
	// Text is the page's main-text words (textsim.Words of
	// textsim.MainText) joined by single spaces, for the soft-404
	// comparison: at most 64 KiB (the checker's cap on kept text), cut on a word
	// boundary; TextCapped reports the page had more.
	Text       string `json:"text,omitempty"`
	TextCapped bool   `json:"text_capped,omitempty"`
	// Signals are the parts of the page the soft-404 classifier reads
	// besides its main text (title, first headings, parking-service
	// fingerprints); nil for a page crawled by an older linkrot.
	Signals *PageSignals `json:"signals,omitempty"`
}

// PageSignals are what the soft-404 classifier (check) reads of an
// HTML page besides its main text: computed once from the parsed page, by
// the checker for a page it fetches and by Observe for a crawled one.
type PageSignals struct {
	// Title is the text of the first <title>, H1 that of the first <h1>
	// elements (at most 3), each collapsed and cut to 300 bytes.
	Title string   `json:"title,omitempty"`
	H1    []string `json:"h1,omitempty"`
	// Parking are the parking-service fingerprints found in the markup
	// (a script, frame or refresh to a parking host, a marketplace link),
	// each "kind:value" (bounded).
	Parking []string `json:"parking,omitempty"`
}
