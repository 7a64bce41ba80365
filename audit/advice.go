package audit

// FixAdvice is what a site owner should do about a link whose target got
// verdict v, when that differs from what the report says of every broken
// link (link the nearest archived copy, or update a moved link); "" for
// the verdicts without advice of their own. The reports show it with the
// verdict (the findings' messages, the HTML report's fix, the Markdown
// summary).
//
// A parked domain is named apart from a soft 404 because its fix is: the
// page is not missing from a site that is still there, the site is gone,
// its domain now answering with a parking service's or a domain seller's
// lander (docs/parked.md). Waiting or looking for where the page moved on
// that site is pointless.
func FixAdvice(v Verdict) string {
	switch v {
	case VerdictParked:
		return "the domain is parked: a parking service's or a domain seller's lander answers where the site was, and the content will not come back there. Link the archived copy of the page, or remove the link."
	}
	return ""
}
