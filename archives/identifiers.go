package archives

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"slices"

	"golang.org/x/net/html"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/httpx"
	"github.com/linkrot/linkrot/urls"
)

// identResult is a checked identifier of a target, for suggestions.
type identResult struct {
	check audit.IdentifierCheck
}

// identJob is one declared identifier to follow back to its access URI.
type identJob struct {
	access  string // the page declaring it
	alsoAt  string // the access URI's final URL after redirects ("" same)
	target  int64  // 0 for own pages
	id      audit.Identifier
	linking []string // pages linking to the access URI (targets only)
}

// identifiers checks the identifiers declared by live targets on other
// sites (fetched by liveFetch: Link headers of every target, <link>
// elements of HTML ones) and by the site's own pages: does the identifying
// URI resolve, and does it lead back to the access URI (redirects, or a
// link in its page or Link header), as draft-vandesompel-identifier §4
// says it SHOULD. The site's own pages are reported as such (own page),
// never again as link targets, so one declaration gives one check. It
// returns, by target ID, the checks that concern links to each target: its
// own for targets on other sites, the page's for the site's own pages.
func (s *stage) identifiers(ctx context.Context, live *liveSet) map[int64][]identResult {
	linking := map[int64][]string{}
	for i := range s.in.Links {
		l := &s.in.Links[i]
		if l.TargetID != 0 && !slices.Contains(linking[l.TargetID], l.PageURL) {
			linking[l.TargetID] = append(linking[l.TargetID], l.PageURL)
		}
	}
	type jobKey struct {
		access, id, rel string
		own             bool
	}
	seenJob := map[jobKey]bool{}
	var jobs []identJob
	add := func(j identJob) {
		k := jobKey{normalize(j.access), normalize(j.id.URL), j.id.Rel, j.target == 0}
		if seenJob[k] {
			return
		}
		seenJob[k] = true
		jobs = append(jobs, j)
	}
	for _, pg := range s.in.Pages {
		for _, id := range dedupIdentifiers(pg.Identifiers) {
			if sameResource(id.URL, pg.URL) {
				continue
			}
			add(identJob{access: pg.URL, id: id})
		}
	}
	targets := make([]int64, 0, len(live.target))
	for id := range live.target {
		targets = append(targets, id)
	}
	slices.Sort(targets)
	for _, tid := range targets {
		p := live.targetPage(tid)
		c := s.in.Checks[tid]
		if p == nil || p.err != nil || c == nil || !s.external(c.URL) {
			continue
		}
		pages := slices.Clone(linking[tid])
		slices.Sort(pages)
		for _, id := range dedupIdentifiers(p.identifiers) {
			if sameResource(id.URL, c.URL) || sameResource(id.URL, p.final) {
				continue // the page names itself
			}
			add(identJob{access: c.URL, alsoAt: p.final, target: tid, id: id, linking: pages})
		}
	}
	// Each identifying URI is fetched once in the run.
	var idURLs []string
	queued := map[string]bool{}
	for _, j := range jobs {
		if _, ok := s.rs.identFetched[j.id.URL]; !ok && !queued[j.id.URL] {
			queued[j.id.URL] = true
			idURLs = append(idURLs, j.id.URL)
		}
	}
	res := make([]identFetch, len(idURLs))
	s.parallel(ctx, len(idURLs), func(i int) {
		if !isHTTP(idURLs[i]) {
			res[i].err = fmt.Errorf("not an http(s) URI")
			return
		}
		resp, hops, _, err := s.o.Client.Fetch(ctx, idURLs[i], 512<<10)
		if err != nil {
			res[i] = identFetch{err: err, hops: hops}
			return
		}
		f := identFetch{final: resp.URL.String(), status: resp.Status, hops: hops}
		links, _ := urls.ParseLinkHeader(resp.Header.Values("Link")...)
		for _, l := range urls.ResolveLinks(resp.URL, links) {
			f.links = append(f.links, l.URI)
		}
		if httpx.IsHTML(resp.Header.Get("Content-Type"), resp.Body) {
			f.links = append(f.links, htmlLinks(resp.Body, resp.URL)...)
		}
		res[i] = f
	})
	if ctx.Err() != nil {
		return nil
	}
	for i, u := range idURLs {
		s.rs.identFetched[u] = res[i]
	}
	out := map[int64][]identResult{}
	own := s.rs.own // by normalized own page URL, for the whole run
	for _, j := range jobs {
		f := s.rs.identFetched[j.id.URL]
		ic := audit.IdentifierCheck{
			RunID:        s.in.RunID,
			AccessURL:    j.access,
			Identifier:   j.id.URL,
			Rel:          j.id.Rel,
			OwnPage:      j.target == 0,
			LinkingPages: j.linking,
			Status:       f.status,
			CheckedAt:    s.o.Now().UTC(),
		}
		back := func(u string) bool {
			return sameResource(u, j.access) || j.alsoAt != "" && sameResource(u, j.alsoAt)
		}
		ic.Resolves = f.err == nil && f.status >= 200 && f.status <= 299
		for _, h := range f.hops {
			if back(h.To) {
				ic.LeadsBack, ic.How = true, "redirect"
				break
			}
		}
		if !ic.LeadsBack && ic.Resolves {
			for _, l := range f.links {
				if back(l) {
					ic.LeadsBack, ic.How = true, "link"
					break
				}
			}
		}
		switch {
		case f.err != nil:
			ic.Reason = "identifier does not resolve: " + errText(f.err)
		case !ic.Resolves:
			ic.Reason = fmt.Sprintf("identifier does not resolve: status %d", f.status)
		case !ic.LeadsBack:
			ic.Reason = "identifier resolves but leads back to the access URI neither by redirects nor by links"
		}
		if ic.LeadsBack && !ic.Resolves {
			ic.Reason = joinReason(ic.Reason, "it redirects to the access URI")
		}
		s.count(func(sum *Summary) {
			sum.Identifiers++
			if !ic.Resolves {
				sum.IdentifiersBroken++
			} else if !ic.LeadsBack {
				sum.IdentifiersNoReturn++
			}
		})
		if s.sink.Identifier != nil {
			s.sink.Identifier(ic)
		}
		if j.target != 0 {
			out[j.target] = append(out[j.target], identResult{check: ic})
		} else {
			own[normalize(j.access)] = append(own[normalize(j.access)], identResult{check: ic})
		}
	}
	// A link to one of the site's own pages that declares an identifier
	// uses the access URI too: it gets the own page's checks (for its
	// use-identifier suggestion), not a second check of its own.
	for i := range s.in.Links {
		l := &s.in.Links[i]
		if l.TargetID == 0 || s.external(l.TargetURL) || len(out[l.TargetID]) > 0 {
			continue
		}
		if rs := own[l.TargetURL]; len(rs) > 0 {
			out[l.TargetID] = rs
		}
	}
	return out
}

// identFetch is an identifying URI fetched.
type identFetch struct {
	final  string
	status int
	hops   []audit.Redirect
	links  []string
	err    error
}

// dedupIdentifiers keeps the first declaration of each (URL, rel).
func dedupIdentifiers(ids []audit.Identifier) []audit.Identifier {
	var out []audit.Identifier
	seen := map[string]bool{}
	for _, id := range ids {
		k := id.Rel + " " + normalize(id.URL)
		if id.URL == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, id)
	}
	return out
}

// htmlLinks returns the absolute targets of <a href> and <link href> in an
// HTML page (at most 10,000).
func htmlLinks(body []byte, base *url.URL) []string {
	var out []string
	// The URL parser of every other href (WHATWG, urls.Resolver).
	res, err := urls.NewResolver(base.String())
	if err != nil {
		return nil
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for len(out) < 10000 {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if n := string(name); n != "a" && n != "link" && n != "area" {
			continue
		}
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			if string(k) != "href" {
				continue
			}
			if u, _, err := res.Resolve(string(v)); err == nil {
				out = append(out, urls.RedactText(u.String()))
			}
		}
	}
	return out
}
