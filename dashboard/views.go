package dashboard

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
	"github.com/linkrot/linkrot/urls"
)

// view is what one page renders: the layout's fields and the page's own
// data.
type view struct {
	Title string
	// Tmpl names the page's template ("overview", "broken", ...).
	Tmpl string
	// Nav is the active tab; Run the run the tables show (0: none).
	Nav string
	Run int64
	// Live is set when a run is in progress: the page refreshes itself
	// without JavaScript and follows /events with it.
	Live bool
	Data any
	// fresh is true when Data holds only values read for this request:
	// then it is redacted before rendering (cached run data is redacted
	// when loaded).
	fresh bool
	// Filled in by render.
	Prefix    string
	Actions   bool
	CSRF      string
	Generator string
	Query     string
}

type overviewData struct {
	Running []store.RunProgress
	Latest  *audit.Run
	Stats   audit.RunStats
	Cards   []card
	// Maintenance is the link-maintenance card (claims, backlinks).
	Maintenance []card
	Chart       trendChart
	Runs        []store.RunSummary
}

type card struct {
	Num        int
	Label      string
	Class, URL string
}

func (h *handler) overview(r *http.Request) (*view, error) {
	ctx := r.Context()
	v := &view{Title: "linkrot dashboard", Tmpl: "overview", Nav: "overview", fresh: true}
	d := &overviewData{}
	v.Data = d
	var err error
	if d.Running, err = h.db.RunningRuns(ctx); err != nil {
		return nil, err
	}
	v.Live = len(d.Running) > 0
	if d.Maintenance, err = h.maintenanceCards(ctx); err != nil {
		return nil, err
	}
	if d.Runs, err = h.db.RunSummaries(ctx, runsListed); err != nil {
		return nil, err
	}
	run, err := h.pickRun(r)
	if err != nil || run == nil {
		return v, err
	}
	d.Latest = run
	v.Run = run.ID
	trend, err := h.db.Trend(ctx, run.ID, trendRuns)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(trend))
	for i, p := range trend {
		ids[i] = p.ID
	}
	unprotected, err := h.db.UnprotectedLinks(ctx, ids)
	if err != nil {
		return nil, err
	}
	d.Chart = newTrendChart(trend, unprotected)
	rd, err := h.runData(ctx, run)
	if err != nil {
		return nil, err
	}
	d.Stats = rd.stats
	var broken, moved, frag, findings, drifted int
	for _, row := range rd.brokenRows {
		switch {
		case row.Verdict == audit.VerdictMoved:
			moved++
		case row.Verdict == audit.VerdictFragmentMissing:
			frag++
		default:
			broken++
		}
	}
	for _, fs := range rd.findings {
		findings += len(fs)
	}
	for _, b := range rd.drift {
		if b == audit.BandMajor || b == audit.BandOffTopic {
			drifted++
		}
	}
	cls := func(n int, bad string) string {
		if n == 0 {
			return "good"
		}
		return bad
	}
	runQ := "run=" + strconv.FormatInt(run.ID, 10)
	d.Cards = []card{
		{broken, "targets with a broken verdict", cls(broken, "bad"), "/broken?" + runQ},
		{moved, "moved targets to update", cls(moved, "warn"), "/broken?verdict=moved&" + runQ},
		{frag, "targets linked with a missing #fragment", cls(frag, "warn"), "/broken?verdict=fragment-missing&" + runQ},
		{findings, "findings (links on pages)", cls(findings, "bad"), "/links?verdict=broken&" + runQ},
		{drifted, "drifted targets (major, off-topic)", cls(drifted, "warn"), "/broken?" + runQ},
		{unprotected[run.ID], "unprotected links (to http(s) pages, without Robust Links or mset)", "info", "/links?robust=none&" + runQ},
	}
	return v, nil
}

