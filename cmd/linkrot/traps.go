package main

import (
	"flag"

	"github.com/linkrot/linkrot"

	"github.com/linkrot/linkrot/crawler"
)

// trapFlags are the crawl-trap guards (crawler/trap.go), on by default.
type trapFlags struct{}

func (trapFlags) register(fs *flag.FlagSet, c *linkrot.CrawlSettings) {
	fs.IntVar(&c.MaxSegmentRepeats, "max-segment-repeats", crawler.DefaultMaxSegmentRepeats, "crawl trap: a path segment or pair of segments repeated more than `N` times in a row is not crawled (0: off; Heritrix PathologicalPathDecideRule)")
	fs.IntVar(&c.MaxPathSegments, "max-path-segments", crawler.DefaultMaxPathSegments, "crawl trap: paths of more than `N` segments are not crawled (0: off; Heritrix TooManyPathSegmentsDecideRule)")
	fs.IntVar(&c.MaxQueryVariants, "max-query-variants", crawler.DefaultMaxQueryVariants, "crawl trap: crawl at most `N` query strings of one path (calendars, facets, sorts; 0: off)")
	fs.IntVar(&c.MaxURLLength, "max-url-length", crawler.DefaultMaxURLLength, "crawl trap: URLs longer than `N` bytes are not crawled (0: off; Heritrix UURI.MAX_URL_LENGTH)")
	fs.Var((*listFlag)(&c.SessionParams), "session-param", "crawl trap: also treat this query `parameter` as a session id (repeatable; added to sid, sessionid, phpsessid, jsessionid, session_id, s, aspsessionid, cfid/cftoken, zenid, oscsid …)")
	fs.BoolVar(&c.KeepSessionIDs, "keep-session-ids", false, "crawl trap: do not treat session-id parameters as the same page")
}
