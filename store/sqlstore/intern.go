package sqlstore

// URL interning (migration 0008): a link row refers to its href through
// its target, and a finding to its page and target URLs through its link,
// instead of repeating the strings. The helpers below write and read that
// form; every query reading links.href or links.raw_href goes through
// hrefSQL and rawHrefSQL (or the link_urls view), every query reading
// findings.page_url or findings.target through findingPageSQL and
// findingTargetSQL.

import "strings"

// Bits of links.url_form.
const (
	// formHrefTarget: href is stored as '' and is the target's URL plus
	// '#' and the fragment when that is not empty.
	formHrefTarget = 1 << iota
	// formRawHref: raw_href is stored as '' and equals the href.
	formRawHref
)

// Bits of findings.url_form.
const (
	formFindingPage   = 1 << iota // page_url is '' and is the link's page URL
	formFindingTarget             // target is '' and is the link's target URL
)

// targetCacheSize bounds DB.targetIDs: normalized URLs and IDs of the
// targets the single writer saw last (about 200 bytes each, so at most
// some 13 MB), enough for the working set of a large site, whose pages
// link mostly to the same few thousand targets.
const targetCacheSize = 64 << 10

// linkURLForm returns the url_form of a link whose href, raw href,
// fragment (href after the first '#') and target are given: each bit only
// when the derived string is exactly the one written.
func linkURLForm(href, rawHref, fragment string, t targetOf) int {
	form := 0
	if t.id != nil && t.url != "" {
		derived := t.url
		if fragment != "" {
			derived += "#" + fragment
		}
		if derived == href {
			form |= formHrefTarget
		}
	}
	if rawHref == href {
		form |= formRawHref
	}
	return form
}

// linkColumns are the columns insertLinkSQL writes, before url_form.
const linkColumns = `page_id, run_id, ord, element, attr, href, raw_href,
			target_id, text, rel, resource, fragment,
			has_robust, originalurl, originalurl_raw, originalurl_inferred, versiondate,
			versiondate_date_only, versiondate_raw, versionurl_raw, has_mset, mset_raw`

// pgLinkColumns are the columns of a link's COPY row on PostgreSQL: its
// ID, those of insertLinkSQL, and its position (see saver.position).
func pgLinkColumns(compact bool) []string {
	cols := []string{"id"}
	for _, c := range strings.Split(linkColumns, ",") {
		cols = append(cols, strings.TrimSpace(c))
	}
	if compact {
		cols = append(cols, "url_form")
	}
	return append(cols, "line", "col", "line_hash")
}

// insertLinkSQL inserts a link row; compact adds url_form (migration 0008).
func insertLinkSQL(compact bool) string {
	cols := linkColumns
	vals := params(1, 22)
	if compact {
		// The latest schema: url_form (0008) and the link's position
		// (0009), written with the row rather than by a second statement.
		cols += `, url_form, line, col, line_hash`
		vals = params(1, 26)
	}
	return `INSERT INTO links (` + cols + `) VALUES (` + vals + `) RETURNING id`
}

// linkTargetJoin joins the target of the link aliased l as lt, for
// hrefSQL and rawHrefSQL.
const linkTargetJoin = ` LEFT JOIN targets lt ON lt.id = l.target_id `

// hrefSQL and rawHrefSQL are the href and raw href of the link aliased l
// as written (needs linkTargetJoin).
const (
	hrefSQL    = `(CASE WHEN (l.url_form & 1) <> 0 THEN lt.url || CASE WHEN l.fragment <> '' THEN '#' || l.fragment ELSE '' END ELSE l.href END)`
	rawHrefSQL = `(CASE WHEN (l.url_form & 2) <> 0 THEN ` + hrefSQL + ` ELSE l.raw_href END)`
)

// findingJoin joins the link of the finding aliased f, its page and its
// target, for findingPageSQL and findingTargetSQL.
const findingJoin = ` LEFT JOIN links fl ON fl.id = f.link_id LEFT JOIN pages fp ON fp.id = fl.page_id
	LEFT JOIN targets ft ON ft.id = fl.target_id `

// findingPageSQL and findingTargetSQL are the page URL and target of the
// finding aliased f as saved (needs findingJoin).
const (
	findingPageSQL   = `(CASE WHEN (f.url_form & 1) <> 0 THEN fp.url ELSE f.page_url END)`
	findingTargetSQL = `(CASE WHEN (f.url_form & 2) <> 0 THEN ft.url ELSE f.target END)`
)

// insertFindingSQL inserts a finding; the link, when given, must belong to
// the finding's run, otherwise nothing is inserted. compact stores the page
// URL and target through the link when they are its page's and target's
// (migration 0008).
func insertFindingSQL(compact bool) string {
	if !compact {
		return `INSERT INTO findings (run_id, link_id, page_url, target, verdict, message, fragment)
	SELECT $1, $2, $3, $4, $5, $6, $7
	WHERE CAST($2 AS BIGINT) IS NULL OR EXISTS (SELECT 1 FROM links WHERE id = $2 AND run_id = $1)`
	}
	return `INSERT INTO findings (run_id, link_id, page_url, target, verdict, message, fragment, url_form)
	SELECT $1, $2,
		CASE WHEN p.url IS NOT NULL AND p.url = $3 THEN '' ELSE $3 END,
		CASE WHEN t.url IS NOT NULL AND t.url = $4 THEN '' ELSE $4 END,
		$5, $6, $7,
		(CASE WHEN p.url IS NOT NULL AND p.url = $3 THEN 1 ELSE 0 END)
			| (CASE WHEN t.url IS NOT NULL AND t.url = $4 THEN 2 ELSE 0 END)
	FROM (SELECT 1) one
	LEFT JOIN links l ON l.id = $2 AND l.run_id = $1
	LEFT JOIN pages p ON p.id = l.page_id
	LEFT JOIN targets t ON t.id = l.target_id
	WHERE CAST($2 AS BIGINT) IS NULL OR l.id IS NOT NULL`
}
