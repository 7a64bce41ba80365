package maintain

import (
	"context"
	"fmt"
	"strings"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/urls"
)

// Proposal is a link-maintenance record (a link to a moved resource and
// its replacement) with the evidence it rests on.
type Proposal struct {
	audit.Maintenance
	Evidence string `json:"evidence"`
}

// pidResolvers are hosts that serve persistent identifiers: a link to
// them is a citation of the identifier, and its redirect to a landing
// page is how it works, not a move.
var pidResolvers = map[string]string{
	"doi.org": "DOI", "dx.doi.org": "DOI", "hdl.handle.net": "Handle", "n2t.net": "ARK/N2T",
	"identifiers.org": "identifiers.org", "purl.org": "PURL", "purl.oclc.org": "PURL", "w3id.org": "w3id",
	"arks.org": "ARK", "orcid.org": "ORCID", "nbn-resolving.org": "URN:NBN", "nbn-resolving.de": "URN:NBN",
	"urn.fi": "URN:NBN", "persistent-identifier.nl": "URN:NBN", "ror.org": "ROR", "archive.org": "",
}

// runIdentifiers returns the identifiers the run knows, with where it
// learned each: declared by crawled pages (rel="identifier"/"cite-as"
// <link>s or Link headers) and checked by the archives stage.
func runIdentifiers(ctx context.Context, store identifierStore, runID int64) (map[string]string, error) {
	ids := map[string]string{}
	pages, err := store.Pages(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("load pages: %w", err)
	}
	for _, p := range pages {
		for _, id := range p.Identifiers {
			ids[normalizeOr(id.URL)] = fmt.Sprintf("declared rel=%q by %s", id.Rel, p.URL)
		}
	}
	ics, err := store.IdentifierChecks(ctx, runID)
	if err != nil {
		return nil, err
	}
	for _, ic := range ics {
		k := normalizeOr(ic.Identifier)
		if _, ok := ids[k]; !ok {
			ids[k] = fmt.Sprintf("declared rel=%q by %s", ic.Rel, ic.AccessURL)
		}
	}
	return ids, nil
}

func normalizeOr(u string) string {
	if n, err := urls.NormalizeURL(u); err == nil {
		return n
	}
	return u
}

// Proposals returns the maintenance records of a run (all, the store's
// Maintenance) as replacements to propose, and apart those whose target is
// an identifier, which is never replaced: declared as one by a crawled
// page or checked as one by the archives stage, or on a
// persistent-identifier resolver. Each gets the evidence it rests on.
func Proposals(ctx context.Context, store identifierStore, runID int64, all []audit.Maintenance) (fixes, held []Proposal, err error) {
	ids, err := runIdentifiers(ctx, store, runID)
	if err != nil {
		return nil, nil, err
	}
	fixes, held = splitFixes(all, ids, runID)
	return fixes, held, nil
}

// identifierStore reads what a run knows of identifiers.
type identifierStore interface {
	Pages(ctx context.Context, runID int64) ([]*audit.Page, error)
	IdentifierChecks(ctx context.Context, runID int64) ([]audit.IdentifierCheck, error)
}

// splitFixes separates the proposals from records whose target is an
// identifier: declared as one (ids), or on a persistent-identifier
// resolver.
func splitFixes(all []audit.Maintenance, ids map[string]string, runID int64) (fixes, held []Proposal) {
	fixes, held = []Proposal{}, []Proposal{}
	for _, m := range all {
		if why, ok := ids[normalizeOr(m.Target)]; ok {
			held = append(held, Proposal{m, "the target is an identifier, " + why})
			continue
		}
		if kind, ok := pidResolvers[strings.ToLower(normalizedHost(m.Target))]; ok && kind != "" {
			held = append(held, Proposal{m, fmt.Sprintf("the target is a %s (persistent identifier resolver %s)", kind, normalizedHost(m.Target))})
			continue
		}
		fixes = append(fixes, Proposal{m, fmt.Sprintf("the live check of run %d saw a permanent redirect (%d) from the target, ending at the replacement", runID, m.Status)})
	}
	return fixes, held
}

// normalizedHost returns the host[:port] of a URL as urls.NormalizeURL
// writes it, or "".
func normalizedHost(raw string) string {
	u, err := urls.ParseURL(raw)
	if err != nil {
		return ""
	}
	return u.Host()
}