// tableData is a filtered, paginated table of a run.
type tableData struct {
	Run     audit.Run
	Filters []filter
	Q       string
	Pager   pager
	Rows    any
	Empty   string
	// Dismissed counts the dismissed rows the filters match, shown
	// only when ShowDismissed; DismissedURL shows or hides them.
	Dismissed     int
	ShowDismissed bool
	DismissedURL  string
}

func (h *handler) table(r *http.Request, name string) (*view, *runData, *tableData, error) {
	run, err := h.pickRun(r)
	if err != nil {
		return nil, nil, nil, err
	}
	v := &view{Tmpl: name, Nav: name}
	td := &tableData{Q: strings.TrimSpace(r.URL.Query().Get("q"))}
	if len(td.Q) > maxQuery {
		return nil, nil, nil, errBadRequest
	}
	v.Data = td
	if run == nil {
		return v, nil, td, nil
	}
	v.Run = run.ID
	td.Run = *run
	rd, err := h.runData(r.Context(), run)
	if err != nil {
		return nil, nil, nil, err
	}
	return v, rd, td, nil
}

// brokenView is a row of the broken-links table.
type brokenView struct {
	brokenRow
	LinkedFrom []linkView
	More       int
	Drift      string
	// Dismissed is set when every finding of the row is dismissed.
	Dismissed bool
}

func (h *handler) broken(r *http.Request) (*view, error) {
	v, rd, td, err := h.table(r, "broken")
	if err != nil || rd == nil {
		return v, err
	}
	v.Title = "Broken links · run " + strconv.FormatInt(rd.run.ID, 10)
	q := r.URL.Query()
	want := map[string]string{"verdict": q.Get("verdict"), "host": q.Get("host"), "confirmed": q.Get("confirmed")}
	needle := strings.ToLower(td.Q)
	dis, err := h.dismissals(r.Context())
	if err != nil {
		return nil, err
	}
	show, nDismissed := showDismissed(q), 0
	confirmedOf := func(row *brokenRow) string {
		switch {
		case row.Verdict == audit.VerdictFragmentMissing:
			return "not applicable"
		case row.Confirmed:
			return "confirmed"
		}
		return "not confirmed"
	}
	var verdicts, hosts, confirmed []string
	var rows []brokenView
	for i := range rd.brokenRows {
		row := &rd.brokenRows[i]
		verdicts = append(verdicts, string(row.Verdict))
		hosts = append(hosts, row.Target.Host)
		confirmed = append(confirmed, confirmedOf(row))
		if want["verdict"] != "" && string(row.Verdict) != want["verdict"] ||
			want["host"] != "" && row.Target.Host != want["host"] ||
			want["confirmed"] != "" && confirmedOf(row) != want["confirmed"] {
			continue
		}
		if needle != "" {
			hay := []string{row.Target.URL, row.Evidence}
			for _, li := range row.Links {
				hay = append(hay, rd.links[li].PageURL, rd.links[li].Text, rd.links[li].Href)
			}
			if !matches(needle, hay...) {
				continue
			}
		}
		bv := brokenView{brokenRow: *row, Drift: rd.drift[row.Target.ID]}
		var live []int
		for _, li := range row.Links {
			if !rd.dismissedLink(dis, li) {
				live = append(live, li)
			}
		}
		if len(row.Links) > 0 && len(live) == 0 {
			nDismissed++
			if !show {
				continue
			}
			bv.Dismissed = true
		}
		from := live
		if show {
			from = row.Links
		}
		for j, li := range from {
			if j == 2 {
				bv.More = len(from) - 2
				break
			}
			lv := rd.linkView(li)
			lv.Dismissed = rd.dismissedLink(dis, li)
			bv.LinkedFrom = append(bv.LinkedFrom, lv)
		}
		rows = append(rows, bv)
	}
	td.Filters = []filter{
		newFilter("verdict", "Verdict", want["verdict"], verdicts, verdictOrder()),
		newFilter("host", "Host", want["host"], hosts, nil),
		newFilter("confirmed", "Confirmed", want["confirmed"], confirmed, []string{"confirmed", "not confirmed", "not applicable"}),
	}
	from, to, p, err := paginate(r.URL, len(rows))
	if err != nil {
		return nil, err
	}
	td.Pager, td.Rows = p, rows[from:to]
	dismissToggle(r, td, nDismissed)
	td.Empty = "No broken or moved targets. Well kept!"
	if len(rd.brokenRows) > 0 {
		td.Empty = "No row matches these filters."
	}
	return v, nil
}

