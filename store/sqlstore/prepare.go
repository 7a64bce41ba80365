package sqlstore

import (
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// preparedPage is what PreparePage computed of a page: the page was
// redacted (URL passwords are "***"), and packed is the deflated text of
// evidence as it was then.
type preparedPage struct {
	evidence *audit.PageEvidence
	text     string // evidence.Text that packed holds
	packed   []byte
}

// PreparePage implements store.PagePreparer: it redacts URL passwords in
// everything the page carries (urls.RedactStrings, as writePages does)
// and deflates its evidence text, the two parts of saving a page that
// need nothing but the page. It is safe for concurrent use.
func (db *DB) PreparePage(p *audit.Page) {
	if p == nil {
		return
	}
	p.Prepared = nil // never walked by the redaction below
	urls.RedactStrings(p)
	prep := &preparedPage{}
	if e := p.Evidence; e != nil {
		if packed, err := deflateText(e.Text); err == nil { // an error: the writer reports it
			prep.evidence, prep.text, prep.packed = e, e.Text, packed
		}
	}
	p.Prepared = prep
}

// prepared returns what PreparePage computed of p, or nil.
func prepared(p *audit.Page) *preparedPage {
	prep, _ := p.Prepared.(*preparedPage)
	return prep
}

// packedText returns the deflated text of the evidence of the page p:
// PreparePage's when it was computed from that evidence as it is, else
// computed now.
func packedText(p *audit.Page) ([]byte, error) {
	e := p.Evidence
	if prep := prepared(p); prep != nil && prep.evidence == e && prep.packed != nil && prep.text == e.Text {
		return prep.packed, nil
	}
	return deflateText(e.Text)
}
