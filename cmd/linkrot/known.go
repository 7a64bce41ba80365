package main

import (
	"context"
	"fmt"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/audit/check"
	"github.com/linkrot/linkrot/audit/sqlite"
)

// crawlResponses indexes what the crawl of a run saw of its pages, so that
// the checking stage judges the site's own pages from it (check.Known)
// instead of fetching each a second time. It is read from the database, so
// linkrot check --run N uses it as linkrot audit does. Each page's anchors
// and main text are read only when its check needs them.
func crawlResponses(ctx context.Context, store *sqlite.DB, runID int64) (*check.KnownIndex, error) {
	pages, err := store.PageResponses(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("load crawl responses: %w", err)
	}
	return check.NewKnownIndex(pages, func(ctx context.Context, p *audit.Page) ([]string, string, error) {
		return store.PageContent(ctx, runID, p.URL)
	}), nil
}