// linkView is one link as a table row shows it.
type linkView struct {
	Index    int
	PageURL  string
	Text     string
	Href     string
	TargetID int64
	Target   string
	Element  string
	Verdict  audit.Verdict
	Class    string
	Robust   string
	Findings []store.FindingRef
	// Dismissed is set when the finding of this link was dismissed.
	Dismissed bool
}

func (d *runData) linkView(i int) linkView {
	l := &d.links[i]
	v := d.verdictOfLn[i]
	lv := linkView{Index: i, PageURL: l.PageURL, Text: l.Text, Href: l.Href, TargetID: l.TargetID,
		Element: l.Element, Verdict: v, Class: vclass(v), Robust: d.robustOfLn[i], Findings: d.findings[l.LinkID]}
	if t, ok := d.targets[l.TargetID]; ok {
		lv.Target = t.URL
	}
	if lv.Target == "" {
		lv.Target = l.Href
	}
	return lv
}

func (h *handler) links(r *http.Request) (*view, error) {
	v, rd, td, err := h.table(r, "links")
	if err != nil || rd == nil {
		return v, err
	}
	v.Title = "Links · run " + strconv.FormatInt(rd.run.ID, 10)
	q := r.URL.Query()
	wantV, wantH, wantE, wantR := q.Get("verdict"), q.Get("host"), q.Get("element"), q.Get("robust")
	needle := strings.ToLower(td.Q)
	dis, err := h.dismissals(r.Context())
	if err != nil {
		return nil, err
	}
	show, nDismissed := showDismissed(q), 0
	var verdicts, hosts, elements, robust []string
	var rows []linkView
	for i := range rd.links {
		l := &rd.links[i]
		vd := rd.verdictOfLn[i]
		host := rd.targets[l.TargetID].Host
		verdicts, hosts, elements = append(verdicts, string(vd)), append(hosts, host), append(elements, l.Element)
		robust = append(robust, rd.robustOfLn[i])
		switch {
		case wantV == "broken" && !vd.Broken(),
			wantV != "" && wantV != "broken" && string(vd) != wantV,
			wantH != "" && host != wantH,
			wantE != "" && l.Element != wantE,
			wantR != "" && rd.robustOfLn[i] != wantR,
			!matches(needle, l.PageURL, l.Text, l.Href):
			continue
		}
		lv := rd.linkView(i)
		if lv.Dismissed = rd.dismissedLink(dis, i); lv.Dismissed {
			nDismissed++
			if !show {
				continue
			}
		}
		rows = append(rows, lv)
	}
	td.Filters = []filter{
		newFilter("verdict", "Verdict", wantV, verdicts, verdictOrder(), option{Value: "broken", Label: "every broken verdict"}),
		newFilter("host", "Host", wantH, hosts, nil),
		newFilter("element", "Element", wantE, elements, nil),
		newFilter("robust", "Robustness", wantR, robust, []string{"Robust Links and mset", "Robust Links", "mset", "none"}),
	}
	from, to, p, err := paginate(r.URL, len(rows))
	if err != nil {
		return nil, err
	}
	td.Pager, td.Rows = p, rows[from:to]
	dismissToggle(r, td, nDismissed)
	td.Empty = "No row matches these filters."
	if len(rd.links) == 0 {
		td.Empty = "No links were recorded in this run."
	}
	return v, nil
}

// pageView is a crawled page as the pages table shows it.
type pageView struct {
	*audit.Page
	StatusClass string
	Class       string
	Links       int
	Broken      int
}

