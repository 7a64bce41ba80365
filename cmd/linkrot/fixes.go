package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/maintain"
	"github.com/linkrot/linkrot/urls"
)

// runFixes lists the link-maintenance records of a run: for every link to a
// moved resource, the page to edit, the old URL and its replacement.
func runFixes(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "fixes", "[--run N] [--format text|json|unlinkr]")
	db := fs.String("db", "linkrot.db", "database: SQLite file `path` or postgres:// URL")
	runID := fs.Int64("run", 0, "run (default: the latest)")
	format := fs.String("format", "text", "text, json, or unlinkr (the UNLINKR lines of the HTTP link-maintenance protocol)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	if len(pos) != 0 {
		return usagef("fixes takes no arguments")
	}
	if *format != "text" && *format != "json" && *format != "unlinkr" {
		return usagef("--format must be text, json or unlinkr")
	}
	store, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	run, err := pickRun(ctx, store, *runID)
	if err != nil {
		return err
	}
	all, err := store.Maintenance(ctx, run.ID)
	if err != nil {
		return err
	}
	ids, err := runIdentifiers(ctx, store, run.ID)
	if err != nil {
		return err
	}
	recs, held := splitFixes(all, ids, run.ID)
	switch *format {
	case "json":
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		// Only proposals: a consumer applying the list never sees an
		// identifier; those are noted on stderr.
		for _, r := range held {
			fmt.Fprintf(e.stderr, "linkrot: not proposed: %s on %s (%s)\n", r.Target, r.Source, r.Evidence)
		}
		return enc.Encode(recs)
	case "unlinkr":
		for _, r := range held {
			fmt.Fprintf(e.stderr, "linkrot: not proposed: %s on %s (%s)\n", r.Target, r.Source, r.Evidence)
		}
		for _, r := range recs {
			fmt.Fprintf(e.stdout, "UNLINKR %s %s %s\n", r.Source, r.Target, r.Replacement)
		}
		return nil
	}
	if len(recs) == 0 {
		fmt.Fprintf(e.stdout, "Run %d: no links to moved resources.\n", run.ID)
	} else {
		fmt.Fprintf(e.stdout, "Run %d: %d links to update.\n", run.ID, len(recs))
	}
	last := ""
	for _, r := range recs {
		if r.Source != last {
			fmt.Fprintf(e.stdout, "\n%s\n", r.Source)
			last = r.Source
		}
		fmt.Fprintf(e.stdout, "  %s\n    → %s  (%d)\n    evidence: %s\n", r.Target, r.Replacement, r.Status, r.Evidence)
		if r.Claimant != "" {
			fmt.Fprintf(e.stdout, "    UNLINKR from %s: %s\n", maintain.Printable(r.Claimant), maintain.Printable(r.ClaimNote))
		}
	}
	if len(held) > 0 {
		fmt.Fprintf(e.stdout, "\n%d links to identifiers redirect elsewhere; an identifier is never replaced by a location (check them by hand):\n", len(held))
		for _, r := range held {
			fmt.Fprintf(e.stdout, "  %s on %s\n    redirects to %s  (%d)\n    why kept: %s\n", r.Target, r.Source, r.Replacement, r.Status, r.Evidence)
		}
	}
	return printClaims(ctx, e, store, run.ID)
}

// printClaims lists the UNLINKR claims linkrot serve received for links
// of the run that its checks did not bear out: never proposed as fixes.
// Every string came from a notification: printed escaped.
func printClaims(ctx context.Context, e *env, store interface {
	Claims(ctx context.Context, runID int64) ([]audit.Claim, error)
}, runID int64) error {
	claims, err := store.Claims(ctx, runID)
	if err != nil {
		return err
	}
	var open []audit.Claim
	for _, c := range claims {
		if !c.Confirmed {
			open = append(open, c)
		}
	}
	if len(open) == 0 {
		return nil
	}
	fmt.Fprintf(e.stdout, "\n%d UNLINKR claims received by linkrot serve that its checks did not bear out (not proposed):\n", len(open))
	for _, c := range open {
		fmt.Fprintf(e.stdout, "  %s on %s\n", maintain.Printable(c.Target), maintain.Printable(c.Source))
		if c.Replacement != "" {
			fmt.Fprintf(e.stdout, "    claimed replacement %s\n", maintain.Printable(c.Replacement))
		}
		fmt.Fprintf(e.stdout, "    from %s at %s: %s\n", maintain.Printable(c.Claimant), c.ClaimedAt.Format("2006-01-02 15:04"), maintain.Printable(c.Note))
	}
	return nil
}

// fixProposal is a maintenance record with the evidence it rests on.
type fixProposal struct {
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
func runIdentifiers(ctx context.Context, store interface {
	Pages(ctx context.Context, runID int64) ([]*audit.Page, error)
	IdentifierChecks(ctx context.Context, runID int64) ([]audit.IdentifierCheck, error)
}, runID int64) (map[string]string, error) {
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

// splitFixes separates the proposals from records whose target is an
// identifier: declared as one (ids), or on a persistent-identifier
// resolver. Each gets the evidence it rests on.
func splitFixes(all []audit.Maintenance, ids map[string]string, runID int64) (fixes, held []fixProposal) {
	fixes, held = []fixProposal{}, []fixProposal{}
	for _, m := range all {
		if why, ok := ids[normalizeOr(m.Target)]; ok {
			held = append(held, fixProposal{m, "the target is an identifier, " + why})
			continue
		}
		if kind, ok := pidResolvers[strings.ToLower(linkrot.HostOf(m.Target))]; ok && kind != "" {
			held = append(held, fixProposal{m, fmt.Sprintf("the target is a %s (persistent identifier resolver %s)", kind, linkrot.HostOf(m.Target))})
			continue
		}
		fixes = append(fixes, fixProposal{m, fmt.Sprintf("the live check of run %d saw a permanent redirect (%d) from the target, ending at the replacement", runID, m.Status)})
	}
	return fixes, held
}

// pickRun returns run id, or the latest run when id is 0.
func pickRun(ctx context.Context, store runPicker, id int64) (*audit.Run, error) {
	var run *audit.Run
	var err error
	if id > 0 {
		run, err = store.Run(ctx, id)
	} else {
		run, err = store.LatestRun(ctx)
	}
	if errors.Is(err, audit.ErrNotFound) {
		return nil, usagef("no such run in the database (crawl first: linkrot audit URL)")
	}
	return run, err
}

// runPicker finds a run by ID, or the latest.
type runPicker interface {
	Run(ctx context.Context, runID int64) (*audit.Run, error)
	LatestRun(ctx context.Context) (*audit.Run, error)
}
