package main

import (
	"context"
	"fmt"
	"io"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/crawler"
)

// pageCount is what the crawl line of the summary counts as the pages of
// the site: pages, of which failed could not be read (an error status or
// a fetch error).
type pageCount struct{ pages, failed int }

// pageLister lists the pages a run recorded, without their links.
type pageLister interface {
	PageList(ctx context.Context, runID int64) ([]*audit.Page, []int64, error)
}

// sitePages counts the pages of the site run crawled. For a web site
// (and a URL list or sitemap) that is every page the crawl recorded: a
// URL of the site that answers 404 is a failed page of it. For a local
// directory (mode "dir", a single file too) it is the documents whose
// links were read, and the folder listings of --dir-listing: the other
// files the crawl reads (images, folders, missing files, and the files a
// single audited page links to) are link targets, fetched from the
// directory only so that their checks need no network; the check line
// counts them.
func sitePages(ctx context.Context, store pageLister, run *audit.Run, s *audit.RunStats) (pageCount, error) {
	if run.Mode != "dir" {
		return pageCount{pages: s.Pages, failed: s.ErrorPages}, nil
	}
	pages, _, err := store.PageList(ctx, run.ID)
	if err != nil {
		return pageCount{}, fmt.Errorf("count the pages of run %d: %w", run.ID, err)
	}
	var c pageCount
	for _, p := range pages {
		if !p.Parsed {
			continue
		}
		c.pages++
		if p.Status >= 400 || p.FetchError != "" {
			c.failed++
		}
	}
	return c, nil
}

// plural returns "n word" with word made plural (an s) unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// printCrawlSummary prints the crawl line: the pages of the site (pc),
// and what the run stored of their links (s).
func printCrawlSummary(w io.Writer, s *audit.RunStats, pc pageCount) {
	fmt.Fprintf(w, "Crawled %s (%d failed) with %s to %s. "+
		"Robustness data: %d links with Robust Links attributes, %d with mset, %d snapshots declared, "+
		"%d identifiers (rel=identifier/cite-as), %d pwid URIs. %d diagnostics, %d redirects recorded.\n",
		plural(pc.pages, "page"), pc.failed, plural(s.Links, "link"), plural(s.Targets, "unique target"),
		s.RobustLinks, s.MsetLinks, s.Snapshots, s.Identifiers, s.PWIDs, s.Diagnostics, s.Redirects)
}

// nothingToCheck says in plain words why a run had no target to check:
// mode is the run's, s what it stored, pc its pages (sitePages).
func nothingToCheck(mode string, s *audit.RunStats, pc pageCount) string {
	switch {
	case pc.pages == 0 && mode == "dir":
		return "Nothing to check: the directory has no " + crawler.PageTypes + " documents."
	case pc.pages == 0:
		return "Nothing to check: no page was crawled."
	case pc.failed == pc.pages && pc.pages == 1:
		return "Nothing to check: the page could not be read."
	case pc.failed == pc.pages:
		return fmt.Sprintf("Nothing to check: none of the %d pages could be read.", pc.pages)
	case s.Links == 0 && pc.pages == 1:
		return "Nothing to check: the page has no links."
	case s.Links == 0:
		return fmt.Sprintf("Nothing to check: the %d pages have no links.", pc.pages)
	case s.Links == 1:
		return "Nothing to check: the link has no target to check."
	default:
		return fmt.Sprintf("Nothing to check: none of the %d links has a target to check.", s.Links)
	}
}

// runSummary prints the crawl line of a run (the pages of the site, see
// sitePages) and returns what the check line says when there was nothing
// to check.
func runSummary(ctx context.Context, w io.Writer, store pageLister, run *audit.Run, s *audit.RunStats) (nothing string, err error) {
	pc, err := sitePages(ctx, store, run, s)
	if err != nil {
		return "", err
	}
	printCrawlSummary(w, s, pc)
	return nothingToCheck(run.Mode, s, pc), nil
}
