package report

import "github.com/linkrot/linkrot/audit"

// maxInvalidRows bounds the rows of the HTML report's invalid-URL table;
// the rest are counted, and the link table lists them all.
const maxInvalidRows = 200

// invalidURLView is one link whose URL does not parse, as the overview of
// the HTML report lists it: where it is, what it says and why it cannot be
// followed.
type invalidURLView struct {
	Where   string // path:line:col, or the page URL with the position
	Page    string
	Href    string // the URL attribute as written
	Text    string
	Message string // "invalid URL: <reason>"
}

// invalidURLViews returns the rows of the invalid-URL table (at most
// maxInvalidRows, in finding order) and the number left out.
func invalidURLViews(ix *index) (rows []invalidURLView, more int) {
	for i := range ix.ds.Findings {
		f := &ix.ds.Findings[i]
		if f.Verdict != audit.VerdictInvalidURL {
			continue
		}
		if len(rows) == maxInvalidRows {
			more++
			continue
		}
		r := invalidURLView{Where: ix.location(f.LinkID, f.PageURL).String(), Page: f.PageURL, Href: f.Target, Message: f.Message}
		if li, ok := ix.linkIdx[f.LinkID]; ok && f.LinkID != 0 {
			r.Text = ix.links[li].Text
		}
		rows = append(rows, r)
	}
	return rows, more
}
