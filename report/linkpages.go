package report

import (
	"fmt"
	"html/template"
	"strconv"

	"github.com/linkrot/linkrot/audit"
)

// Link pages: when a run has more links than the HTML report details
// (maxDetailLinks), WriteDir also writes every link, in page order, into
// static pages of LinksPerPage rows under links/ (links/1.html, ...): plain
// server-rendered tables that a browser shows at once, however large the
// run, and that the report's Links view lists. They carry the report's
// stylesheet and no script; their policy allows that stylesheet only.

// LinksDir is the directory of the link pages inside the report directory.
const LinksDir = "links"

// DefaultLinksPerPage is the number of links on one link page.
const DefaultLinksPerPage = 2000

var linksTemplate = template.Must(template.New("links.html.tmpl").Funcs(template.FuncMap{
	"linkable": linkable,
	"fmtInt":   fmtInt,
}).ParseFS(templateFS, "templates/links.html.tmpl"))

// linkPagesPolicy is the Content-Security-Policy of a link page: its
// inline stylesheet, nothing else.
func linkPagesPolicy() string {
	return "default-src 'none'; style-src " + cssHash + "; base-uri 'none'; form-action 'none'"
}

// linkPageName is the file name of link page n (1-based) inside LinksDir.
func linkPageName(n int) string { return strconv.Itoa(n) + ".html" }

type linkPageView struct {
	Title, CSP, Generator, Generated string
	CSS                              template.CSS
	Site                             []string
	RunID                            int64
	Index, Self                      string
	Page, Pages, Total, First, Last  int
	Prev, Next                       string
	Nav                              []pagerItem
	Rows                             []linkPageRow
}

type pagerItem struct {
	Page         int
	Href         string
	Current, Gap bool
}

// linkPageRow is one row of a link page. Everything the template would
// compute per row is computed here (a million rows go through it).
type linkPageRow struct {
	N                         string // the link's number, formatted
	n                         int
	Page, Text, Href, Element string
	PageLink, HrefLink        bool // linkable
	Verdict, Class            string
	Status                    string // "" without a response
}

// pagerItems returns the page numbers a pager shows: the first and last,
// and those within 3 of the current one, with gaps between.
func pagerItems(cur, pages int) []pagerItem {
	var out []pagerItem
	last := 0
	for p := 1; p <= pages; p++ {
		if p != 1 && p != pages && (p < cur-3 || p > cur+3) {
			continue
		}
		if last != 0 && p != last+1 {
			out = append(out, pagerItem{Gap: true})
		}
		out = append(out, pagerItem{Page: p, Href: linkPageName(p), Current: p == cur})
		last = p
	}
	return out
}

// linkPageCount is the number of link pages for n links.
func linkPageCount(n, perPage int) int {
	if n == 0 {
		return 0
	}
	return (n + perPage - 1) / perPage
}

// writeLinkPages streams every link of the run into link pages of perPage
// rows; create opens page n's file (1-based).
func writeLinkPages(ix *index, perPage int, create func(n int) (*rootedFile, error)) error {
	ds := ix.ds
	pages := linkPageCount(ix.totalLinks, perPage)
	v := linkPageView{
		CSP: linkPagesPolicy(), CSS: template.CSS(reportCSS), Generator: ds.Generator,
		Generated: fmtTime(ds.GeneratedAt), Site: siteOf(&ds.Run), RunID: ds.Run.ID,
		Index: IndexFile, Pages: pages, Total: ix.totalLinks,
		Rows: make([]linkPageRow, 0, perPage),
	}
	n := 0
	lastPage, pageLink := -1, false
	flush := func() error {
		if len(v.Rows) == 0 {
			return nil
		}
		v.Page++
		v.Self = linkPageName(v.Page)
		v.Title = fmt.Sprintf("Links, page %d of %d: linkrot report", v.Page, pages)
		v.First, v.Last = v.Rows[0].n, v.Rows[len(v.Rows)-1].n
		v.Prev, v.Next = "", ""
		if v.Page > 1 {
			v.Prev = linkPageName(v.Page - 1)
		}
		if v.Page < pages {
			v.Next = linkPageName(v.Page + 1)
		}
		v.Nav = pagerItems(v.Page, pages)
		f, err := create(v.Page)
		if err != nil {
			return err
		}
		if err := linksTemplate.Execute(f, v); err != nil {
			f.finish(false)
			return fmt.Errorf("render link page %d: %w", v.Page, err)
		}
		if err := f.finish(true); err != nil {
			return err
		}
		clear(v.Rows)
		v.Rows = v.Rows[:0]
		return nil
	}
	err := ix.eachLink(func(l *Link) error {
		n++
		r := linkPageRow{N: fmtInt(n), n: n, Text: l.Text, Href: l.Href, Element: elementLabel(l.Element, l.Attr), HrefLink: linkable(l.Href)}
		if l.Page >= 0 && l.Page < len(ds.Pages) {
			r.Page = ds.Pages[l.Page].URL
			if l.Page != lastPage {
				lastPage, pageLink = l.Page, linkable(r.Page)
			}
			r.PageLink = pageLink
		}
		verdict := ix.linkVerdict(l)
		r.Verdict, r.Class = string(verdict), verdictClass(verdict)
		if c := ix.checkByTarget[l.TargetID]; c != nil && c.Status != 0 && verdict != audit.VerdictFragmentMissing {
			r.Status = strconv.Itoa(c.Status)
		}
		v.Rows = append(v.Rows, r)
		if len(v.Rows) == perPage {
			return flush()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write link pages: %w", err)
	}
	return flush()
}
