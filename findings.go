package linkrot

import (
	"context"
	"errors"
	"fmt"

	"github.com/linkrot/linkrot/audit"
)

// FindingsStore is what deriving findings needs. *sqlstore.DB implements
// it.
type FindingsStore interface {
	// FindingLinks streams the run's links that can give a finding or a
	// link-maintenance record, grouped by target in target order, asking
	// keep once per (target, fragment) pair of an ok or redirected
	// target (sqlstore.DB.FindingLinks has the contract).
	FindingLinks(ctx context.Context, runID int64, keep func(c *audit.Check, fragment string) bool, fn func(audit.LinkRef, *audit.Check) error) error
	// InvalidURLLinks streams the run's links whose URL did not parse,
	// which have no target and so no check, each with the diagnostic
	// saying why.
	InvalidURLLinks(ctx context.Context, runID int64, fn func(audit.LinkRef, audit.Diagnostic) error) error
	ReplaceFindings(ctx context.Context, runID int64, findings []audit.Finding) error
	SaveFindings(ctx context.Context, findings []audit.Finding) error
	SaveMaintenance(ctx context.Context, records []audit.Maintenance) error
	PageAnchors(ctx context.Context, runID int64, targetURL string) ([]string, error)
	VerdictCounts(ctx context.Context, runID int64) (map[audit.Verdict]int, error)
	TopBroken(ctx context.Context, runID int64, limit int) ([]audit.BrokenTarget, error)
}

// DeriveFindings derives the findings and link-maintenance records of a
// run whose checks are stored, replacing those stored before: the
// findings stage of Audit, for other front ends (and fixtures). anchors
// holds the anchors of targets checked live, by URL; the anchors of the
// run's own pages are read from the store. It returns the counts of what
// it stored.
func DeriveFindings(ctx context.Context, store FindingsStore, run *audit.Run, anchors map[string][]string, externalFragments bool) (audit.CheckCounts, error) {
	var c audit.CheckCounts
	err := deriveFindings(ctx, Config{Run: run, ExternalFragments: externalFragments}, store, &c, anchors)
	return c, err
}

// deriveFindings applies the findings rule (audit.LinkFindings) to the
// links of the run that can have a finding, streamed from the store one
// target at a time, adds the finding of each link whose URL is invalid
// (audit.InvalidURLFinding), and stores findings and link-maintenance
// records in batches, replacing what an earlier pass stored.
func deriveFindings(ctx context.Context, cfg Config, store FindingsStore, counts *audit.CheckCounts, anchors map[string][]string) error {
	run := cfg.Run
	site := SiteHosts(run)
	var (
		findings []audit.Finding
		fixes    []audit.Maintenance
		// The findings an earlier pass stored are replaced by the first
		// batch (or by none at the end): until then this stage only
		// reads, beside the history stage's write transaction.
		replaced bool
	)
	flush := func(force bool) error {
		if len(findings) >= 1000 || force && (len(findings) > 0 || !replaced) {
			save := store.SaveFindings
			if !replaced {
				save = func(ctx context.Context, fs []audit.Finding) error { return store.ReplaceFindings(ctx, run.ID, fs) }
			}
			if err := save(ctx, findings); err != nil {
				return fmt.Errorf("save findings: %w", err)
			}
			findings, replaced = findings[:0], true
		}
		if len(fixes) >= 1000 || force && len(fixes) > 0 {
			if err := store.SaveMaintenance(ctx, fixes); err != nil {
				return fmt.Errorf("save maintenance records: %w", err)
			}
			fixes = fixes[:0]
		}
		return nil
	}
	counts.Findings, counts.Fixes, counts.Fragments, counts.InvalidURLs = 0, 0, 0, 0
	// What the rule needs of a link's target, known once per target: if
	// its fragments are judged (the audited site's, or all with
	// ExternalFragments; a link's host is its target's), and its anchors,
	// read when a fragment first needs them.
	type judged struct {
		want bool
		set  map[string]bool
		read bool // set is read
	}
	var (
		cur *audit.Check
		at  *judged
		// The targets of the links kept (see keep) until they are handed
		// over: FindingLinks hands them over in batches, after it has
		// asked about the pairs of later targets.
		kept = map[*audit.Check]*judged{}
	)
	target := func(c *audit.Check, fragment string) (want bool, set map[string]bool) {
		if c != cur {
			cur, at = c, kept[c]
			if at == nil {
				at = &judged{want: cfg.ExternalFragments || site[HostOf(c.URL)]}
			}
		}
		if fragment == "" || !at.want {
			return false, nil
		}
		if !at.read {
			at.read = true
			if as, ok := anchors[c.URL]; ok {
				at.set = audit.AnchorSet(as)
			} else if c.Verdict == audit.VerdictOK || c.Verdict == audit.VerdictRedirected || c.Verdict == audit.VerdictMoved {
				at.set = pageAnchors(ctx, store, run.ID, c)
			}
		}
		return true, at.set
	}
	// A fragment link of a target that is ok gives something only when
	// its fragment names no anchor: only those are read whole. keep is
	// asked once per (target, fragment) pair, however many links repeat
	// it, so it judges the pair as a link to a page (the most a link can
	// give); the element of each link it keeps is judged below.
	keep := func(c *audit.Check, fragment string) bool {
		want, set := target(c, fragment)
		fs, fix := audit.LinkFindings(run.ID, audit.LinkUse{Fragment: fragment, WantFragment: want}, c, set)
		if len(fs) > 0 || fix != nil {
			kept[c] = at
			return true
		}
		return false
	}
	err := store.FindingLinks(ctx, run.ID, keep, func(l audit.LinkRef, c *audit.Check) error {
		// Only a link to a page has its #fragment judged (audit.LinkRules:
		// a media fragment, #t=10, or an image's is no anchor).
		fragment := l.Fragment
		if !audit.FragmentChecked(l.Element, l.Attr) {
			fragment = ""
		}
		want, set := target(c, fragment)
		delete(kept, c) // its links come together
		fs, fix := audit.LinkFindings(run.ID, audit.LinkUse{LinkID: l.LinkID, PageURL: l.PageURL, Fragment: fragment, WantFragment: want}, c, set)
		for _, f := range fs {
			counts.Findings++
			if f.Verdict == audit.VerdictFragmentMissing {
				counts.Fragments++
			}
		}
		findings = append(findings, fs...)
		if fix != nil {
			counts.Fixes++
			fixes = append(fixes, *fix)
		}
		return flush(false)
	})
	if err != nil {
		return err
	}
	// A link whose URL does not parse has no target: its finding comes
	// from the diagnostic extraction recorded.
	err = store.InvalidURLLinks(ctx, run.ID, func(l audit.LinkRef, d audit.Diagnostic) error {
		counts.Findings++
		counts.InvalidURLs++
		findings = append(findings, audit.InvalidURLFinding(run.ID, l, d))
		return flush(false)
	})
	if err != nil {
		return err
	}
	return flush(true)
}

// pageAnchors returns the anchors of a target judged from the crawl: its
// page's, read from the store. nil when the store has none.
func pageAnchors(ctx context.Context, store FindingsStore, runID int64, c *audit.Check) map[string]bool {
	for _, u := range []string{c.FinalURL, c.URL} {
		if u == "" {
			continue
		}
		as, err := store.PageAnchors(ctx, runID, u)
		if err == nil {
			if as == nil {
				as = []string{}
			}
			return audit.AnchorSet(as)
		}
		if !errors.Is(err, audit.ErrNotFound) {
			return nil
		}
	}
	return nil
}
