package main

import (
	"context"
	"fmt"
	"io"

	"github.com/linkrot/linkrot"
	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
)

// plural returns "n word" with word made plural (an s) unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// printCrawlSummary prints the crawl line: the pages of the site (pc),
// and what the run stored of their links (s).
func printCrawlSummary(w io.Writer, s *audit.RunStats, pc linkrot.PageCount) {
	fmt.Fprintf(w, "Crawled %s (%d failed) with %s to %s. "+
		"Robustness data: %d links with Robust Links attributes, %d with mset, %d snapshots declared, "+
		"%d identifiers (rel=identifier/cite-as), %d pwid URIs. %d diagnostics, %d redirects recorded.\n",
		plural(pc.Pages, "page"), pc.Failed, plural(s.Links, "link"), plural(s.Targets, "unique target"),
		s.RobustLinks, s.MsetLinks, s.Snapshots, s.Identifiers, s.PWIDs, s.Diagnostics, s.Redirects)
}

// nothingToCheck says in plain words why a run had no target to check:
// mode is the run's, s what it stored, pc its pages (linkrot.SitePages).
func nothingToCheck(mode string, s *audit.RunStats, pc linkrot.PageCount) string {
	switch {
	case pc.Pages == 0 && mode == string(linkrot.Directory):
		return "Nothing to check: the directory has no " + crawler.PageTypes + " documents."
	case pc.Pages == 0:
		return "Nothing to check: no page was crawled."
	case pc.Failed == pc.Pages && pc.Pages == 1:
		return "Nothing to check: the page could not be read."
	case pc.Failed == pc.Pages:
		return fmt.Sprintf("Nothing to check: none of the %d pages could be read.", pc.Pages)
	case s.Links == 0 && pc.Pages == 1:
		return "Nothing to check: the page has no links."
	case s.Links == 0:
		return fmt.Sprintf("Nothing to check: the %d pages have no links.", pc.Pages)
	case s.Links == 1:
		return "Nothing to check: the link has no target to check."
	default:
		return fmt.Sprintf("Nothing to check: none of the %d links has a target to check.", s.Links)
	}
}

// runSummary prints the crawl line of a run (the pages of the site, see
// linkrot.SitePages) and returns what the check line says when there was nothing
// to check.
func runSummary(ctx context.Context, w io.Writer, store linkrot.PageLister, run *audit.Run, s *audit.RunStats) (nothing string, err error) {
	pc, err := linkrot.SitePages(ctx, store, run, s)
	if err != nil {
		return "", err
	}
	printCrawlSummary(w, s, pc)
	return nothingToCheck(run.Mode, s, pc), nil
}
