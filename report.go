package linkrot

import (
	"context"
	"fmt"

	"github.com/linkrot/linkrot/audit"
)

// summaryReads is what the summary of a run reads of it once its checks
// are stored (readSummary).
type summaryReads struct {
	verdicts map[audit.Verdict]int
	top      []audit.BrokenTarget
	stats    *audit.RunStats
	err      error
}

// readSummary reads the run's verdict counts, its most linked broken
// targets and what it stored (RunStats).
func readSummary(ctx context.Context, store Store, runID int64) summaryReads {
	var r summaryReads
	if r.verdicts, r.err = store.VerdictCounts(ctx, runID); r.err != nil {
		return r
	}
	if r.top, r.err = store.TopBroken(ctx, runID, 10); r.err != nil {
		return r
	}
	if r.stats, r.err = store.RunStats(ctx, runID); r.err != nil {
		r.err = fmt.Errorf("run stats: %w", r.err)
	}
	return r
}

// PageCount is what a run's summary counts as the pages of the site:
// Pages, of which Failed could not be read (an error status or a fetch
// error).
type PageCount struct{ Pages, Failed int }

// PageLister lists the pages a run recorded, without their links.
type PageLister interface {
	PageList(ctx context.Context, runID int64) ([]*audit.Page, []int64, error)
}

// SitePages counts the pages of the site run crawled. For a web site
// (and a URL list or sitemap) that is every page the crawl recorded: a
// URL of the site that answers 404 is a failed page of it. For a local
// directory (mode "dir", a single file too) it is the documents whose
// links were read, and the folder listings of --dir-listing: the other
// files the crawl reads (images, folders, missing files, and the files a
// single audited page links to) are link targets, fetched from the
// directory only so that their checks need no network; the check line
// counts them.
func SitePages(ctx context.Context, store PageLister, run *audit.Run, s *audit.RunStats) (PageCount, error) {
	if run.Mode != string(Directory) {
		return PageCount{Pages: s.Pages, Failed: s.ErrorPages}, nil
	}
	pages, _, err := store.PageList(ctx, run.ID)
	if err != nil {
		return PageCount{}, fmt.Errorf("count the pages of run %d: %w", run.ID, err)
	}
	var c PageCount
	for _, p := range pages {
		if !p.Parsed {
			continue
		}
		c.Pages++
		if p.Status >= 400 || p.FetchError != "" {
			c.Failed++
		}
	}
	return c, nil
}