func (h *handler) pages(r *http.Request) (*view, error) {
	v, rd, td, err := h.table(r, "pages")
	if err != nil || rd == nil {
		return v, err
	}
	v.Title = "Pages · run " + strconv.FormatInt(rd.run.ID, 10)
	q := r.URL.Query()
	wantS, wantB := q.Get("status"), q.Get("broken")
	needle := strings.ToLower(td.Q)
	var statuses, brokens []string
	var rows []pageView
	for _, p := range rd.pages {
		pv := pageView{Page: p, StatusClass: statusClassOf(p), Links: len(rd.pageLinks[p.URL]), Broken: rd.pageBroken[p.URL]}
		pv.Class = "good"
		switch {
		case p.FetchError != "" || p.Status >= 400 || p.Status == 0:
			pv.Class = "bad"
		case p.Status >= 300:
			pv.Class = "info"
		}
		b := "none broken"
		if pv.Broken > 0 {
			b = "with broken links"
		}
		statuses, brokens = append(statuses, pv.StatusClass), append(brokens, b)
		if wantS != "" && pv.StatusClass != wantS || wantB != "" && b != wantB || !matches(needle, p.URL, p.Title) {
			continue
		}
		rows = append(rows, pv)
	}
	td.Filters = []filter{
		newFilter("status", "Status", wantS, statuses, nil),
		newFilter("broken", "Broken links", wantB, brokens, []string{"with broken links", "none broken"}),
	}
	from, to, p, err := paginate(r.URL, len(rows))
	if err != nil {
		return nil, err
	}
	td.Pager, td.Rows = p, rows[from:to]
	td.Empty = "No row matches these filters."
	if len(rd.pages) == 0 {
		td.Empty = "No pages were crawled in this run."
	}
	return v, nil
}

type targetData struct {
	Target    *store.TargetInfo
	Latest    *audit.Check
	Class     string
	History   audit.TargetHistory
	Tracked   bool
	Timeline  []timelineDot
	LinkRun   int64
	Links     []targetLinkView
	LinksMore bool
	Checks    []checkView
	Mementos  []audit.Memento
	Drifts    []driftView
	// Claims and Live are the link-maintenance section: UNLINKR/LINKMOD
	// claims about the target and serve's live checks of it.
	Claims []claimView
	Live   []liveView
}

type timelineDot struct {
	Class, Title string
}

type targetLinkView struct {
	store.TargetLink
	Findings []store.FindingRef
}

type checkView struct {
	audit.Check
	Class    string
	Evidence string
}

type driftView struct {
	audit.Drift
	Class string
}

