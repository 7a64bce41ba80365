package dashboard

// Link maintenance in the dashboard (linkrot serve): the
// UNLINKR/LINKMOD claims and live checks of a target, the backlinks of a
// page, the overview's card, and dismissed findings hidden from the run
// tables. Every string here came from a notification sent over the
// internet: html/template escapes it, and only http(s) URLs become links.

import (
	"context"
	"net/http"
	"net/url"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// Bounds of the link-maintenance lists of one page.
const (
	targetClaims  = 100
	targetLive    = 100
	pageBacklinks = 500
)

// dismissedParam is the query parameter that shows dismissed findings in
// /broken and /links ("1"); without it they are hidden.
const dismissedParam = "dismissed"

// claimView is a claim as the target page shows it.
type claimView struct {
	store.WireClaim
	Class  string // of Verdict
	RClass string // of ReplacementVerdict
}

// liveView is a live check as the target page shows it.
type liveView struct {
	audit.LiveCheck
	Class string
	Why   string
}

// liveReasons names the reasons of live checks.
var liveReasons = map[string]string{
	audit.LiveUnlinkrTarget:      "UNLINKR: the target",
	audit.LiveUnlinkrReplacement: "UNLINKR: the replacement",
	audit.LiveLinkmod:            "LINKMOD drift check",
	audit.LiveRecheck:            "dashboard re-check",
}

// maintenanceOfTarget fills the link-maintenance section of a target page.
func (h *handler) maintenanceOfTarget(ctx context.Context, d *targetData) error {
	claims, err := h.db.TargetClaims(ctx, d.Target.URL, targetClaims)
	if err != nil {
		return err
	}
	for _, c := range claims {
		d.Claims = append(d.Claims, claimView{WireClaim: c, Class: vclass(c.Verdict), RClass: vclass(c.ReplacementVerdict)})
	}
	live, err := h.db.LiveChecks(ctx, d.Target.URL, targetLive)
	if err != nil {
		return err
	}
	for _, c := range live {
		why := liveReasons[c.Reason]
		if why == "" {
			why = c.Reason
		}
		d.Live = append(d.Live, liveView{LiveCheck: c, Class: vclass(c.Verdict), Why: why})
	}
	return nil
}

// dismissals is the set of dismissed findings, keyed by page and target.
type dismissals map[[2]string]audit.Dismissal

func (h *handler) dismissals(ctx context.Context) (dismissals, error) {
	ds, err := h.db.Dismissals(ctx)
	if err != nil {
		return nil, err
	}
	set := make(dismissals, len(ds))
	for _, d := range ds {
		set[[2]string{d.PageURL, d.Target}] = d
	}
	return set, nil
}

// of reports whether the link from page to target (its target URL or its
// href, whichever form the finding was stored in) is dismissed.
func (s dismissals) of(page string, targets ...string) bool {
	for _, t := range targets {
		if _, ok := s[[2]string{page, t}]; ok {
			return true
		}
	}
	return false
}

// dismissedLink reports whether link i of the run is dismissed.
func (d *runData) dismissedLink(s dismissals, i int) bool {
	if len(s) == 0 {
		return false
	}
	l := &d.links[i]
	return s.of(l.PageURL, d.targets[l.TargetID].URL, l.Href)
}

// dismissToggle sets the "show dismissed" toggle of a table: the number
// of dismissed rows the filters match, and the URL that shows or hides
// them (back to the first page).
func dismissToggle(r *http.Request, td *tableData, n int) {
	td.Dismissed = n
	td.ShowDismissed = r.URL.Query().Get(dismissedParam) == "1"
	q := r.URL.Query()
	q.Del("p")
	if td.ShowDismissed {
		q.Del(dismissedParam)
	} else {
		q.Set(dismissedParam, "1")
	}
	td.DismissedURL = r.URL.Path
	if enc := q.Encode(); enc != "" {
		td.DismissedURL += "?" + enc
	}
}

// showDismissed reports whether the request asks to show dismissed
// findings.
func showDismissed(q url.Values) bool { return q.Get(dismissedParam) == "1" }

// maintenanceCards returns the overview's link-maintenance card.
func (h *handler) maintenanceCards(ctx context.Context) ([]card, error) {
	c, err := h.db.WireSummary(ctx)
	if err != nil {
		return nil, err
	}
	cls := func(n int, nonzero string) string {
		if n == 0 {
			return "good"
		}
		return nonzero
	}
	return []card{
		{c.Pending, "claims (UNLINKR, LINKMOD) waiting for their check", cls(c.Pending, "info"), ""},
		{c.Confirmed, "UNLINKR claims confirmed by the checks", cls(c.Confirmed, "warn"), ""},
		{c.Unconfirmed, "UNLINKR claims the checks did not bear out", "info", ""},
		{c.Backlinks, "verified backlinks (LINK, Webmention)", "info", ""},
	}, nil
}