func (h *handler) target(r *http.Request) (*view, error) {
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, errBadRequest
	}
	t, err := h.db.Target(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &targetData{Target: t}
	v := &view{Title: "Target " + urls.RedactText(t.URL), Tmpl: "target", Data: d, fresh: true}
	checks, err := h.db.TargetChecks(ctx, id, targetChecks)
	if err != nil {
		return nil, err
	}
	for _, c := range checks {
		d.Checks = append(d.Checks, checkView{Check: c, Class: vclass(c.Verdict), Evidence: statusLine(&c)})
	}
	if len(checks) > 0 {
		d.Latest = &checks[0]
		d.Class = vclass(checks[0].Verdict)
	}
	hs, err := h.db.TargetHistories(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	d.History, d.Tracked = hs[id]
	timeline := slices.Clone(checks)
	slices.Reverse(timeline)
	for _, c := range timeline {
		d.Timeline = append(d.Timeline, timelineDot{Class: vclass(c.Verdict),
			Title: "run " + strconv.FormatInt(c.RunID, 10) + " · " + fmtTime(c.CheckedAt) + " · " + string(c.Verdict)})
	}
	links, err := h.db.TargetLinks(ctx, id, targetLinks+1)
	if err != nil {
		return nil, err
	}
	if len(links) > targetLinks {
		links, d.LinksMore = links[:targetLinks], true
	}
	if len(links) > 0 {
		d.LinkRun = links[0].RunID
		v.Run = d.LinkRun
		fs, err := h.db.RunFindingRefs(ctx, d.LinkRun)
		if err != nil {
			return nil, err
		}
		byLink := map[int64][]store.FindingRef{}
		for _, f := range fs {
			if f.TargetID == id {
				byLink[f.LinkID] = append(byLink[f.LinkID], f)
			}
		}
		for _, l := range links {
			d.Links = append(d.Links, targetLinkView{TargetLink: l, Findings: byLink[l.LinkID]})
		}
	}
	if d.Mementos, err = h.db.TargetMementos(ctx, id, targetArchive); err != nil {
		return nil, err
	}
	drifts, err := h.db.TargetDrifts(ctx, id, targetArchive)
	if err != nil {
		return nil, err
	}
	for _, dr := range drifts {
		d.Drifts = append(d.Drifts, driftView{Drift: dr, Class: bclass(dr.Band)})
	}
	if err := h.maintenanceOfTarget(ctx, d); err != nil {
		return nil, err
	}
	return v, nil
}

type sitePageData struct {
	Run   audit.Run
	Page  *audit.Page
	Class string
	Links []linkView
	// Backlinks are the verified LINK and Webmention sources linking to
	// the page.
	Backlinks []audit.Backlink
}

func (h *handler) sitePage(r *http.Request) (*view, error) {
	u := r.URL.Query().Get("url")
	if u == "" || len(u) > maxPageURL {
		return nil, errBadRequest
	}
	run, err := h.pickRun(r)
	if err != nil {
		return nil, err
	}
	if run == nil {
		return nil, errNotFound
	}
	rd, err := h.runData(r.Context(), run)
	if err != nil {
		return nil, err
	}
	i, ok := rd.pageIdx[u]
	if !ok {
		return nil, errNotFound
	}
	p := rd.pages[i]
	d := &sitePageData{Run: rd.run, Page: p, Class: "good"}
	if p.FetchError != "" || p.Status >= 400 || p.Status == 0 {
		d.Class = "bad"
	}
	for _, li := range rd.pageLinks[u] {
		d.Links = append(d.Links, rd.linkView(li))
	}
	if d.Backlinks, err = h.db.PageBacklinks(r.Context(), p.URL, pageBacklinks); err != nil {
		return nil, err
	}
	for i := range d.Backlinks {
		d.Backlinks[i].Source = urls.RedactText(d.Backlinks[i].Source)
	}
	return &view{Title: "Page " + p.URL, Tmpl: "page", Nav: "pages", Run: run.ID, Data: d}, nil
}

type searchData struct {
	Q       string
	Targets []store.SearchHit
	Pages   []store.SearchHit
	Limit   int
}

func (h *handler) search(r *http.Request) (*view, error) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(q) > maxQuery {
		return nil, errBadRequest
	}
	d := &searchData{Q: q, Limit: searchLimit}
	v := &view{Title: "Search", Tmpl: "search", Nav: "search", Data: d, fresh: true}
	if q == "" {
		return v, nil
	}
	v.Title = "Search: " + q
	var err error
	if d.Targets, err = h.db.SearchTargets(r.Context(), q, searchLimit); err != nil {
		return nil, err
	}
	if d.Pages, err = h.db.SearchPages(r.Context(), q, searchLimit); err != nil {
		return nil, err
	}
	// A URL password (in a database from before the store redacted them)
	// is neither shown nor searchable: a hit only through it would tell
	// its characters one query at a time.
	lq := strings.ToLower(q)
	keep := func(hits []store.SearchHit) []store.SearchHit {
		out := hits[:0]
		for _, hit := range hits {
			hit.URL = urls.RedactText(hit.URL)
			if strings.Contains(strings.ToLower(hit.URL), lq) {
				out = append(out, hit)
			}
		}
		return out
	}
	d.Targets, d.Pages = keep(d.Targets), keep(d.Pages)
	return v, nil
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
